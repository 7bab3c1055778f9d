// Why the model predicts what it does: the objective L = logit[target] (− logit[versus]) at the
// last position taken apart, by token and by component, from the whole model's backward pass
// (backward.hpp). x₀ is the residual stream entering block 0 (n × d_model: the token's embedding
// and its learned position's, as they enter), A a head's attention weights:
//
//   grad × input          per token i: Σ_d ∂L/∂x₀[i][d] · x₀[i][d]
//   integrated gradients  per token i: Σ_d x₀[i][d] · (1/S)·Σ_{k=1..S} ∂L/∂x₀[i][d] at x₀·k/S
//                         (a zero baseline, S right-Riemann points); their sum is about
//                         L(x₀) − L(0) (completeness), both given
//   attention × gradient  [layer][head] = A ⊙ ∂L/∂A (n×n)
//   direct logit attribution (DLA), at the last position: each component's write to the residual
//   stream put through the final norm as a linear map, its scale (σ for LayerNorm, centred; the
//   RMS for RMSNorm) taken from the whole last row and frozen, times γ, then dotted with
//   W_U[target] − W_U[versus]:
//     a head          z_h·W_O,h (through a post-attention norm, Gemma 2 and OLMo 2, frozen alike)
//     an MLP          the rest of its block's write: output − input − the attention's write
//     the embeddings  x₀ and every write no head makes (b_O, a post-attention norm's bias)
//   The parts plus the final norm's bias term (β·(W_U[target] − W_U[versus])) add up to the
//   objective before a final soft-cap (Gemma 2's logits are capped after the sum); the residual of
//   that sum is given.
#pragma once

#include <functional>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/model/backward.hpp"

namespace attnviz::model {

struct Attribution {
    Objective objective;
    double value = 0;                                             // L, of the run's logits
    std::vector<double> grad_x_input;                             // n
    int steps = 0;                                                // S
    std::vector<double> integrated_gradients;                     // n
    double integrated_sum = 0;                                    // Σ_i integrated_gradients[i]
    double baseline_value = 0;                                    // L at x₀ = 0
    std::vector<std::vector<core::Matrix>> attention_x_gradient;  // [layer][head], n×n
    core::Matrix dla_heads;                                       // layers × heads
    std::vector<double> dla_mlps;                                 // layers
    double dla_embeddings = 0, dla_bias = 0;                      // the embeddings' part, the final norm's bias term
    double dla_sum = 0;                                           // Σ heads + Σ MLPs + embeddings + bias
    double dla_objective = 0;                                     // what they add up to: L before a final soft-cap
    double dla_residual = 0;                                      // |dla_sum − dla_objective|
};

// Called after each of the steps + 2 runs integrated gradients takes with how many are done and
// how many there are; false stops the attribution (a problem then).
using AttributionProgress = std::function<bool(int done, int total)>;

// The attribution of a logit or logit-difference objective for a whole run of `model`. Refused:
// what model_gradients refuses, the mean loss (attribution is of the last position), steps outside
// 1 … 4096, a stop asked for by `progress`.
template <class Scalar>
core::Result<Attribution> attribute(const ModelFolder& model, const RunState<Scalar>& state, const Objective& objective,
                                    int steps, const AttributionProgress& progress = {});

extern template core::Result<Attribution> attribute<float>(const ModelFolder&, const RunState<float>&, const Objective&,
                                                           int, const AttributionProgress&);
extern template core::Result<Attribution> attribute<double>(const ModelFolder&, const RunState<double>&,
                                                            const Objective&, int, const AttributionProgress&);

}  // namespace attnviz::model
