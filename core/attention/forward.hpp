// The forward pass of (multi-head) scaled dot-product attention, keeping every intermediate.
//
// Per head i (seeds 000–002; docs/math.md sections 1–3, #seed-000 to #seed-002):
//   Q = X·W_Q (n×d_k)   K = X·W_K (n×d_k)   V = X·W_V (n×d_v)
//     (+ b_Q, b_K, b_V on every row with biases; W_K, W_V of head i's K/V group under grouped-query
//     attention)
//   q/k norms (config.qk_norm): each row of [Q⁽¹⁾ … Q⁽ʰ⁾] divided by its RMS √(mean(q²) + eps) and
//     times q_norm, each row of the groups' [K⁽¹⁾ … K⁽ᵍ⁾] alike by k_norm; Q and K are then these
//   RoPE: Q_rot, K_rot = Q, K with row p's pairs rotated by p·θ_j (see Rope in config.hpp)
//   scores_raw = Q·Kᵀ (n×n), or Q_rot·K_rotᵀ with RoPE
//   scores = scores_raw / s   (s = √d_k, 1, or the user's divisor; causal mask: j > i → −∞;
//     sliding window: j ≤ i − window → −∞)
//   soft-capping: scores_capped = c·tanh(scores / c), the softmax's input in place of scores
//   weights = softmax of each row of scores (n×n, stable: the row max is subtracted first);
//     softmax₁ with config.softmax = plus_one: e^{s_ij} / (1 + Σ_k e^{s_ik}), rows summing to below 1
//   Z = weights·V (n×d_v)
// concat = [Z⁽¹⁾ … Z⁽ʰ⁾] (n×h·d_v); output = concat·W_O (+ b_O) (n×d_model), or concat without W_O.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/gemm.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/attention/params.hpp"

namespace attnviz::core {

template <class Scalar>
struct HeadTraceT {
    MatrixT<Scalar> Q;              // n×d_k
    MatrixT<Scalar> K;              // n×d_k
    MatrixT<Scalar> V;              // n×d_v
    MatrixT<Scalar> Q_rot;          // n×d_k, Q with RoPE (empty without)
    MatrixT<Scalar> K_rot;          // n×d_k, K with RoPE (empty without)
    MatrixT<Scalar> scores_raw;     // n×n, Q·Kᵀ (Q_rot·K_rotᵀ with RoPE)
    MatrixT<Scalar> scores;         // n×n, scores_raw / s, −∞ where masked
    MatrixT<Scalar> scores_capped;  // n×n, c·tanh(scores / c) with soft-capping (empty without)
    MatrixT<Scalar> weights;        // n×n, row-wise softmax of scores (of scores_capped with soft-capping)
    MatrixT<Scalar> Z;              // n×d_v, weights·V
};

// Diagnostics of one row of weights.
struct RowStats {
    double sum = 0;      // Σ_j weights[i][j], 1 up to rounding (below 1 under softmax₁)
    double max = 0;      // max_j weights[i][j]
    double entropy = 0;  // −Σ_j w·ln w in nats (0·ln 0 = 0); ln(n) is uniform attention
};

template <class Scalar>
struct TraceT {
    Config config;
    double scale = 1;                         // the divisor s that was applied
    std::vector<HeadTraceT<Scalar>> heads;    // h entries
    std::vector<std::vector<RowStats>> rows;  // [head][query row] stats of weights
    MatrixT<Scalar> concat;                   // n×(h·d_v)
    MatrixT<Scalar> output;                   // n×d_model with W_O, n×(h·d_v) without
    // With q/k norms, each row's RMS √(mean(x²) + eps) of every head's X·W_Q (+ b_Q) side by side
    // (q_rms, n×1) and of every group's X·W_K (+ b_K) (k_rms, n×1), what its row was divided by;
    // empty without.
    MatrixT<Scalar> q_rms, k_rms;

