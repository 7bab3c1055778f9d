// A model folder's config.json, as Hugging Face's transformers writes it: which architecture, its
// sizes and the options of its steps. One struct for every architecture attnviz runs, the field
// names of each model type mapped onto it:
//
//   field            gpt2                 bert / roberta            llama / mistral / qwen2
//   d_model          n_embd               hidden_size               hidden_size
//   layers           n_layer              num_hidden_layers         num_hidden_layers
//   heads            n_head               num_attention_heads       num_attention_heads
//   kv_heads         (heads)              (heads)                   num_key_value_heads
//   d_k              d_model / heads      d_model / heads           head_dim, else d_model / heads
//   d_ff             n_inner or 4·d_model intermediate_size         intermediate_size
//   max_positions    n_positions          max_position_embeddings   max_position_embeddings
//   norm_eps         layer_norm_epsilon   layer_norm_eps            rms_norm_eps
//   activation       activation_function  hidden_act                hidden_act
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/base/problem.hpp"

namespace attnviz::model {

enum class Architecture { gpt2, bert, roberta, llama, mistral, qwen2 };
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
    // Mistral's and Qwen2's sliding window: a query sees only the last `sliding_window` keys. Only
    // sequences that fit in it are run (where it changes nothing); 0 when the model has none.
    int sliding_window = 0;

    // Which steps the architecture has.
    bool causal() const { return !encoder(); }  // a causal mask, and an LM head
    bool encoder() const { return architecture == Architecture::bert || architecture == Architecture::roberta; }
    bool llama_family() const { return !encoder() && architecture != Architecture::gpt2; }
    bool pre_norm() const { return !encoder(); }                // x + f(norm(x)), else norm(x + f(x))
    bool rms_norm() const { return llama_family(); }            // RMSNorm, else LayerNorm
    bool learned_positions() const { return !llama_family(); }  // a position table, else RoPE
    bool gated_mlp() const { return llama_family(); }           // act(x·W_gate) ⊙ (x·W_up), else act(x·W_in)
    bool final_norm() const { return pre_norm(); }              // ln_f / norm after the last block
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
