#include "core/io/import.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "core/attention/presets.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

const char* to_string(Convention c) {
    switch (c) {
        case Convention::torch: return "torch";
        case Convention::bert: return "bert";
        case Convention::gpt2: return "gpt2";
        case Convention::llama: return "llama";
    }
    return "torch";
}

std::optional<Convention> convention_from_name(const std::string& name) {
    for (Convention c : {Convention::torch, Convention::bert, Convention::gpt2, Convention::llama})
        if (name == to_string(c)) return c;
    return std::nullopt;
}

namespace {

using R = Result<ImportedLayer>;

bool ends_at_dot(const std::string& name, const std::string& suffix) {
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    return name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '.';
}

// The tensor named `suffix` with any prefix before it (the shortest such name when several).
const TensorInfo* find_suffix(const TensorFile& f, const std::string& suffix) {
    const TensorInfo* best = nullptr;
    for (const TensorInfo& t : f.tensors())
        if (ends_at_dot(t.name, suffix) && (!best || t.name.size() < best->name.size())) best = &t;
    return best;
}

std::string layers_text(const std::vector<int>& layers);  // "0-11", below

// What a convention calls the tensors of layer L.
struct Names {
    std::string q, k, v, o, q_bias, k_bias, v_bias, o_bias;  // q holds Q, K, V together for torch and gpt2
};

Names names_of(Convention c, int layer, const TensorFile& f) {
    const std::string L = std::to_string(layer);
    switch (c) {
        case Convention::torch: {
            std::string p = "layers." + L + ".self_attn.";
            if (!find_suffix(f, p + "in_proj_weight") && layer == 0 && f.find("in_proj_weight")) p = "";
            return {p + "in_proj_weight", "", "", p + "out_proj.weight",
                    p + "in_proj_bias",   "", "", p + "out_proj.bias"};
        }
        case Convention::bert: {
            const std::string p = "encoder.layer." + L + ".attention.";
            return {p + "self.query.weight", p + "self.key.weight", p + "self.value.weight", p + "output.dense.weight",
                    p + "self.query.bias",   p + "self.key.bias",   p + "self.value.bias",   p + "output.dense.bias"};
        }
        case Convention::gpt2: {
            const std::string p = "h." + L + ".attn.";
            return {p + "c_attn.weight", "", "", p + "c_proj.weight", p + "c_attn.bias", "", "", p + "c_proj.bias"};
        }
        case Convention::llama: {
            const std::string p = "layers." + L + ".self_attn.";
            return {p + "q_proj.weight", p + "k_proj.weight", p + "v_proj.weight", p + "o_proj.weight",
                    p + "q_proj.bias",   p + "k_proj.bias",   p + "v_proj.bias",   p + "o_proj.bias"};
        }
    }
    return {};
}

// "[0, 8]"
std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string text;
    for (std::uint64_t extent : shape) text += (text.empty() ? "" : ", ") + std::to_string(extent);
    return "[" + text + "]";
}

// A tensor as a matrix: 2-D as it is, 1-D as one row; `transpose` for Linear weights (y = x·Wᵀ).
// Its shape, as the file's header gives it, is checked before any of its data is read: a layer's
// matrices and vectors have at least one row and one column (an extent of 0 would make d_k or
// d_model 0, which divides nothing).
Result<Matrix> load(const TensorFile& f, const TensorInfo& info, bool transpose) {
    const std::string where = f.label() + ": " + info.name;
    if (info.shape.empty() || info.shape.size() > 2)
        return Result<Matrix>::fail(
            {{where, "expected a matrix or a vector, got " + std::to_string(info.shape.size()) + " dimensions"}});
    if (std::find(info.shape.begin(), info.shape.end(), 0) != info.shape.end())
        return Result<Matrix>::fail({{where, "its shape " + shape_text(info.shape) +
                                                 " has an extent of 0: a layer's weights need at least one row "
                                                 "and one column"}});
    Result<Tensor> t = f.read(info.name);
    if (!t) return Result<Matrix>::fail(std::move(t.problems));
    const Tensor& v = *t.value;
    const Eigen::Map<const Matrix> m(v.values.data(), static_cast<Eigen::Index>(v.rows()),
                                     static_cast<Eigen::Index>(v.cols()));  // both row-major
    return Result<Matrix>::ok(transpose ? Matrix(m.transpose()) : Matrix(m));
}

