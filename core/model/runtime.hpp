// The forward pass of a whole model, in the shape of llama2.c's run.c: the config
// (model_config.hpp), the weights (a block's read when it runs, layer_weights.hpp), a run state
// holding what is kept of each layer, and a forward walking the layers in named steps:
//
//   0. embeddings    x = E[ids] (+ P[positions]) (+ T[0]), n×d_model; BERT, RoBERTa: then LayerNorm
//   per block L, pre-norm (GPT-2, Llama family):
//   1. attention in  a = norm_attention(x)                 the session's X
//   2. attention     the session's forward (core/attention/forward.hpp): trace.output, n×d_model
//   3. residual      x₁ = x + trace.output
//   4. MLP           x' = x₁ + mlp(norm_mlp(x₁))
//   (Gemma 2 norms the attention's and the MLP's outputs too: x₁ = x + post_attention(trace.output),
//   x' = x₁ + post_mlp(mlp(norm_mlp(x₁))); OLMo 2 has only those: a = x, x' = x₁ + post_mlp(mlp(x₁)))
//   per block L, post-norm (BERT, RoBERTa):
//   1. attention in  a = x
//   2. attention     as above
//   3. residual      x₁ = norm_attention(x + trace.output)
//   4. MLP           x' = norm_mlp(x₁ + mlp(x₁))
//   5. final norm    hidden = final_norm(x) (pre-norm models), else the last block's x
//   6. LM head       logits_last = hidden[n−1]·Eᵀ (causal LMs; E the LM head, vocab_size×d_model)
//
// Scalar is the compute type (float or double): the residual stream, the MLPs, each attention's
// input and trace are held in it. A block's weights are read when it runs and dropped after it
// (layer_weights.hpp: in place where the folder holds them in memory in the compute type, else
// converted), so a run holds the stored weights, one block's in the compute type and the
// activations. A block's attention becomes a session (in double, as every session holds its
// inputs) only when asked for (layer_session) or when it was edited.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/model/model_folder.hpp"
#include "core/model/steps.hpp"

namespace attnviz::model {

template <class Scalar>
struct LayerRun {
    core::Config config;    // the block's attention (layer_weights.hpp: attention_config)
    MatrixT<Scalar> input;  // n×d_model: the attention's input X (the session's X)
    // The block's attention as a session once it was edited (its X or its weights): the block runs
    // it as it is, with each new input as its X. Null: the block runs the folder's weights.
    std::shared_ptr<const core::Session> edited;
    // The attention's forward: every head's Q, K, V, scores and weights (n×n), concat and the output
    // (n×d_model). Its scratch space is released once the block has run.
    core::TraceT<Scalar> trace;
    MatrixT<Scalar> output;  // n×d_model: the residual stream after the block
};

template <class Scalar>
struct RunState {
    std::vector<std::int32_t> token_ids;   // n
    std::vector<std::string> tokens;       // n labels (each session's tokens)
    MatrixT<Scalar> embeddings;            // n×d_model: the residual stream entering block 0
    std::vector<LayerRun<Scalar>> layers;  // one per block
    MatrixT<Scalar> hidden;                // n×d_model: after the final norm, or the last block's output
    RowVectorT<Scalar> logits_last;        // 1×vocab_size: the last position's logits (causal LMs), else empty

