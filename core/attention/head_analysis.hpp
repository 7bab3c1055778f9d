// What a head really does, beyond its weights: the analyses of the attention lab, each computed
// from a session's params and its trace (never per frame).
//
// For head h, W_O⁽ʰ⁾ is rows h·d_v … (h+1)·d_v − 1 of W_O (d_v×d_model); a K/V group's heads use the
// group's W_K, W_V (params.kv_owner(h)).
//   value outputs    f_h(x_j) = V⁽ʰ⁾_j · W_O⁽ʰ⁾ (V with b_V), or V⁽ʰ⁾_j without the output
//                    projection: what key j adds to a query's output per unit of weight (m×width)
//   norm-weighted    ‖α_ij · f_h(x_j)‖ = α_ij · ‖f_h(x_j)‖ (Kobayashi et al. 2020), n×m; masked: 0
//   circuits         W_QK = W_Q·W_Kᵀ, W_OV = W_V·W_O⁽ʰ⁾ (d_model×d_model, Elhage et al. 2021); the
//                    singular values of W_QK (its first d_k; the rest are 0 by rank) and W_OV
//                    (d_v); W_OV's eigenvalues (its d_v possibly non-zero ones: those of the d_v×d_v
//                    W_O⁽ʰ⁾·W_V, which shares them) and its copying score trace(W_OV) / Σ|λ_i|
//   ablation         head h's Z replaced by zeros or by its mean over the query rows; the output
//                    recomputed: Δoutput = output' − output = (Z' − Z)·W_O⁽ʰ⁾ (or the concat's
//                    columns without W_O), reported as ‖Δoutput‖_F
//   patching         head h's Z taken from another trace of the same shape (Compare's pinned A)
//   sinks            the key with the largest mean weight over the queries, and the share of
//                    queries putting at least 0.3 of their weight on it (Gu et al. 2024)
//   RoPE pairs       scores_raw = Σ_p Q_rot[:, pair p]·K_rot[:, pair p]ᵀ + the unrotated columns' part
#pragma once

#include <complex>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/attention/params.hpp"

namespace attnviz::core {

// f_h(x_j) for every key j: m×d_model with W_O, m×d_v without.
Matrix value_outputs(const Config& config, const Params& params, const Trace& trace, int head);

// α_ij·‖f_h(x_j)‖, n×m (masked weights are 0, so their entries are 0).
Matrix norm_weighted(const Config& config, const Params& params, const Trace& trace, int head);
// The same from one head's numbers in either scalar type (a model run's float blocks): its weights
// (n×m), its V (m×d_v, b_V included) and its rows of W_O (d_v×d_model; empty without an output
// projection: f_h(x_j) = V_j). ‖f_h(x_j)‖ is computed in Scalar.
template <class Scalar>
Matrix norm_weighted(const MatrixT<Scalar>& weights, const MatrixT<Scalar>& V,
                     const Eigen::Ref<const MatrixT<Scalar>>& W_O_rows);
// The norm-weighted attention with each query row divided by its sum (a row of zeros stays 0): the
// share of the query's moved output each key gives, a distribution over the keys as the weights
// are, for the views that draw by relative strength (the head view's lines, the model view's
// thumbnails).
Matrix norm_weighted_rows(const Matrix& norm_weighted);

extern template Matrix norm_weighted<float>(const MatrixT<float>&, const MatrixT<float>&,
                                            const Eigen::Ref<const MatrixT<float>>&);
extern template Matrix norm_weighted<double>(const MatrixT<double>&, const MatrixT<double>&,
                                             const Eigen::Ref<const MatrixT<double>>&);

struct Circuits {
    Matrix W_QK;                                       // d_model×d_model
    Matrix W_OV;                                       // d_model×d_model; empty without the output projection
    Eigen::VectorXd qk_singular;                       // d_k values, descending
    Eigen::VectorXd ov_singular;                       // d_v values, descending; empty without the output projection
    std::vector<std::complex<double>> ov_eigenvalues;  // d_v, by descending magnitude; empty without W_O
    double copying = 0;  // trace(W_OV) / Σ|λ_i| in [−1, 1]; 0 when W_OV is 0 or without W_O
};
Circuits circuits(const Config& config, const Params& params, int head);

enum class Ablation { zero, mean };
// Δoutput (n×output_width) of replacing head h's Z: by zeros, or every row by Z's mean row.
Matrix ablation_delta(const Config& config, const Params& params, const Trace& trace, int head, Ablation how);
// Δoutput of taking head h's Z from `source` (a trace of the same config) into `trace`.
Matrix patching_delta(const Config& config, const Params& params, const Trace& trace, const Trace& source, int head);

struct Sink {
    int key = 0;       // argmax_j of the mean over queries of weights(i, j) (the first on a tie)
    double mean = 0;   // that mean weight
    double share = 0;  // the share of queries with weights(i, key) ≥ sink_threshold
};
inline constexpr double sink_threshold = 0.3;
Sink sink(const Matrix& weights);  // of one head's n×m weights
Sink sink(const Trace& trace, int head);
// A sink head: at least this share of its queries put sink_threshold of their weight on its sink key.
inline constexpr double sink_head_share = 0.5;
inline bool is_sink_head(const Sink& s) { return s.share >= sink_head_share; }

// With RoPE: each rotated pair's n×m part of scores_raw (pair order as rope_pair: (j, j + dims/2)
// for half, (2j, 2j + 1) for interleaved), and the part of the columns RoPE leaves alone (from dims
// on; zero when every column is rotated). Empty without RoPE.
struct RopeSplit {
    std::vector<Matrix> pairs;
    Matrix rest;
};
RopeSplit rope_split(const Config& config, const Trace& trace, int head);

// What each rotated pair of a RopeSplit does (RoPE by frequency): its angle per position θ_p (a
// fast pair turns by about a radian a token, a slow one by θ^(−(d−2)/d)), its mean |contribution|
// over the n×m scores (masked cells count as computed: RoPE acts before the mask), and its mean
// contribution at each relative position key − query = offset, offsets −(n − 1) … (m − 1): the
// structure by distance the pair gives the scores.
struct RopePairProfile {
    double theta = 0;
    double mean_abs = 0;
    std::vector<double> by_offset;  // index offset + n − 1
};
std::vector<RopePairProfile> rope_pair_profiles(const Config& config, const RopeSplit& split);
// The same of the columns RoPE leaves unrotated (partial rotary; θ 0): position plays no part in them.
RopePairProfile rope_rest_profile(const RopeSplit& split);

}  // namespace attnviz::core
