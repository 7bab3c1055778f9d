// Internal to the views' figures (view_figures*.cpp): the sizes and colours they share, a matrix as
// drawn, and how a heatmap is laid out, coloured and drawn with its heading and legend (defined in
// view_figures.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/attention/pooling.hpp"
#include "core/attention/registry.hpp"
#include "core/base/notation.hpp"
#include "core/render/color_scale.hpp"
#include "core/render/colormaps.hpp"
#include "core/render/figure_style.hpp"
#include "core/render/picture.hpp"

namespace attnviz::core {

struct Heatmap;  // view_figures.hpp

namespace detail {

// Sizes in figure units (pixels at scale 1).
inline constexpr double margin = 12;
inline constexpr double title_size = 14, title_line = 20;
inline constexpr double note_size = 11, note_line = 15;
inline constexpr double label_size = 11;
inline constexpr double max_number_size = 12, min_number_size = 7;
inline constexpr double max_auto_cell = 44;
inline constexpr double heatmap_extent = 640, head_extent = 320;  // automatic cells: the matrix about this wide
inline constexpr double max_row_label = 120;                      // row labels are cut to this width
inline constexpr double legend_bar_h = 10;

inline constexpr Rgba ink = figure_ink, grey = figure_grey, masked_color{110, 110, 110, 255};

// The matrix as drawn: itself, or its transpose.
struct Drawn {
    const Matrix& m;
    bool transposed;
    int rows() const { return static_cast<int>(transposed ? m.cols() : m.rows()); }
    int cols() const { return static_cast<int>(transposed ? m.rows() : m.cols()); }
    double operator()(int r, int c) const { return transposed ? m(c, r) : m(r, c); }
};

// Cells a block side: 1, or k so that at most max_cells blocks cover the larger side.
int block_step(int rows, int cols, int max_cells);

// The value a block (step×step cells from (r0, c0)) is drawn with: its cells pooled (the mean of
// weights, the value of largest magnitude of the others; −∞ only when all are masked).
double block_value(const Drawn& d, int r0, int c0, int step, Pooling pooling);

// A cell side that makes the matrix about `extent` wide: whole units, at most max_auto_cell, and
// with blocks a whole number of units a block.
double auto_cell(int rows, int cols, int step, double extent);

// The layout of one heatmap's labels and cells.
struct Grid {
    int rows = 0, cols = 0;  // drawn
    int step = 1;            // matrix cells a block side
    double cell = 1;         // units a matrix cell
    double gap = 0;          // between cells (large cells only)
    double label_w = 0, label_h = 0;
    int row_every = 0, col_every = 0;  // a label every k rows / columns; 0: none
    bool col_vertical = false;         // column labels upright (Label::vertical), one a column
    double overhang = 0;               // column labels reaching past the last column
    int digits = 0;                    // significant digits of the numbers; 0: none
    double number_size = 0;
    double width() const { return label_w + cols * cell + overhang; }
    double height() const { return label_h + rows * cell; }
};

Grid plan_grid(const Drawn& d, const Heatmap& s, double cell);

Rgba cell_color(double v, Colormap map, const ColorRange& range);

// The heatmap with its labels, its top left corner at (x, y).
void draw_grid(Figure& f, const Drawn& d, const Heatmap& s, const Grid& g, const ColorRange& range, double x, double y);

// The colour bar at (x, y), `bar_w` wide, its values under it, the scaling's name right of it (and a
// grey swatch "masked" when some cells are). Returns its width and height.
Point draw_legend(Figure& f, Colormap map, const ColorRange& range, const std::string& note, bool masked,
                  Notation notation, double x, double y, double bar_w);

std::string block_note(int step, ColorScale colors);

// Title and notes from y on; returns the y below them and widens `width` to hold them.
double draw_heading(Figure& f, const std::string& title, const std::vector<std::string>& notes, double y,
                    double& width);

// How heatmaps are coloured: the range, what the legend says of it, and whether cells are masked.
struct Coloring {
    ColorRange range;
    std::string note;
    bool masked = false;
};

// The colouring of heatmaps that share one range (the heads), each drawn in blocks of `step`
// cells. Weights over auto_weights_from_keys keys or more, with no scaling asked, are automatic
// with the top at the 99th percentile of the drawn values when the largest is an outlier
// (auto_outlier_range): a causal layer's first query (weight 1) would otherwise leave every other
// weight of a long sequence in the bottom colour. Asked for, "auto" stays min..max.
Coloring coloring(ColorScale colors, std::optional<Scaling> asked, const std::vector<Drawn>& heatmaps, int step);

// What the rows and columns of a matrix are, in the drawn frame: "rows: queries, columns: keys".
std::string axes_note(MatrixId id, bool transposed);

}  // namespace detail

}  // namespace attnviz::core