// The numbers the tensors' headers declare, together (counted up to just past the limit of a
// session's inputs, so that no product overflows); absent tensors count 0.
std::uint64_t declared_numbers(std::initializer_list<const TensorInfo*> tensors) {
    const auto cap = static_cast<std::uint64_t>(Limits::max_input_numbers) + 1;
    std::uint64_t total = 0;
    for (const TensorInfo* t : tensors) {
        if (!t) continue;
        std::uint64_t count = 1;
        for (std::uint64_t extent : t->shape) count = extent != 0 && count > cap / extent ? cap : count * extent;
        total = std::min(cap, total + std::min(count, cap));
    }
    return total;
}

// What a model's config.json says about its attention layers, each when it says it.
struct ModelConfig {
    std::optional<int> heads, kv_heads;
    std::optional<double> rope_base;
    std::optional<int> d_model, head_dim;  // hidden_size (or n_embd, d_model) and head_dim: checked against the weights
    std::string d_model_key;               // the key d_model came from
    std::string source;                    // what messages name a key by: "config.json: " or "FILE: __metadata__."
};

// The head counts, RoPE base and sizes from a config.json, or (when there is none) from the
// metadata export-layer.py writes with the same keys. A value given but unusable (0, negative,
// not a whole number, over attnviz's limit) is a problem "SOURCE key: …"; null counts as not given.
ModelConfig read_config_json(const std::string& text, const std::map<std::string, std::string>& metadata,
                             const std::string& source, const std::string& metadata_source, Problems& problems) {
    ModelConfig c;
    c.source = source;
    if (text.empty()) {
        nlohmann::json doc = nlohmann::json::object();
        for (const char* key : {"num_attention_heads", "n_head", "num_key_value_heads", "rope_theta"})
            if (const auto it = metadata.find(key); it != metadata.end()) {
                const nlohmann::json v = nlohmann::json::parse(it->second, nullptr, false);
                doc[key] = v.is_discarded() ? nlohmann::json(it->second) : v;
            }
        if (doc.empty()) return c;
        return read_config_json(doc.dump(), {}, metadata_source, metadata_source, problems);
    }
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        problems.push_back({source.substr(0, source.find_last_not_of(": ") + 1), "not a JSON object"});
        return c;
    }
    auto whole = [&](const char* key, const char* what, int max) -> std::optional<int> {
        const auto it = doc.find(key);
        if (it == doc.end() || it->is_null()) return std::nullopt;
        const std::string where = source + key;
        if (!it->is_number_integer()) {
            problems.push_back(
                {where, std::string("expected ") + what + ", a whole number, got " +
                            printable(it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))});
            return std::nullopt;
        }
        const auto v = it->get<std::int64_t>();
        if (v < 1 || v > max) {
            problems.push_back({where, std::string(what) + " must be from 1 to " + std::to_string(max) + ", got " +
                                           std::to_string(v)});
            return std::nullopt;
        }
        return static_cast<int>(v);
    };
    c.heads = whole("num_attention_heads", "the number of heads", Limits::max_heads);
    if (!c.heads) c.heads = whole("n_head", "the number of heads", Limits::max_heads);
    c.kv_heads = whole("num_key_value_heads", "the number of K/V heads", Limits::max_heads);
    for (const char* key : {"hidden_size", "n_embd", "d_model"})
        if (!c.d_model && (c.d_model = whole(key, "d_model", Limits::max_d_model))) c.d_model_key = key;
    c.head_dim = whole("head_dim", "d_k", Limits::max_d_k);
    if (const auto it = doc.find("rope_theta"); it != doc.end() && !it->is_null()) {
        if (it->is_number() && it->get<double>() > 1 && it->get<double>() <= Limits::max_rope_base)
            c.rope_base = it->get<double>();
        else
            problems.push_back({source + "rope_theta",
                                "RoPE's base must be a number above 1 and at most " +
                                    format_number(Limits::max_rope_base) + ", got " +
                                    printable(it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))});
    }
    return c;
}

// A tensor as a matrix (nullptr: an empty one), or an empty one with its problems added.
Matrix get(const TensorFile& f, const TensorInfo* t, bool transpose, Problems& problems) {
    if (!t) return {};
    Result<Matrix> m = load(f, *t, transpose);
    if (!m) {
        for (Problem& p : m.problems) problems.push_back(std::move(p));
        return {};
    }
    return std::move(*m.value);
}

