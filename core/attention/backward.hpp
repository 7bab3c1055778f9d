// The attention's backward pass on a layer's weights as forward_into multiplies by them
// (LayerWeightsT): from G = ∂L/∂output (n×d_model) to the gradients of X, of every weight, and of
// every head's attention weights, in the compute type (row vectors, as forward.hpp):
//
//   output = concat·W_O + b_O          d_W_O = concatᵀ·G (stored transposed: Gᵀ·concat),
//                                      d_b_O = Σ_rows G, d_concat = G·W_Oᵀ
//   Z = A·V                            d_A = d_Z·Vᵀ, d_V = Aᵀ·d_Z
//   A = softmax_rows(S)                d_S[i][j] = A[i][j]·(d_A[i][j] − Σ_k A[i][k]·d_A[i][k])
//                                      (softmax₁ alike; a masked key has A = 0, so no gradient)
//   S = c·tanh(S_scaled / c)           d_S_scaled = d_S · (1 − (S / c)²)       (soft-capping)
//   S_scaled = S_raw / s               d_S_raw = d_S_scaled / s
//   S_raw = Q_rot·K_rotᵀ               d_Q_rot = d_S_raw·K_rot, d_K_rot = d_S_rawᵀ·Q_rot
//   RoPE (a rotation of each pair)     d_Q = the pair turned back by the same angle
//   q/k norms: y = x / r ⊙ w over      d_x = (w ⊙ d_y) / r − x·Σ_j(w_j·d_y_j·x_j) / (D·r³),
//   every head's row (D = h·d_k)       d_w = Σ_rows d_y ⊙ x / r (K: every group's row, D = g·d_k)
//   P = X·W_qkv + b_qkv                d_W_qkv = Xᵀ·d_P (stored transposed: d_Pᵀ·X), d_b_qkv = Σ_rows d_P,
//                                      d_X = d_P·W_qkvᵀ
// where P's columns are every head's Q, then every K/V group's K, then V (qkv_columns): a group's
// K and V collect the gradients of every head that shares them.
#pragma once

#include <vector>

#include "core/attention/forward.hpp"

namespace attnviz::core {

template <class Scalar>
struct AttentionGradientsT {
    MatrixT<Scalar> d_X;                     // n×d_model
    MatrixT<Scalar> d_projections;           // n×qkv_columns: ∂L/∂P, P = X·W_qkv + b_qkv (after no norm)
    MatrixT<Scalar> d_W_qkv;                 // as LayerWeightsT lays W_qkv out (its parts one under the other)
    MatrixT<Scalar> d_b_qkv;                 // 1×qkv_columns (empty without biases)
    MatrixT<Scalar> d_W_O;                   // as W_O is stored
    MatrixT<Scalar> d_b_O;                   // 1×d_model (empty without biases)
    MatrixT<Scalar> d_q_norm, d_k_norm;      // 1×h·d_k, 1×g·d_k (empty without q/k norms)
    std::vector<MatrixT<Scalar>> d_weights;  // per head, n×n: ∂L/∂A
};

// The backward pass of forward_into(trace, config, X, weights) for G = ∂L/∂trace.output.
// Precondition: what that forward requires, the trace it computed (its Q, K, V, weights, concat),
// G of the output's shape, an output projection. With `weights_too` false only d_X, d_projections
// and d_weights are computed (the parameters' gradients left empty).
template <class Scalar>
void attention_backward(const Config& config, const Eigen::Ref<const MatrixT<Scalar>>& X,
                        const LayerWeightsT<Scalar>& weights, const TraceT<Scalar>& trace, const MatrixT<Scalar>& G,
                        AttentionGradientsT<Scalar>& out, bool weights_too = true);

// RoPE backwards: the gradient of a rotated matrix (positions × d_k, row p at position p) turned
// back pair by pair (the transpose of each rotation), in place; columns RoPE leaves alone pass
// through. `positions`: the length RoPE's scaling was chosen for (rope_frequency's n).
template <class Scalar>
void unrotate(MatrixT<Scalar>& d_rotated, const Rope& rope, int d_k, int positions);

// The RMS norm y = x / r ⊙ w of each row backwards (r = √(mean(x²) + eps) per row, D columns):
//   d_x = (w ⊙ d_y) / r − x · Σ_j (w_j·d_y_j·x_j) / (D·r³),   d_w = Σ_rows d_y ⊙ x / r
// d_y (n×D) becomes d_x in place; d_w (1×D) is written.
template <class Scalar>
void rms_norm_backward(const MatrixT<Scalar>& x, const MatrixT<Scalar>& r, const MatrixT<Scalar>& w,
                       MatrixT<Scalar>& d_y, MatrixT<Scalar>& d_w);

extern template void attention_backward<float>(const Config&, const Eigen::Ref<const MatrixT<float>>&,
                                               const LayerWeightsT<float>&, const TraceT<float>&, const MatrixT<float>&,
                                               AttentionGradientsT<float>&, bool);
extern template void attention_backward<double>(const Config&, const Eigen::Ref<const MatrixT<double>>&,
                                                const LayerWeightsT<double>&, const TraceT<double>&,
                                                const MatrixT<double>&, AttentionGradientsT<double>&, bool);
extern template void unrotate<float>(MatrixT<float>&, const Rope&, int, int);
extern template void unrotate<double>(MatrixT<double>&, const Rope&, int, int);
extern template void rms_norm_backward<float>(const MatrixT<float>&, const MatrixT<float>&, const MatrixT<float>&,
                                              MatrixT<float>&, MatrixT<float>&);
extern template void rms_norm_backward<double>(const MatrixT<double>&, const MatrixT<double>&, const MatrixT<double>&,
                                               MatrixT<double>&, MatrixT<double>&);

}  // namespace attnviz::core
