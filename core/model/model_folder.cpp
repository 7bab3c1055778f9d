#include "core/model/model_folder.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "core/base/file_io.hpp"

namespace attnviz::model {

namespace {

namespace fs = std::filesystem;

bool ends_at_dot(const std::string& name, const std::string& suffix) {
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    return name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '.';
}

// The prefix before the tensor named `suffix` ("transformer." for "transformer.wte.weight"): that of
// the shortest name ending in it, or `otherwise` when no name does.
std::string prefix_of(const WeightFiles& w, const std::string& suffix, const std::string& otherwise) {
    const std::string* best = nullptr;
    std::vector<std::string> names = w.names();
    for (const std::string& name : names)
        if (ends_at_dot(name, suffix) && (!best || name.size() < best->size())) best = &name;
    return best ? best->substr(0, best->size() - suffix.size()) : otherwise;
}

// A LayerNorm's weight and bias: BASE.weight and BASE.bias, or BASE.gamma and BASE.beta as the
// original BERT checkpoints name them.
std::pair<std::string, std::string> layer_norm_names(const WeightFiles& w, const std::string& base) {
    if (!w.find(base + ".weight") && w.find(base + ".gamma")) return {base + ".gamma", base + ".beta"};
    return {base + ".weight", base + ".bias"};
}

ModelNames gpt2_names(const ModelConfig& c, const WeightFiles& w) {
    const std::string p = prefix_of(w, "wte.weight", "");
    ModelNames n{p + "wte.weight", p + "wpe.weight", "", "", "", p + "ln_f.weight", p + "ln_f.bias", "", {}};
    n.lm_head = n.token_embeddings;  // GPT-2's head is always tied
    for (int L = 0; L < c.layers; ++L) {
        const std::string b = p + "h." + std::to_string(L) + ".";
        BlockNames& k = n.blocks.emplace_back();
        k.norm_attention_w = b + "ln_1.weight", k.norm_attention_b = b + "ln_1.bias";
        k.qkv = b + "attn.c_attn.weight", k.qkv_b = b + "attn.c_attn.bias";
        k.o = b + "attn.c_proj.weight", k.o_b = b + "attn.c_proj.bias";
        k.norm_mlp_w = b + "ln_2.weight", k.norm_mlp_b = b + "ln_2.bias";
        k.up = b + "mlp.c_fc.weight", k.up_b = b + "mlp.c_fc.bias";
        k.down = b + "mlp.c_proj.weight", k.down_b = b + "mlp.c_proj.bias";
    }
    return n;
}

ModelNames bert_names(const ModelConfig& c, const WeightFiles& w) {
    const std::string e = prefix_of(w, "embeddings.word_embeddings.weight",
                                    to_string(c.architecture) + std::string("."));
    const std::string p = e + "encoder.layer.";
    ModelNames n;
    n.token_embeddings = e + "embeddings.word_embeddings.weight";
    n.position_embeddings = e + "embeddings.position_embeddings.weight";
    n.type_embeddings = e + "embeddings.token_type_embeddings.weight";
    std::tie(n.embeddings_norm_w, n.embeddings_norm_b) = layer_norm_names(w, e + "embeddings.LayerNorm");
    for (int L = 0; L < c.layers; ++L) {
        const std::string b = p + std::to_string(L) + ".";
        BlockNames& k = n.blocks.emplace_back();
        const std::string self = b + "attention.self.";
        k.q = self + "query.weight", k.k = self + "key.weight", k.v = self + "value.weight";
        k.q_b = self + "query.bias", k.k_b = self + "key.bias", k.v_b = self + "value.bias";
        k.o = b + "attention.output.dense.weight", k.o_b = b + "attention.output.dense.bias";
        std::tie(k.norm_attention_w, k.norm_attention_b) = layer_norm_names(w, b + "attention.output.LayerNorm");
        k.up = b + "intermediate.dense.weight", k.up_b = b + "intermediate.dense.bias";
        k.down = b + "output.dense.weight", k.down_b = b + "output.dense.bias";
        std::tie(k.norm_mlp_w, k.norm_mlp_b) = layer_norm_names(w, b + "output.LayerNorm");
    }
    return n;
}

ModelNames gpt_neox_names(const ModelConfig& c, const WeightFiles& w) {
    const std::string p = prefix_of(w, "embed_in.weight", "gpt_neox.");
    ModelNames n;
    n.token_embeddings = p + "embed_in.weight";
    n.final_norm_w = p + "final_layer_norm.weight", n.final_norm_b = p + "final_layer_norm.bias";
    n.lm_head = c.tie_word_embeddings ? n.token_embeddings : "embed_out.weight";
    const auto bias = [&](bool on, const std::string& weight) {
        return on ? weight.substr(0, weight.size() - 6) + "bias" : std::string();
    };
    for (int L = 0; L < c.layers; ++L) {
        const std::string b = p + "layers." + std::to_string(L) + ".";
        BlockNames& k = n.blocks.emplace_back();
        k.norm_attention_w = b + "input_layernorm.weight", k.norm_attention_b = b + "input_layernorm.bias";
        k.qkv = b + "attention.query_key_value.weight", k.qkv_b = bias(c.qkv_bias, k.qkv);
        k.o = b + "attention.dense.weight", k.o_b = bias(c.o_bias, k.o);
        k.norm_mlp_w = b + "post_attention_layernorm.weight", k.norm_mlp_b = b + "post_attention_layernorm.bias";
        k.up = b + "mlp.dense_h_to_4h.weight", k.up_b = b + "mlp.dense_h_to_4h.bias";
        k.down = b + "mlp.dense_4h_to_h.weight", k.down_b = b + "mlp.dense_4h_to_h.bias";
    }
    return n;
}

ModelNames llama_names(const ModelConfig& c, const WeightFiles& w) {
    const std::string p = prefix_of(w, "embed_tokens.weight", "model.");
    ModelNames n;
    n.token_embeddings = p + "embed_tokens.weight";
    n.final_norm_w = p + "norm.weight";
    n.lm_head = c.tie_word_embeddings ? n.token_embeddings : "lm_head.weight";
    const auto bias = [](bool on, const std::string& weight) {
        return on ? weight.substr(0, weight.size() - 6) + "bias" : std::string();
    };
    for (int L = 0; L < c.layers; ++L) {
        const std::string b = p + "layers." + std::to_string(L) + ".";
        BlockNames& k = n.blocks.emplace_back();
        k.norm_attention_w = b + "input_layernorm.weight";
        const std::string a = b + "self_attn.";
        k.q = a + "q_proj.weight", k.k = a + "k_proj.weight", k.v = a + "v_proj.weight", k.o = a + "o_proj.weight";
        k.q_b = bias(c.qkv_bias, k.q), k.k_b = bias(c.qkv_bias, k.k), k.v_b = bias(c.qkv_bias, k.v);
        k.o_b = bias(c.o_bias, k.o);
        k.norm_mlp_w = b + "post_attention_layernorm.weight";
        k.gate = b + "mlp.gate_proj.weight", k.up = b + "mlp.up_proj.weight", k.down = b + "mlp.down_proj.weight";
        k.gate_b = bias(c.mlp_bias, k.gate), k.up_b = bias(c.mlp_bias, k.up), k.down_b = bias(c.mlp_bias, k.down);
        if (c.sandwich_norms) {  // Gemma 2 (OLMo 2: the outer norms only)
            k.post_attention_w = k.norm_mlp_w;
            k.norm_mlp_w = c.input_norms ? b + "pre_feedforward_layernorm.weight" : "";
            k.post_mlp_w = b + "post_feedforward_layernorm.weight";
        }
        if (!c.input_norms) k.norm_attention_w = "";
        if (c.qk_norm) k.q_norm = a + "q_norm.weight", k.k_norm = a + "k_norm.weight";  // OLMo 2
        if (c.architecture == Architecture::phi3) {
            k.q = k.k = k.v = k.q_b = k.k_b = k.v_b = k.gate = k.gate_b = k.up_b = "";
            k.qkv = a + "qkv_proj.weight";
            k.up = "";
            k.gate_up = b + "mlp.gate_up_proj.weight";
        }
    }
    return n;
}

ModelNames names_of(const ModelConfig& c, const WeightFiles& w) {
    if (c.architecture == Architecture::gpt2) return gpt2_names(c, w);
    if (c.encoder()) return bert_names(c, w);
    if (c.architecture == Architecture::gpt_neox) return gpt_neox_names(c, w);
    return llama_names(c, w);
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string s = "[";
    for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
    return s + "]";
}

}  // namespace

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c, const ModelNames& n, bool conv1d) {
    using U = std::uint64_t;
    const U d = c.d_model, q = static_cast<U>(c.heads) * c.d_k, kv = static_cast<U>(c.kv_heads) * c.d_k, ff = c.d_ff;
    std::vector<ExpectedTensor> out;
    const auto add = [&](const std::string& name, std::vector<U> shape, const std::string& meaning) {
        if (name.empty()) return;
        for (const ExpectedTensor& t : out)
            if (t.name == name) return;  // a tied LM head is the embedding table
        out.push_back({name, std::move(shape), meaning});
    };
    // A projection from d_in to d_out: Conv1D's d_in × d_out, or nn.Linear's d_out × d_in.
    const auto weight = [&](const std::string& name, U d_in, U d_out, const std::string& in, const std::string& to) {
        if (conv1d)
            add(name, {d_in, d_out}, in + " × " + to);
        else
            add(name, {d_out, d_in}, to + " × " + in);
    };
    const auto vector = [&](const std::string& name, U size, const std::string& meaning) {
        add(name, {size}, meaning);
    };

    add(n.token_embeddings, {static_cast<U>(c.vocab_size), d}, "vocab_size × d_model");
    add(n.position_embeddings, {static_cast<U>(c.max_positions), d}, "max_positions × d_model");
    add(n.type_embeddings, {static_cast<U>(c.type_vocab_size), d}, "type_vocab_size × d_model");
    vector(n.embeddings_norm_w, d, "d_model");
    vector(n.embeddings_norm_b, d, "d_model");
    for (const BlockNames& b : n.blocks) {
        vector(b.norm_attention_w, d, "d_model");
        vector(b.norm_attention_b, d, "d_model");
        const bool all_heads = c.kv_heads == c.heads;
        weight(b.qkv, d, q + 2 * kv, "d_model", all_heads ? "3·heads·d_k" : "(heads + 2·kv_heads)·d_k");
        vector(b.qkv_b, q + 2 * kv, all_heads ? "3·heads·d_k" : "(heads + 2·kv_heads)·d_k");
        weight(b.q, d, q, "d_model", "heads·d_k");
        weight(b.k, d, kv, "d_model", "kv_heads·d_k");
        weight(b.v, d, kv, "d_model", "kv_heads·d_k");
        vector(b.q_b, q, "heads·d_k");
        vector(b.q_norm, q, "heads·d_k");
        vector(b.k_norm, kv, "kv_heads·d_k");
        vector(b.k_b, kv, "kv_heads·d_k");
        vector(b.v_b, kv, "kv_heads·d_k");
        weight(b.o, q, d, "heads·d_k", "d_model");
        vector(b.o_b, d, "d_model");
        vector(b.norm_mlp_w, d, "d_model");
        vector(b.norm_mlp_b, d, "d_model");
        weight(b.up, d, ff, "d_model", "d_ff");
        vector(b.up_b, ff, "d_ff");
        weight(b.gate, d, ff, "d_model", "d_ff");
        vector(b.gate_b, ff, "d_ff");
        weight(b.gate_up, d, 2 * ff, "d_model", "2·d_ff");
        weight(b.down, ff, d, "d_ff", "d_model");
        vector(b.down_b, d, "d_model");
        vector(b.post_attention_w, d, "d_model");
        vector(b.post_attention_b, d, "d_model");
        vector(b.post_mlp_w, d, "d_model");
        vector(b.post_mlp_b, d, "d_model");
    }
    vector(n.final_norm_w, d, "d_model");
    vector(n.final_norm_b, d, "d_model");
    add(n.lm_head, {static_cast<U>(c.vocab_size), d}, "vocab_size × d_model");
    return out;
}

