// Reading a session file (parse_session, core/io/session_file.hpp): the root's fields read in one
// pass, and the session assembled from what was read. The reader's class is in session_reader.hpp,
// the config's part in session_reader_config.cpp, the matrices' in session_reader_matrices.cpp.
#include "core/io/session_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/registry.hpp"
#include "core/io/json_read.hpp"
#include "core/io/session_file.hpp"
#include "core/io/session_keys.hpp"

namespace attnviz::core {

namespace detail {

namespace {

// A layer's field (a key of the root) by its key, or nullopt for a key that is not one.
std::optional<MatrixId> layer_field(const std::string& key) {
    const std::optional<MatrixId> id = matrix_id_from_name(key);
    return id && is_layer_field(*id) ? id : std::nullopt;
}

// Why a matrix the file gives is not read: the config's field that leaves it out of the layer.
std::string unused_message(MatrixId id, const Config& c) {
    switch (missing_need(id, c)) {
        case needs_biases: return "given, but config.biases is false (remove it or turn biases on)";
        case needs_W_O: return "given, but config.output_projection is false (remove it or turn the projection on)";
        case needs_rope: return "given, but config.rope is not set";
        case needs_cross:
            return "given, but config.n_kv is not set (it is read only under cross-attention, as the keys' and "
                   "values' input)";
        case needs_custom_mask:
            return std::string("given, but config.mask is \"") + to_string(c.mask) +
                   "\" (a mask is read only with \"custom\")";
        case needs_qk_norm: return "given, but config.qk_norm_eps is not set (the q/k norms are off)";
        default: return "given, but this layer does not use it";
    }
}

// What a matrix the layer does not use and the file does not give holds: a bias keeps its shape
// as zeros (turned on, it adds nothing); the others stay empty.
Matrix unused_value(MatrixId id, const Config& c) {
    if (!(info(id).needs & needs_biases)) return {};
    return Matrix::Zero(rows_of(id, c), cols_of(id, c));
}

}  // namespace

Result<Session> SessionReader::run() {
    const JsonReader::Kind kind = in_.peek();
    if (kind == JsonReader::Kind::error) return syntax();
    if (kind != JsonReader::Kind::object) {
        const std::string d = in_.describe_next();
        if (!in_.finish()) return syntax();
        return Result<Session>::fail({{"", "expected a JSON object, got " + d}});
    }
    in_.begin_object();
    std::string key;
    bool seen[std::size(root_keys)] = {};
    while (in_.next_key(key)) {
        const int k = key_index(root_keys, key);
        if (k < 0) {
            in_.skip_value();  // an unknown field: ignored
            continue;
        }
        if (seen[k]) {
            structure_.add(key, duplicate_message);
            in_.skip_value();
            continue;
        }
        seen[k] = true;
        switch (k) {
            case 0:
                format_.emplace();
                in_.read_scalar(*format_);
                break;
            case 1:
                version_.emplace();
                in_.read_scalar(*version_);
                break;
            case 2: read_config(); break;
            case 3: read_labels(tokens_, "tokens", known_ ? known_->n : Limits::max_n); break;
            case 5: read_heads(); break;
            case 9:
                read_labels(kv_tokens_, "kv_tokens", known_ && known_->cross() ? known_->n_kv : Limits::max_n);
                break;
            case 11:
                pin_seen_ = true;
                in_.skip_value(pin_text_);  // read whole at the end, as a session of its own
                break;
            default:  // X, W_O, b_O, Y, mask, q_norm, k_norm
                if (const std::optional<MatrixId> id = layer_field(key))
                    read_layer_field(*id);
                else
                    in_.skip_value();
                break;
        }
    }
    if (!in_.ok() || !in_.finish()) return syntax();
    return assemble();
}

// -- the result

bool SessionReader::known_version(const json& v) {
    for (int version = 1; version <= session_version; ++version)
        if (v == version) return true;
    return false;
}

bool SessionReader::check_header(ProblemList& out) {
    if (!format_) {
        header_.add("format", "missing");
    } else if (!format_->overflow.empty()) {
        header_.add("format", overflow_message(format_->overflow));
    } else if (format_->value != session_format) {
        header_.add("format", std::string("expected \"") + session_format + "\", got " + describe_json(format_->value));
    }
    if (!version_) {
        header_.add("version", "missing");
    } else if (!version_->overflow.empty()) {
        header_.add("version", overflow_message(version_->overflow));
    } else if (!known_version(version_->value)) {
        header_.add("version", "this attnviz reads versions 1 to " + std::to_string(session_version) + ", got " +
                                   describe_json(version_->value));
    }
    if (header_.empty()) return true;
    out.append(std::move(header_));
    return false;
}

bool SessionReader::check_config(ProblemList& out) {
    if (!config_seen_)
        config_problems_.add("config", "missing");
    else if (!config_object_)
        config_problems_.add("config", "expected an object, got " + config_desc_);
    if (const int need = file_version(config_); config_problems_.empty() && version_->value.get<int>() < need) {
        const char* what = need == 5   ? "a sliding window, soft-capping, q/k norms and scaled RoPE need"
                           : need == 4 ? "the softmax \"plus_one\" needs"
                           : need == 3 ? "cross-attention (n_kv) and a custom mask need"
                                       : "biases, kv_heads and rope need";
        config_problems_.add("version", std::string(what) + " version " + std::to_string(need) + ", the file says " +
                                            version_->value.dump());
    }
    if (config_problems_.empty()) return true;
    out.append(std::move(config_problems_));
    return false;
}

void SessionReader::finish_tokens(Session& s, ProblemList& out) {
    const Config& c = config_;
    s.tokens = finish_labels(tokens_, "tokens", c.n, "config.n", default_tokens(c.n), out);
    if (c.cross())
        s.kv_tokens = finish_labels(kv_tokens_, "kv_tokens", c.n_kv, "config.n_kv", default_kv_tokens(c.n_kv), out);
    else if (kv_tokens_.seen)
        out.add("kv_tokens", "given, but config.n_kv is not set (they label Y's rows under cross-attention)");
}

void SessionReader::finish_field(MatrixId id, MatrixBuild& m, ProblemList* read_problems, Matrix& value,
                                 ProblemList& out) {
    const Config& c = config_;
    if (exists(id, c)) {
        if (read_problems) out.append(std::move(*read_problems));
        value = finish_matrix(m, rows_of(id, c), cols_of(id, c), out);
    } else if (m.seen) {
        out.add(m.path, unused_message(id, c));
    } else {
        value = unused_value(id, c);
    }
}

void SessionReader::finish_inputs(Session& s, ProblemList& out) {
    bool heads_done = false;
    for (MatrixId id : all_matrix_ids) {
        if (!is_input(id)) continue;
        if (is_head_field(id)) {
            if (!heads_done) finish_heads(s, out);
            heads_done = true;
            continue;
        }
        const std::size_t k = static_cast<std::size_t>(id);
        layer_[k].path = name(id);
        finish_field(id, layer_[k], &layer_problems_[k], *find_input(s.params, {id, 0}), out);
        if (id == MatrixId::mask && exists(id, config_))
            for (Problem& p : mask_problems(s.params.mask)) out.add(p.path, p.message);
    }
}

void SessionReader::finish_head(Session& s, std::size_t i, ProblemList& out) {
    const Config& c = config_;
    HeadBuild& h = heads_[i];
    const int head = static_cast<int>(i);
    const bool owner = s.params.kv_owner(head) == head;
    for (MatrixId id : all_matrix_ids) {
        if (!is_head_field(id)) continue;
        MatrixBuild& w = h.w[static_cast<std::size_t>(id)];
        if (is_kv_shared(id) && !owner) {
            if (w.seen)
                out.add(w.path, "shared by the heads of a K/V group (config.kv_heads = " +
                                    std::to_string(c.kv_count()) + "): give it only in the group's first head, heads[" +
                                    std::to_string(s.params.kv_owner(head)) + "]");
            continue;
        }
        finish_field(id, w, nullptr, *find_input(s.params, {id, head}), out);
    }
}

void SessionReader::finish_heads(Session& s, ProblemList& out) {
    const Config& c = config_;
    if (!heads_seen_) {
        out.add("heads", "missing");
    } else if (!heads_array_) {
        out.add("heads", "expected an array of " + std::to_string(c.heads) + " heads, got " + heads_desc_);
    } else if (head_count_ != c.heads) {
        out.add("heads",
                "expected " + std::to_string(c.heads) + " heads (config.heads), got " + std::to_string(head_count_));
    } else {
        out.append(std::move(heads_problems_));
        s.params.kv_group_size = c.group_size();
        // A head that is not an object stays empty; its problem is in heads_problems_.
        s.params.heads.resize(heads_.size());
        for (std::size_t i = 0; i < heads_.size(); ++i)
            if (heads_[i].object) finish_head(s, i, out);
    }
}

void SessionReader::finish_pin(Session& s, ProblemList& out) {
    if (!pin_seen_) return;
    if (pinned_) {
        out.add("pin", "a pinned session cannot hold a pin of its own");
        return;
    }
    Result<Session> pin = SessionReader(pin_text_, true).run();
    if (pin.value)
        s.pin = std::make_shared<const Session>(std::move(*pin.value));
    else
        for (Problem& p : pin.problems) out.add(p.path.empty() ? "pin" : "pin." + p.path, p.message);
}

Result<Session> SessionReader::assemble() {
    ProblemList out;
    out.append(std::move(structure_));
    if (!check_header(out) || !check_config(out)) return Result<Session>::fail(std::move(out).take());
    Session s;
    s.config = config_;
    finish_tokens(s, out);
    finish_inputs(s, out);
    finish_pin(s, out);
    if (!out.empty()) return Result<Session>::fail(std::move(out).take());
    return Result<Session>::ok(std::move(s));
}

}  // namespace detail

Result<Session> parse_session(std::string_view text) { return detail::SessionReader(text).run(); }

}  // namespace attnviz::core
