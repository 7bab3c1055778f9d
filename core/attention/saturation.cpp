#include "core/attention/saturation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::core {

namespace {

// One row's allowed scores (its finite entries of scores_raw), gathered once and then evaluated at
// any number of divisors. The softmax follows core::forward's steps: y = x / s, then
// exp(y − m) with m from softmax_base of max y = (max x) / s (a division by s > 0 keeps the order,
// rounding included, so that is the same m).
class Row {
public:
    explicit Row(Eigen::Index n_keys) : x_(n_keys), e_(n_keys) {}

    void gather(const ScoresRef& scores_raw, Eigen::Index i) {
        keys_ = 0;
        x_max_ = -std::numeric_limits<double>::infinity();
        for (Eigen::Index j = 0; j < scores_raw.cols(); ++j) {
            const double v = scores_raw(i, j);
            if (!std::isfinite(v)) continue;  // masked: no weight
            x_(keys_++) = v;
            x_max_ = std::max(x_max_, v);
        }
    }

    int keys() const { return static_cast<int>(keys_); }

    RowSaturation at(double s, Softmax kind) {
        if (keys_ == 0) return {};
        const auto x = x_.head(keys_);
        auto e = e_.head(keys_);
        const SoftmaxBase<double> base = softmax_base(kind, x_max_ / s);
        const double m = base.m;
        exp_or_zero(x / s - m, e);
        const double sum = base.constant + e.sum();          // ≥ 1: the max (or softmax₁'s 1) contributes exp(0)
        const double shift = (e * (x / s - m)).sum() / sum;  // Σ w·(y − m) ≤ 0
        // Σ w: 1, or below 1 under softmax₁, whose largest weight is e^{max y − m} / Σ.
        const double mass = kind == Softmax::plus_one ? e.sum() / sum : 1.0;
        const double max = kind == Softmax::plus_one ? std::exp(x_max_ / s - m) / sum : 1 / sum;
        return {std::max(0.0, std::log(sum) * mass - shift), max, keys()};
    }

private:
    Eigen::ArrayXd x_, e_;  // the allowed scores, and exp(y − m) of the divisor being evaluated
    Eigen::Index keys_ = 0;
    double x_max_ = 0;
};

// The unbiased sample variance of `v` (two passes: the mean first, then the squared deviations).
double sample_variance(const std::vector<double>& v) {
    if (v.size() < 2) return 0;
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double sq = 0;
    for (double x : v) sq += (x - mean) * (x - mean);
    return sq / static_cast<double>(v.size() - 1);
}

}  // namespace

SaturationSummary& SaturationSummary::operator+=(const SaturationSummary& o) {
    const int all = rows + o.rows;
    if (all > 0) {
        mean_entropy = (mean_entropy * rows + o.mean_entropy * o.rows) / all;
        mean_max = (mean_max * rows + o.mean_max * o.rows) / all;
        mean_uniform_entropy = (mean_uniform_entropy * rows + o.mean_uniform_entropy * o.rows) / all;
    }
    rows = all;
    choosing += o.choosing;
    one_hot += o.one_hot;
    return *this;
}

Matrix masked_scores_raw(const HeadTrace& head) {
    Matrix out = head.scores_raw;
    for (Eigen::Index i = 0; i < out.rows(); ++i)
        for (Eigen::Index j = 0; j < out.cols(); ++j)
            if (head.scores(i, j) == -std::numeric_limits<double>::infinity())
                out(i, j) = -std::numeric_limits<double>::infinity();
    return out;
}

void saturate_rows(const ScoresRef& scores_raw, double s, std::vector<RowSaturation>& rows, Softmax kind) {
    rows.resize(static_cast<size_t>(scores_raw.rows()));
    Row row(scores_raw.cols());
    for (Eigen::Index i = 0; i < scores_raw.rows(); ++i) {
        row.gather(scores_raw, i);
        rows[static_cast<size_t>(i)] = row.at(s, kind);
    }
}

