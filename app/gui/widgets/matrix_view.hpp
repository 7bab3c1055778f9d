// A matrix of the session or trace as a titled heatmap, wired to AppState: hovering a cell shows
// its arithmetic (core::explain), clicking selects it, and the selected cell's operands are outlined.
#pragma once

#include <imgui.h>

#include "../app_state.hpp"
#include "../ui_context.hpp"
#include "colormap.hpp"

namespace attnviz::app {

struct MatrixViewOptions {
    ImVec2 max_size{220, 220};
    float max_cell = 44;
    bool title = true;         // "Q⁽¹⁾ 2×2" above the cells; clicking it opens the matrix in the viewer
    bool token_rows = false;   // token labels left of the rows (where rows are tokens)
    bool token_cols = false;   // token labels above the columns (where columns are tokens)
    bool fixed_range = false;  // colour by [lo, hi] instead of the matrix's own range
    double lo = 0, hi = 1;
    long shown_cells = -1;           // ≥ 0: cells after the first shown_cells (row-major) are hidden
    bool follow_orientation = true;  // draw transposed in the column-vector view (the lesson does not)
};

void matrix_view(AppState& state, UiContext& ui, MatrixRef ref, const MatrixViewOptions& options);

// The colormap a matrix is shown with, from the registry: 0..1 for weights, around 0 otherwise.
Colormap colormap_for(core::MatrixId id);

// The arithmetic of a cell as text: its title, the rule (dimmed), then the lines with the numbers;
// with numbers = false only the rule (an exercise must not give the answer away).
void draw_explanation(const core::Explanation& e, bool numbers = true);

// A tooltip with the arithmetic of `cell` (noting when the view draws it transposed).
void explain_tooltip(const AppState& state, const CellRef& cell, bool transposed = false);

}  // namespace attnviz::app
