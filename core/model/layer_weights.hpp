// Reading a model's weights when they are used: one block's at a time, in the compute type. Values
// the folder holds in memory already in that type (F32 for float, F64 for double: WeightFiles::
// in_place) are used where they lie; others are converted from their stored dtype (F32, F16, BF16)
// then, into matrices of the block's own. The attention's weights go to the core's forward as they
// are (read_attention) or become a session of the existing core, exactly the one `attnviz import`
// makes of that layer (attention_session); the rest become the steps of steps.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/model/model_folder.hpp"
#include "core/model/steps.hpp"

namespace attnviz::model {

// A tensor of the model as a matrix of Scalar: a 2-D tensor as stored, a 1-D one as one row.
template <class Scalar>
core::Result<MatrixT<Scalar>> read_matrix(const ModelFolder& model, const std::string& name);

// Rows at[0], at[1], … of a table of the model (vocab_size × d_model and the like) as the rows of an
// at.size() × cols matrix, each distinct row read once: a large vocabulary's table costs the rows
// asked for, not its size. Refused: a table whose rows are not `cols` values, a row it does not have.
template <class Scalar>
core::Result<MatrixT<Scalar>> read_table_rows(const ModelFolder& model, const std::string& name,
                                              const std::vector<int>& at, Eigen::Index cols);

// A LayerNorm or RMSNorm from its weight (and bias) tensors, as the config has it.
template <class Scalar>
core::Result<Norm<Scalar>> read_norm(const ModelFolder& model, const std::string& weight, const std::string& bias);

// The LM head (model.names().lm_head, vocab_size × d_model) a block of rows at a time, about 256 K
// values each, so the whole table is never converted at once: `use(first, rows)` gets rows first …
// first + rows.rows() − 1 (count × d_model, in Scalar). Problems of reading it, or "" for a model
// without one. With `concurrent` the blocks are spread over OpenMP's threads: `use` is called from
// several at once, each call with rows of its own.
template <class Scalar>
core::Problems for_each_lm_head_block(
    const ModelFolder& model,
    const std::function<void(Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& rows)>& use,
    bool concurrent = false);
// The same for any vocab_size × d_model table of the model (`name`: the token embeddings, the LM
// head); problems of reading it.
template <class Scalar>
core::Problems for_each_vocab_block(
    const ModelFolder& model, const std::string& name,
    const std::function<void(Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& rows)>& use,
    bool concurrent = false);

// What a block holds besides its attention (which is a session, below).
template <class Scalar>
struct BlockWeights {
    Norm<Scalar> norm_attention;  // before the attention (pre-norm) or after its residual sum (post-norm)
    Norm<Scalar> norm_mlp;        // before the MLP (pre-norm) or after its residual sum (post-norm)
    Mlp<Scalar> mlp;
    // Gemma 2's norms of the attention's and the MLP's outputs before their residual sums (none: no weights).
    Norm<Scalar> post_attention, post_mlp;
};

template <class Scalar>
core::Result<BlockWeights<Scalar>> read_block(const ModelFolder& model, int layer);

// Layer `layer`'s attention config for n tokens: n, d_model, heads, d_k = d_v, W_O on, a causal
// mask for the causal LMs, biases when the layer has any (the missing ones zero), kv_heads for
// grouped-query attention, RoPE (rotate_half pairs, base rope_theta, the rotated columns and the
// scaling of the config) for the RoPE families; the model's sliding window where this layer has
// it, Gemma 2's scale √query_pre_attn_scalar and soft-cap, OLMo 2's q/k norms.
core::Result<core::Config> attention_config(const ModelFolder& model, int layer, int n);

// Layer `layer`'s attention weights as the core's forward takes them (core::LayerWeightsT), in the
// compute type: GPT-2's c_attn (d_model × 3·d_model, the columns Q, K, V) and c_proj as they are
// (Conv1D: x·W); nn.Linear's query, key and value weights one under the other (their transpose),
// its biases side by side (zero where one is missing), and o_proj (transposed). The forward of a
// session attention_session makes with the same X gives the same numbers. c_attn, c_proj and
// o_proj held in memory stay as stored (F32 in a double run, BF16, F16: Reads::multiplier), which
// the forward's product widens as it goes; so do the query, key and value weights (W_qkv_parts).
template <class Scalar>
struct AttentionWeights {
    Weights<Scalar> W_qkv, b_qkv, W_O, b_O;
    std::array<Weights<Scalar>, 3> W_qkv_parts;  // nn.Linear's query, key and value weights (W_qkv empty)
    bool qkv_transposed = false, o_transposed = false;
    Weights<Scalar> q_norm, k_norm;  // OLMo 2's q/k norms' weights (1 × h·d_k, 1 × kv·d_k), else empty
    core::LayerWeightsT<Scalar> layer() const {
        return {W_qkv.view(),        {W_qkv_parts[0].view(), W_qkv_parts[1].view(), W_qkv_parts[2].view()},
                b_qkv.view().values, W_O.view(),
                b_O.view().values,   qkv_transposed,
                o_transposed,        q_norm.view().values,
                k_norm.view().values};
    }
    // W_O as h·d_v × d_model in Scalar, whatever its layout and dtype.
    MatrixT<Scalar> output_weights() const;
};

template <class Scalar>
core::Result<AttentionWeights<Scalar>> read_attention(const ModelFolder& model, int layer);

// Layer `layer`'s attention as a session, with X (n×d_model) the attention's input and `tokens` its
// n labels: what `attnviz import` gives for that layer's tensors and X, with attention_config's
// config. Head h's W_Q is columns h·d_k … (h+1)·d_k − 1 of the query projection as x·W; K/V group
// g's W_K and W_V are held by its first head.
core::Result<core::Session> attention_session(const ModelFolder& model, int layer, core::Matrix X,
                                              std::vector<std::string> tokens);

extern template core::Problems for_each_lm_head_block<float>(
    const ModelFolder&, const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<float>>&)>&, bool);
extern template core::Problems for_each_lm_head_block<double>(
    const ModelFolder&, const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<double>>&)>&, bool);
extern template core::Problems for_each_vocab_block<float>(
    const ModelFolder&, const std::string&,
    const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<float>>&)>&, bool);
extern template core::Problems for_each_vocab_block<double>(
    const ModelFolder&, const std::string&,
    const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<double>>&)>&, bool);
extern template core::Result<MatrixT<float>> read_table_rows<float>(const ModelFolder&, const std::string&,
                                                                    const std::vector<int>&, Eigen::Index);
extern template core::Result<MatrixT<double>> read_table_rows<double>(const ModelFolder&, const std::string&,
                                                                      const std::vector<int>&, Eigen::Index);
extern template core::Result<MatrixT<float>> read_matrix<float>(const ModelFolder&, const std::string&);
extern template core::Result<MatrixT<double>> read_matrix<double>(const ModelFolder&, const std::string&);
extern template core::Result<Norm<float>> read_norm<float>(const ModelFolder&, const std::string&, const std::string&);
extern template core::Result<Norm<double>> read_norm<double>(const ModelFolder&, const std::string&,
                                                             const std::string&);
extern template core::Result<BlockWeights<float>> read_block<float>(const ModelFolder&, int);
extern template core::Result<BlockWeights<double>> read_block<double>(const ModelFolder&, int);
extern template core::Result<AttentionWeights<float>> read_attention<float>(const ModelFolder&, int);
extern template core::Result<AttentionWeights<double>> read_attention<double>(const ModelFolder&, int);

}  // namespace attnviz::model