core::Result<ModelFolder> ModelFolder::open(const std::string& folder, bool* unreadable, std::int64_t memory_budget) {
    using R = core::Result<ModelFolder>;
    bool ignored = false;
    bool& io = unreadable ? *unreadable : ignored;
    io = false;
    std::error_code ec;
    const fs::path dir(folder);
    if (!fs::exists(dir, ec)) {
        io = true;
        return R::fail({{folder, "no such folder"}});
    }
    if (!fs::is_directory(dir, ec))
        return R::fail({{folder, "not a folder (a model folder holds config.json and model.safetensors)"}});
    const fs::path config_path = dir / "config.json";
    if (!fs::is_regular_file(config_path, ec))
        return R::fail({{folder,
                         "no config.json: not a model folder as Hugging Face writes it (config.json and "
                         "model.safetensors)"}});
    const core::Result<std::string> text = core::read_file(config_path.string());
    if (!text) {
        io = true;
        return R::fail(text.problems);
    }
    ModelFolder m;
    m.folder_ = folder;
    core::Result<ModelConfig> config = read_model_config(*text.value, config_path.string());
    if (!config) return R::fail(std::move(config.problems));
    m.config_ = *config.value;
    core::Result<WeightFiles> weights = WeightFiles::open(folder, &io);
    if (!weights) return R::fail(std::move(weights.problems));
    m.weights_ = std::move(*weights.value);
    m.names_ = names_of(m.config_, m.weights_);

    // Every tensor: there, a float dtype attnviz reads, the shape the config implies, and not more
    // values than the reader converts at once.
    core::ProblemList problems;
    const std::string from = " from " + config_path.filename().string();
    // The tables indexed by token, position or type are read a row or a block of rows at a time
    // (their rows are d_model wide); every other tensor is read whole.
    const ModelNames& n = m.names_;
    const auto read_whole = [&](const std::string& name) {
        return name != n.token_embeddings && name != n.position_embeddings && name != n.type_embeddings &&
               name != n.lm_head;
    };
    for (const ExpectedTensor& t : expected_tensors(m.config_, m.names_, m.conv1d())) {
        const core::TensorInfo* info = m.weights_.find(t.name);
        if (!info) {
            problems.add(m.weights_.label() + ": " + t.name,
                         std::string("missing (a ") + to_string(m.config_.architecture) + " model of " +
                             std::to_string(m.config_.layers) + " layers needs it)");
            continue;
        }
        const std::string path = m.weights_.file_of(t.name).label() + ": " + t.name;
        if (info->dtype != "F32" && info->dtype != "F16" && info->dtype != "BF16" && info->dtype != "F64")
            problems.add(path, "dtype " + info->dtype + ": attnviz reads weights stored as F32, F16, BF16 or F64");
        else if (info->shape != t.shape)
            problems.add(path, "expected " + shape_text(t.shape) + " (" + t.meaning + from + "), got " +
                                   shape_text(info->shape));
        else if (read_whole(t.name) && info->bytes / (info->dtype == "F64"   ? 8
                                                      : info->dtype == "F32" ? 4
                                                                             : 2) >
                                           core::max_tensor_values)
            problems.add(path, shape_text(info->shape) + " is more values than attnviz reads at once (" +
                                   std::to_string(core::max_tensor_values) + ")");
    }
    if (!problems.empty()) return R::fail(std::move(problems).take());
    if (m.weights_.byte_size() <= static_cast<std::uint64_t>(std::max<std::int64_t>(memory_budget, 0)))
        if (core::Problems p = m.weights_.keep_in_memory(); !p.empty()) {
            io = true;
            return R::fail(std::move(p));
        }
    return R::ok(std::move(m));
}

}  // namespace attnviz::model
