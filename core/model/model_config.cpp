#include "core/model/model_config.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/attention/config.hpp"
#include "core/base/format.hpp"
#include "core/io/json_read.hpp"

namespace attnviz::model {

const char* to_string(Architecture a) {
    switch (a) {
        case Architecture::gpt2: return "gpt2";
        case Architecture::bert: return "bert";
        case Architecture::roberta: return "roberta";
        case Architecture::llama: return "llama";
        case Architecture::mistral: return "mistral";
        case Architecture::qwen2: return "qwen2";
        case Architecture::gpt_neox: return "gpt_neox";
        case Architecture::gemma: return "gemma";
        case Architecture::gemma2: return "gemma2";
        case Architecture::phi3: return "phi3";
        case Architecture::olmo2: return "olmo2";
    }
    return "gpt2";
}

const char* to_string(Activation a) {
    switch (a) {
        case Activation::gelu: return "gelu";
        case Activation::gelu_new: return "gelu_new";
        case Activation::silu: return "silu";
        case Activation::relu: return "relu";
    }
    return "gelu";
}

namespace {

using nlohmann::json;

// The fields of config.json, each problem kept with its path ("FILE: field").
class Fields {
public:
    Fields(const json& doc, const std::string& file) : doc_(doc), file_(file) {}

    // The value of the first of `keys` that is present and not null, and which key that was.
    const json* find(std::initializer_list<const char*> keys, const char** key_found = nullptr) const {
        for (const char* key : keys) {
            const auto it = doc_.find(key);
            if (it == doc_.end() || it->is_null()) continue;
            if (key_found) *key_found = key;
            return &*it;
        }
        if (key_found) *key_found = *keys.begin();
        return nullptr;
    }

    // Whether the key is there at all (null included).
    bool present(const char* key) const { return doc_.contains(key); }

    void refuse(const std::string& key, std::string message) {
        problems_.add(file_ + ": " + core::path_key("", key), std::move(message));
    }

    // A whole number from lo to hi; `otherwise` when absent (or null), and a problem when absent
    // and required (otherwise unset).
    int integer(std::initializer_list<const char*> keys, int lo, int hi, std::optional<int> otherwise = std::nullopt) {
        const char* key = nullptr;
        const json* v = find(keys, &key);
        if (!v) {
            if (!otherwise)
                refuse(key, "missing (a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                " is needed)");
            return otherwise.value_or(lo);
        }
        const bool whole = v->is_number_integer() && *v >= lo && *v <= hi;
        if (!whole) {
            refuse(key, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                            core::describe_json(*v));
            return otherwise.value_or(lo);
        }
        return v->get<int>();
    }

    // A number above lo and at most hi; `otherwise` when absent.
    double number(std::initializer_list<const char*> keys, double lo, double hi, double otherwise) {
        const char* key = nullptr;
        const json* v = find(keys, &key);
        if (!v) return otherwise;
        if (!v->is_number() || !(v->get<double>() > lo && v->get<double>() <= hi)) {
            refuse(key, "expected a number above " + core::format_number(lo) + " and at most " +
                            core::format_number(hi) + ", got " + core::describe_json(*v));
            return otherwise;
        }
        return v->get<double>();
    }

    bool boolean(const char* key, bool otherwise) {
        const json* v = find({key});
        if (!v) return otherwise;
        if (!v->is_boolean()) {
            refuse(key, "expected true or false, got " + core::describe_json(*v));
            return otherwise;
        }
        return v->get<bool>();
    }

    std::string text(std::initializer_list<const char*> keys, const std::string& otherwise) {
        const char* key = nullptr;
        const json* v = find(keys, &key);
        if (!v) return otherwise;
        if (!v->is_string()) {
            refuse(key, "expected a text, got " + core::describe_json(*v));
            return otherwise;
        }
        return v->get<std::string>();
    }

    // An option attnviz does not run, refused when it is set to anything but `plain`.
    void only(const char* key, const json& plain, const std::string& what) {
        const json* v = find({key});
        if (v && *v != plain) refuse(key, core::describe_json(*v) + ": " + what + " is not supported");
    }

