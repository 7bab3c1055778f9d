// Writing sessions and traces (write_session, write_trace, core/io/session_file.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/attention/registry.hpp"
#include "core/base/format.hpp"
#include "core/io/session_file.hpp"
#include "core/io/session_keys.hpp"

namespace attnviz::core {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

// Appends JSON text. Matrices are written one row per line; numbers in their shortest exact form.
// With a sink, the text is handed on about every megabyte instead of growing whole.
class Writer {
public:
    std::string out;
    const TextSink* sink = nullptr;
    bool failed = false;  // the sink refused a piece: the rest is not produced

    // Hands the text so far to the sink once it is large enough (at the end: whatever is left).
    void flush(bool all = false) {
        if (!sink || (!all && out.size() < (std::size_t{1} << 20))) return;
        if (!failed && !out.empty()) failed = !(*sink)(out);
        out.clear();
    }

    void number(double v) {
        if (std::isfinite(v))
            out += format_exact(v == 0 ? 0.0 : v);  // -0 is written as 0
        else
            out += "null";  // only a masked score is not finite
    }

    void matrix(const Matrix& m, const std::string& indent) {
        out += "[";
        for (Eigen::Index r = 0; r < m.rows(); ++r) {
            out += r == 0 ? "\n" : ",\n";
            out += indent + "  [";
            for (Eigen::Index c = 0; c < m.cols(); ++c) {
                if (c) out += ", ";
                number(m(r, c));
            }
            out += "]";
            flush();
            if (failed) return;
        }
        out += m.rows() ? "\n" + indent + "]" : "]";
    }

    void key(const std::string& indent, const char* k, bool first = false) {
        out += first ? "\n" : ",\n";
        out += indent + "\"" + k + "\": ";
    }

    // RoPE's scaling as fields of config.rope: "scaling" and what that kind uses.
    void rope_scaling(const RopeScaling& s) {
        using K = RopeScaling::Kind;
        if (s.kind == K::none) return;
        out += std::string(", \"scaling\": \"") + to_string(s.kind) + "\", \"factor\": ";
        number(s.factor);
        if (s.kind != K::linear) out += ", \"original_max_positions\": " + std::to_string(s.original_max_positions);
        if (s.kind == K::llama3) {
            out += ", \"low_freq_factor\": ";
            number(s.low_freq_factor);
            out += ", \"high_freq_factor\": ";
            number(s.high_freq_factor);
        }
    }

    void config(const Config& c) {
        out += "{\"n\": " + std::to_string(c.n) + ", \"d_model\": " + std::to_string(c.d_model) +
               ", \"heads\": " + std::to_string(c.heads) + ", \"d_k\": " + std::to_string(c.d_k) +
               ", \"d_v\": " + std::to_string(c.d_v) +
               ", \"output_projection\": " + (c.output_projection ? "true" : "false") + ", \"mask\": \"" +
               to_string(c.mask) + "\", \"scale\": ";
        if (c.scale.kind == Scale::Kind::divisor)
            number(c.scale.divisor);
        else
            out += "\"" + to_string(c.scale) + "\"";
        // Version 2's fields only when in use.
        if (c.biases) out += ", \"biases\": true";
        if (c.grouped()) out += ", \"kv_heads\": " + std::to_string(c.kv_count());
        if (c.cross()) out += ", \"n_kv\": " + std::to_string(c.n_kv);
        // Version 4's only when in use.
        if (c.softmax != Softmax::standard) out += std::string(", \"softmax\": \"") + to_string(c.softmax) + "\"";
        if (c.rope.on) {
            out += ", \"rope\": {\"base\": ";
            number(c.rope.base);
            out += std::string(", \"style\": \"") + to_string(c.rope.style) + "\"";
            if (c.rope.dims > 0) out += ", \"dims\": " + std::to_string(c.rope.dims);
            rope_scaling(c.rope.scaling);  // version 5's
            out += "}";
        }
        // Version 5's only when in use.
        if (c.window > 0) out += ", \"window\": " + std::to_string(c.window);
        if (c.softcap > 0) {
            out += ", \"softcap\": ";
            number(c.softcap);
        }
        if (c.qk_norm.on) {
            out += ", \"qk_norm_eps\": ";
            number(c.qk_norm.eps);
        }
        out += "}";
    }

    // The inputs as a session holds them: "X", "Y" under cross-attention, "mask" with a custom mask
    // (sessions only: it has no gradient), "heads" (each with W_Q, W_K, W_V and the biases in use; a
    // K/V group's only in its first head), "W_O" while the projection is on, "b_O" with biases: a
    // session's fields, and the gradient's (which has the same keys and shapes).
    void inputs(const Config& c, const Params& p, const std::string& indent, bool with_mask) {
        layer_inputs(c, p, indent, with_mask, false);
        key(indent, "heads");
        out += "[";
        const std::string inner = indent + "  ";
        for (int i = 0; i < static_cast<int>(p.heads.size()); ++i) {
            out += i ? ", {" : "{";
            bool first = true;
            for (MatrixId id : all_matrix_ids) {
                if (!is_head_field(id) || !exists(id, c) || (is_kv_shared(id) && p.kv_owner(i) != i)) continue;
                key(inner, name(id), first);
                matrix(*find_input(p, {id, i}), inner);
                first = false;
            }
            out += "\n" + indent + "}";
        }
        out += "]";
        layer_inputs(c, p, indent, with_mask, true);
    }

