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
#include "core/render/picture.hpp"

namespace attnviz::core {

// A heatmap larger than this many cells a side is drawn in square blocks.
inline constexpr int default_max_cells = 256;
// Blocks are at least this many units a side (finer detail is not seen, and only makes the SVG large).
inline constexpr double min_block_side = 2;

struct HeatmapStyle {
    std::string title;                                // bold, above: "weights⁽¹⁾ (4×4)"; "" none
    std::vector<std::string> notes;                   // grey lines under the title
    std::vector<std::string> row_labels, col_labels;  // of the drawn rows and columns (tokens); may be empty
    ColorScale colors = ColorScale::diverging;
    std::optional<Scaling> scaling;     // unset: default_scaling(colors, columns)
    std::optional<ColorRange> range;    // set: this range instead (heads drawn on one scale)
    bool numbers = true;                // each value in its cell, where every value fits
    int digits = 3;                     // significant digits of the numbers (fewer when they do not fit)
    bool labels = true;                 // row and column labels
    bool legend = true;                 // the colour bar with its values and the scaling's name
    double cell = 0;                    // side of a cell in units; 0: automatic (at most 44)
    int max_cells = default_max_cells;  // at most this many cells a side; more: blocks
    std::string cell_name;              // tooltips "weights(1)[2][3] = 0.25" ("" none)
    bool tooltips = true;               // a tooltip (SVG <title>) on every cell, when cell_name is set
    bool transposed = false;            // draw mᵀ (labels then name the drawn rows and columns)
    Notation notation = Notation::unicode;
};

// The matrix as a figure. A matrix of more than max_cells rows or columns, or whose cells would be
// under min_block_side units, is drawn in k×k blocks (k = ⌈larger side / max_cells⌉, or more),
// each coloured by its cells pooled as the app's textures pool them (pooling_for: the mean of
// weights, else the value of largest magnitude), and the figure says so ("each cell is a 4×4
// block of the matrix: the mean of its weights"). Masked
// (−∞) cells are grey; each cell writes the most digits that fit it (cell_number's levels), in black or white by
// the cell's luminance. Class "cell" marks every cell rectangle.
Figure heatmap_figure(const Matrix& m, const HeatmapStyle& style);

// Options of the figures of a session's matrices and views.
struct FigureOptions {
    std::optional<Scaling> scaling;  // unset: each matrix's default
    bool numbers = true, labels = true, legend = true;
    int digits = 3;
    Notation notation = Notation::unicode;
    bool column_vectors = false;           // tokens as columns: every matrix drawn transposed
    double fit_width = 0, fit_height = 0;  // views: fitted into this size (0: natural size)
    int max_cells = default_max_cells;
    MatrixId heads_matrix = MatrixId::weights;  // heads: weights or scores
    bool thumbnails = true;                     // pipeline: a small heatmap in each node
    int max_heads = 4;                          // pipeline: more heads show the first ones and the last
};

// A matrix of the session or its trace, titled "weights⁽¹⁾ (4×4)" with what computes it, tokens
// on the axes that are tokens. Refused when the matrix does not exist in the session.
Result<Figure> matrix_figure(const Session& session, const Trace& trace, const MatrixRef& ref,
                             const FigureOptions& options);

// Every head's weights (or scores: options.heads_matrix) side by side, wrapping to rows, each
// titled "head 1", …, tokens on both axes, all on one colour range (the heads' statistics
// combined, as the heads panel does) with one legend. Each head is a group of class "heatmap".
Figure heads_figure(const Session& session, const Trace& trace, const FigureOptions& options);

// The pipeline as boxes and arrows, one column per head (options.max_heads at most: then the first
// ones, "⋯", and the last): X; each head's W_Q, W_K, W_V (with their biases), Q, K, V, Q_rot and
// K_rot with RoPE, scores_raw, scores, weights and Z; concat; W_O (only while the output projection
// is on) and output. Each node (a group of class "node") is named with its shape ("Q⁽¹⁾ 2×2") and,
// with thumbnails, shows a small heatmap of its matrix; the arrows carry what computes each step.
Figure pipeline_figure(const Session& session, const Trace& trace, const FigureOptions& options);

}  // namespace attnviz::core
