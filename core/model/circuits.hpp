// What a model's heads do in token space, and what layer 0's scores owe to the tokens and to their
// positions (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits").
//
// Token rows: x_t = N_l(E_t), token t's embedding row alone (no position, no token type) through the
// norm in front of layer l's attention: block l's attention norm in pre-norm models (GPT-2's ln_1,
// Llama's input_layernorm); the embeddings' LayerNorm in post-norm ones (BERT, RoBERTa: layer 0's
// own input; for a later layer the direct path's first norm). W_E's rows as the layer sees them.
//   QK   x_a·W_QK⁽ʰ⁾·x_bᵀ = (x_a·W_Q⁽ʰ⁾)·(x_b·W_K)ᵀ: the bilinear part of scores_raw of query token a
//        and key token b, unscaled as scores_raw is (b_Q, b_K, RoPE's rotation and OLMo 2's q/k norms left out)
//   OV   x_t·W_OV⁽ʰ⁾·W_Uᵀ = x_t·W_V·W_O⁽ʰ⁾·W_Uᵀ (1×vocab): the logits head h adds through the direct
//        path per unit of weight on key token t (b_V and the final norm left out); W_U the LM head,
//        or the token embeddings for a model without one (BERT's MLM head is tied to them)
// K/V group heads use the group's W_K, W_V. Each vocabulary-wide row is d_model·vocab work: the
// table is read a block of rows at a time (for_each_vocab_block), never held whole.
//
// Edited weights: both may be given the layer's attention as a session being edited has it
// (core::Params: its heads' W_Q, W_K, W_V and biases, W_O and b_O; its X and the rest ignored),
// which then stand for the stored ones, so that an edit moves the circuits and the split. Only when
// each of them has the stored shape and the K/V grouping is the stored one; else the stored weights
// are used and the result says why.
//
// Position split (layer 0 of a model with learned positions, GPT-2, BERT, RoBERTa): the attention's
// input is a_i = LN(e_i + p_i), e_i the token's row (+ BERT's token type row: a property of the token,
// counted as content), p_i its position's row. LayerNorm's centring is linear and its scale 1/σ_i
// is per token (σ_i = √(var(e_i + p_i) + eps), of the sum), so a_i = C_i + P_i + β exactly, with
//   C_i = γ⊙(e_i − mean(e_i))/σ_i   content          P_i = γ⊙(p_i − mean(p_i))/σ_i   position
// and with Q_i = a_i·W_Q + b_Q, K_j = a_j·W_K + b_K, B_Q = β·W_Q + b_Q, B_K = β·W_K + b_K:
//   scores_raw_ij = (C_i·W_Q)(C_j·W_K)ᵀ + (C_i·W_Q)(P_j·W_K)ᵀ + (P_i·W_Q)(C_j·W_K)ᵀ + (P_i·W_Q)(P_j·W_K)ᵀ
//                   content·content     content·position    position·content    position·position
//                 + (C_i + P_i)·W_Q·B_Kᵀ + B_Q·((C_j + P_j)·W_K)ᵀ + B_Q·B_Kᵀ                    bias
// The five n×n parts add up to scores_raw (unscaled, before the mask) exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/attention/params.hpp"
#include "core/base/problem.hpp"
#include "core/model/model_folder.hpp"

namespace attnviz::model {

struct TokenScore {
    std::int32_t id = 0;
    double value = 0;
};

struct TokenPair {
    std::int32_t query = 0, key = 0;
    double value = 0;  // x_query·W_QK·x_keyᵀ
};

struct HeadTokenCircuits {
    core::Matrix qk;                   // k×k over the candidates: qk(a, b) = x_a·W_QK·x_bᵀ, a the query
    std::vector<TokenPair> top_pairs;  // the `top` largest entries of qk, largest first
    // Per candidate: the `top` keys over the whole vocabulary for it as the query (a row of
    // W_E·W_QK·W_Eᵀ), and the `top` tokens its OV row raises most (a row of W_E·W_OV·W_Uᵀ).
    std::vector<std::vector<TokenScore>> top_keys, top_outputs;
};

struct TokenCircuits {
    std::vector<std::int32_t> tokens;      // the candidates: the distinct ids asked for, in their first order
    std::vector<HeadTokenCircuits> heads;  // one per head of the layer
    bool edited = false;                   // computed with the edited weights given
    std::string stored_because;            // why edited weights given were not used ("" when they were)
};

// What token_circuits may be given besides the candidates.
struct TokenCircuitOptions {
    const core::Params* edited = nullptr;  // the layer's weights as edited (above), or none: the stored ones
    // Asked between blocks of the vocabulary: true when the result is no longer wanted, which then
    // stops the work and refuses ("stopped").
    std::function<bool()> stopped;
};

// Layer `layer`'s token-space circuits over the candidates `ids` (duplicates counted once), each
// ranking its `top` largest (equal values by the smaller id, then the smaller query id). Refused:
// no ids, an id outside the vocabulary, a tensor that cannot be read.
core::Result<TokenCircuits> token_circuits(const ModelFolder& model, int layer, const std::vector<std::int32_t>& ids,
                                           int top, const TokenCircuitOptions& options = {});

// The copying score of every head of layer `layer` in token space: the eigenvalues λ of the OV
// circuit W_E·W_OV⁽ʰ⁾·W_Uᵀ (vocab × vocab, W_E's rows the token rows x_t above) are, but for zeros,
// those of the d_v × d_v W_O⁽ʰ⁾·(W_Uᵀ·X)·W_V, where W_Uᵀ·X = Σ_t W_U[t]ᵀ·x_t (d_model × d_model) is
// summed over the vocabulary a block at a time; copying = Σ Re λ / Σ |λ| in [−1, 1] (0 when every λ
// is 0): 1 for a head whose every eigenvalue is positive (what it attends to, it raises). Refused: a
// layer the model lacks, a tensor that cannot be read, a stop asked for by `stopped`.
core::Result<std::vector<double>> copying_scores(const ModelFolder& model, int layer,
                                                 const std::function<bool()>& stopped = {});

// Layer 0's scores_raw of one head split as above (n×n each).
struct PositionSplit {
    core::Matrix content_content, content_position, position_content, position_position, bias;
};

// The split of every head of layer 0 for the token ids `ids` (as a run of them has it), with layer
// 0's weights as `edited` has them (above) when given; `stored_because` (when given) is then set to
// why they were not used, or "". Refused: a model without learned positions or without a LayerNorm
// in front of layer 0's attention, the ids' token_problems, a tensor that cannot be read.
core::Result<std::vector<PositionSplit>> position_split(const ModelFolder& model, const std::vector<std::int32_t>& ids,
                                                        const core::Params* edited = nullptr,
                                                        std::string* stored_because = nullptr);

}  // namespace attnviz::model
