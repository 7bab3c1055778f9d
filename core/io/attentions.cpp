#include "core/io/attentions.hpp"

#include <cmath>
#include <map>
#include <optional>

#include "core/attention/config.hpp"
#include "core/attention/registry.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/json_read.hpp"

namespace attnviz::core {

namespace {

// The layer number of a per-layer tensor's name ("layer_3", "attentions.3"), or nullopt.
std::optional<int> layer_number(const std::string& name) {
    for (const std::string prefix : {"layer_", "attentions."}) {
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
        if (digits.size() > 1 && digits[0] == '0') return std::nullopt;  // "layer_01" is not a layer's name
        return std::stoi(digits);
    }
    return std::nullopt;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string out;
    for (std::uint64_t d : shape) out += (out.empty() ? "" : " × ") + std::to_string(d);
    return out.empty() ? "a scalar" : out;
}

// Where the layers are: the tensors of each layer in order, and whether one tensor holds them all.
struct Layout {
    std::vector<const TensorInfo*> tensors;
    bool stacked = false;
};

Result<Layout> find_layout(const TensorFile& file) {
    using R = Result<Layout>;
    const auto fail = [&](const std::string& message) { return R::fail({{file.label(), message}}); };
    Layout layout;
    std::map<int, const TensorInfo*> per_layer;
    for (const TensorInfo& t : file.tensors())
        if (const std::optional<int> l = layer_number(t.name)) per_layer[*l] = &t;
    if (!per_layer.empty()) {
        int expected = 0;
        for (const auto& [l, t] : per_layer) {
            if (l != expected)
                return fail("layer " + std::to_string(expected) + " is missing (the file has " +
                            printable(per_layer.begin()->second->name) + " … " +
                            printable(per_layer.rbegin()->second->name) + ")");
            layout.tensors.push_back(t);
            ++expected;
        }
        return R::ok(std::move(layout));
    }
    const TensorInfo* all = file.find("attentions");
    if (!all && file.tensors().size() == 1) all = &file.tensors().front();
    if (!all)
        return fail(
            "no attentions: expected one tensor per layer (layer_0, layer_1, … or attentions.0, …) or "
            "one stacked tensor named attentions");
    layout.tensors.push_back(all);
    layout.stacked = true;
    return R::ok(std::move(layout));
}

// Heads × q × k of a shape: what is left after the leading layer (stacked) and batch-of-one axes.
std::optional<std::vector<std::uint64_t>> head_shape(std::vector<std::uint64_t> shape, bool stacked,
                                                     std::uint64_t& layers) {
    layers = 1;
    if (stacked) {
        if (shape.size() < 4) return std::nullopt;
        layers = shape.front();
        shape.erase(shape.begin());
    }
    if (shape.size() == 4 && shape.front() == 1) shape.erase(shape.begin());
    if (shape.size() != 3) return std::nullopt;
    return shape;
}

// Tokens from a JSON list or {"queries": [...], "keys": [...]}.
Problems read_tokens(const std::string& text, const std::string& label, std::vector<std::string>& queries,
                     std::vector<std::string>& keys) {
    const Result<nlohmann::json> doc = read_json(text);
    if (!doc) return {{label, doc.problems.front().str()}};
    const auto strings = [&](const nlohmann::json& list, const std::string& what,
                             std::vector<std::string>& out) -> std::optional<Problem> {
        if (!list.is_array()) return Problem{label, what + ": expected a list of strings, got " + describe_json(list)};
        out.clear();
        for (size_t i = 0; i < list.size(); ++i) {
            if (!list[i].is_string())
                return Problem{label,
                               what + "[" + std::to_string(i) + "]: expected a string, got " + describe_json(list[i])};
            out.push_back(list[i].get<std::string>());
        }
        return std::nullopt;
    };
    const nlohmann::json& d = *doc.value;
    if (d.is_object()) {
        if (!d.contains("queries") || !d.contains("keys"))
            return {{label, "expected a list of tokens, or an object with \"queries\" and \"keys\""}};
        if (auto p = strings(d["queries"], "queries", queries)) return {*p};
        if (auto p = strings(d["keys"], "keys", keys)) return {*p};
        return {};
    }
    if (auto p = strings(d, "tokens", queries)) return {*p};
    keys = queries;
    return {};
}

// Every row of every head a distribution: weights ≥ 0 summing to 1 within the tolerance.
Problems check_rows(const Attentions& a, const std::string& label) {
    for (size_t l = 0; l < a.layers.size(); ++l)
        for (size_t h = 0; h < a.layers[l].size(); ++h) {
            const Matrix& w = a.layers[l][h];
            for (Eigen::Index i = 0; i < w.rows(); ++i) {
                const std::string where = "layer " + std::to_string(l) + ", head " + std::to_string(h + 1) + ", row " +
                                          std::to_string(i);
                if (w.row(i).minCoeff() < 0)
                    return {{label, where + ": a negative weight (" + format_number(w.row(i).minCoeff()) +
                                        "); attention weights are probabilities"}};
                const double sum = w.row(i).sum();
                if (std::abs(sum - 1) > attention_row_tolerance)
                    return {{label, where + ": the weights sum to " + format_number(sum) +
                                        ", not 1 (are these scores, before the softmax?)"}};
            }
        }
    return {};
}

}  // namespace

Result<Attentions> read_attentions(const TensorFile& file, const std::string& tokens_json,
                                   const std::string& tokens_label) {
    using R = Result<Attentions>;
    const Result<Layout> layout = find_layout(file);
    if (!layout) return R::fail(layout.problems);
    Attentions a;
    std::optional<std::vector<std::uint64_t>> expected;  // heads, q, k
    for (const TensorInfo* t : layout.value->tensors) {
        const auto fail = [&](const std::string& message) {
            return R::fail({{file.label() + ": " + printable(t->name), message}});
        };
        std::uint64_t layers = 1;
        const std::optional<std::vector<std::uint64_t>> shape = head_shape(t->shape, layout.value->stacked, layers);
        if (!shape)
            return fail("shape " + shape_text(t->shape) + ": expected " +
                        (layout.value->stacked ? "layers × heads × q × k (or layers × 1 × heads × q × k)"
                                               : "heads × q × k (or 1 × heads × q × k)"));
        const std::uint64_t heads = (*shape)[0], q = (*shape)[1], k = (*shape)[2];
        if (layers == 0 || heads == 0 || q == 0 || k == 0)
            return fail("shape " + shape_text(t->shape) + ": a size is 0");
        if (a.layers.size() + layers > max_attention_layers)
            return fail("more than " + std::to_string(max_attention_layers) + " layers");
        if (q > Limits::max_n || k > Limits::max_n || heads > Limits::max_heads)
            return fail("shape " + shape_text(t->shape) + ": more than " + std::to_string(Limits::max_n) +
                        " tokens or " + std::to_string(Limits::max_heads) + " heads");
        if (expected && *expected != *shape)
            return fail("heads × q × k is " + shape_text(*shape) + ", but layer 0's is " + shape_text(*expected));
        expected = *shape;
        const Result<Tensor> values = file.read(t->name);
        if (!values) return R::fail(values.problems);
        const auto qk = static_cast<Eigen::Index>(q * k);
        for (std::uint64_t l = 0; l < layers; ++l) {
            std::vector<Matrix>& layer = a.layers.emplace_back();
            for (std::uint64_t h = 0; h < heads; ++h)
                layer.push_back(Eigen::Map<const Matrix>(values.value->values.data() + (l * heads + h) * qk,
                                                         static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(k)));
        }
    }
    const auto q = static_cast<size_t>((*expected)[1]), k = static_cast<size_t>((*expected)[2]);
    if (Problems p = check_rows(a, file.label()); !p.empty()) return R::fail(std::move(p));
    std::string tokens_text = tokens_json, label = tokens_label;
    if (label.empty())
        if (const auto it = file.metadata().find("tokens"); it != file.metadata().end()) {
            tokens_text = it->second;
            label = file.label() + ": metadata \"tokens\"";
        }
    if (!label.empty()) {
        if (Problems p = read_tokens(tokens_text, label, a.query_tokens, a.key_tokens); !p.empty())
            return R::fail(std::move(p));
        if (a.query_tokens.size() != q || a.key_tokens.size() != k)
            return R::fail(
                {{label, std::to_string(a.query_tokens.size()) + " query and " + std::to_string(a.key_tokens.size()) +
                             " key tokens, but the weights are " + std::to_string(q) + " × " + std::to_string(k)}});
    } else {
        for (size_t i = 0; i < q; ++i) a.query_tokens.push_back(std::to_string(i + 1));
        for (size_t j = 0; j < k; ++j) a.key_tokens.push_back(std::to_string(j + 1));
    }
    return R::ok(std::move(a));
}

Result<Attentions> open_attentions(const std::string& path, const std::string& tokens_path) {
    const Result<TensorFile> file = TensorFile::open(path);
    if (!file) return Result<Attentions>::fail(file.problems);
    std::string tokens;
    if (!tokens_path.empty()) {
        Result<std::string> text = read_file(tokens_path);
        if (!text) return Result<Attentions>::fail(text.problems);
        tokens = std::move(*text.value);
    }
    return read_attentions(*file.value, tokens, tokens_path);
}

Attentions attentions_of(const Session& session, const Trace& trace) {
    const Config& c = session.config;
    Attentions a;
    a.query_tokens = session.tokens;
    a.key_tokens = c.cross() ? session.kv_tokens : session.tokens;
    a.layers.emplace_back();
    for (int h = 0; h < c.heads; ++h) a.layers.back().push_back(*find_computed(trace, {MatrixId::weights, h}));
    return a;
}

}  // namespace attnviz::core
