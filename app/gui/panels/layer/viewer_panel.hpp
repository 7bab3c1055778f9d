// Matrix viewer: one matrix (any input or intermediate of any head) as large as the panel allows,
// with its colour scale and legend, zoom (wheel, + and −, fit), pan (drag), "go to cell", the
// hovered cell's row, column and value (also when cells are smaller than a pixel), token labels on
// both axes where they fit, and the arithmetic of the selected cell.
#pragma once

#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

struct ViewerPanel {
    // The zoom: pixels per cell, 0 = fitted (the whole matrix in view; the default, and after "fit").
    float cell = 0;
    double row0 = 0, col0 = 0;                   // the (fractional) cell at the view's top left while zoomed
    MatrixRef zoomed;                            // the matrix the zoom was set on; another one starts fitted
    std::string goto_row = "0", goto_col = "0";  // "go to": a row and a column (from 0), or tokens' labels
    // The hovered cell in the drawn frame (−1: none), kept for the line under the view.
    int hover_row = -1, hover_col = -1;
};

// Where "go to" goes along one axis (`axis`: "row" or "column") of `count`: a whole number is the
// row or column counted from 0; other text the first one whose token label it is (`labels`, when
// that axis is tokens): "x101" is row 100 of a random session. Refused with what is wrong: a
// number past the matrix, text that is no number and no token's label.
core::Result<int> goto_index(const std::string& text, const std::vector<std::string>* labels, int count,
                             const std::string& axis);

// The largest zoom, in pixels per cell.
inline constexpr float viewer_max_cell = 96;

// The zoom that fits a rows×cols matrix into `view` (pixels), capped at `max_cell`.
float fit_cell(int rows, int cols, ImVec2 view, float max_cell);

// Zooms by `factor` keeping the point `at` (pixels from the view's top left) on the same cell.
// The zoom stays between the fitted one and viewer_max_cell; the view is then kept on the matrix.
void viewer_zoom(ViewerPanel& panel, float factor, ImVec2 at, int rows, int cols, ImVec2 view);
// Moves the view by `delta` pixels (a drag), kept on the matrix.
void viewer_pan(ViewerPanel& panel, ImVec2 delta, int rows, int cols, ImVec2 view);
// Zooms in until a cell is large enough for its number and centres the view on cell (row, col).
void viewer_center(ViewerPanel& panel, int row, int col, int rows, int cols, ImVec2 view);
// The viewport for the current zoom (fitted when cell is 0).
HeatmapOptions::Viewport viewer_viewport(const ViewerPanel& panel, int rows, int cols, ImVec2 view);

void draw_viewer_panel(AppState& state, UiContext& ui, ViewerPanel& panel);

}  // namespace attnviz::app
