// A model folder's config.json, as Hugging Face's transformers writes it: which architecture, its
// sizes and the options of its steps. One struct for every architecture attnviz runs, the field
// names of each model type mapped onto it:
//
//   field            gpt2                 bert / roberta            the others
//   d_model          n_embd               hidden_size               hidden_size
//   layers           n_layer              num_hidden_layers         num_hidden_layers
//   heads            n_head               num_attention_heads       num_attention_heads
//   kv_heads         (heads)              (heads)                   num_key_value_heads (gpt_neox: heads)
//   d_k              d_model / heads      d_model / heads           head_dim, else d_model / heads
//   d_ff             n_inner or 4·d_model intermediate_size         intermediate_size
//   max_positions    n_positions          max_position_embeddings   max_position_embeddings
//   norm_eps         layer_norm_epsilon   layer_norm_eps            rms_norm_eps (gpt_neox: layer_norm_eps)
//   activation       activation_function  hidden_act                hidden_act (gemma: hidden_activation)
//
// The families beyond GPT-2 and BERT, and what each adds (from Hugging Face's modeling files):
//   llama, mistral, qwen2  RMSNorm, RoPE (rope_scaling: linear, dynamic, llama3), SwiGLU, K/V groups;
//                          Mistral's and Qwen2's sliding window
//   gpt_neox (Pythia)      LayerNorms with biases, fused per-head query_key_value, RoPE on the first
//                          rotary_pct of each head, the parallel residual x + attn(ln₁x) + mlp(ln₂x)
//                          (use_parallel_residual), gelu MLP, an untied embed_out
//   gemma                  RMSNorm by (1 + w), embeddings × √d_model, GeGLU (gelu_pytorch_tanh)
//   gemma2                 gemma's, with norms after the attention and around the MLP, the scale
//                          1/√query_pre_attn_scalar, soft-capped attention and final logits, a sliding
//                          window on the even layers
//   phi3                   fused qkv_proj and gate_up_proj, partial_rotary_factor
//   olmo2                  Llama's, with RMSNorms of Q and K over all heads (q_norm, k_norm) before
//                          RoPE, and no norms before the attention and the MLP: norms of their outputs
//                          before the residual sums instead (post_attention_layernorm,
//                          post_feedforward_layernorm)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/attention/config.hpp"
#include "core/base/problem.hpp"

