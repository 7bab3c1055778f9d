// Heads panel: the attention weights (or, toggled, the scores) of every head side by side on one
// colour scale, token labels on both axes: rows are queries, columns are keys. The grid wraps to
// the panel's width (thumbnails shrink, never a horizontal scrollbar); click a thumbnail's title
// or a cell to open it in the viewer.
#pragma once

#include "../app_state.hpp"
#include "../ui_context.hpp"
#include "core/head_summary.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

struct HeadsPanel {
    bool show_scores = false;
    // Each head's summary (core/head_summary.hpp) under its weights, computed once per trace.
    std::vector<core::HeadSummary> summaries;
    std::uint64_t summaries_of = 0;  // the generation they are of
};

// A head's summary as the line under its thumbnail: "H 0.21  |i−j| 0.03  diag 97%  first 47%".
std::string summary_line(const core::HeadSummary& s);

// The grid of h thumbnails in a region of `avail` (width × height, each thumbnail `title_h` above
// its cells, `gap` apart): the columns that give the largest thumbnails that still fit, and their
// side. When even one column of min_side does not fit the height, the grid scrolls vertically.
struct HeadsGrid {
    int columns = 1;
    float side = 0;
};
HeadsGrid heads_grid(int heads, ImVec2 avail, float title_h, float gap, float min_side);

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel);

}  // namespace attnviz::app
