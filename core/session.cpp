#include "session.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "format.hpp"
#include "json_read.hpp"
#include "matrices.hpp"

namespace attnviz::core {

using nlohmann::json;

std::vector<std::string> default_tokens(int n) {
    std::vector<std::string> tokens;
    for (int i = 0; i < n; ++i) tokens.push_back("x" + std::to_string(i + 1));
    return tokens;
}

Problems validate(const Session& s) {
    Problems out = validate(s.config);
    if (!out.empty()) return out;
    if (static_cast<int>(s.tokens.size()) != s.config.n)
        out.push_back({"tokens", "expected " + std::to_string(s.config.n) + " labels, got " +
                                     std::to_string(s.tokens.size())});
    for (Problem& p : validate(s.config, s.params)) out.push_back(std::move(p));
    return out;
}

Session resized(const Session& s, const Config& config) {
    Session out{config, s.tokens, resize(s.params, config)};
    const std::vector<std::string> defaults = default_tokens(config.n);
    out.tokens.resize(config.n);
    for (int i = static_cast<int>(s.tokens.size()); i < config.n; ++i) out.tokens[i] = defaults[i];
    return out;
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

class Reader {
public:
    Problems problems;

    void fail(std::string path, std::string message) { problems.push_back({std::move(path), std::move(message)}); }

    const json* field(const json& object, const std::string& parent, const char* key, bool required = true) {
        auto it = object.find(key);
        if (it == object.end()) {
            if (required) fail(join(parent, key), "missing");
            return nullptr;
        }
        return &*it;
    }

    static std::string join(const std::string& parent, const char* key) {
        return parent.empty() ? key : parent + "." + key;
    }

    // A positive integer no larger than `max`.
    int dimension(const json& config, const char* key, int max) {
        const std::string path = join("config", key);
        const json* v = field(config, "config", key);
        if (!v) return 0;
        if (!v->is_number_integer()) {
            fail(path, "expected a whole number, got " + describe_json(*v));
            return 0;
        }
        const double d = v->get<double>();
        if (d < 1) {
            fail(path, "must be at least 1, got " + v->dump());
            return 0;
        }
        if (d > max) {
            fail(path, v->dump() + " is over the limit of " + std::to_string(max));
            return 0;
        }
        return v->get<int>();
    }

    Config config(const json& root) {
        Config c;
        const json* cfg = field(root, "", "config");
        if (!cfg) return c;
        if (!cfg->is_object()) {
            fail("config", "expected an object, got " + describe_json(*cfg));
            return c;
        }
        c.n = dimension(*cfg, "n", Limits::max_n);
        c.d_model = dimension(*cfg, "d_model", Limits::max_d_model);
        c.heads = dimension(*cfg, "heads", Limits::max_heads);
        c.d_k = dimension(*cfg, "d_k", Limits::max_d_k);
        c.d_v = dimension(*cfg, "d_v", Limits::max_d_v);
        if (const json* v = field(*cfg, "config", "output_projection")) {
            if (v->is_boolean())
                c.output_projection = v->get<bool>();
            else
                fail("config.output_projection", "expected true or false, got " + describe_json(*v));
        }
        if (const json* v = field(*cfg, "config", "mask")) {
            if (*v == "none")
                c.mask = Mask::none;
            else if (*v == "causal")
                c.mask = Mask::causal;
            else
                fail("config.mask", "expected \"none\" or \"causal\", got " + describe_json(*v));
        }
        if (const json* v = field(*cfg, "config", "scale")) {
            if (*v == "sqrt_dk") {
                c.scale = {Scale::Kind::sqrt_dk, 1.0};
            } else if (*v == "none") {
                c.scale = {Scale::Kind::none, 1.0};
            } else if (v->is_number()) {
                c.scale = {Scale::Kind::divisor, v->get<double>()};  // validate(config) checks its range
            } else {
                fail("config.scale", "expected \"sqrt_dk\", \"none\" or a positive number, got " + describe_json(*v));
            }
        }
        return c;
    }

    // A rows×cols matrix given as an array of rows; every problem reported with its path.
    Matrix matrix(const json& parent, const std::string& parent_path, const char* key, int rows, int cols) {
        const std::string path = join(parent_path, key);
        const json* v = field(parent, parent_path, key);
        if (!v) return {};
        if (!v->is_array()) {
            fail(path, "expected an array of rows, got " + describe_json(*v));
            return {};
        }
        const size_t before = problems.size();
        const int got_rows = static_cast<int>(v->size());
        int got_cols = -1;
        for (int r = 0; r < got_rows; ++r) {
            const json& row = (*v)[r];
            const std::string row_path = path + "[" + std::to_string(r) + "]";
            if (!row.is_array()) {
                fail(row_path, "expected a row (an array of numbers), got " + describe_json(row));
                continue;
            }
            if (got_cols < 0) {
                got_cols = static_cast<int>(row.size());
            } else if (static_cast<int>(row.size()) != got_cols) {
                fail(row_path, "ragged: this row has " + std::to_string(row.size()) + " values, row 0 has " +
                                   std::to_string(got_cols));
                continue;
            }
            for (int c = 0; c < static_cast<int>(row.size()); ++c) {
                const json& x = row[c];
                const std::string cell_path = row_path + "[" + std::to_string(c) + "]";
                if (!x.is_number())
                    fail(cell_path, "expected a number, got " + describe_json(x));
                else if (auto problem = value_problem(x.get<double>()))
                    fail(cell_path, *problem);
            }
        }
        if (problems.size() != before) return {};
        if (got_cols < 0) got_cols = 0;
        if (got_rows != rows || got_cols != cols) {
            fail(path, "expected " + std::to_string(rows) + "×" + std::to_string(cols) + ", got " +
                           std::to_string(got_rows) + "×" + std::to_string(got_cols));
            return {};
        }
        Matrix m(rows, cols);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) m(r, c) = (*v)[r][c].get<double>();
        return m;
    }

    std::vector<std::string> tokens(const json& root, int n) {
        const json* v = field(root, "", "tokens", false);
        if (!v) return default_tokens(n);
        if (!v->is_array()) {
            fail("tokens", "expected an array of " + std::to_string(n) + " labels, got " + describe_json(*v));
            return {};
        }
        if (static_cast<int>(v->size()) != n) {
            fail("tokens", "expected " + std::to_string(n) + " labels (config.n), got " + std::to_string(v->size()));
            return {};
        }
        std::vector<std::string> out;
        for (size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string())
                fail("tokens[" + std::to_string(i) + "]", "expected a text label, got " + describe_json((*v)[i]));
            else
                out.push_back((*v)[i].get<std::string>());
        }
        return out;
    }
};

}  // namespace