    // The layer's inputs the config has (not per head), in the registry's order: those listed before
    // the heads' (X, Y, mask) or after them (W_O, b_O). The mask has no gradient: with_mask false
    // leaves it out.
    void layer_inputs(const Config& c, const Params& p, const std::string& indent, bool with_mask, bool after_heads) {
        bool seen_head = false;
        for (MatrixId id : all_matrix_ids) {
            seen_head = seen_head || is_head_field(id);
            if (!is_input(id) || is_per_head(id) || seen_head != after_heads || !exists(id, c)) continue;
            if (id == MatrixId::mask && !with_mask) continue;
            key(indent, name(id));
            matrix(*find_input(p, {id, 0}), indent);
        }
    }

    void header(const char* format, int version, const Config& c, const std::string& indent = "  ") {
        out += "{";
        key(indent, "format", true);
        out += std::string("\"") + format + "\"";
        key(indent, "version");
        out += std::to_string(version);
        key(indent, "config");
        config(c);
    }

    void labels(const std::vector<std::string>& labels) {
        // Bytes that are not UTF-8 become U+FFFD rather than failing the save.
        out += json(labels).dump(-1, ' ', false, json::error_handler_t::replace);
    }

    // A session as an object whose fields are indented by `indent` (its pin nested inside it).
    void session(const Session& s, const std::string& indent) {
        const Config& c = s.config;
        // A pin is written with the version its own content needs, the file with the higher one.
        header(session_format, std::max(file_version(c), s.pin ? file_version(s.pin->config) : 1), c, indent);
        key(indent, "tokens");
        labels(s.tokens);
        if (c.cross()) {
            key(indent, "kv_tokens");
            labels(s.kv_tokens);
        }
        inputs(c, s.params, indent, true);
        if (s.pin) {
            key(indent, "pin");
            session(*s.pin, indent + "  ");
        }
        out += "\n" + indent.substr(2) + "}";
    }
};

}  // namespace

std::string write_session(const Session& s) {
    Writer w;
    w.session(s, "  ");
    w.out += "\n";
    return w.out;
}

std::string write_trace(const Trace& t) {
    std::string text;
    write_trace(t, [&text](std::string_view piece) {
        text += piece;
        return true;
    });
    return text;
}

void write_trace(const Trace& t, const TextSink& sink, const Gradients* grad) {
    Writer w;
    w.sink = &sink;
    w.header(trace_format, file_version(t.config), t.config);
    w.key("  ", "scale_divisor");
    w.number(t.scale);
    w.key("  ", "heads");
    w.out += "[";
    for (size_t i = 0; i < t.heads.size(); ++i) {
        w.out += i ? ", {" : "{";
        bool first = true;
        for (MatrixId id : all_matrix_ids) {  // Q, K, V, (Q_rot, K_rot,) scores_raw, scores, weights, Z
            if (!is_per_head(id) || is_input(id) || !exists(id, t.config)) continue;
            w.key("    ", name(id), first);
            w.matrix(*find_computed(t, {id, static_cast<int>(i)}), "    ");
            first = false;
        }
        w.key("    ", "weights_rows");
        w.out += "[";
        for (size_t r = 0; r < t.rows[i].size(); ++r) {
            const RowStats& st = t.rows[i][r];
            w.out += r ? ",\n      {\"sum\": " : "\n      {\"sum\": ";
            w.number(st.sum);
            w.out += ", \"max\": ";
            w.number(st.max);
            w.out += ", \"entropy\": ";
            w.number(st.entropy);
            w.out += "}";
        }
        w.out += t.rows[i].empty() ? "]" : "\n    ]";
        w.out += "\n  }";
    }
    w.out += "]";
    for (MatrixId id : all_matrix_ids) {  // concat, output
        if (is_per_head(id) || is_input(id)) continue;
        w.key("  ", name(id));
        w.matrix(*find_computed(t, {id, 0}), "  ");
    }
    if (grad) {
        w.key("  ", "grad");
        w.out += "{";
        w.key("    ", "of", true);
        w.out += "\"output:" + std::to_string(grad->row) + ":" + std::to_string(grad->col) + "\"";
        w.inputs(t.config, grad->d, "    ", false);
        w.out += "\n  }";
    }
    w.out += "\n}\n";
    w.flush(true);
}

}  // namespace attnviz::core
