// Heads panel: the attention weights (or, switched, the norm-weighted attention or the scores) of
// every head side by side on one colour scale, token labels on both axes: rows are queries, columns
// are keys. The grid wraps to the panel's width (thumbnails shrink, never a horizontal scrollbar);
// click a thumbnail's title or a cell to open it in the viewer. Norm-weighted: α_ij·‖f_h(x_j)‖
// (core::norm_weighted, as computed once per snapshot by NormWeightedCache), on one scale from 0 to
// the largest of every head; hovering a cell gives ‖f_h(x_j)‖, α_ij and their product.
#pragma once

#include "core/attention/head_summary.hpp"
#include "state/app_state.hpp"
#include "state/norm_weighted_cache.hpp"
#include "ui/ui_context.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

// What the heads show: their weights, their norm-weighted attention, or their scores.
enum class HeadsShown { weights, norm_weighted, scores };

struct HeadsPanel {
    HeadsShown shown = HeadsShown::weights;
    NormWeightedCache norm;  // the norm-weighted attention, computed once per snapshot
};

// A head's summary as one line: "H 0.21  |i-j| 0.03  diag 97%  first 47%" (under its heatmap it
// wraps to two lines where the width asks for it).
std::string summary_line(const core::HeadSummary& s);

// The parts of a head's summary line, which wrap to the width of its heatmap: "H 0.21",
// "|i-j| 0.03", "diag 97%", "first 47%".
std::vector<std::string> summary_parts(const core::HeadSummary& s);

// The grid of h heatmaps of rows × cols cells in a region of `avail`, each with its token labels
// (`labels`: their width left of the cells, their height above) and title_h above it, `gap` apart:
// the number of columns giving the largest cells (up to max_cell), and that cell. When even one
// column at min_cell does not fit the height, the grid scrolls vertically: as many columns of
// min_cell cells as the width holds.
struct HeadsGrid {
    int columns = 1;
    float cell = 0;
};
HeadsGrid heads_grid(int heads, int rows, int cols, ImVec2 labels, ImVec2 avail, float title_h, float gap,
                     float min_cell, float max_cell);

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel);

}  // namespace attnviz::app