SaturationCurves saturation_curves(const ScoresRef& scores_raw, std::span<const double> divisors, Softmax kind) {
    const Eigen::Index n = scores_raw.rows(), points = static_cast<Eigen::Index>(divisors.size());
    SaturationCurves c;
    c.entropy.resize(n, points);
    c.max.resize(n, points);
    c.keys.resize(static_cast<size_t>(n));
    // Rows outer, divisors inner: each row is gathered once and stays in cache for every divisor.
    Row row(scores_raw.cols());
    for (Eigen::Index i = 0; i < n; ++i) {
        row.gather(scores_raw, i);
        c.keys[static_cast<size_t>(i)] = row.keys();
        for (Eigen::Index p = 0; p < points; ++p) {
            const RowSaturation r = row.at(divisors[static_cast<size_t>(p)], kind);
            c.entropy(i, p) = r.entropy;
            c.max(i, p) = r.max;
        }
    }
    std::vector<RowSaturation> column(static_cast<size_t>(n));
    for (Eigen::Index p = 0; p < points; ++p) {
        for (Eigen::Index i = 0; i < n; ++i)
            column[static_cast<size_t>(i)] = {c.entropy(i, p), c.max(i, p), c.keys[static_cast<size_t>(i)]};
        c.summaries.push_back(summarize(column));
    }
    return c;
}

SaturationSummary summarize(std::span<const RowSaturation> rows) {
    SaturationSummary s;
    s.rows = static_cast<int>(rows.size());
    if (rows.empty()) return s;
    for (const RowSaturation& r : rows) {
        s.mean_entropy += r.entropy;
        s.mean_max += r.max;
        if (r.keys > 0) s.mean_uniform_entropy += std::log(static_cast<double>(r.keys));
        if (r.keys < 2) continue;
        ++s.choosing;
        if (r.max >= one_hot_threshold) ++s.one_hot;
    }
    s.mean_entropy /= s.rows;
    s.mean_max /= s.rows;
    s.mean_uniform_entropy /= s.rows;
    return s;
}

SaturationSummary summarize(const HeadTrace& head, const std::vector<RowStats>& stats) {
    std::vector<RowSaturation> rows(stats.size());
    for (size_t i = 0; i < stats.size(); ++i) {
        const auto scores = head.scores.row(static_cast<Eigen::Index>(i)).array();
        rows[i] = {stats[i].entropy, stats[i].max, static_cast<int>(scores.isFinite().count())};
    }
    return summarize(rows);
}

std::vector<double> divisor_grid(int d_k, int points, std::optional<double> current) {
    std::vector<double> grid;
    const double root = std::sqrt(static_cast<double>(std::max(d_k, 1)));
    points = std::max(points, 2);
    const double lo = std::log(grid_low), hi = std::log(grid_high);
    for (int k = 0; k < points; ++k) {
        const double t = static_cast<double>(k) / (points - 1);
        // √d_k exactly in the middle (the logs of the two ends need not cancel to the last bit).
        grid.push_back(2 * k == points - 1 ? root : root * std::exp(lo + t * (hi - lo)));
    }
    if (current && *current > 0 && std::find(grid.begin(), grid.end(), *current) == grid.end())
        grid.insert(std::lower_bound(grid.begin(), grid.end(), *current), *current);
    return grid;
}

DotVariance dot_product_variance(int d_k, int samples, std::uint64_t seed) {
    DotVariance out;
    out.d_k = d_k;
    out.samples = samples;
    if (d_k < 1 || samples < 2) return out;
    SplitMix64 g(SplitMix64::mix(seed ^ SplitMix64::mix(static_cast<std::uint64_t>(d_k))));
    const double root = std::sqrt(static_cast<double>(d_k));
    std::vector<double> dots(static_cast<size_t>(samples)), scaled(static_cast<size_t>(samples));
    for (size_t n = 0; n < dots.size(); ++n) {
        double dot = 0;
        for (int a = 0; a < d_k; ++a) {
            const double q = g.normal();
            dot += q * g.normal();
        }
        dots[n] = dot;
        scaled[n] = dot / root;
    }
    out.var_dot = sample_variance(dots);
    out.var_scaled = sample_variance(scaled);
    out.two_keys_raw = 1 / (1 + std::exp(-std::sqrt(out.var_dot)));
    out.two_keys_scaled = 1 / (1 + std::exp(-std::sqrt(out.var_scaled)));
    return out;
}

std::vector<DotVariance> dot_product_variance(std::span<const int> d_ks, int samples, std::uint64_t seed) {
    std::vector<DotVariance> rows;
    for (int d_k : d_ks) rows.push_back(dot_product_variance(d_k, samples, seed));
    return rows;
}

std::vector<int> power_of_two_dims(int largest) {
    std::vector<int> dims;
    for (int d = 1; d <= largest; d *= 2) dims.push_back(d);
    return dims;
}

}  // namespace attnviz::core