// 1. The layer, and the convention: given, or the one whose names the file holds.
Problems find_layer(const TensorFile& f, const ImportOptions& o, int& layer_index, Convention& convention,
                    std::vector<std::string>& notes) {
    const std::string& file = f.label();
    layer_index = o.layer.value_or(0);
    // Where the layer's number came from, for a message about a layer the file does not hold.
    std::string chosen_by = o.layer ? "" : " (the default; choose one with --layer)";
    if (!o.layer)
        if (const auto it = f.metadata().find("layer"); it != f.metadata().end()) {
            const nlohmann::json v = nlohmann::json::parse(it->second, nullptr, false);
            if (v.is_number_integer() && v >= 0 && v <= 100000) {
                layer_index = v.get<int>();
                chosen_by = " (named by the file's metadata)";
            }
        }
    std::optional<Convention> found = o.convention;
    if (!found) {
        for (Convention c : {Convention::torch, Convention::bert, Convention::gpt2, Convention::llama})
            if (find_suffix(f, names_of(c, layer_index, f).q)) {
                found = c;
                break;
            }
        if (!found) {
            const Result<LayerListing> listed = list_layers(f, std::nullopt);
            if (listed)
                return {{file, "no attention layer " + std::to_string(layer_index) + chosen_by +
                                   " in the file (its layers: " + layers_text(listed.value->layers) + ")"}};
            return {{file, "no attention layer " + std::to_string(layer_index) +
                               " of a known convention (torch, bert, gpt2, llama) in the file's " +
                               std::to_string(f.tensors().size()) + " tensors"}};
        }
        notes.push_back(std::string("convention: ") + to_string(*found) + " (from the tensor names)");
    }
    convention = *found;
    if (!find_suffix(f, names_of(convention, layer_index, f).q))
        if (const std::vector<int> held = checkpoint_layers(f, convention); !held.empty())
            return {{file, "no attention layer " + std::to_string(layer_index) + chosen_by + " of the " +
                               to_string(convention) + " convention in the file (its layers: " + layers_text(held) +
                               ")"}};
    return {};
}

// 2. The projections as x·W (d_model × columns) and the biases as rows. The tensors are found
// first and the numbers their headers declare checked against the limit of a session's inputs,
// so a giant (or lying) tensor is refused before any of it is read or inflated.
Problems read_projections(const TensorFile& f, Convention c, int layer_index, LayerProjections& p) {
    const std::string& file = f.label();
    const Names n = names_of(c, layer_index, f);
    Problems problems;
    auto need = [&](const std::string& name) -> const TensorInfo* {
        const TensorInfo* t = name.empty() ? nullptr : find_suffix(f, name);
        if (!t)
            problems.push_back({file + ": " + name, "missing (needed by the " + std::string(to_string(c)) +
                                                        " convention for layer " + std::to_string(layer_index) + ")"});
        return t;
    };
    const bool fused = c == Convention::torch || c == Convention::gpt2;  // Q, K and V in one tensor
    const TensorInfo* t_q = need(n.q);
    const TensorInfo* t_k = fused ? nullptr : need(n.k);
    const TensorInfo* t_v = fused ? nullptr : need(n.v);
    const TensorInfo* t_o = need(n.o);
    const TensorInfo* t_bq = find_suffix(f, n.q_bias);
    const TensorInfo* t_bk = fused ? nullptr : find_suffix(f, n.k_bias);
    const TensorInfo* t_bv = fused ? nullptr : find_suffix(f, n.v_bias);
    const TensorInfo* t_bo = find_suffix(f, n.o_bias);
    if (!problems.empty()) return problems;
    if (declared_numbers({t_q, t_k, t_v, t_o, t_bq, t_bk, t_bv, t_bo}) >
        static_cast<std::uint64_t>(Limits::max_input_numbers))
        return {{file, "the layer's tensors hold more than " + std::to_string(Limits::max_input_numbers) +
                           " numbers, the limit of a session's inputs; nothing of them was read"}};
    if (fused) {
        const Matrix all = get(f, t_q, c == Convention::torch, problems);  // d_model × 3·d_model
        if (all.size() && all.cols() % 3 == 0) {
            const Eigen::Index d = all.cols() / 3;
            p.W_Q = all.leftCols(d), p.W_K = all.middleCols(d, d), p.W_V = all.rightCols(d);
        } else if (all.size()) {
            problems.push_back({file + ": " + t_q->name, "expected 3·d_model columns (Q, K and V)"});
        }
        if (t_bq) {
            const Matrix all_b = get(f, t_bq, false, problems);
            if (all_b.rows() == 1 && p.W_Q.size() && all_b.cols() == 3 * p.W_Q.cols()) {
                const Eigen::Index d = p.W_Q.cols();
                p.b_Q = all_b.leftCols(d), p.b_K = all_b.middleCols(d, d), p.b_V = all_b.rightCols(d);
            } else if (all_b.size()) {
                problems.push_back({file + ": " + t_bq->name, "expected one row of 3·d_model biases"});
            }
        }
    } else {  // bert and llama: y = x·Wᵀ
        p.W_Q = get(f, t_q, true, problems), p.W_K = get(f, t_k, true, problems), p.W_V = get(f, t_v, true, problems);
        p.b_Q = get(f, t_bq, false, problems), p.b_K = get(f, t_bk, false, problems);
        p.b_V = get(f, t_bv, false, problems);
    }
    p.W_O = get(f, t_o, c != Convention::gpt2, problems);  // h·d_v × d_model
    p.b_O = get(f, t_bo, false, problems);
    return problems;
}