    // Scratch space of forward_into, kept so a recompute of the same size allocates nothing: the
    // session's inputs in the compute type as LayerWeightsT lays them out (X, W_qkv, b_qkv, W_O,
    // b_O; those already in it are used where they are), X·W_qkv (n×qkv_columns), and RoPE's
    // cosines and sines (n×dims/2). Not part of the trace: its contents mean nothing to a reader.
    struct Scratch {
        MatrixT<Scalar> X, W_qkv, b_qkv, W_O, b_O, q_norm, k_norm, projections;
        Eigen::Array<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> cos, sin;
    };
    Scratch scratch;
};

// A layer's weights in the compute type as forward_into multiplies by them, each a view of values
// held elsewhere (a session's converted into the trace's scratch space, or a model's where it keeps
// them). g = config.kv_count() K/V groups; head i uses group config.kv_group(i).
//   W_qkv  every head's W_Q, then every group's W_K, then every group's W_V, side by side:
//          d_model × qkv_columns(config); or, `qkv_transposed`, its transpose (nn.Linear's query,
//          key and value weights one under the other)
//   b_qkv  1 × qkv_columns(config): the biases in the same order (empty without biases)
//   W_O    h·d_v × d_model, or, `o_transposed`, d_model × h·d_v (with the output projection)
//   b_O    1 × d_model (empty without biases)
//   q_norm 1 × h·d_k and k_norm 1 × g·d_k: the q/k norms' weights (empty without them)
// W_qkv and W_O may be a model's weights as its file stores them (F32 in a double forward, BF16,
// F16: gemm.hpp's WeightsView), widened as the product packs them.
// With `qkv_transposed`, W_qkv may instead be given as its rows in up to three parts, one under
// the other (W_qkv_parts; W_qkv then empty): nn.Linear's query, key and value weights where they
// lie, multiplied each into its columns of X·W_qkv (the same numbers: gemm.hpp).
template <class Scalar>
struct LayerWeightsT {
    WeightsView<Scalar> W_qkv;
    std::array<WeightsView<Scalar>, 3> W_qkv_parts{};
    MatrixView<Scalar> b_qkv;
    WeightsView<Scalar> W_O;
    MatrixView<Scalar> b_O;
    bool qkv_transposed = false, o_transposed = false;
    MatrixView<Scalar> q_norm, k_norm;
};

// The columns of X·W_qkv: h·d_k + g·(d_k + d_v); and where head i's Q, K and V start among them.
// The product (gemm.hpp) sums every column the same way wherever it lies: a grouped layer gives what
// the same layer with each head's own copy of its K/V gives, and a model's weights in their own
// layout what its session gives, number for number.
inline int qkv_columns(const Config& c) { return c.heads * c.d_k + c.kv_count() * (c.d_k + c.d_v); }
inline int q_column(const Config& c, int head) { return head * c.d_k; }
inline int k_column(const Config& c, int head) { return c.heads * c.d_k + c.kv_group(head) * c.d_k; }
inline int v_column(const Config& c, int head) {
    return c.heads * c.d_k + c.kv_count() * c.d_k + c.kv_group(head) * c.d_v;
}

// A session's weights in the compute type as LayerWeightsT lays them out, converted into `scratch`
// (the trace's scratch space, or one of the caller's) where they are not; only W_O and b_O under
// cross-attention (each head projects X and Y itself).
template <class Scalar>
LayerWeightsT<Scalar> layer_weights(const Config& config, const Params& params,
                                    typename TraceT<Scalar>::Scratch& scratch);

// P = X·W_qkv (+ b_qkv on every row), n × qkv_columns: every head's Q, every group's K and V side by
// side before the q/k norms (W_qkv whole, or its parts each into its columns); P is resized.
template <class Scalar>
void project_qkv(const Eigen::Ref<const MatrixT<Scalar>>& X, const LayerWeightsT<Scalar>& weights, MatrixT<Scalar>& P);

// RoPE, one pair of columns at a time. Pair j (0 ≤ j < dims/2) of a d_k-column row: its two
// columns, its frequency θ_j = base^(−2j/dims) as rope.scaling stretches it for a layer of n
// positions (config.hpp: RopeScaling), and the angle it turns by at position p: p·θ_j.
struct RopePair {
    int first, second;  // x' [first] = x[first]·cos − x[second]·sin; x'[second] = x[second]·cos + x[first]·sin
};
RopePair rope_pair(const Rope& rope, int d_k, int j);
double rope_frequency(const Rope& rope, int d_k, int j, int n);
double rope_angle(const Rope& rope, int d_k, int position, int j, int n);
// The pair a rotated column belongs to and whether it is the pair's first column, or nullopt for a
// column RoPE leaves alone (from `dims` on).
std::optional<std::pair<int, bool>> rope_pair_of_column(const Rope& rope, int d_k, int column);

using HeadTrace = HeadTraceT<double>;
using Trace = TraceT<double>;

// Where the softmax of a row starts before any key is summed: a running max m₀ and a running sum
// ℓ₀, to which each key of score s adds e^{s − m}. The one rule of Config::softmax that everything
// computing weights follows (the forward, explain, the online softmax, the KV cache, saturation):
//   standard: m₀ = −∞, ℓ₀ = 0   (nothing)
//   plus_one: m₀ = 0,  ℓ₀ = 1   (softmax₁'s 1 is e^0: one more key, of score 0 and a zero value)
struct SoftmaxStart {
    double m = 0;
    double l = 0;
};
constexpr SoftmaxStart softmax_start(Softmax kind) {
    return kind == Softmax::plus_one ? SoftmaxStart{0.0, 1.0}
                                     : SoftmaxStart{-std::numeric_limits<double>::infinity(), 0.0};
}

// A whole row with largest score M: its reference m = max(m₀, M), subtracted from every score
// before exp, and the start's share of the row's sum ℓ₀·e^{m₀ − m} (e^{−m} under plus_one, 0 for
// the standard softmax). The weights are then w_j = e^{s_j − m} / (constant + Σ_k e^{s_k − m}):
// under plus_one m ≥ 0 keeps every term ≤ 1, so scores of 1000 stay finite, and a row with every
// key masked (M = −∞) has m = 0, a sum of 1 and weights 0.
template <class Scalar>
struct SoftmaxBase {
    Scalar m;
    Scalar constant;
};
template <class Scalar>
SoftmaxBase<Scalar> softmax_base(Softmax kind, Scalar row_max) {
    const SoftmaxStart start = softmax_start(kind);
    if (start.l == 0) return {row_max, Scalar(0)};
    const Scalar m = std::max(static_cast<Scalar>(start.m), row_max);
    return {m, static_cast<Scalar>(start.l) * std::exp(static_cast<Scalar>(start.m) - m)};
}

// Row-wise softmax in place, stable (softmax_base's m subtracted before exp). Entries of −∞
// (masked) get weight 0. Under the standard softmax every row must hold at least one finite entry.
template <class Scalar>
void softmax_rows(MatrixT<Scalar>& m, Softmax kind = Softmax::standard);

// The whole trace. Precondition: validate(config) and validate(config, params) are empty.
// Heads are computed in parallel (OpenMP) when the work is large enough to gain from it.
template <class Scalar>
TraceT<Scalar> forward(const Config& config, const Params& params);

// The same, written into an existing trace whose matrices are reused when their sizes match, so a
// recompute of the same dimensions allocates (and page-faults) nothing new.
template <class Scalar>
void forward_into(TraceT<Scalar>& trace, const Config& config, const Params& params);

// The trace of X (n×d_model) through weights already in the compute type (a model's layer), as
// forward_into of a session holding the same X and weights gives it, number for number. `mask`: the
// custom mask (n×n of 0/1) under Mask::custom, else empty. Precondition: validate(config) is empty,
// no cross-attention, and the views have the shapes LayerWeightsT gives.
template <class Scalar>
void forward_into(TraceT<Scalar>& trace, const Config& config, const Eigen::Ref<const MatrixT<Scalar>>& X,
                  const LayerWeightsT<Scalar>& weights, const Matrix& mask = {});

// The floating-point operations of one forward pass (multiply and add counted apart; the softmax's
// exponentials are not counted): projections, Q·Kᵀ, weights·V and W_O.
double forward_flops(const Config& config);

extern template LayerWeightsT<double> layer_weights<double>(const Config&, const Params&, TraceT<double>::Scratch&);
extern template LayerWeightsT<float> layer_weights<float>(const Config&, const Params&, TraceT<float>::Scratch&);
extern template void project_qkv<double>(const Eigen::Ref<const MatrixT<double>>&, const LayerWeightsT<double>&,
                                         MatrixT<double>&);
extern template void project_qkv<float>(const Eigen::Ref<const MatrixT<float>>&, const LayerWeightsT<float>&,
                                        MatrixT<float>&);
extern template void softmax_rows<double>(MatrixT<double>&, Softmax);
extern template void softmax_rows<float>(MatrixT<float>&, Softmax);
extern template TraceT<double> forward<double>(const Config&, const Params&);
extern template TraceT<float> forward<float>(const Config&, const Params&);
extern template void forward_into<double>(TraceT<double>&, const Config&, const Params&);
extern template void forward_into<float>(TraceT<float>&, const Config&, const Params&);
extern template void forward_into<double>(TraceT<double>&, const Config&, const Eigen::Ref<const MatrixT<double>>&,
                                          const LayerWeightsT<double>&, const Matrix&);
extern template void forward_into<float>(TraceT<float>&, const Config&, const Eigen::Ref<const MatrixT<float>>&,
                                         const LayerWeightsT<float>&, const Matrix&);

}  // namespace attnviz::core
