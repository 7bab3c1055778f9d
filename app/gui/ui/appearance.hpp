// The window's look, chosen in the View menu or on the command line and kept with the window layout:
// the theme, the text size (UI scale) and the weights' colormap. Names and the layout file's lines
// only: no ImGui here (the layout file's filter checks these lines; theme.hpp applies them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/render/colormaps.hpp"

namespace attnviz::app {

// Dark (ImGui's own, the default), light (projectors wash dark themes out) and high contrast (white
// on black, bright outlines and borders).
enum class Theme { dark, light, high_contrast };
inline constexpr Theme all_themes[] = {Theme::dark, Theme::light, Theme::high_contrast};

// The text size the user may choose: 1 is 16 px text; the monitor's content scale multiplies it.
inline constexpr float min_ui_scale = 0.75f, max_ui_scale = 3.0f;
// The UI font's size at scale 1, in pixels.
inline constexpr float base_font_px = 16.0f;

struct Appearance {
    Theme theme = Theme::dark;
    float scale = 1;                                      // min_ui_scale to max_ui_scale
    core::Colormap weights = core::Colormap::sequential;  // weights' map: sequential (viridis) or cividis
    bool operator==(const Appearance&) const = default;
};

// "dark", "light", "high-contrast" (what --theme takes and the layout file keeps).
const char* theme_name(Theme theme);
std::optional<Theme> theme_named(std::string_view name);
// "viridis" (core::Colormap::sequential), "cividis"; nullopt for any other name, or the diverging map.
const char* weights_colormap_name(core::Colormap map);
std::optional<core::Colormap> weights_colormap_named(std::string_view name);

// Whether a text size is one the user may choose (also false for NaN).
bool valid_ui_scale(float scale);
// View > Larger text (direction 1) and Smaller text (-1): the next of the steps 0.75, 1, 1.25 … 3
// from `scale`; direction 0: back to 1 (Reset).
float stepped_ui_scale(float scale, int direction);

// The look as the layout file's lines under [attnviz][Layout]: "theme=light", "scale=1.5",
// "colormap=cividis", each ending in a newline.
std::string appearance_lines(const Appearance& appearance);
// Reads one such line into `appearance`; false (it unchanged) when the line is none of them or its
// value is not one attnviz writes.
bool read_appearance_line(std::string_view line, Appearance& appearance);

}  // namespace attnviz::app
