// Colour scales: how a heatmap maps a matrix's values onto its colormap.
//
// A matrix is coloured around 0 (diverging: blue–white–red) or from low to high (weights:
// probabilities), as its registry row says (ColorScale). Within that, the user picks a scaling:
//   fixed       weights only: 0..1, the range every probability lives in
//   automatic   the matrix's own range: weights min..max; diverging ±max|v|
//   percentile  clipped: weights from the 1st to the 99th percentile; diverging ±(99th percentile
//               of |v|), so one outlier cannot wash the rest out
//   log         weights only: log10 of the weight, from max(smallest positive weight, 10⁻⁶·largest)
//               to the largest
// The legend of every heatmap shows the range in use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/matrix_types.hpp"
#include "core/attention/pooling.hpp"
#include "core/attention/registry.hpp"

namespace attnviz::core {

enum class Scaling { fixed, automatic, percentile, log, count };

inline constexpr Scaling all_scalings[] = {Scaling::fixed, Scaling::automatic, Scaling::percentile, Scaling::log};

// The percentiles the percentile scaling clips at.
inline constexpr double clip_low_percentile = 1, clip_high_percentile = 99;
// Matrices with more finite values than this have their percentiles estimated from this many
// evenly spaced cells (a colour range needs no more precision).
inline constexpr std::int64_t percentile_sample = std::int64_t{1} << 18;
// The log scaling's floor relative to the largest weight.
inline constexpr double log_floor = 1e-6;

// What the scalings need to know of a matrix's finite values (−∞ marks masked scores).
struct ValueStats {
    std::int64_t finite = 0;
    double min = 0, max = 0;  // of the finite values
    double max_abs = 0;       // largest |finite value|
    double min_positive = 0;  // smallest value > 0 (0: none)
    bool has_percentiles = false;
    double p_low = 0, p_high = 0;  // clip_low_percentile and clip_high_percentile of the values
    double abs_p_high = 0;         // clip_high_percentile of |values|
};

// One pass over the matrix; with `percentiles` also the percentiles (exact up to percentile_sample
// finite values, estimated from that many evenly spaced cells beyond).
ValueStats value_stats(const Matrix& m, bool percentiles);

// A quick estimate from `cells` evenly spaced cells (all of them when the matrix has no more): for
// a view that cannot afford the full pass in this frame. Its extremes lie within the true ones.
ValueStats estimate_value_stats(const Matrix& m, bool percentiles, std::int64_t cells);

// Two matrices' stats as one, for heads drawn side by side on one scale: extremes exactly,
// percentiles as the wider of the two (each head keeps its own clipping).
ValueStats combine(const ValueStats& a, const ValueStats& b);

// The value range the colormap spans, linear or logarithmic.
struct ColorRange {
    double lo = 0, hi = 1;
    bool log = false;
    // Where a value falls on the colormap, in [0, 1] (clamped). Non-finite values are not placed
    // (the caller colours them as masked); with log, values ≤ 0 go to 0.
    float position(double value) const;
    bool operator==(const ColorRange&) const = default;
};

// Whether a matrix coloured this way offers the scaling (fixed and log are for weights only).
bool offers(ColorScale colors, Scaling scaling);
// The scaling a matrix gets until the user picks one: weights fixed 0..1 over fewer than
// auto_weights_from_keys keys; from there on, and for diverging matrices, automatic (each weight
// near 1/n would be one flat colour on 0..1). Not percentile: a heatmap of values around 0 smaller
// than its matrix shows each block's strongest cell (Pooling::largest), and most blocks of a large
// matrix hold one beyond the 99th percentile, so a clipped range would paint them all in the end
// colours.
Scaling default_scaling(ColorScale colors, std::int64_t cols);
inline constexpr std::int64_t auto_weights_from_keys = 16;

// The range of a scaling for a matrix (or several) with these stats. A scaling the matrix does not
// offer falls back to automatic. stats must have percentiles for Scaling::percentile.
ColorRange color_range(ColorScale colors, Scaling scaling, const ValueStats& stats);

// Whether the largest value stands out from the rest: the clip_high_percentile of the values is
// below outlier_ratio of it. A causal layer's first query can attend only to itself (weight 1)
// while the weights of a long sequence lie near 1/n; on min..max those all get one colour.
// Needs stats with percentiles (false without).
inline constexpr double outlier_ratio = 0.5;
bool max_is_outlier(const ValueStats& stats);
// Automatic for weights, its top lowered to the clip_high_percentile when the largest value is an
// outlier (the few cells above it take the top colour); else automatic's min..max. What exported
// figures and the app's heatmaps use where clips_outliers says so.
ColorRange auto_outlier_range(const ValueStats& stats);
// Whether a matrix coloured `colors` with `cols` columns and no scaling chosen (`chosen` false) is
// drawn on auto_outlier_range: weights over auto_weights_from_keys keys or more. A chosen "auto"
// stays min..max.
bool clips_outliers(ColorScale colors, bool chosen, std::int64_t cols);

// A short name for menus and legends: "fixed 0..1", "auto", "percentile (clips outliers)", "log".
const char* scaling_name(Scaling scaling);
// "fixed", "auto", "percentile", "log" (as `attnviz export --colors` takes them) → the scaling.
std::optional<Scaling> scaling_from_name(const std::string& name);

}  // namespace attnviz::core