Result<Session> parse_session(std::string_view text) {
    Result<json> document = read_json(text);
    if (!document) return Result<Session>::fail(std::move(document.problems));
    const json& root = *document.value;
    if (!root.is_object()) return Result<Session>::fail({{"", "expected a JSON object, got " + describe_json(root)}});

    Reader r;
    const json* format = r.field(root, "", "format");
    if (format && *format != session_format)
        r.fail("format", std::string("expected \"") + session_format + "\", got " + describe_json(*format));
    const json* version = r.field(root, "", "version");
    if (version && *version != session_version)
        r.fail("version", "this attnviz reads version " + std::to_string(session_version) + ", got " +
                              describe_json(*version));
    if (!r.problems.empty()) return Result<Session>::fail(std::move(r.problems));

    Session s;
    s.config = r.config(root);
    if (r.problems.empty())
        for (Problem& p : validate(s.config)) r.problems.push_back(std::move(p));
    if (!r.problems.empty()) return Result<Session>::fail(std::move(r.problems));  // shapes need a valid config

    const Config& c = s.config;
    s.tokens = r.tokens(root, c.n);
    s.params.X = r.matrix(root, "", "X", c.n, c.d_model);
    if (const json* heads = r.field(root, "", "heads")) {
        if (!heads->is_array()) {
            r.fail("heads", "expected an array of " + std::to_string(c.heads) + " heads, got " + describe_json(*heads));
        } else if (static_cast<int>(heads->size()) != c.heads) {
            r.fail("heads", "expected " + std::to_string(c.heads) + " heads (config.heads), got " +
                                std::to_string(heads->size()));
        } else {
            for (int i = 0; i < c.heads; ++i) {
                const json& head = (*heads)[i];
                const std::string path = "heads[" + std::to_string(i) + "]";
                if (!head.is_object()) {
                    r.fail(path, "expected an object with W_Q, W_K and W_V, got " + describe_json(head));
                    continue;
                }
                HeadParams hp;
                hp.W_Q = r.matrix(head, path, "W_Q", c.d_model, c.d_k);
                hp.W_K = r.matrix(head, path, "W_K", c.d_model, c.d_k);
                hp.W_V = r.matrix(head, path, "W_V", c.d_model, c.d_v);
                s.params.heads.push_back(std::move(hp));
            }
        }
    }
    if (c.output_projection) {
        s.params.W_O = r.matrix(root, "", "W_O", c.concat_width(), c.d_model);
    } else if (root.contains("W_O")) {
        r.fail("W_O", "given, but config.output_projection is false (remove W_O or turn the projection on)");
    }
    if (!r.problems.empty()) return Result<Session>::fail(std::move(r.problems));
    return Result<Session>::ok(std::move(s));
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

// Appends JSON text. Matrices are written one row per line; numbers in their shortest exact form.
class Writer {
public:
    std::string out;

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
        }
        out += m.rows() ? "\n" + indent + "]" : "]";
    }

    void key(const std::string& indent, const char* k, bool first = false) {
        out += first ? "\n" : ",\n";
        out += indent + "\"" + k + "\": ";
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
        out += "}";
    }

    void header(const char* format, int version, const Config& c) {
        out += "{";
        key("  ", "format", true);
        out += std::string("\"") + format + "\"";
        key("  ", "version");
        out += std::to_string(version);
        key("  ", "config");
        config(c);
    }
};

}  // namespace