    bool ok() const { return problems_.empty(); }
    core::Problems take() && { return std::move(problems_).take(); }
    const std::string& file() const { return file_; }
    // The problems of a nested object's fields, read with a Fields of their own.
    void take_from(Fields&& nested) {
        for (core::Problem& p : std::move(nested).take()) problems_.push_back(std::move(p));
    }

private:
    const json& doc_;
    const std::string& file_;
    core::ProblemList problems_;
};

std::optional<Architecture> architecture_named(const std::string& name) {
    for (Architecture a : {Architecture::gpt2, Architecture::bert, Architecture::roberta, Architecture::llama,
                           Architecture::mistral, Architecture::qwen2, Architecture::gpt_neox, Architecture::gemma,
                           Architecture::gemma2, Architecture::phi3, Architecture::olmo2})
        if (name == to_string(a)) return a;
    return std::nullopt;
}

std::optional<Activation> activation_named(const std::string& name) {
    if (name == "gelu") return Activation::gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_new;
    if (name == "silu" || name == "swish") return Activation::silu;
    if (name == "relu") return Activation::relu;
    return std::nullopt;
}

void read_activation(Fields& f, ModelConfig& c, const char* key, const char* otherwise) {
    const std::string name = f.text({key}, otherwise);
    if (const std::optional<Activation> a = activation_named(name))
        c.activation = *a;
    else
        f.refuse(key, core::describe_text(name) +
                          " is not an activation attnviz runs (gelu, gelu_new, gelu_pytorch_tanh, silu, relu)");
}

// GPT-2: n_embd, n_layer, n_head, n_inner (null: 4·n_embd), n_positions; biases everywhere.
void read_gpt2(Fields& f, ModelConfig& c) {
    using core::Limits;
    c.d_model = f.integer({"n_embd"}, 1, Limits::max_d_model);
    c.layers = f.integer({"n_layer"}, 1, ModelLimits::max_layers);
    c.heads = f.integer({"n_head"}, 1, Limits::max_heads);
    c.d_ff = f.integer({"n_inner"}, 1, ModelLimits::max_d_ff, std::min(4 * c.d_model, ModelLimits::max_d_ff));
    c.max_positions = f.integer({"n_positions"}, 1, ModelLimits::max_positions);
    c.norm_eps = f.number({"layer_norm_epsilon"}, 0, ModelLimits::max_norm_eps, 1e-5);
    read_activation(f, c, "activation_function", "gelu_new");
    c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
    c.qkv_bias = c.o_bias = c.mlp_bias = true;
    f.only("scale_attn_weights", true, "attention without the 1/√d_k scale");
    f.only("scale_attn_by_inverse_layer_idx", false, "scaling attention by the layer's index");
    f.only("add_cross_attention", false, "cross-attention to an encoder");
}

// The sizes BERT, GPT-NeoX and the Llama family name alike: hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size.
void read_hf_sizes(Fields& f, ModelConfig& c) {
    using core::Limits;
    c.d_model = f.integer({"hidden_size"}, 1, Limits::max_d_model);
    c.layers = f.integer({"num_hidden_layers"}, 1, ModelLimits::max_layers);
    c.heads = f.integer({"num_attention_heads"}, 1, Limits::max_heads);
}

// BERT and RoBERTa: hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
// max_position_embeddings, type_vocab_size; post-norm, biases everywhere, no LM head.
void read_bert(Fields& f, ModelConfig& c) {
    using core::Limits;
    read_hf_sizes(f, c);
    c.d_ff = f.integer({"intermediate_size"}, 1, ModelLimits::max_d_ff);
    c.max_positions = f.integer({"max_position_embeddings"}, 1, ModelLimits::max_positions);
    c.type_vocab_size = f.integer({"type_vocab_size"}, 1, ModelLimits::max_type_vocab, 2);
    const bool roberta = c.architecture == Architecture::roberta;
    c.pad_token_id = f.integer({"pad_token_id"}, 0, std::max(0, c.vocab_size - 1), roberta ? 1 : 0);
    c.norm_eps = f.number({"layer_norm_eps"}, 0, ModelLimits::max_norm_eps, 1e-12);
    read_activation(f, c, "hidden_act", "gelu");
    c.qkv_bias = c.o_bias = c.mlp_bias = true;
    f.only("position_embedding_type", "absolute", "position embeddings other than absolute ones");
    f.only("is_decoder", false, "BERT as a decoder");
    if (roberta && f.ok() && c.pad_token_id + 2 > c.max_positions)
        f.refuse("max_position_embeddings", std::to_string(c.max_positions) +
                                                " leaves no position for a token: RoBERTa's positions start at "
                                                "pad_token_id + 1 = " +
                                                std::to_string(c.pad_token_id + 1));
}

// rope_scaling: none, {"rope_type": "default"}, or the types attnviz runs: "linear" {factor},
// "dynamic" {factor} (L: max_position_embeddings, or the scaling's original_max_position_embeddings),
// "llama3" {factor, low_freq_factor, high_freq_factor, original_max_position_embeddings}. Older
// configs say "type" for "rope_type".
void read_rope_scaling(Fields& f, ModelConfig& c) {
    const nlohmann::json* scaling = f.find({"rope_scaling"});
    if (!scaling) return;
    if (!scaling->is_object()) {
        f.refuse("rope_scaling", "expected an object with rope_type, got " + core::describe_json(*scaling));
        return;
    }
    const std::string file = f.file() + ": rope_scaling";  // outlives `s`, which keeps a reference
    Fields s(*scaling, file);
    const std::string type = s.text({"rope_type", "type"}, "default");
    using K = core::RopeScaling::Kind;
    core::RopeScaling& r = c.rope_scaling;
    if (type == "default") {
        r.kind = K::none;
    } else if (type == "linear" || type == "dynamic" || type == "llama3") {
        r.kind = type == "linear" ? K::linear : type == "dynamic" ? K::dynamic : K::llama3;
        r.factor = s.number({"factor"}, 0, core::Limits::max_rope_factor, 0);
        if (r.factor < 1) s.refuse("factor", "missing or below 1 (" + type + " scaling stretches by it)");
        if (r.kind == K::dynamic)
            r.original_max_positions = s.integer({"original_max_position_embeddings"}, 1, ModelLimits::max_positions,
                                                 std::max(1, c.max_positions));
        if (r.kind == K::llama3) {
            r.original_max_positions = s.integer({"original_max_position_embeddings"}, 1, ModelLimits::max_positions);
            r.low_freq_factor = s.number({"low_freq_factor"}, 0, 1e6, 0);
            r.high_freq_factor = s.number({"high_freq_factor"}, 0, 1e6, 0);
            if (!(r.low_freq_factor > 0)) s.refuse("low_freq_factor", "missing (llama3 scaling needs it)");
            if (!(r.high_freq_factor > r.low_freq_factor))
                s.refuse("high_freq_factor", "missing or not above low_freq_factor (llama3 scaling needs it)");
        }
    } else {
        s.refuse("rope_type", core::describe_text(type) +
                                  " is a RoPE scaling attnviz does not run (default, linear, dynamic, llama3)");
    }
    f.take_from(std::move(s));
}

// Gemma and Gemma 2: head_dim apart from d_model / heads, RMSNorm by (1 + w), embeddings × √d_model,
// GeGLU; Gemma 2's sandwich norms, query_pre_attn_scalar, soft-caps and windows on the even layers.
void read_gemma(Fields& f, ModelConfig& c) {
    c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
    c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
    c.norm_plus_one = true;
    c.embedding_scale = std::sqrt(static_cast<double>(c.d_model));
    read_activation(f, c, "hidden_activation", "gelu_pytorch_tanh");
    if (c.architecture != Architecture::gemma2) return;
    c.sandwich_norms = true;
    c.query_pre_attn_scalar = f.number({"query_pre_attn_scalar"}, 0, 1e9, 256);
    c.attn_softcap = f.number({"attn_logit_softcapping"}, 0, core::Limits::max_softcap, 0);
    c.final_softcap = f.number({"final_logit_softcapping"}, 0, core::Limits::max_softcap, 0);
    if (c.attn_softcap != 0 && c.attn_softcap < core::Limits::min_softcap)
        f.refuse("attn_logit_softcapping",
                 "a soft-cap must be at least " + core::format_number(core::Limits::min_softcap));
    if (!f.present("sliding_window") || f.find({"sliding_window"}))
        c.sliding_window = f.integer({"sliding_window"}, 1, ModelLimits::max_positions, 4096);
}

// GPT-NeoX (Pythia): hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
// max_position_embeddings, layer_norm_eps, rotary_pct, rotary_emb_base (or rope_theta),
// use_parallel_residual; biases on the attention and the MLP, an untied embed_out.
void read_gpt_neox(Fields& f, ModelConfig& c) {
    using core::Limits;
    read_hf_sizes(f, c);
    c.d_ff = f.integer({"intermediate_size"}, 1, ModelLimits::max_d_ff);
    c.max_positions = f.integer({"max_position_embeddings"}, 1, ModelLimits::max_positions, 2048);
    c.norm_eps = f.number({"layer_norm_eps"}, 0, ModelLimits::max_norm_eps, 1e-5);
    c.rope_theta = f.number({"rotary_emb_base", "rope_theta"}, 1, Limits::max_rope_base, 10000);
    read_activation(f, c, "hidden_act", "gelu");
    c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
    c.qkv_bias = c.o_bias = f.boolean("attention_bias", true);
    c.mlp_bias = true;
    c.parallel_residual = f.boolean("use_parallel_residual", true);
    c.rotary_fraction = f.number({"rotary_pct", "partial_rotary_factor"}, 0, 1, 0.25);
    read_rope_scaling(f, c);
}

// Llama, Mistral and Qwen2: hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, head_dim, intermediate_size, rms_norm_eps, rope_theta.
void read_llama(Fields& f, ModelConfig& c) {
    using core::Limits;
    read_hf_sizes(f, c);
    c.kv_heads = f.integer({"num_key_value_heads"}, 1, Limits::max_heads, c.heads);
    c.d_ff = f.integer({"intermediate_size"}, 1, ModelLimits::max_d_ff);
    c.max_positions = f.integer({"max_position_embeddings"}, 1, ModelLimits::max_positions, 0);
    c.norm_eps = f.number({"rms_norm_eps"}, 0, ModelLimits::max_norm_eps, 1e-6);
    c.rope_theta = f.number({"rope_theta"}, 1, Limits::max_rope_base, 10000);
    read_activation(f, c, "hidden_act", "silu");
    c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
    read_rope_scaling(f, c);
    switch (c.architecture) {
        case Architecture::llama:
            c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
            c.mlp_bias = f.boolean("mlp_bias", false);
            break;
        case Architecture::qwen2:
            c.qkv_bias = true;
            if (f.boolean("use_sliding_window", false)) {
                c.sliding_window = f.integer({"sliding_window"}, 1, ModelLimits::max_positions, 4096);
                c.window_from_layer = f.integer({"max_window_layers"}, 0, ModelLimits::max_layers, 28);
            }
            break;
        case Architecture::gemma:
        case Architecture::gemma2: read_gemma(f, c); break;
        case Architecture::phi3:
            c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
            c.rotary_fraction = f.number({"partial_rotary_factor"}, 0, 1, 1);
            if (f.find({"sliding_window"}))
                c.sliding_window = f.integer({"sliding_window"}, 1, ModelLimits::max_positions);
            break;
        case Architecture::olmo2:  // no input norms: the outputs' (sandwich_norms without the inner ones)
            c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
            c.qk_norm = true;
            c.input_norms = false;
            c.sandwich_norms = true;
            break;
        default:  // mistral: absent, MistralConfig's 4096; null, none
            if (!f.present("sliding_window") || f.find({"sliding_window"}))
                c.sliding_window = f.integer({"sliding_window"}, 1, ModelLimits::max_positions, 4096);
            break;
    }
}

}  // namespace

core::Result<ModelConfig> read_model_config(std::string_view text, const std::string& name) {
    using R = core::Result<ModelConfig>;
    const core::Result<json> doc = core::read_json(text);
    if (!doc) return R::fail({{name, doc.problems.front().str()}});
    if (!doc.value->is_object())
        return R::fail({{name, "expected a JSON object, got " + core::describe_json(*doc.value)}});
    Fields f(*doc.value, name);
    ModelConfig c;
    const std::string type = f.text({"model_type"}, "");
    const std::optional<Architecture> architecture = architecture_named(type);
    if (!architecture) {
        f.refuse("model_type",
                 (type.empty() ? std::string("missing") : core::describe_text(type) + " is not a model attnviz runs") +
                     " (gpt2, bert, roberta, llama, mistral, qwen2, gpt_neox, gemma, gemma2, phi3 or olmo2)");
        return R::fail(std::move(f).take());
    }
    c.architecture = *architecture;
    c.vocab_size = f.integer({"vocab_size"}, 1, ModelLimits::max_vocab);
    if (c.architecture == Architecture::gpt2)
        read_gpt2(f, c);
    else if (c.encoder())
        read_bert(f, c);
    else if (c.architecture == Architecture::gpt_neox)
        read_gpt_neox(f, c);
    else
        read_llama(f, c);
    if (c.kv_heads == 0) c.kv_heads = c.heads;

    // d_k: head_dim where the config gives it (Llama family), else d_model / heads. The sizes are
    // checked against each other once each is valid.
    if (!f.ok()) return R::fail(std::move(f).take());
    if (c.heads % c.kv_heads != 0)
        f.refuse("num_key_value_heads", std::to_string(c.kv_heads) + " K/V groups do not divide " +
                                            std::to_string(c.heads) + " heads (num_attention_heads)");
    const bool own_head_dim = c.rope() && c.architecture != Architecture::gpt_neox && f.find({"head_dim"});
    if (own_head_dim) {
        c.d_k = f.integer({"head_dim"}, 1, core::Limits::max_d_k);
    } else if (c.d_model % c.heads != 0) {
        f.refuse(c.architecture == Architecture::gpt2 ? "n_head" : "num_attention_heads",
                 std::to_string(c.heads) + " heads do not divide the width " + std::to_string(c.d_model) +
                     (c.architecture == Architecture::gpt2 ? " (n_embd)" : " (hidden_size)"));
    } else {
        c.d_k = c.d_model / c.heads;
    }
    // The columns RoPE turns: all of d_k, or the first rotary_pct (partial_rotary_factor) of them,
    // as int(d_k · fraction) in Hugging Face's code; an even number from 2 on.
    if (f.ok() && c.rope()) {
        const char* field = c.rotary_fraction < 1
                                ? (c.architecture == Architecture::gpt_neox ? "rotary_pct" : "partial_rotary_factor")
                            : own_head_dim ? "head_dim"
                                           : "num_attention_heads";
        const int dims = static_cast<int>(c.d_k * c.rotary_fraction);
        if (dims < 2 || dims % 2 != 0)
            f.refuse(field, "RoPE needs an even number of columns from 2 on, got " + std::to_string(dims) +
                                " of d_k = " + std::to_string(c.d_k));
        else if (dims < c.d_k)
            c.rope_dims = dims;
        if (c.rope_scaling.kind == core::RopeScaling::Kind::dynamic && dims < 4)
            f.refuse("rope_scaling", "dynamic scaling needs at least 4 rotated columns, got " + std::to_string(dims));
    }
    if (!f.ok()) return R::fail(std::move(f).take());
    return R::ok(c);
}

}  // namespace attnviz::model