    // The residual stream entering block `layer` (n×d_model).
    const MatrixT<Scalar>& stream_into(int layer) const {
        return layer == 0 ? embeddings : layers[static_cast<size_t>(layer) - 1].output;
    }
};

// What is wrong with running these token ids through a model of this config ("" paths): none, more
// than core::Limits::max_n, an id outside the vocabulary, more than the learned position table or
// the sliding window holds.
core::Problems token_problems(const ModelConfig& config, const std::vector<std::int32_t>& ids);

// Row i of the learned position table for token i: i, or for RoBERTa its place among the tokens
// that are not the pad token after pad_token_id (a pad token's own is pad_token_id), as
// create_position_ids_from_input_ids.
std::vector<int> position_ids(const ModelConfig& config, const std::vector<std::int32_t>& ids);

// The bytes a run state of n tokens keeps (every layer's attention input, trace and output in
// Scalar), with what one block needs while it runs (its weights converted to Scalar).
std::int64_t run_bytes(const ModelConfig& config, int n, int scalar_bytes);

// The whole forward pass of `ids` (labelled by `tokens`, one each; "#id" where empty). Refused:
// token_problems, a run over the memory budget (run_bytes), a tensor that cannot be read, values
// that overflow (a session's input must stay finite and within core::Limits::max_abs_value).
// `blocks` in 1..layers runs only the first `blocks` blocks and stops there: no final norm and no
// logits (`hidden` is the last block's output, `logits_last` empty; such a state cannot be rerun).
// `after_block`, when given, is called after each block with the state and the blocks done so far
// (block done − 1 is complete: its trace and output), so a caller can show the blocks as they come;
// it returns false to stop the run there (a problem: "stopped after block …").
template <class Scalar>
using AfterBlock = std::function<bool(const RunState<Scalar>& state, int done)>;
template <class Scalar>
core::Result<RunState<Scalar>> run_model(const ModelFolder& model, const std::vector<std::int32_t>& ids,
                                         std::vector<std::string> tokens,
                                         std::int64_t memory_budget = core::default_memory_budget, int blocks = -1,
                                         const AfterBlock<Scalar>& after_block = {});

// The same into `state`, whose matrices are reused where their sizes match (a run of as many tokens
// as the last allocates, and page-faults, nothing new), its edits dropped: what run_model gives, or
// the problems (the state is then left partly run).
template <class Scalar>
core::Problems run_model_into(RunState<Scalar>& state, const ModelFolder& model, const std::vector<std::int32_t>& ids,
                              std::vector<std::string> tokens, std::int64_t memory_budget = core::default_memory_budget,
                              int blocks = -1, const AfterBlock<Scalar>& after_block = {});

// Block `layer`'s attention as a session: the edited one, or the one `attnviz import` makes of
// the layer's tensors with the block's input as X (layer_weights.hpp: attention_session) and the
// run's tokens.
template <class Scalar>
core::Result<core::Session> layer_session(const ModelFolder& model, const RunState<Scalar>& state, int layer);

// Blocks `layer` to the last again, and the final norm and logits, after block `layer` was edited
// (its `edited` session set or changed: its X or its weights, not its dimensions; or set back to
// null, the folder's weights again): the blocks before it are not touched; block `layer` runs its
// session as it is (or the folder's weights on its input); each later block keeps its edited
// session's weights, or the folder's, and takes its new attention input as X. `stopped`, when
// given, is asked before each block and before the logits, and ends the rerun early when it says
// so (a problem then: an edit superseded by a newer one). On a problem the state is left partly
// recomputed (keep a copy to go back to).
template <class Scalar>
core::Problems rerun_from(const ModelFolder& model, RunState<Scalar>& state, int layer,
                          const std::function<bool()>& stopped = {});

// Blocks `first` to the last again from the stream entering block `first` as the caller set it
// (state.embeddings, or block first − 1's output; n × d_model, the run's n), then the final norm
// and the logits (only those for `first` = layers): what run_model gives for that stream
// (integrated gradients' path, activation patching). The blocks' edits are kept, their X the new attention inputs. On a
// problem the state is left partly run.
template <class Scalar>
core::Problems run_blocks_from(const ModelFolder& model, RunState<Scalar>& state, int first);

// Block `layer`'s W_O as it runs, h·d_v × d_model: its edited session's, else the folder's.
template <class Scalar>
core::Result<MatrixT<Scalar>> output_weights_of(const ModelFolder& model, const RunState<Scalar>& state, int layer);

// Steps 3–4 of block `layer` on their own: its output (n × d_model) from x, the stream entering
// it, and `attended`, its attention's output (patching puts a head's work from another run there).
template <class Scalar>
core::Problems block_output(const ModelFolder& model, int layer, const MatrixT<Scalar>& x,
                            const MatrixT<Scalar>& attended, MatrixT<Scalar>& out);

// A copy of `state` to rerun from block `layer` (rerun_from): the token ids and labels, the
// embeddings and every block before `layer` whole; of block `layer` its config, edited session and
// input (used when it has no edited session); of each later block its config and edited session.
// What rerun_from computes anew (the traces and outputs from block `layer` on, the hidden state and
// the logits) is not copied: a model's run holds every block's n×n weights, tens of megabytes.
template <class Scalar>
RunState<Scalar> copy_for_rerun(const RunState<Scalar>& state, int layer);

extern template core::Result<RunState<float>> run_model<float>(const ModelFolder&, const std::vector<std::int32_t>&,
                                                               std::vector<std::string>, std::int64_t, int,
                                                               const AfterBlock<float>&);
extern template core::Result<RunState<double>> run_model<double>(const ModelFolder&, const std::vector<std::int32_t>&,
                                                                 std::vector<std::string>, std::int64_t, int,
                                                                 const AfterBlock<double>&);
extern template core::Result<core::Session> layer_session<float>(const ModelFolder&, const RunState<float>&, int);
extern template core::Result<core::Session> layer_session<double>(const ModelFolder&, const RunState<double>&, int);
extern template core::Problems run_model_into<float>(RunState<float>&, const ModelFolder&,
                                                     const std::vector<std::int32_t>&, std::vector<std::string>,
                                                     std::int64_t, int, const AfterBlock<float>&);
extern template core::Problems run_model_into<double>(RunState<double>&, const ModelFolder&,
                                                      const std::vector<std::int32_t>&, std::vector<std::string>,
                                                      std::int64_t, int, const AfterBlock<double>&);
extern template core::Problems rerun_from<float>(const ModelFolder&, RunState<float>&, int,
                                                 const std::function<bool()>&);
extern template RunState<float> copy_for_rerun<float>(const RunState<float>&, int);
extern template core::Result<MatrixT<float>> output_weights_of<float>(const ModelFolder&, const RunState<float>&, int);
extern template core::Result<MatrixT<double>> output_weights_of<double>(const ModelFolder&, const RunState<double>&,
                                                                        int);
extern template core::Problems run_blocks_from<float>(const ModelFolder&, RunState<float>&, int);
extern template core::Problems run_blocks_from<double>(const ModelFolder&, RunState<double>&, int);
extern template core::Problems block_output<float>(const ModelFolder&, int, const MatrixT<float>&,
                                                   const MatrixT<float>&, MatrixT<float>&);
extern template core::Problems block_output<double>(const ModelFolder&, int, const MatrixT<double>&,
                                                    const MatrixT<double>&, MatrixT<double>&);
extern template RunState<double> copy_for_rerun<double>(const RunState<double>&, int);
extern template core::Problems rerun_from<double>(const ModelFolder&, RunState<double>&, int,
                                                  const std::function<bool()>&);

}  // namespace attnviz::model