// What step 3 finds: the heads, their width and the K/V groups, and RoPE's base.
struct HeadCounts {
    int heads = 0, d_k = 0, kv = 0;
    double rope_base = 10000;
};

// The projections' shapes against the counts: "FILE: what" for each that does not fit.
Problems check_shapes(const std::string& file, const LayerProjections& p, const HeadCounts& hc) {
    Problems problems;
    const Eigen::Index d_model = p.W_Q.rows();
    const auto check = [&](const Matrix& m, Eigen::Index rows, Eigen::Index cols, const std::string& what) {
        if (m.size() && (m.rows() != rows || m.cols() != cols))
            problems.push_back({file + ": " + what, "expected " + std::to_string(rows) + "×" + std::to_string(cols) +
                                                        " (as x·W), got " + std::to_string(m.rows()) + "×" +
                                                        std::to_string(m.cols())});
    };
    check(p.W_V, d_model, static_cast<Eigen::Index>(hc.kv) * hc.d_k, "the value projection");
    check(p.W_O, static_cast<Eigen::Index>(hc.heads) * hc.d_k, d_model, "the output projection");
    if (p.has_biases()) {
        check(p.b_Q, 1, p.W_Q.cols(), "the query bias");
        check(p.b_K, 1, p.W_K.cols(), "the key bias");
        check(p.b_V, 1, p.W_V.cols(), "the value bias");
        check(p.b_O, 1, d_model, "the output bias");
    }
    return problems;
}

// 3. Heads: given, or from config.json. Every count and size, given or read, is at least 1.
Problems count_heads(const TensorFile& f, const ImportOptions& o, const Names& n, const LayerProjections& p,
                     HeadCounts& hc) {
    const std::string& file = f.label();
    Problems problems;
    const ModelConfig counts = read_config_json(o.config_json, f.metadata(), o.config_label + ": ",
                                                file + ": __metadata__.", problems);
    for (const auto& [option, value] : {std::pair{"--heads", o.heads}, std::pair{"--kv-heads", o.kv_heads}})
        if (value && *value < 1) problems.push_back({option, "must be at least 1, got " + std::to_string(*value)});
    if (o.rope_base && !(*o.rope_base > 1 && *o.rope_base <= Limits::max_rope_base))
        problems.push_back({"--rope-base", "must be a number above 1 and at most " +
                                               format_number(Limits::max_rope_base) + ", got " +
                                               format_number(*o.rope_base)});
    if (!problems.empty()) return problems;
    const std::optional<int> heads = o.heads ? o.heads : counts.heads;
    if (!heads)
        return {{"--heads",
                 "the number of heads is not in the checkpoint: give --heads, or put the "
                 "model's config.json (num_attention_heads or n_head) beside it"}};
    const auto d_model = p.W_Q.rows(), q_cols = p.W_Q.cols();
    if (counts.d_model && *counts.d_model != d_model)
        return {{counts.source + counts.d_model_key, std::to_string(*counts.d_model) +
                                                         ", but the layer's weights are " + std::to_string(d_model) +
                                                         " wide: is it the config of another model?"}};
    if (q_cols % *heads != 0)
        return {{o.heads ? "--heads" : counts.source + "num_attention_heads",
                 std::to_string(*heads) + " heads do not divide the " + std::to_string(q_cols) +
                     " columns of the query projection"}};
    hc.heads = *heads;
    hc.d_k = static_cast<int>(q_cols / hc.heads);  // ≥ 1: load() refuses an extent of 0
    const std::string h_text = std::to_string(hc.heads), d_k_text = std::to_string(hc.d_k);
    if (counts.head_dim && *counts.head_dim != hc.d_k)
        return {{counts.source + "head_dim", std::to_string(*counts.head_dim) + ", but " + h_text + " heads of the " +
                                                 std::to_string(q_cols) + " query columns are " + d_k_text + " wide"}};
    if (hc.d_k < 1 || p.W_K.cols() % hc.d_k != 0 || p.W_K.rows() != d_model)
        return {{file + ": " + n.k + n.q,
                 "the key projection's shape does not fit " + h_text + " heads of d_k = " + d_k_text}};
    hc.kv = static_cast<int>(p.W_K.cols() / hc.d_k);
    const std::string holds = ", but the key projection holds " + std::to_string(hc.kv) +
                              " groups of d_k = " + d_k_text;
    if (o.kv_heads && *o.kv_heads != hc.kv) return {{"--kv-heads", std::to_string(*o.kv_heads) + " given" + holds}};
    if (!o.kv_heads && counts.kv_heads && *counts.kv_heads != hc.kv)
        return {{counts.source + "num_key_value_heads", std::to_string(*counts.kv_heads) + holds}};
    if (hc.kv < 1 || hc.heads % hc.kv != 0)
        return {{file, std::to_string(hc.kv) + " K/V groups do not divide " + h_text + " heads"}};
    hc.rope_base = o.rope_base ? *o.rope_base : counts.rope_base.value_or(10000.0);
    return check_shapes(file, p, hc);
}

