// Pooling: one value for a block of a matrix's cells, by the matrix's colour scale. The model
// view's thumbnails (core/attention/layer_summary.hpp), the app's heatmap textures and exported
// figures (core/render/color_scale.hpp) shrink matrices by this one rule.
#pragma once

#include <cstdint>

#include "core/attention/registry.hpp"

namespace attnviz::core {

// How a heatmap drawn smaller than its matrix makes one pixel of a block of cells (a texel of the
// app's heatmaps, a cell of the model view's thumbnails, a block of an exported figure): one rule
// for the app and the figures, by the matrix's colour scale.
//   mean     weights (ColorScale::unit_interval): the mean weight of the block, the attention its
//            queries give its keys spread over it. A uniform head stays one colour at any size, a
//            sharp one stays sharp (each one-hot row adds 1/cells to its block). The largest weight
//            of a block would not: of many weights near 1/n the largest lies well above 1/n in
//            every block, so a nearly uniform head looked saturated at n = 512.
//   largest  the others (around 0): the value of largest magnitude, so that a strong value is never
//            lost (a mean would let +1 and −1 cancel).
// Masked cells (−∞) are left out; a block of masked cells only is −∞.
enum class Pooling { mean, largest };
Pooling pooling_for(ColorScale colors);
// What one pooled pixel shows, for legends, notes and tooltips: "the mean of the weights it covers".
const char* pooling_text(Pooling pooling);

// The pooled value of one block, its cells added one at a time in any order: NaN while none is.
struct BlockPool {
    double value = 0;          // mean: the sum of the finite cells; largest: the largest |cell| so far
    std::uint32_t finite = 0;  // finite cells added
    std::uint32_t cells = 0;   // cells added
    void add(Pooling pooling, double v) {
        ++cells;
        if (!(v - v == 0)) return;  // −∞ (masked) or NaN
        if (pooling == Pooling::mean)
            value += v;
        else if (finite == 0 || (v < 0 ? -v : v) > (value < 0 ? -value : value))
            value = v;
        ++finite;
    }
    double result(Pooling pooling) const;
};

}  // namespace attnviz::core
