// Saturation of the softmax: what the divisor s does to a head's attention, and why s = √d_k.
//
// One head's scores_raw (n×n_keys, −∞ where a key is masked) divided by s and put through the
// softmax give row i's weights, as core::forward computes them (seed 003, docs/math.md#seed-003):
//   y_j = scores_raw[i][j] / s,   m = max_j y_j,   w_j = exp(y_j − m) / Σ,   Σ = Σ_j exp(y_j − m)
// so the row's max weight is exp(0) / Σ = 1 / Σ and its entropy, in nats, is
//   H = −Σ_j w_j·ln w_j = ln Σ − Σ_j w_j·(y_j − m)        (no log per weight, nothing overflows)
// As s → 0 a row with one largest score goes one-hot (max → 1, H → 0): the softmax saturates and
// its gradient, w·(1 − w) and −w_j·w_k, vanishes. As s → ∞ it goes uniform (H → ln n_keys).
// Under softmax₁ (Softmax::plus_one) m = max(0, max y) and Σ gains e^{−m} (softmax_base): the max
// weight is e^{max y − m} / Σ and H = ln Σ·Σ_j w_j − Σ_j w_j·(y_j − m), the weights summing to below 1.
//
// Why √d_k: for q, k with d_k i.i.d. entries of mean 0 and variance 1, q·k is a sum of d_k
// products of variance 1 each, so Var(q·k) = d_k, and Var(q·k / √d_k) = 1 whatever d_k. The
// experiment below shows it with sampled numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/base/splitmix.hpp"

namespace attnviz::core {

// A row is "nearly one-hot" when its largest weight is at least this: 99% of its attention on one
// key. Every entry of the softmax's Jacobian there, w_j·(δ_jk − w_k), is at most 0.0099 in size
// (against up to 0.25 for two keys at equal weight): the gradient through it vanishes.
inline constexpr double one_hot_threshold = 0.99;

// One query row of weights at one divisor.
struct RowSaturation {
    double entropy = 0;  // −Σ w·ln w in nats; 0: one-hot, ln(keys): uniform
    double max = 0;      // the largest weight; 1/keys (uniform) to 1 (one-hot)
    int keys = 0;        // the keys the row may look at (not masked)
};

// A head's rows at one divisor, in a few numbers.
struct SaturationSummary {
    double mean_entropy = 0;  // over every row, nats
    double mean_max = 0;      // over every row
    // The mean entropy the rows would have if uniform (over their allowed keys): mean of ln(keys),
    // ln(n_keys) without a mask. The top of a plot of mean_entropy.
    double mean_uniform_entropy = 0;
    int rows = 0;  // query rows
    // Rows with at least two keys to choose from, and how many of them are nearly one-hot
    // (max ≥ one_hot_threshold). A row with one allowed key (the first query under a causal mask)
    // has weight 1 whatever s is: it says nothing about saturation and is not counted.
    int choosing = 0;
    int one_hot = 0;
    double one_hot_share() const { return choosing > 0 ? static_cast<double>(one_hot) / choosing : 0.0; }
    // Whether most rows that choose are nearly one-hot (the panel's callout).
    bool saturated() const { return 2 * one_hot > choosing; }
    // Sums two heads' summaries (rows, counts and the means weighted by their rows).
    SaturationSummary& operator+=(const SaturationSummary& o);
};

// scores_raw of one head with −∞ wherever its scores are −∞: the mask, whatever made it, in the
// form the functions below take (n×n_keys).
Matrix masked_scores_raw(const HeadTrace& head);

// The functions below take scores_raw as a reference to its rows, so that a block of rows
// (scores_raw.middleRows(first, count)) is read in place: a caller can spread a large head's work
// over several calls and add up the summaries.
using ScoresRef = Eigen::Ref<const Matrix>;

// Every row of scores_raw (n×n_keys, −∞ where masked) at divisor s > 0 under the softmax `kind`
// (the trace's config.softmax), into `rows` (resized to n). Allocates two scratch rows of n_keys for the call. A row
// with no allowed key (all −∞, which core::validate never lets happen) gets entropy 0, max 0 and keys 0.
void saturate_rows(const ScoresRef& scores_raw, double s, std::vector<RowSaturation>& rows,
                   Softmax kind = Softmax::standard);

// Every row at every divisor: entropy and max as n×P matrices (column p: divisors[p]), and each
// divisor's summary. Each row's allowed keys are gathered once and evaluated at every divisor
// while in cache; the scratch space (two rows) is allocated once. About 1.5 ns per row, key and
// divisor (n = 512, 49 divisors: 19 ms per head on one core of the machine of docs/benchmarks.md).
struct SaturationCurves {
    Matrix entropy;                            // n×P
    Matrix max;                                // n×P
    std::vector<int> keys;                     // n: allowed keys of each row
    std::vector<SaturationSummary> summaries;  // P
};
SaturationCurves saturation_curves(const ScoresRef& scores_raw, std::span<const double> divisors,
                                   Softmax kind = Softmax::standard);

SaturationSummary summarize(std::span<const RowSaturation> rows);
// The same summary from a trace's own row statistics at the divisor it applied (the keys of each
// row counted from the head's scores, −∞ where masked).
SaturationSummary summarize(const HeadTrace& head, const std::vector<RowStats>& rows);

// The divisors a saturation plot samples: `points` of them log-spaced from grid_low·√d_k to
// grid_high·√d_k (√d_k itself in the middle when `points` is odd: the two ends are reciprocal),
// with `current` inserted in order when given and not already one of them.
inline constexpr double grid_low = 0.05, grid_high = 20;
std::vector<double> divisor_grid(int d_k, int points, std::optional<double> current = std::nullopt);

// --- The √d_k experiment.

// N samples of q·k for q, k with d_k i.i.d. standard normal entries.
struct DotVariance {
    int d_k = 0;
    int samples = 0;
    double var_dot = 0;     // sample variance of q·k (unbiased, divided by N − 1): ≈ d_k
    double var_scaled = 0;  // of q·k/√d_k: ≈ 1
    // What that spread does to a softmax: the larger weight of two keys whose scores are one
    // standard deviation apart, 1 / (1 + e^−σ), with σ = √var_dot (unscaled) and √var_scaled.
    double two_keys_raw = 0;
    double two_keys_scaled = 0;
};

// One d_k, from its own stream (the seed mixed with d_k), so a row does not depend on the others.
// The estimate's relative standard deviation is about sqrt((2 + 6/d_k) / N) (q·k has kurtosis
// 3 + 6/d_k), which is what a test's tolerance should follow.
DotVariance dot_product_variance(int d_k, int samples, std::uint64_t seed);
std::vector<DotVariance> dot_product_variance(std::span<const int> d_ks, int samples, std::uint64_t seed);
// 1, 2, 4, …, 1024.
std::vector<int> power_of_two_dims(int largest = 1024);

}  // namespace attnviz::core