namespace attnviz::model {

enum class Architecture { gpt2, bert, roberta, llama, mistral, qwen2, gpt_neox, gemma, gemma2, phi3, olmo2 };
// The model_type of config.json ("gpt2", "bert", …).
const char* to_string(Architecture a);

// The MLP's nonlinearity, by config.json's name:
//   gelu      0.5·x·(1 + erf(x/√2))                          "gelu"
//   gelu_new  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))      "gelu_new", "gelu_pytorch_tanh"
//   silu      x·σ(x) = x / (1 + e^(−x))                       "silu", "swish"
//   relu      max(x, 0)                                       "relu"
enum class Activation { gelu, gelu_new, silu, relu };
const char* to_string(Activation a);

struct ModelConfig {
    Architecture architecture = Architecture::gpt2;
    int vocab_size = 0;         // rows of the token-embedding table (and of the LM head)
    int d_model = 0;            // width of the residual stream
    int layers = 0;             // blocks
    int heads = 0;              // attention heads per layer
    int kv_heads = 0;           // K/V groups (grouped-query attention); heads when every head has its own
    int d_k = 0;                // query, key and value size per head
    int d_ff = 0;               // width of the MLP's hidden layer
    int max_positions = 0;      // rows of the learned position table; for RoPE models the trained context
    int type_vocab_size = 0;    // BERT's token-type table rows (RoBERTa: 1); 0 for the others
    int pad_token_id = 0;       // RoBERTa: positions start at pad_token_id + 1
    double norm_eps = 0;        // added to the variance (LayerNorm) or the mean square (RMSNorm)
    double rope_theta = 10000;  // RoPE's base θ (Llama family)
    Activation activation = Activation::gelu_new;
    bool tie_word_embeddings = true;  // the LM head is the token-embedding table (no lm_head.weight)
    bool qkv_bias = false;            // biases on the query, key and value projections
    bool o_bias = false;              // a bias on the output projection
    bool mlp_bias = false;            // biases on the MLP's projections
    // A sliding window: a query sees only the last `sliding_window` keys, in the layers
    // windowed_layer() says (Mistral and Phi-3: every layer; Qwen2: from max_window_layers on; Gemma
    // 2: the even ones); 0 when the model has none.
    int sliding_window = 0;
    int window_from_layer = 0;   // Qwen2's max_window_layers
    double rotary_fraction = 1;  // of each head's columns RoPE turns: rotary_pct, partial_rotary_factor
    int rope_dims = 0;           // int(d_k · rotary_fraction) when below d_k; 0: all
    core::RopeScaling rope_scaling;
    bool parallel_residual = false;    // GPT-NeoX: x + attn(ln₁x) + mlp(ln₂x)
    bool norm_plus_one = false;        // Gemma's RMSNorm: x/rms · (1 + w)
    double embedding_scale = 1;        // Gemma: the embeddings times √d_model
    bool sandwich_norms = false;       // Gemma 2: norms after the attention and the MLP, before their residual sums
    double query_pre_attn_scalar = 0;  // Gemma 2: scores = Q·Kᵀ / √query_pre_attn_scalar; 0: √d_k
    double attn_softcap = 0;           // Gemma 2: c·tanh(scores / c) before the mask; 0: none
    double final_softcap = 0;          // Gemma 2: c·tanh(logits / c); 0: none
    bool qk_norm = false;              // OLMo 2: RMSNorms of Q and K over all heads (eps: norm_eps)
    // Whether a pre-norm block norms the attention's and the MLP's inputs (OLMo 2 does not: it norms
    // their outputs, before the residual sums, with the sandwich's outer norms only).
    bool input_norms = true;

    // Which steps the architecture has.
    bool causal() const { return !encoder(); }  // a causal mask, and an LM head
    bool encoder() const { return architecture == Architecture::bert || architecture == Architecture::roberta; }
    bool rope() const { return !encoder() && architecture != Architecture::gpt2; }  // RoPE, else a position table
    bool pre_norm() const { return !encoder(); }  // x + f(norm(x)), else norm(x + f(x))
    bool rms_norm() const { return rope() && architecture != Architecture::gpt_neox; }  // RMSNorm, else LayerNorm
    bool learned_positions() const { return !rope(); }                                  // a position table, else RoPE
    bool gated_mlp() const { return rms_norm(); }   // act(x·W_gate) ⊙ (x·W_up), else act(x·W_in)
    bool final_norm() const { return pre_norm(); }  // ln_f / norm after the last block
    bool windowed_layer(int layer) const {
        if (sliding_window <= 0) return false;
        if (architecture == Architecture::gemma2) return layer % 2 == 0;
        return layer >= window_from_layer;
    }
};

// Limits of a config, so a typo cannot ask for terabytes (real models are far inside them).
struct ModelLimits {
    static constexpr int max_layers = 1024;
    static constexpr int max_vocab = 4'000'000;
    static constexpr int max_d_ff = 1 << 17;
    static constexpr int max_positions = 1 << 24;
    static constexpr int max_type_vocab = 1024;
    static constexpr double max_norm_eps = 0.1;
};

// The config of a config.json's text; `name` (the file) starts every problem's path:
// "DIR/config.json: hidden_size: expected a whole number from 1 to 8192, got 0". Every problem is
// reported: a field that is missing or of the wrong type, a size that is zero, negative or beyond
// its limit, sizes that do not fit together (heads not dividing d_model, K/V groups not dividing
// heads, an odd d_k under RoPE), a model type or option attnviz does not run.
core::Result<ModelConfig> read_model_config(std::string_view text, const std::string& name);

}  // namespace attnviz::model
