// The tiling layout of the explorer: the places its panels fill (a left column of two, a right area
// of two rows of two), how the work area is shared between them (LayoutShares, as fractions, so a
// layout fits any window), the splitters on the gaps that change the shares, and the [attnviz][Layout]
// section of the layout file that keeps the shares and each place's chosen tab.
#pragma once

#include <array>
#include <imgui.h>
#include <string>

namespace attnviz::app {

// The places of the layout: a left column (two places) and a right area of two rows of two.
enum class Place { left_top, left_bottom, upper_left, upper_right, lower_left, lower_right, count };

struct Rect {
    ImVec2 pos, size;
};
using Layout = std::array<Rect, static_cast<size_t>(Place::count)>;

// How the work area (between the menu bar and the status bar) is shared, as fractions, so a layout
// fits any window: the left column's width, the top left place's height within it, the upper row's
// height within the right area, and the left place's width within each row. Dragging the gaps
// between the places (splitters) changes them; they are kept with the window layout.
struct LayoutShares {
    float left = 0.22f;
    float left_top = 0.5f;
    float upper = 0.47f;
    float upper_left = 0.46f;
    float lower_left = 0.63f;
    // Panels hidden by the user (View > Panels), by place: their room goes to their neighbours.
    std::array<bool, static_cast<size_t>(Place::count)> hidden{};
    bool operator==(const LayoutShares&) const = default;
};

// The gap between places, where the splitters are.
inline constexpr float splitter_width = 6;

// Every place for a display, the menu bar and status bar heights and the shares. Each place keeps
// at least a title bar and a few lines (shares are clamped so), and the places tile the work area;
// a hidden place is empty (zero size) and its neighbour in the column or row takes its room.
Layout tiled_layout(ImVec2 display, float menu_height, float status_height, const LayoutShares& shares);
// The default shares: the left column 22% of the width, within 270 to 420 pixels.
LayoutShares default_shares(ImVec2 display);
Rect status_rect(ImVec2 display, float status_height);

// The splitters' state: which one is being dragged.
struct Splitters {
    int dragging = -1;
};
// The splitters on the borders between the places of `shares`: hovering one shows a resize
// cursor, dragging it moves the border (and the shares); the shares are saved with the layout.
void handle_splitters(LayoutShares& shares, Splitters& splitters, ImVec2 display, float menu_height,
                      float status_height);

// The shares as a line of the layout file ("left=0.22 left_top=0.5 …") and back; a line that does
// not parse leaves the shares as they were (an older or foreign layout is adapted, not trusted).
std::string shares_text(const LayoutShares& shares);
void read_shares(const std::string& text, LayoutShares& shares);

}  // namespace attnviz::app