// 4, from the embedding table: X's rows for --token-ids.
Problems embedding_rows(const TensorFile& f, const ImportOptions& o, Eigen::Index d_model, Matrix& X,
                        std::vector<std::string>& notes) {
    const TensorInfo* table = nullptr;
    for (const char* name : {"wte.weight", "word_embeddings.weight", "embed_tokens.weight"})
        if (!table) table = find_suffix(f, name);
    if (!table)
        return {{"--token-ids",
                 "the checkpoint has no token-embedding table (wte.weight, "
                 "word_embeddings.weight or embed_tokens.weight)"}};
    Problems problems;
    const Matrix E = get(f, table, false, problems);
    if (!problems.empty()) return problems;
    if (E.cols() != d_model)
        return {{f.label() + ": " + table->name, "its rows are not d_model = " + std::to_string(d_model) + " wide"}};
    X.resize(static_cast<Eigen::Index>(o.token_ids.size()), d_model);
    for (size_t i = 0; i < o.token_ids.size(); ++i) {
        if (o.token_ids[i] < 0 || o.token_ids[i] >= E.rows())
            return {{"--token-ids", "id " + std::to_string(o.token_ids[i]) + " is outside the table's " +
                                        std::to_string(E.rows()) + " rows"}};
        X.row(static_cast<Eigen::Index>(i)) = E.row(o.token_ids[i]);
    }
    notes.push_back("X: rows of " + table->name + " (token embeddings only: no position embedding or LayerNorm)");
    return {};
}

// 4. X: given (--x), rows of the embedding table (--token-ids), the file's X.L or X, or random.
Problems read_x(const TensorFile& f, const ImportOptions& o, int layer_index, Eigen::Index d_model, Matrix& X,
                std::vector<std::string>& notes) {
    if (o.x) {
        if (o.x->shape.size() == 2 && o.x->shape[0] == 0) return {{"--x", "X has 0 rows: it needs at least one token"}};
        if (o.x->shape.size() != 2 || o.x->shape[1] != static_cast<std::uint64_t>(d_model)) {
            std::string got;
            for (std::uint64_t extent : o.x->shape) got += (got.empty() ? "" : "×") + std::to_string(extent);
            return {{"--x", "expected n × " + std::to_string(d_model) + " (d_model of the layer), got " +
                                (got.empty() ? "a single number" : got)}};
        }
        X.resize(static_cast<Eigen::Index>(o.x->shape[0]), d_model);
        std::copy(o.x->values.begin(), o.x->values.end(), X.data());
        return {};
    }
    if (!o.token_ids.empty()) return embedding_rows(f, o, d_model, X, notes);
    if (const TensorInfo* x = f.find("X." + std::to_string(layer_index)); x || f.find("X")) {
        // export-layer.py writes the hidden states entering each layer it exported as X.L (several
        // layers) or X (one layer, named by the metadata's "layer").
        if (!x) x = f.find("X");
        Problems problems;
        X = get(f, x, false, problems);
        if (!problems.empty()) return problems;
        if (X.cols() != d_model) return {{f.label() + ": " + x->name, "expected n × " + std::to_string(d_model)}};
        std::string note = "X: the file's tensor " + x->name;
        if (x->name == "X")
            if (const auto it = f.metadata().find("layer");
                it != f.metadata().end() && it->second != std::to_string(layer_index))
                note += ", the hidden states entering layer " + it->second + ", not layer " +
                        std::to_string(layer_index);
        notes.push_back(note);
        return {};
    }
    const int rows = o.tokens.empty() ? o.random_n : static_cast<int>(o.tokens.size());
    X = random_matrix(rows, static_cast<int>(d_model), 1.0, o.seed);
    notes.push_back("X is random, U(-1, 1) from seed " + std::to_string(o.seed) +
                    ": give --x X.npy (the hidden states entering the layer) or --token-ids for real ones");
    return {};
}

