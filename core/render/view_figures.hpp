// Figures of the app's views, for export (picture.hpp writes them as SVG or PNG):
//   heatmap_figure   one matrix: its cells in the colormap, numbers where they fit, token labels, a
//                    legend with the range and the scaling; a large matrix in blocks
//   matrix_figure    the same for a matrix of a session, titled and labelled from the registry
//   heads_figure     the heads panel: every head's weights (or scores) side by side on one scale
//   pipeline_figure  the pipeline panel as a diagram: X → W_Q, W_K, W_V → Q, K, V (→ Q_rot, K_rot)
//                    → scores_raw → scores → weights → Z, per head, → concat (→ W_O) → output
// Everything is measured with text_width(), so no font file is needed to build a figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/registry.hpp"
#include "core/attention/session.hpp"
#include "core/render/color_scale.hpp"
#include "core/render/figure_style.hpp"
#include "core/render/picture.hpp"

namespace attnviz::core {

// Blocks are at least this many units a side (finer detail is not seen, and only makes the SVG large).
inline constexpr double min_block_side = 2;

// What one heatmap figure shows, besides the matrix: its title, notes and labels, its colours; how
// it is drawn is its style (style.column_vectors: draw mᵀ, the labels then naming the drawn rows
// and columns).
struct Heatmap {
    std::string title;                                // bold, above: "weights⁽¹⁾ (4×4)"; "" none
    std::vector<std::string> notes;                   // grey lines under the title
    std::vector<std::string> row_labels, col_labels;  // of the drawn rows and columns (tokens); may be empty
    ColorScale colors = ColorScale::diverging;
    std::optional<ColorRange> range;  // set: this range instead of the style's scaling (heads drawn on one scale)
    double cell = 0;                  // side of a cell in units; 0: automatic (at most 44)
    std::string cell_name;            // tooltips "weights(1)[2][3] = 0.25" ("" none)
    bool tooltips = true;             // a tooltip (SVG <title>) on every cell, when cell_name is set
    FigureStyle style;                // numbers, digits, labels, legend, scaling (unset: default_scaling), max_cells
};

// The matrix as a figure. A matrix of more than max_cells rows or columns, or whose cells would be
// under min_block_side units, is drawn in k×k blocks (k = ⌈larger side / max_cells⌉, or more),
// each coloured by its cells pooled as the app's textures pool them (pooling_for: the mean of
// weights, else the value of largest magnitude), and the figure says so ("each cell is a 4×4
// block of the matrix: the mean of its weights"). Masked
// (−∞) cells are grey; each cell writes the most digits that fit it (cell_number's levels), in black or white by
// the cell's luminance. Class "cell" marks every cell rectangle.
Figure heatmap_figure(const Matrix& m, const Heatmap& heatmap);

// A matrix of the session or its trace, titled "weights⁽¹⁾ (4×4)" with what computes it, tokens
// on the axes that are tokens. Refused when the matrix does not exist in the session.
Result<Figure> matrix_figure(const Session& session, const Trace& trace, const MatrixRef& ref,
                             const FigureStyle& style);

// Every head's weights (or scores: style.heads_matrix) side by side, wrapping to rows, each
// titled "head 1", …, tokens on both axes, all on one colour range (the heads' statistics
// combined, as the heads panel does) with one legend. Each head is a group of class "heatmap".
Figure heads_figure(const Session& session, const Trace& trace, const FigureStyle& style);

// The pipeline as boxes and arrows, one column per head (style.max_heads at most: then the first
// ones, "⋯", and the last): X; each head's W_Q, W_K, W_V (with their biases), Q, K, V, Q_rot and
// K_rot with RoPE, scores_raw, scores, weights and Z; concat; W_O (only while the output projection
// is on) and output. Each node (a group of class "node") is named with its shape ("Q⁽¹⁾ 2×2") and,
// with thumbnails, shows a small heatmap of its matrix; the arrows carry what computes each step.
Figure pipeline_figure(const Session& session, const Trace& trace, const FigureStyle& style);

}  // namespace attnviz::core
