// The whole model's backward pass, in the manner of llm.c: the gradient of one objective of a
// run's logits with respect to every activation the run keeps, every attention weight, the
// embeddings entering block 0 and every weight of the folder, by one walk over the blocks in
// reverse (runtime.hpp's steps backwards; each block's MLP and norms recomputed from its input,
// its attention from the trace it kept). Shapes (n tokens, d = d_model, V = vocab_size):
//
//   objective     logit:       L = logits[n−1][target]
//                 difference:  L = logits[n−1][target] − logits[n−1][versus]
//                 mean loss:   L = −1/(n−1) · Σ_{i<n−1} log softmax(logits[i])[ids[i+1]]
//   6. LM head    logits = hidden·W_Uᵀ (n×V)      d_hidden = d_logits·W_U, d_W_U = d_logitsᵀ·hidden
//                 (Gemma 2's soft-cap c·tanh(z/c): d_z = d_logits / cosh²(z/c))
//   5. final norm d_x = norm′ᵀ·d_hidden (steps_backward.hpp)
//   4–1. blocks   from d of the stream after block L to d of the stream entering it, through the
//                 MLP, the norms, the residual sums and the attention (core/attention/backward.hpp)
//   0. embeddings d_E[ids[i]] += scale·d_x₀[i], d_P[position i] += d_x₀[i]
//
// A tied LM head's gradient is added to the token embeddings' (one tensor, one name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/problem.hpp"
#include "core/model/runtime.hpp"
#include "core/model/steps_backward.hpp"

namespace attnviz::model {

struct Objective {
    enum class Kind { logit, difference, mean_loss };
    Kind kind = Kind::logit;
    std::int32_t target = 0;  // logit, difference
    std::int32_t versus = 0;  // difference
};

// "logit[T] at the last position", "logit[T] − logit[V] at the last position", "the mean
// next-token loss".
std::string describe(const Objective& objective);

// A logit or logit-difference objective of a run's last-position logits (the mean loss is not
// one: 0).
template <class Scalar>
double objective_value(const RunState<Scalar>& state, const Objective& objective) {
    if (objective.kind == Objective::Kind::mean_loss || state.logits_last.size() == 0) return 0;
    const auto target = static_cast<double>(state.logits_last(objective.target));
    return objective.kind == Objective::Kind::difference
               ? target - static_cast<double>(state.logits_last(objective.versus))
               : target;
}

template <class Scalar>
struct BlockGradients {
    MatrixT<Scalar> d_attention_input;       // n×d: ∂L/∂ the attention's input X
    std::vector<MatrixT<Scalar>> d_weights;  // per head, n×n: ∂L/∂A
    MatrixT<Scalar> d_attention_output;      // n×d: ∂L/∂ the attention's output (trace.output)
    MatrixT<Scalar> d_output;                // n×d: ∂L/∂ the residual stream after the block
};

template <class Scalar>
struct ModelGradients {
    Objective objective;
    double value = 0;                            // L
    MatrixT<Scalar> d_embeddings;                // n×d: ∂L/∂ the residual stream entering block 0
    std::vector<BlockGradients<Scalar>> blocks;  // one per block
    MatrixT<Scalar> d_hidden;                    // n×d: ∂L/∂ hidden
    NamedGradients<Scalar> weights;              // ∂L/∂ every tensor of the folder, by its name (when asked)
};

// The gradients of `objective` for a whole run of `model` (run_model, every block, unedited).
// A block with an edited session goes back through its session's weights. Refused: an encoder (no
// LM head: no logits to take), a target or versus id outside the vocabulary, a mean loss of fewer
// than 2 tokens, a partial run, the weights' gradients of a run with an edited block (they are the
// folder's tensors'), a tensor that cannot be read. With `weights` false the tensors' gradients are
// not computed.
template <class Scalar>
core::Result<ModelGradients<Scalar>> model_gradients(const ModelFolder& model, const RunState<Scalar>& state,
                                                     const Objective& objective, bool weights = true);
// The same into `gradients`, whose matrices are reused where their shapes match (a second pass of
// the same model and n allocates nothing new): what model_gradients gives, or the problems (the
// gradients are then partly computed).
template <class Scalar>
core::Problems model_gradients_into(ModelGradients<Scalar>& gradients, const ModelFolder& model,
                                    const RunState<Scalar>& state, const Objective& objective, bool weights = true);

extern template core::Problems model_gradients_into<float>(ModelGradients<float>&, const ModelFolder&,
                                                           const RunState<float>&, const Objective&, bool);
extern template core::Problems model_gradients_into<double>(ModelGradients<double>&, const ModelFolder&,
                                                            const RunState<double>&, const Objective&, bool);
extern template core::Result<ModelGradients<float>> model_gradients<float>(const ModelFolder&, const RunState<float>&,
                                                                           const Objective&, bool);
extern template core::Result<ModelGradients<double>> model_gradients<double>(const ModelFolder&,
                                                                             const RunState<double>&, const Objective&,
                                                                             bool);

}  // namespace attnviz::model
