// A matrix of the session or trace as a titled heatmap, wired to AppState: hovering a cell shows
// its arithmetic (core::explain), clicking selects it, and the selected cell's operands are outlined.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "colormap.hpp"
#include "heatmap.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct MatrixViewOptions {
    ImVec2 max_size{220, 220};
    float max_cell = 44;
    bool title = true;        // "Q⁽¹⁾ 2×2" above the cells; clicking it opens the matrix in the viewer
    bool token_rows = false;  // token labels left of the rows (where rows are tokens)
    bool token_cols = false;  // token labels above the columns (where columns are tokens)
    std::optional<core::ColorRange> range;  // set: colour by this range (heads side by side on one scale)
    long shown_cells = -1;                  // ≥ 0: cells after the first shown_cells (row-major) are hidden
    bool follow_orientation = true;         // draw transposed in the column-vector view (the lesson does not)
    std::optional<HeatmapOptions::Viewport> viewport;  // zoomed and panned (the viewer); unset: fitted
    std::string title_text;  // set: the title instead of "Q⁽¹⁾  2×2" (its tooltip still names the matrix)
};

// The room its token labels take with a viewport (see heatmap_gutters).
ImVec2 matrix_view_gutters(const AppState& state, MatrixRef ref, const MatrixViewOptions& options);

// The room its column labels take above the cells by the cells' side (see col_label_room).
ColLabelRoom matrix_view_col_labels(const AppState& state, const UiContext& ui, MatrixRef ref,
                                    const MatrixViewOptions& options);

// Draws the matrix; returns the heatmap's hit (the hovered cell in the drawn frame, the cells' rectangle).
HeatmapHit matrix_view(AppState& state, UiContext& ui, MatrixRef ref, const MatrixViewOptions& options);

// A flow of matrices (the trace panel, a lesson step): placed left to right, each moved to a new
// line when it does not fit the width, all with one cell size, chosen to fill the room.
struct FlowItem {
    int rows = 0, cols = 0;                      // cells as drawn
    float head_h = 0;                            // pixels above the cells (a title), at any cell size
    float min_w = 0;                             // never narrower (its title's width)
    ImVec2 labels{0, 0};                         // token labels left of and above the cells (matrix_view_gutters) ...
    float labels_from = 0;                       // ... drawn from this cell size on (heatmap: 0.8 of a text line)
    ColLabelRoom col_labels;                     // set: the column labels' height by cell side (turned where too wide)
    bool new_line = false;                       // starts a line of its own (a head's first matrix)
    float width(float cell) const;               // its width at `cell` pixels a cell
    float height(float cell, float room) const;  // its height, its cells shrunk to a row `room` wide
};
// The height of the flow at `cell` pixels a cell in `width`: items gap.x apart on a line, lines
// gap.y apart.
float flow_height(const std::vector<FlowItem>& items, float cell, float width, ImVec2 gap);
// The largest whole-pixel cell in [min_cell, max_cell] at which the flow fits room.y; min_cell
// when none does (the flow then scrolls): cells grow to fill the room up to a comfortable size, and
// stay readable rather than shrink to fit.
float flow_cell(const std::vector<FlowItem>& items, ImVec2 room, ImVec2 gap, float min_cell, float max_cell);
// Places the next item of a flow: on the current line when `width` fits after the last item (`gap`
// apart) and it asks for no new line, else on a new line. `first`: the flow's first item.
void flow_place(float width, float gap, bool new_line, bool first);

// The colour scalings a matrix offers (core/render/color_scale.hpp), as radio items of a menu (the
// heatmaps' right-click menu) or as a combo box of `width`; a choice applies to every head of the
// matrix in every view. `cols`: the matrix's columns (keys, for weights), which decide its default.
void scaling_menu_items(UiContext& ui, core::MatrixId id, std::int64_t cols);
// "Copy as CSV / TSV / LaTeX" items of a matrix's menu, to the clipboard.
void copy_menu_items(const core::Matrix& m);
void scaling_combo(UiContext& ui, core::MatrixId id, std::int64_t cols, float width);

// The arithmetic of a cell as text: its title, the rule (dimmed), then the lines with the numbers;
// with numbers = false only the rule (an exercise must not give the answer away).
void draw_explanation(const core::Explanation& e, bool numbers = true);

// What a legend adds when its heatmap pools blocks of cells into pixels (hit.cells_per_pixel > 1):
// "; a pixel: the mean of ≈4×4" (weights) or "; a pixel: the largest |value| of ≈4×4"; "" otherwise.
std::string pooling_note(const UiContext& ui, core::MatrixId id, float cells_per_pixel);

// A tooltip with the arithmetic of `cell` (noting when the view draws it transposed).
void explain_tooltip(const AppState& state, const CellRef& cell, bool transposed = false);

}  // namespace attnviz::app
