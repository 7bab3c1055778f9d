// A line plot drawn with ImDrawList (ImGui's PlotLines has no axes, ticks or log scale): x on a
// log or linear axis, y linear, grid lines and ticks with their numbers, vertical markers and
// horizontal reference lines with labels, and any number of lines sharing one x. The plot is one
// ImGui item (an invisible button) of the size given, so it lays out, hovers and clicks like any.
#pragma once

#include <imgui.h>

#include <span>
#include <string>
#include <vector>

#include "ui/ui_context.hpp"

namespace attnviz::app {

struct PlotSeries {
    std::vector<double> y;  // one value per x; a non-finite value breaks the line
    ImU32 color = 0;
    float thickness = 1.5f;
};

// A vertical marker at x = value or a horizontal line at y = value, with its label.
struct PlotMark {
    double value = 0;
    ImU32 color = 0;
    std::string label;
    bool dashed = false;
    bool label_left = false;  // a horizontal line's label at the left end (else the right)
};

struct LinePlot {
    std::string title;          // above the plot, at its left
    std::span<const double> x;  // shared by every series, increasing
    double x_min = 1, x_max = 10;
    bool log_x = true;
    double y_min = 0, y_max = 1;
    std::vector<PlotSeries> series;
    std::vector<PlotMark> vertical;    // at x values (outside the range: drawn at the edge, its label
                                       // with an arrow pointing out)
    std::vector<PlotMark> horizontal;  // at y values
    // The y numbers' room is at least this wide: plots stacked on one x give each the widest one's
    // (y_labels_width), so their x axes line up.
    float y_labels_min_width = 0;
};

// What the pointer does over the plot.
struct PlotHover {
    bool hovered = false;
    bool held = false;        // the left button pressed on the plot and still down
    double x = 0;             // the x under the pointer (within the range)
    int point = -1;           // the index in LinePlot::x nearest to it
    int nearest_series = -1;  // the series whose line passes nearest the pointer (within a few pixels)
};

// How wide the y numbers of `plot` drawn in a box of `size` are.
float y_labels_width(const LinePlot& plot, ImVec2 size);

// Draws the plot in a box of `size` at the cursor. `id` is the item's ImGui ID (fixed text).
PlotHover draw_line_plot(const char* id, const LinePlot& plot, ImVec2 size, const UiContext& ui);

// Tick values, at most `max_ticks` of them inside [lo, hi]: on a log axis 1, 2, 5 × 10^k (or fewer
// mantissas, or every other decade, when they would not fit); on a linear one multiples of 1, 2
// or 5 × 10^k.
std::vector<double> log_ticks(double lo, double hi, int max_ticks);
std::vector<double> linear_ticks(double lo, double hi, int max_ticks);
// A tick's number: 3 significant digits, no trailing zeros ("0.05", "2.5", "1e+03" → "1000").
std::string tick_text(double value);

}  // namespace attnviz::app