std::string write_session(const Session& s) {
    Writer w;
    w.header(session_format, session_version, s.config);
    w.key("  ", "tokens");
    // Bytes that are not UTF-8 become U+FFFD rather than failing the save.
    w.out += json(s.tokens).dump(-1, ' ', false, json::error_handler_t::replace);
    w.key("  ", "X");
    w.matrix(s.params.X, "  ");
    w.key("  ", "heads");
    w.out += "[";
    for (size_t i = 0; i < s.params.heads.size(); ++i) {
        w.out += i ? ", {" : "{";
        w.key("    ", "W_Q", true);
        w.matrix(s.params.heads[i].W_Q, "    ");
        w.key("    ", "W_K");
        w.matrix(s.params.heads[i].W_K, "    ");
        w.key("    ", "W_V");
        w.matrix(s.params.heads[i].W_V, "    ");
        w.out += "\n  }";
    }
    w.out += "]";
    if (s.config.output_projection) {
        w.key("  ", "W_O");
        w.matrix(s.params.W_O, "  ");
    }
    w.out += "\n}\n";
    return w.out;
}

std::string write_trace(const Trace& t) {
    Writer w;
    w.header(trace_format, trace_version, t.config);
    w.key("  ", "scale_divisor");
    w.number(t.scale);
    w.key("  ", "heads");
    w.out += "[";
    for (size_t i = 0; i < t.heads.size(); ++i) {
        w.out += i ? ", {" : "{";
        bool first = true;
        for (MatrixId id : all_matrix_ids) {  // Q, K, V, scores_raw, scores, weights, Z
            if (!is_per_head(id) || is_input(id)) continue;
            w.key("    ", name(id), first);
            w.matrix(*info(id).computed(t, static_cast<int>(i)), "    ");
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
        w.matrix(*info(id).computed(t, 0), "  ");
    }
    w.out += "\n}\n";
    return w.out;
}

}  // namespace attnviz::core
