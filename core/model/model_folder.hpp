// A model folder as Hugging Face writes it: config.json and the weights (weight_files.hpp), with
// the name of every tensor the architecture needs found and its shape checked against the config
// when the folder is opened, so that running the model later meets no surprise but a read error.
//
// Tensor names (any prefix before them is accepted, e.g. "transformer.", "bert.", "model."):
//   gpt2     wte, wpe; h.L.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}; ln_f
//            (Conv1D: W is d_in×d_out, y = x·W + b); the LM head is wte
//   bert     embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm;
//   roberta  encoder.layer.L.{attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
//            intermediate.dense, output.{dense,LayerNorm}} (LayerNorm weight/bias or gamma/beta)
//   llama    embed_tokens; layers.L.{input_layernorm, self_attn.{q,k,v,o}_proj,
//   mistral  post_attention_layernorm, mlp.{gate,up,down}_proj}; norm; lm_head (unless tied)
//   qwen2    (nn.Linear: W is d_out×d_in, y = x·Wᵀ + b)
//   gemma    Llama's names; gemma2 adds pre_feedforward_layernorm (the MLP's norm) and
//   gemma2   post_feedforward_layernorm, its post_attention_layernorm acting on the attention's output
//   phi3     Llama's, with self_attn.qkv_proj (rows Q, K, V) and mlp.gate_up_proj (rows gate, up)
//   olmo2    Llama's without input_layernorm, with self_attn.{q,k}_norm, post_attention_layernorm
//            (on the attention's output) and post_feedforward_layernorm
//   gpt_neox embed_in; layers.L.{input_layernorm, attention.query_key_value (rows q, k, v of head
//            0, then of head 1, …), attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
//            mlp.dense_4h_to_h}; final_layer_norm; embed_out (unless tied)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/config.hpp"
#include "core/base/problem.hpp"
#include "core/model/model_config.hpp"
#include "core/model/weight_files.hpp"

namespace attnviz::model {

// The tensors of one block by their role; "" where the architecture has none.
struct BlockNames {
    // The attention sublayer's norm: before the attention in pre-norm blocks (GPT-2's ln_1, Llama's
    // input_layernorm), after its residual sum in post-norm ones (BERT's attention.output.LayerNorm).
    std::string norm_attention_w, norm_attention_b;
    std::string qkv, qkv_b;              // Q, K and V in one tensor (ModelFolder::qkv_layout)
    std::string q, k, v, q_b, k_b, v_b;  // separate projections (nn.Linear)
    std::string o, o_b;                  // the output projection
    std::string q_norm, k_norm;          // OLMo 2's norms of Q and K over all heads (h·d_k, kv·d_k)
    // A norm of the attention's output before its residual sum (Gemma 2's post_attention_layernorm).
    std::string post_attention_w, post_attention_b;
    // The MLP sublayer's norm: GPT-2's ln_2, Llama's post_attention_layernorm (before the MLP), BERT's
    // output.LayerNorm (after its residual sum).
    std::string norm_mlp_w, norm_mlp_b;
    std::string up, up_b;      // GPT-2's mlp.c_fc, BERT's intermediate.dense, Llama's mlp.up_proj
    std::string gate, gate_b;  // Llama's mlp.gate_proj
    std::string down, down_b;  // GPT-2's mlp.c_proj, BERT's output.dense, Llama's mlp.down_proj
    std::string gate_up;       // Phi-3's mlp.gate_up_proj: the gate's rows, then the up projection's
    // A norm of the MLP's output before its residual sum (Gemma 2's post_feedforward_layernorm).
    std::string post_mlp_w, post_mlp_b;
};

// How a fused query-key-value tensor lays out its parts:
//   columns   GPT-2's c_attn, d_model × 3·d_model (Conv1D): the columns of Q, then K, then V
//   rows      Phi-3's qkv_proj, (h + 2·kv)·d_k × d_model: the rows of every head's Q, then K, then V
//   per_head  GPT-NeoX's query_key_value, 3·d_model × d_model: head 0's q, k and v rows, then head 1's …
enum class QkvLayout { columns, rows, per_head };

struct ModelNames {
    std::string token_embeddings;                      // vocab_size × d_model
    std::string position_embeddings;                   // max_positions × d_model (learned positions)
    std::string type_embeddings;                       // type_vocab_size × d_model (BERT, RoBERTa)
    std::string embeddings_norm_w, embeddings_norm_b;  // BERT's embeddings.LayerNorm
    std::string final_norm_w, final_norm_b;            // pre-norm models' last norm
    std::string lm_head;  // vocab_size × d_model: lm_head.weight, or token_embeddings when tied; "" for encoders
    std::vector<BlockNames> blocks;
};

class ModelFolder {
public:
    // The model of `folder`: config.json read, the weights opened, every tensor the config implies
    // found and its shape and dtype checked (nothing else is read). Problems name the file and the
    // field or tensor: "DIR/model.safetensors: h.1.mlp.c_fc.weight: expected [16, 64] (d_model ×
    // d_ff from config.json), got [16, 48]". `unreadable`, when given, tells whether the failure
    // was a file that could not be read rather than one read and refused. Weights of at most
    // `memory_budget` bytes as stored are then read into memory, once (weights().in_memory()): each
    // run converts them from there a block at a time; larger ones are read from the disk by each
    // run, a block at a time (streamed).
    static core::Result<ModelFolder> open(const std::string& folder, bool* unreadable = nullptr,
                                          std::int64_t memory_budget = core::default_memory_budget);

    const std::string& folder() const { return folder_; }
    const ModelConfig& config() const { return config_; }
    const WeightFiles& weights() const { return weights_; }
    const ModelNames& names() const { return names_; }
    // GPT-2's Conv1D weights are d_in×d_out (y = x·W); every other model's are nn.Linear's
    // d_out×d_in (y = x·Wᵀ).
    bool conv1d() const { return config_.architecture == Architecture::gpt2; }
    QkvLayout qkv_layout() const {
        return conv1d()                                         ? QkvLayout::columns
               : config_.architecture == Architecture::gpt_neox ? QkvLayout::per_head
                                                                : QkvLayout::rows;
    }

private:
    std::string folder_;
    ModelConfig config_;
    WeightFiles weights_;
    ModelNames names_;
};

// The names and shapes config.json implies, each tensor once: what ModelFolder::open checks.
struct ExpectedTensor {
    std::string name;
    std::vector<std::uint64_t> shape;
    std::string meaning;  // the shape in the config's terms: "d_model × d_ff"
};
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config, const ModelNames& names, bool conv1d);

}  // namespace attnviz::model
