#include "core/render/color_scale.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnviz::core {

namespace {

// The p-th percentile (nearest rank) of `values`, which it reorders.
double percentile(std::vector<double>& values, double p) {
    const auto k = static_cast<std::ptrdiff_t>(std::llround(p / 100 * static_cast<double>(values.size() - 1)));
    std::nth_element(values.begin(), values.begin() + k, values.end());
    return values[static_cast<std::size_t>(k)];
}

}  // namespace

ValueStats value_stats(const Matrix& m, bool percentiles) {
    ValueStats s;
    const double* data = m.data();
    const std::int64_t size = m.size();
    double lo = INFINITY, hi = -INFINITY, pos = INFINITY;
    std::int64_t finite = 0;
    // Branch-free and vectorised (OpenMP's simd reductions need no fast-math): v − v is 0 for a
    // finite v and NaN for ±∞ and NaN, which each reduction replaces by its neutral value.
    // (GCC only: clang's sanitizer builds, used for fuzzing, cannot vectorise it and say so as an error.)
#if !defined(__clang__)
#pragma omp simd reduction(min : lo, pos) reduction(max : hi) reduction(+ : finite)
#endif
    for (std::int64_t k = 0; k < size; ++k) {
        const double v = data[k];
        const bool is_finite = v - v == 0;
        finite += is_finite ? 1 : 0;
        lo = std::min(lo, is_finite ? v : INFINITY);
        hi = std::max(hi, is_finite ? v : -INFINITY);
        pos = std::min(pos, is_finite && v > 0 ? v : INFINITY);
    }
    s.finite = finite;
    if (finite == 0) return s;
    s.min = lo;
    s.max = hi;
    s.max_abs = std::max(std::abs(lo), std::abs(hi));
    s.min_positive = std::isfinite(pos) ? pos : 0;
    if (!percentiles) return s;

    // Every finite value, or evenly spaced cells when there are more than percentile_sample.
    std::vector<double> values;
    const bool sampled = finite > percentile_sample;
    values.reserve(static_cast<std::size_t>(sampled ? percentile_sample : finite));
    if (!sampled) {
        for (std::int64_t k = 0; k < size; ++k)
            if (std::isfinite(data[k])) values.push_back(data[k]);
    } else {
        for (std::int64_t k = 0; k < percentile_sample; ++k) {
            const double v = data[k * size / percentile_sample];
            if (std::isfinite(v)) values.push_back(v);
        }
    }
    if (values.empty()) values.push_back(hi);  // every sampled cell masked: fall back on the extremes
    s.has_percentiles = true;
    s.p_low = percentile(values, clip_low_percentile);
    s.p_high = percentile(values, clip_high_percentile);
    for (double& v : values) v = std::abs(v);
    s.abs_p_high = percentile(values, clip_high_percentile);
    return s;
}

ValueStats estimate_value_stats(const Matrix& m, bool percentiles, std::int64_t cells) {
    const std::int64_t size = m.size();
    if (cells <= 0 || size <= cells) return value_stats(m, percentiles);
    Matrix sample(cells, 1);
    for (std::int64_t k = 0; k < cells; ++k) sample(k, 0) = m.data()[k * size / cells];
    return value_stats(sample, percentiles);
}

ValueStats combine(const ValueStats& a, const ValueStats& b) {
    if (a.finite == 0) return b;
    if (b.finite == 0) return a;
    ValueStats s;
    s.finite = a.finite + b.finite;
    s.min = std::min(a.min, b.min);
    s.max = std::max(a.max, b.max);
    s.max_abs = std::max(a.max_abs, b.max_abs);
    s.min_positive = a.min_positive == 0   ? b.min_positive
                     : b.min_positive == 0 ? a.min_positive
                                           : std::min(a.min_positive, b.min_positive);
    s.has_percentiles = a.has_percentiles && b.has_percentiles;
    if (s.has_percentiles) {
        s.p_low = std::min(a.p_low, b.p_low);
        s.p_high = std::max(a.p_high, b.p_high);
        s.abs_p_high = std::max(a.abs_p_high, b.abs_p_high);
    }
    return s;
}

float ColorRange::position(double v) const {
    double t;
    if (log) {
        if (!(v > 0)) return 0;
        t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    } else {
        const double span = hi - lo;
        t = span > 0 ? (v - lo) / span : 0.5;
    }
    return static_cast<float>(std::clamp(t, 0.0, 1.0));
}

bool offers(ColorScale colors, Scaling s) {
    if (s == Scaling::count) return false;
    return colors == ColorScale::unit_interval || s == Scaling::automatic || s == Scaling::percentile;
}

Scaling default_scaling(ColorScale colors, std::int64_t cols) {
    return colors == ColorScale::unit_interval && cols < auto_weights_from_keys ? Scaling::fixed : Scaling::automatic;
}

ColorRange color_range(ColorScale colors, Scaling s, const ValueStats& st) {
    if (!offers(colors, s) || (s == Scaling::percentile && !st.has_percentiles)) s = Scaling::automatic;
    if (colors == ColorScale::diverging) {
        const double m = s == Scaling::percentile ? st.abs_p_high : st.max_abs;
        const double half = m > 0 ? m : (st.max_abs > 0 ? st.max_abs : 1);  // never an empty range
        return {-half, half, false};
    }
    // Weights (or any values on a low..high scale).
    if (st.finite == 0 || s == Scaling::fixed) return {0, 1, false};
    if (s == Scaling::log) {
        if (!(st.max > 0)) return {0, 1, false};
        const double floor = st.max * log_floor;
        double lo = std::max(st.min_positive, floor);
        if (!(lo < st.max)) lo = st.max / 10;  // one distinct value: a decade below it
        return {lo, st.max, true};
    }
    double lo = s == Scaling::percentile ? st.p_low : st.min;
    double hi = s == Scaling::percentile ? st.p_high : st.max;
    if (!(lo < hi)) {  // every value the same (uniform attention): centre it
        lo = std::min(lo, 0.0);
        hi = lo < hi ? hi : lo + 1;
    }
    return {lo, hi, false};
}

bool max_is_outlier(const ValueStats& st) {
    return st.has_percentiles && st.finite > 0 && st.p_high > st.min && st.p_high < outlier_ratio * st.max;
}

ColorRange auto_outlier_range(const ValueStats& st) {
    if (max_is_outlier(st)) return {st.min, st.p_high, false};
    return color_range(ColorScale::unit_interval, Scaling::automatic, st);
}

bool clips_outliers(ColorScale colors, bool chosen, std::int64_t cols) {
    return !chosen && colors == ColorScale::unit_interval && default_scaling(colors, cols) == Scaling::automatic;
}

const char* scaling_name(Scaling s) {
    switch (s) {
        case Scaling::fixed: return "fixed 0..1";
        case Scaling::automatic: return "auto";
        case Scaling::percentile: return "percentile (clips outliers)";
        case Scaling::log: return "log";
        case Scaling::count: break;
    }
    return "";
}

std::optional<Scaling> scaling_from_name(const std::string& name) {
    if (name == "fixed") return Scaling::fixed;
    if (name == "auto") return Scaling::automatic;
    if (name == "percentile") return Scaling::percentile;
    if (name == "log") return Scaling::log;
    return std::nullopt;
}

}  // namespace attnviz::core