// The labels of X's rows: given, or the file's metadata "tokens" (export-layer.py stores them as
// a JSON array), or "#id" for token ids, or x1 … xn.
Problems label_rows(const TensorFile& f, const ImportOptions& o, int rows, std::vector<std::string>& tokens) {
    tokens = o.tokens;
    if (tokens.empty() && !o.x && !o.token_ids.empty())
        for (std::int64_t id : o.token_ids) tokens.push_back("#" + std::to_string(id));
    if (tokens.empty())
        if (const auto it = f.metadata().find("tokens"); it != f.metadata().end()) {
            const nlohmann::json t = nlohmann::json::parse(it->second, nullptr, false);
            if (t.is_array() && static_cast<int>(t.size()) == rows &&
                std::all_of(t.begin(), t.end(), [](const auto& v) { return v.is_string(); }))
                for (const auto& v : t) tokens.push_back(v.get<std::string>());
        }
    if (tokens.empty()) tokens = default_tokens(rows);
    if (static_cast<int>(tokens.size()) != rows)
        return {{"--tokens", std::to_string(tokens.size()) + " labels for " + std::to_string(rows) + " rows of X"}};
    return {};
}

}  // namespace

Result<ImportedLayer> import_layer(const TensorFile& f, const ImportOptions& o) {
    ImportedLayer out;
    int layer_index = 0;
    if (Problems p = find_layer(f, o, layer_index, out.convention, out.notes); !p.empty()) return R::fail(std::move(p));
    const Convention c = out.convention;
    LayerProjections projections;
    if (Problems p = read_projections(f, c, layer_index, projections); !p.empty()) return R::fail(std::move(p));
    HeadCounts hc;
    if (Problems p = count_heads(f, o, names_of(c, layer_index, f), projections, hc); !p.empty())
        return R::fail(std::move(p));
    const Eigen::Index d_model = projections.W_Q.rows();
    Matrix X;
    if (Problems p = read_x(f, o, layer_index, d_model, X, out.notes); !p.empty()) return R::fail(std::move(p));
    std::vector<std::string> tokens;
    if (Problems p = label_rows(f, o, static_cast<int>(X.rows()), tokens); !p.empty()) return R::fail(std::move(p));

    // 5. The session.
    Session& s = out.session;
    Config& cf = s.config;
    cf.n = static_cast<int>(X.rows());
    cf.d_model = static_cast<int>(d_model);
    cf.heads = hc.heads;
    cf.d_k = cf.d_v = hc.d_k;
    cf.output_projection = true;
    cf.mask = c == Convention::gpt2 || c == Convention::llama ? Mask::causal : Mask::none;
    cf.biases = projections.has_biases();
    cf.kv_heads = hc.kv == hc.heads ? 0 : hc.kv;
    if (c == Convention::llama) {
        cf.rope.on = true;
        cf.rope.base = hc.rope_base;
    }
    if (Problems p = validate(cf); !p.empty()) return R::fail(std::move(p));
    s.tokens = std::move(tokens);
    s.params = resize(Params{}, cf);  // every matrix at its shape, then the layer's values
    s.params.X = std::move(X);
    set_projections(s.params, cf, projections);
    if (Problems p = validate(s); !p.empty()) return R::fail(std::move(p));
    return R::ok(std::move(out));
}

