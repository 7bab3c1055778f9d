// A matrix of the session or trace as a titled heatmap, wired to AppState: hovering a cell shows
// its arithmetic (core::explain), clicking selects it, and the selected cell's operands are outlined.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <optional>

#include "../app_state.hpp"
#include "../ui_context.hpp"
#include "colormap.hpp"
#include "heatmap.hpp"

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
};

// The room its token labels take with a viewport (see heatmap_gutters).
ImVec2 matrix_view_gutters(const AppState& state, MatrixRef ref, const MatrixViewOptions& options);

// Draws the matrix; returns the heatmap's hit (the hovered cell in the drawn frame, the cells' rectangle).
HeatmapHit matrix_view(AppState& state, UiContext& ui, MatrixRef ref, const MatrixViewOptions& options);

// The colormap a matrix is shown with, from the registry: 0..1 for weights, around 0 otherwise.
Colormap colormap_for(core::MatrixId id);

// The colour scalings a matrix offers (core/color_scale.hpp), as radio items of a menu (the
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
