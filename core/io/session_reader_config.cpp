// Reading a session file's config (session_reader.hpp): config and config.rope read as objects of
// scalars, then judged into a Config as soon as they are read.
#include <optional>
#include <string>

#include "core/io/session_reader.hpp"

namespace attnviz::core::detail {

// -- config

template <std::size_t N, class ReadNested>
bool SessionReader::read_scalars(const char* const (&keys)[N], std::optional<JsonScalar> (&values)[N],
                                 const std::string& path, bool& seen, bool& object, std::string& desc, int nested_key,
                                 ReadNested read_nested) {
    seen = true;
    if (in_.peek() != JsonReader::Kind::object) {
        desc = in_.describe_next();
        return false;
    }
    object = true;
    in_.begin_object();
    std::string key;
    while (in_.next_key(key)) {
        const int k = key_index(keys, key);
        if (k < 0) {
            in_.skip_value();
            continue;
        }
        if (values[k] || (k == nested_key && !read_nested(false))) {
            structure_.add(path + key, duplicate_message);
            in_.skip_value();
            continue;
        }
        if (k == nested_key) {
            read_nested(true);
            continue;
        }
        values[k].emplace();
        in_.read_scalar(*values[k]);
    }
    return true;
}

void SessionReader::read_config() {
    // config.rope: read unless given twice.
    const auto rope = [&](bool read) {
        if (!read) return !rope_seen_;
        read_scalars(rope_keys, rope_values_, "config.rope.", rope_seen_, rope_object_, rope_desc_, -1,
                     [](bool) { return true; });
        return true;
    };
    if (!read_scalars(config_keys, config_values_, "config.", config_seen_, config_object_, config_desc_, rope_key,
                      rope))
        return;
    if (!in_.ok()) return;
    // Judged now, so the matrices that follow are checked against it as their values arrive.
    config_ = evaluate_config();
    if (config_problems_.empty())
        for (Problem& p : validate(config_)) config_problems_.push_back(std::move(p));
    if (config_problems_.empty()) known_ = config_;
}

const json* SessionReader::config_field(int k) {
    const std::string path = std::string("config.") + config_keys[k];
    if (!config_values_[k]) {
        if (k < config_required) config_problems_.add(path, "missing");
        return nullptr;
    }
    if (!config_values_[k]->overflow.empty()) {
        config_problems_.add(path, overflow_message(config_values_[k]->overflow));
        return nullptr;
    }
    return &config_values_[k]->value;
}

int SessionReader::whole_number(const std::optional<JsonScalar>& value, const std::string& path, int low, int max) {
    if (!value) return 0;
    if (!value->overflow.empty()) {
        config_problems_.add(path, overflow_message(value->overflow));
        return 0;
    }
    const json* v = &value->value;
    if (!v->is_number_integer()) {
        config_problems_.add(path, "expected a whole number, got " + describe_json(*v));
        return 0;
    }
    const double d = v->get<double>();
    if (d < low) {
        config_problems_.add(path, "must be at least " + std::to_string(low) + ", got " + v->dump());
        return 0;
    }
    if (d > max) {
        config_problems_.add(path, v->dump() + " is over the limit of " + std::to_string(max));
        return 0;
    }
    return v->get<int>();
}

int SessionReader::dimension(int k, int max) {
    const std::string path = std::string("config.") + config_keys[k];
    const json* v = config_field(k);
    if (!v) return 0;
    if (!v->is_number_integer()) {
        config_problems_.add(path, "expected a whole number, got " + describe_json(*v));
        return 0;
    }
    const double d = v->get<double>();
    if (d < 1) {
        config_problems_.add(path, "must be at least 1, got " + v->dump());
        return 0;
    }
    if (d > max) {
        config_problems_.add(path, v->dump() + " is over the limit of " + std::to_string(max));
        return 0;
    }
    return v->get<int>();
}

Config SessionReader::evaluate_config() {
    Config c;
    c.n = dimension(0, Limits::max_n);
    c.d_model = dimension(1, Limits::max_d_model);
    c.heads = dimension(2, Limits::max_heads);
    c.d_k = dimension(3, Limits::max_d_k);
    c.d_v = dimension(4, Limits::max_d_v);
    if (const json* v = config_field(5)) {
        if (v->is_boolean())
            c.output_projection = v->get<bool>();
        else
            config_problems_.add("config.output_projection", "expected true or false, got " + describe_json(*v));
    }
    if (const json* v = config_field(6)) {
        if (*v == "none")
            c.mask = Mask::none;
        else if (*v == "causal")
            c.mask = Mask::causal;
        else if (*v == "custom")
            c.mask = Mask::custom;
        else
            config_problems_.add("config.mask",
                                 "expected \"none\", \"causal\" or \"custom\", got " + describe_json(*v));
    }
    if (const json* v = config_field(7)) {
        if (*v == "sqrt_dk") {
            c.scale = {Scale::Kind::sqrt_dk, 1.0};
        } else if (*v == "none") {
            c.scale = {Scale::Kind::none, 1.0};
        } else if (v->is_number()) {
            c.scale = {Scale::Kind::divisor, v->get<double>()};  // validate(config) checks its range
        } else {
            config_problems_.add("config.scale",
                                 "expected \"sqrt_dk\", \"none\" or a positive number, got " + describe_json(*v));
        }
    }
    // Version 2's fields, each optional.
    if (const json* v = config_field(8)) {
        if (v->is_boolean())
            c.biases = v->get<bool>();
        else
            config_problems_.add("config.biases", "expected true or false, got " + describe_json(*v));
    }
    if (config_values_[9]) {
        c.kv_heads = whole_number(config_values_[9], "config.kv_heads", 1, Limits::max_heads);
        if (c.kv_heads == c.heads) c.kv_heads = 0;  // one group per head: plain multi-head
    }
    if (rope_seen_) evaluate_rope(c.rope);
    // Version 3's.
    if (config_values_[n_kv_key]) c.n_kv = whole_number(config_values_[n_kv_key], "config.n_kv", 1, Limits::max_n);
    // Version 4's; absent: the standard softmax, as every older file has it.
    if (const json* v = config_field(softmax_key)) {
        const std::optional<Softmax> softmax = v->is_string() ? parse_softmax(v->get<std::string>()) : std::nullopt;
        if (softmax)
            c.softmax = *softmax;
        else
            config_problems_.add("config.softmax", "expected \"standard\" or \"plus_one\", got " + describe_json(*v));
    }
    // Version 5's; absent: none (validate(config) checks the soft-cap's range).
    if (config_values_[window_key])
        c.window = whole_number(config_values_[window_key], "config.window", 1, Limits::max_n);
    if (const json* v = config_field(softcap_key)) {
        if (v->is_number())
            c.softcap = v->get<double>();
        else
            config_problems_.add("config.softcap", "expected a number, got " + describe_json(*v));
    }
    // present: the q/k norms are on, with this eps (validate(config) checks its range)
    if (const json* v = config_field(qk_norm_key)) {
        if (v->is_number()) {
            c.qk_norm.on = true;
            c.qk_norm.eps = v->get<double>();
        } else {
            config_problems_.add("config.qk_norm_eps", "expected a number, got " + describe_json(*v));
        }
    }
    return c;
}

void SessionReader::evaluate_rope(Rope& rope) {
    if (!rope_object_) {
        config_problems_.add("config.rope",
                             "expected an object such as {\"base\": 10000, \"style\": \"half\"}, got " + rope_desc_);
        return;
    }
    rope.on = true;
    rope_number(0, "base", rope.base, "");  // validate(config) checks its range
    if (const auto& v = rope_values_[1]) {
        if (v->value == "half")
            rope.style = Rope::Style::half;
        else if (v->value == "interleaved")
            rope.style = Rope::Style::interleaved;
        else
            config_problems_.add("config.rope.style",
                                 "expected \"half\" or \"interleaved\", got " + describe_json(v->value));
    }
    if (rope_values_[2]) rope.dims = whole_number(rope_values_[2], "config.rope.dims", 2, Limits::max_d_k);
    evaluate_rope_scaling(rope.scaling);
}

void SessionReader::rope_number(int k, const char* field, double& into, const std::string& missing) {
    const auto& v = rope_values_[static_cast<std::size_t>(k)];
    const std::string path = std::string("config.rope.") + field;
    if (!v) {
        if (!missing.empty()) config_problems_.add(path, missing);
    } else if (!v->overflow.empty()) {
        config_problems_.add(path, overflow_message(v->overflow));
    } else if (!v->value.is_number()) {
        config_problems_.add(path, "expected a number, got " + describe_json(v->value));
    } else {
        into = v->value.get<double>();
    }
}

void SessionReader::evaluate_rope_scaling(RopeScaling& s) {
    const auto number = [&](int k, const char* field, double& into) {
        rope_number(k, field, into, std::string("missing (") + to_string(s.kind) + " scaling needs it)");
    };
    const auto& kind = rope_values_[3];
    if (!kind) return;
    const std::optional<RopeScaling::Kind> k =
        kind->value.is_string() ? parse_rope_scaling(kind->value.get<std::string>()) : std::nullopt;
    if (!k) {
        config_problems_.add("config.rope.scaling", "expected \"none\", \"linear\", \"dynamic\" or \"llama3\", got " +
                                                        describe_json(kind->value));
        return;
    }
    s.kind = *k;
    if (s.kind == RopeScaling::Kind::none) return;
    number(4, "factor", s.factor);
    if (s.kind != RopeScaling::Kind::linear) {
        if (!rope_values_[7])
            config_problems_.add("config.rope.original_max_positions",
                                 std::string("missing (") + to_string(s.kind) + " scaling needs it)");
        else
            s.original_max_positions = whole_number(rope_values_[7], "config.rope.original_max_positions", 1, 1 << 24);
    }
    if (s.kind == RopeScaling::Kind::llama3) {
        number(5, "low_freq_factor", s.low_freq_factor);
        number(6, "high_freq_factor", s.high_freq_factor);
    }
}

}  // namespace attnviz::core::detail