namespace {

// The layer index in a tensor name of the form [PREFIX.]`before`L`after` (L decimal, without
// leading zeros), or -1.
int layer_in_name(const std::string& name, const std::string& before, const std::string& after) {
    if (name.size() <= after.size() || name.compare(name.size() - after.size(), after.size(), after) != 0) return -1;
    const size_t end = name.size() - after.size();
    size_t start = end;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
    const size_t digits = end - start;
    if (digits == 0 || digits > 6 || (digits > 1 && name[start] == '0')) return -1;
    if (start < before.size() || name.compare(start - before.size(), before.size(), before) != 0) return -1;
    const size_t prefix = start - before.size();
    if (prefix > 0 && name[prefix - 1] != '.') return -1;
    return std::stoi(name.substr(start, digits));
}

// "0-11", or "0, 2, 5" (the first ones and a count when there are many).
std::string layers_text(const std::vector<int>& layers) {
    if (layers.empty()) return "none";
    bool contiguous = true;
    for (size_t k = 1; k < layers.size(); ++k) contiguous = contiguous && layers[k] == layers[k - 1] + 1;
    if (contiguous && layers.size() > 2) return std::to_string(layers.front()) + "-" + std::to_string(layers.back());
    std::string text;
    for (size_t k = 0; k < layers.size() && k < 8; ++k) text += (k ? ", " : "") + std::to_string(layers[k]);
    if (layers.size() > 8) text += " … (" + std::to_string(layers.size()) + " layers)";
    return text;
}

}  // namespace

std::vector<int> checkpoint_layers(const TensorFile& f, Convention c) {
    std::string before, after;
    switch (c) {
        case Convention::torch: before = "layers.", after = ".self_attn.in_proj_weight"; break;
        case Convention::bert: before = "encoder.layer.", after = ".attention.self.query.weight"; break;
        case Convention::gpt2: before = "h.", after = ".attn.c_attn.weight"; break;
        case Convention::llama: before = "layers.", after = ".self_attn.q_proj.weight"; break;
    }
    std::vector<int> layers;
    for (const TensorInfo& t : f.tensors())
        if (const int l = layer_in_name(t.name, before, after); l >= 0) layers.push_back(l);
    if (c == Convention::torch && f.find("in_proj_weight")) layers.push_back(0);
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    return layers;
}

Result<LayerListing> list_layers(const TensorFile& f, std::optional<Convention> convention) {
    using RL = Result<LayerListing>;
    for (Convention c : {Convention::torch, Convention::bert, Convention::gpt2, Convention::llama}) {
        if (convention && *convention != c) continue;
        std::vector<int> layers = checkpoint_layers(f, c);
        if (!layers.empty()) return RL::ok({c, std::move(layers)});
    }
    const std::string which = convention ? std::string("of the ") + to_string(*convention) + " convention"
                                         : "of a known convention (torch, bert, gpt2, llama)";
    return RL::fail({{f.label(), "no attention layer " + which + " in the file's " +
                                     std::to_string(f.tensors().size()) + " tensors"}});
}

