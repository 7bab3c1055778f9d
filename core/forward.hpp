// The forward pass of (multi-head) scaled dot-product attention, keeping every intermediate.
//
// Per head i (seeds 000–002):
//   Q = X·W_Q (n×d_k)   K = X·W_K (n×d_k)   V = X·W_V (n×d_v)
//   scores_raw = Q·Kᵀ (n×n)
//   scores = scores_raw / s   (s = √d_k, 1, or the user's divisor; causal mask: j > i → −∞)
//   weights = softmax of each row of scores (n×n, stable: the row max is subtracted first)
//   Z = weights·V (n×d_v)
// concat = [Z⁽¹⁾ … Z⁽ʰ⁾] (n×h·d_v); output = concat·W_O (n×d_model), or concat without W_O.
#pragma once

#include <vector>

#include "config.hpp"
#include "matrix.hpp"
#include "params.hpp"

namespace attnviz::core {

template <class Scalar>
struct HeadTraceT {
    MatrixT<Scalar> Q;           // n×d_k
    MatrixT<Scalar> K;           // n×d_k
    MatrixT<Scalar> V;           // n×d_v
    MatrixT<Scalar> scores_raw;  // n×n, Q·Kᵀ
    MatrixT<Scalar> scores;      // n×n, scores_raw / s, −∞ where masked
    MatrixT<Scalar> weights;     // n×n, row-wise softmax of scores
    MatrixT<Scalar> Z;           // n×d_v, weights·V
};

// Diagnostics of one row of weights.
struct RowStats {
    double sum = 0;      // Σ_j weights[i][j], 1 up to rounding
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
};

using HeadTrace = HeadTraceT<double>;
using Trace = TraceT<double>;

// Row-wise softmax in place, stable: each row has its max subtracted before exp.
// Entries of −∞ (masked) get weight 0. Every row must hold at least one finite entry.
template <class Scalar>
void softmax_rows(MatrixT<Scalar>& m);

// The whole trace. Precondition: validate(config) and validate(config, params) are empty.
template <class Scalar>
TraceT<Scalar> forward(const Config& config, const Params& params);

extern template void softmax_rows<double>(MatrixT<double>&);
extern template void softmax_rows<float>(MatrixT<float>&);
extern template TraceT<double> forward<double>(const Config&, const Params&);
extern template TraceT<float> forward<float>(const Config&, const Params&);

}  // namespace attnviz::core
