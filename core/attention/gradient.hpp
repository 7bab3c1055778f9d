// Sensitivity: the gradient of one output cell with respect to every input of the layer,
// computed analytically by backpropagation through the forward pass (row vectors, as forward.hpp):
//
//   output = concat·W_O + b_O          dW_O = concatᵀ·G, db_O = Σ_rows G, dconcat = G·W_Oᵀ
//                                      (without the projection, dconcat = G)
//   concat = [Z⁽¹⁾ … Z⁽ʰ⁾]             dZ⁽ⁱ⁾ = the head's columns of dconcat
//   Z = A·V                            dA = dZ·Vᵀ, dV = Aᵀ·dZ
//   A = softmax_rows(S)                dS[i][j] = A[i][j]·(dA[i][j] − Σ_k A[i][k]·dA[i][k])
//                                      (a masked key has A = 0, so no gradient)
//   S = S_raw / s                      dS_raw = dS / s
//   S_raw = Q_rot·K_rotᵀ               dQ_rot = dS_raw·K_rot, dK_rot = dS_rawᵀ·Q_rot
//   RoPE (a rotation of each pair)     dQ = the pair turned back by the same angle
//   q/k norms: y = x / r ⊙ w over      dx = (w ⊙ dy) / r − x·Σ_j(w_j·dy_j·x_j) / (D·r³),
//   every head's row (D = h·d_k)       dw = Σ_rows dy ⊙ x / r (K: every group's row, D = g·d_k)
//   Q = X·W_Q + b_Q (K, V alike)       dW_Q = Xᵀ·dQ, db_Q = Σ_rows dQ, dX += dQ·W_Qᵀ
//   (cross-attention: K = Y·W_K + b_K   dW_K = Yᵀ·dK, dY += dK·W_Kᵀ; V alike; a custom mask, like
//   the causal one, leaves masked weights at 0, so nothing flows through them)
// where G is 1 at output[row][col] and 0 elsewhere. Under grouped-query attention a group's W_K,
// W_V, b_K, b_V collect the gradients of every head that shares them (they are stored in the
// group's first head, as in Params).
#pragma once

#include "core/attention/forward.hpp"
#include "core/attention/params.hpp"
#include "core/attention/registry.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// ∂output[row][col] / ∂ every input, shaped as the params (empty where the params hold nothing:
// W_O without the projection, the biases without biases, K/V of heads that share a group's, Y
// without cross-attention; the mask is not differentiable and stays empty).
struct Gradients {
    int row = 0, col = 0;  // the output cell
    Params d;              // d.X, d.Y, d.heads[i].W_Q …, d.W_O, d.b_O, d.q_norm, d.k_norm
};

// The gradient of output[row][col] for a session's params and the trace forward() computed from
// them. Refused: a cell outside the output, params of other shapes than the config.
Result<Gradients> output_gradient(const Config& config, const Params& params, const Trace& trace, int row, int col);

}  // namespace attnviz::core
