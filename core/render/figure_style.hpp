// How an export looks: one style, each setting named once, for File > Export… (the dialog keeps
// one), `attnviz export` (its options bind into it), core's export_bytes and the figures of
// view_figures.hpp. What is exported (a matrix, a view, the format) is ExportRequest's.
#pragma once

#include <optional>

#include "core/attention/registry.hpp"
#include "core/base/notation.hpp"
#include "core/render/color_scale.hpp"
#include "core/render/colormaps.hpp"

namespace attnviz::core {

// A heatmap larger than this many cells a side is drawn in square blocks.
inline constexpr int default_max_cells = 256;
// The significant digits a figure prints, unless others are chosen.
inline constexpr int default_figure_digits = 3;

struct FigureStyle {
    // Significant digits (1 to max_digits, export.hpp); 0: the format's default (exact for CSV and TSV, 4
    // for LaTeX, default_figure_digits in figures).
    int digits = 0;
    std::optional<Scaling> scaling;        // colours; unset: each matrix's default
    bool numbers = true;                   // each value in its cell, where every value fits
    bool labels = true;                    // token labels on the axes
    bool legend = true;                    // the colour bar with its values and the scaling's name
    double scale = 1;                      // png: pixels per figure unit
    double fit_width = 0, fit_height = 0;  // views: fitted into this size (0: natural size)
    Notation notation = Notation::unicode;
    bool column_vectors = false;                // tokens as columns: every matrix drawn transposed
    int max_cells = default_max_cells;          // at most this many cells a side; more: blocks
    MatrixId heads_matrix = MatrixId::weights;  // heads: weights or scores
    bool thumbnails = true;                     // pipeline: a small heatmap in each node
    int max_heads = 4;                          // pipeline: more heads show the first ones and the last
};

// The figures' text: ink, and grey for notes and secondary labels.
inline constexpr Rgba figure_ink{26, 26, 26, 255}, figure_grey{90, 96, 108, 255};

// The digits a figure prints with this style.
inline int figure_digits(const FigureStyle& style) { return style.digits > 0 ? style.digits : default_figure_digits; }

}  // namespace attnviz::core