Result<std::vector<int>> select_layers(const std::string& spec, const std::vector<int>& available) {
    using RV = Result<std::vector<int>>;
    auto trimmed = [](std::string s) {
        const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
        return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    const std::string all = trimmed(spec);
    if (all == "all") return RV::ok(std::vector<int>(available));
    auto number = [](const std::string& s) -> std::optional<int> {
        if (s.empty() || s.size() > 6 ||
            !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            return std::nullopt;
        return std::stoi(s);
    };
    const std::string example = " (expected all, a layer, a range or a list: all, 3, 2-5, 0,2,4-6)";
    std::vector<int> chosen;
    size_t from = 0;
    do {
        const size_t comma = all.find(',', from);
        const std::string item =
            trimmed(all.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        from = comma == std::string::npos ? std::string::npos : comma + 1;
        const size_t dash = item.find('-');
        const std::optional<int> a = number(trimmed(item.substr(0, dash)));
        const std::optional<int> b = dash == std::string::npos ? a : number(trimmed(item.substr(dash + 1)));
        if (!a || !b) return RV::fail({{"--layer", "\"" + item + "\" is not a layer" + example}});
        if (*b < *a) return RV::fail({{"--layer", "the range " + item + " runs backwards"}});
        for (int l = *a; l <= *b; ++l) {
            if (!std::binary_search(available.begin(), available.end(), l))
                return RV::fail({{"--layer", "layer " + std::to_string(l) + " is not in the checkpoint (its layers: " +
                                                 layers_text(available) + ")"}});
            chosen.push_back(l);
        }
    } while (from != std::string::npos);
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return RV::ok(std::move(chosen));
}

Result<ImportedLayer> import_layer_of_several(const TensorFile& f, const ImportOptions& options, int layer) {
    ImportOptions o = options;
    o.layer = layer;
    Result<ImportedLayer> r = import_layer(f, o);
    if (!r) return r;
    const bool per_layer = !o.x && o.token_ids.empty() && f.find("X." + std::to_string(layer));
    const bool from_file = !o.x && o.token_ids.empty() && f.find("X");  // noted by import_layer
    if (layer > 0 && !per_layer && !from_file)
        r.value->notes.push_back("X of layer " + std::to_string(layer) +
                                 " is not the hidden states entering it: every layer is given the same X "
                                 "(export-layer.py --layer all writes each layer's)");
    return r;
}

Result<std::vector<ImportedLayer>> import_layers(const TensorFile& f, const ImportOptions& options,
                                                 const std::vector<int>& layers) {
    using RV = Result<std::vector<ImportedLayer>>;
    std::vector<ImportedLayer> out;
    for (int layer : layers) {
        Result<ImportedLayer> r = import_layer_of_several(f, options, layer);
        if (!r) return RV::fail(std::move(r.problems));
        out.push_back(std::move(*r.value));
    }
    return RV::ok(std::move(out));
}

Result<ImportPreview> preview_import(const TensorFile& f, const ImportOptions& o) {
    Result<LayerListing> listed = list_layers(f, o.convention);
    if (!listed) return Result<ImportPreview>::fail(std::move(listed.problems));
    ImportPreview p;
    p.convention = listed.value->convention;
    p.layers = listed.value->layers;
    if (o.layer) {
        p.layer = *o.layer;
    } else if (const auto it = f.metadata().find("layer"); it != f.metadata().end()) {
        const nlohmann::json v = nlohmann::json::parse(it->second, nullptr, false);
        if (v.is_number_integer() && v >= 0 && v <= 100000) p.layer = v.get<int>();
    }
    // The query projection's shape: d_model, and the columns the heads share (as x·W).
    const Names n = names_of(p.convention, p.layer, f);
    std::uint64_t q_columns = 0;
    if (const TensorInfo* q = find_suffix(f, n.q); q && q->shape.size() == 2) {
        // torch: [3·d_model, d_model] (y = x·Wᵀ); gpt2: [d_model, 3·d_model] (y = x·W); bert and
        // llama: [columns, d_model] (y = x·Wᵀ).
        const bool as_xw = p.convention == Convention::gpt2;
        const bool fused = p.convention == Convention::torch || p.convention == Convention::gpt2;
        q_columns = q->shape[as_xw ? 1 : 0] / (fused ? 3 : 1);
        p.d_model = static_cast<int>(std::min<std::uint64_t>(q->shape[as_xw ? 0 : 1], 0x7fffffff));
    }
    Problems ignored;  // a bad config.json is the import's to report
    const ModelConfig counts = read_config_json(o.config_json, f.metadata(), o.config_label + ": ",
                                                f.label() + ": __metadata__.", ignored);
    p.heads = o.heads ? o.heads : counts.heads;
    if (p.heads && *p.heads > 0 && q_columns > 0 && q_columns % static_cast<std::uint64_t>(*p.heads) == 0) {
        const std::uint64_t d_k = q_columns / static_cast<std::uint64_t>(*p.heads);
        const TensorInfo* k = n.k.empty() ? nullptr : find_suffix(f, n.k);
        if (!k)
            p.kv_groups = *p.heads;  // Q, K and V in one tensor: a K/V group per head
        else if (k->shape.size() == 2 && k->shape[0] % d_k == 0 && k->shape[0] > 0)
            p.kv_groups = static_cast<int>(k->shape[0] / d_k);
    }
    if (p.convention == Convention::llama) p.rope_base = o.rope_base ? o.rope_base : counts.rope_base.value_or(10000.0);
    const std::string x_layer = "X." + std::to_string(p.layer);
    if (o.x)
        p.x = "the X given";
    else if (!o.token_ids.empty())
        p.x = "the token embeddings of the ids given";
    else if (f.find(x_layer) || f.find("X"))
        p.x = "the file's tensor " + std::string(f.find(x_layer) ? x_layer : "X");
    else
        p.x = "random, U(-1, 1): the file holds no X (the hidden states entering the layer)";
    p.x_random = !o.x && o.token_ids.empty() && !f.find(x_layer) && !f.find("X");
    return Result<ImportPreview>::ok(std::move(p));
}

}  // namespace attnviz::core
