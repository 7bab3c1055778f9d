// Reading a session file (parse_session, core/io/session_file.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/attention/registry.hpp"
#include "core/base/format.hpp"
#include "core/io/json_read.hpp"
#include "core/io/session_file.hpp"
#include "core/io/session_keys.hpp"

namespace attnviz::core {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading
//
// One pass over the text with JsonReader and no document tree: numbers go straight into the
// matrices being built. Keys may come in any order; unknown ones are skipped without being
// stored, a known one given twice is refused. Once a valid config has been read, a matrix keeps
// at most the values of the shape it asks for (a longer row, or a row too many, is counted but
// not stored, and reported as the matrix's shape); a matrix read before the config keeps its
// rows compactly and is checked at the end. The numbers kept are bounded by
// Limits::max_input_numbers, the problems by ProblemList's cap. The problems come out in the
// order of the fields in the format: format and version, config, tokens, X, heads, W_O.

namespace {

const char* const duplicate_message = "given twice (each key may appear only once)";

// A matrix being read: what its rows looked like, and its values while they can still be used.
struct MatrixBuild {
    std::string path;
    bool seen = false;
    bool failed = false;                          // a problem inside it: no shape check
    bool storing = true;                          // false once its values cannot make a valid matrix
    std::int64_t rows = 0;                        // every element of the outer array
    std::int64_t cols = -1;                       // the length of the first row that is an array
    std::int64_t want_rows = -1, want_cols = -1;  // the config's shape, when known while reading
    std::vector<double> data;                     // row-major
};

constexpr const char* config_keys[] = {"n",       "d_model", "heads",   "d_k",        "d_v",  "output_projection",
                                       "mask",    "scale",   "biases",  "kv_heads",   "rope", "n_kv",
                                       "softmax", "window",  "softcap", "qk_norm_eps"};
// n … scale; biases, kv_heads and rope (version 2), n_kv (version 3), softmax (version 4), window,
// softcap and qk_norm_eps (version 5) are optional
constexpr int config_required = 8;
constexpr int rope_key = 10;
constexpr int n_kv_key = 11;
constexpr int softmax_key = 12;
constexpr int window_key = 13;
constexpr int softcap_key = 14;
constexpr int qk_norm_key = 15;
// base, style, dims (version 2); scaling and its fields (version 5)
constexpr const char* rope_keys[] = {
    "base", "style", "dims", "scaling", "factor", "low_freq_factor", "high_freq_factor", "original_max_positions"};
constexpr const char* root_keys[] = {"format", "version", "config",    "tokens", "X",   "heads",  "W_O",
                                     "b_O",    "Y",       "kv_tokens", "mask",   "pin", "q_norm", "k_norm"};

// A list of labels being read (tokens, kv_tokens).
struct LabelsBuild {
    bool seen = false, array = false;
    std::string desc;  // what was there instead of an array
    std::int64_t count = 0;
    std::vector<std::string> labels;  // at most as many as can be valid
    ProblemList problems;
};

struct HeadBuild {
    bool object = false;
    MatrixBuild w[matrix_count];  // by MatrixId: the head fields (is_head_field)
};

template <std::size_t N>
int key_index(const char* const (&keys)[N], const std::string& key) {
    for (std::size_t k = 0; k < N; ++k)
        if (key == keys[k]) return static_cast<int>(k);
    return -1;
}

// No matrix of a valid session is wider or taller than these, config or not.
constexpr std::int64_t widest = std::max({Limits::max_d_model, Limits::max_d_k, Limits::max_d_v});
constexpr std::int64_t tallest = std::max({std::int64_t{Limits::max_n}, std::int64_t{Limits::max_d_model},
                                           std::int64_t{Limits::max_heads} * Limits::max_d_v});

std::string shape_text(std::int64_t rows, std::int64_t cols) {
    return std::to_string(rows) + "×" + std::to_string(cols);
}

// A head's field by its key, or nullopt for a key that is not one.
std::optional<MatrixId> head_field(const std::string& key) {
    const std::optional<MatrixId> id = matrix_id_from_name(key);
    return id && is_head_field(*id) ? id : std::nullopt;
}

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

class SessionReader {
public:
    // `pinned`: the text is a session's "pin", which may not hold a pin of its own.
    explicit SessionReader(std::string_view text, bool pinned = false) : in_(text), pinned_(pinned) {}

    Result<Session> run() {
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

private:
    Result<Session> syntax() const { return Result<Session>::fail({in_.error()}); }

    // -- config

    // An object of scalars, each kept at its key's index in `keys`: config and config.rope. What was
    // there goes to `seen`, `object` and `desc`; unknown keys are skipped, a key given twice is
    // refused (at `path` + key). The field `nested_key` is an object of its own, read by
    // `read_nested` (-1: none). Whether it was an object.
    template <std::size_t N, class ReadNested>
    bool read_scalars(const char* const (&keys)[N], std::optional<JsonScalar> (&values)[N], const std::string& path,
                      bool& seen, bool& object, std::string& desc, int nested_key, ReadNested read_nested) {
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

    void read_config() {
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

    // The config's field, or nullptr after reporting it missing or too large to represent.
    const json* config_field(int k) {
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

    // A whole number from `low` to `max` (0 when absent or wrong, after reporting it).
    int whole_number(const std::optional<JsonScalar>& value, const std::string& path, int low, int max) {
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

    // A positive integer no larger than `max`.
    int dimension(int k, int max) {
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

    Config evaluate_config() {
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
                config_problems_.add("config.softmax",
                                     "expected \"standard\" or \"plus_one\", got " + describe_json(*v));
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

    // config.rope: {"base": 10000, "style": "half" | "interleaved", "dims": 64}, each key optional.
    void evaluate_rope(Rope& rope) {
        if (!rope_object_) {
            config_problems_.add(
                "config.rope", "expected an object such as {\"base\": 10000, \"style\": \"half\"}, got " + rope_desc_);
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

    // The number config.rope.FIELD (rope_values_[k]) into `into`; when absent, the problem `missing`
    // ("": none, `into` kept).
    void rope_number(int k, const char* field, double& into, const std::string& missing) {
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

    // config.rope's "scaling": "linear" | "dynamic" | "llama3" with "factor", and for dynamic and
    // llama3 "original_max_positions", for llama3 "low_freq_factor" and "high_freq_factor"
    // (validate(config) checks their ranges).
    void evaluate_rope_scaling(RopeScaling& s) {
        const auto number = [&](int k, const char* field, double& into) {
            rope_number(k, field, into, std::string("missing (") + to_string(s.kind) + " scaling needs it)");
        };
        const auto& kind = rope_values_[3];
        if (!kind) return;
        const std::optional<RopeScaling::Kind> k =
            kind->value.is_string() ? parse_rope_scaling(kind->value.get<std::string>()) : std::nullopt;
        if (!k) {
            config_problems_.add("config.rope.scaling",
                                 "expected \"none\", \"linear\", \"dynamic\" or \"llama3\", got " +
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
                s.original_max_positions = whole_number(rope_values_[7], "config.rope.original_max_positions", 1,
                                                        1 << 24);
        }
        if (s.kind == RopeScaling::Kind::llama3) {
            number(5, "low_freq_factor", s.low_freq_factor);
            number(6, "high_freq_factor", s.high_freq_factor);
        }
    }

    // -- matrices

    static void want(MatrixBuild& m, std::int64_t rows, std::int64_t cols) {
        m.want_rows = rows;
        m.want_cols = cols;
    }

    void drop(MatrixBuild& m) {
        stored_ -= static_cast<std::int64_t>(m.data.size());
        m.storing = false;
        std::vector<double>().swap(m.data);
    }

    void fail(MatrixBuild& m) {
        m.failed = true;
        drop(m);
    }

    void store(MatrixBuild& m, std::int64_t c, double v) {
        if (m.want_cols >= 0 && c >= m.want_cols) return drop(m);  // longer than the config says
        if (c >= widest) return drop(m);         // longer than any config allows (before the config is read)
        if (m.cols >= 0 && c >= m.cols) return;  // a ragged row: reported at its end
        if (stored_ >= Limits::max_input_numbers) {
            if (!over_budget_)
                structure_.add(m.path, "the matrices hold more than " + std::to_string(Limits::max_input_numbers) +
                                           " numbers, the limit for a session; the rest are not read");
            over_budget_ = true;
            return drop(m);
        }
        if (m.data.size() == m.data.capacity() && m.want_rows >= 0) {
            // Grow geometrically, but never past the shape the config asks for.
            const std::int64_t full = m.want_rows * m.want_cols;
            const std::int64_t next = std::max<std::int64_t>(1024, 2 * static_cast<std::int64_t>(m.data.size()));
            m.data.reserve(static_cast<std::size_t>(std::min(full, next)));
        }
        m.data.push_back(v);
        ++stored_;
    }

    void read_cell(MatrixBuild& m, std::int64_t r, std::int64_t c, ProblemList& out) {
        auto cell_path = [&] {
            return path_index(path_index(m.path, static_cast<std::size_t>(r)), static_cast<std::size_t>(c));
        };
        if (in_.peek() == JsonReader::Kind::number) {
            JsonReader::Number num;
            if (!in_.read_number(num)) return;
            if (num.overflow) {
                out.add_lazy([&] { return Problem{cell_path(), overflow_message(num.text)}; });
                return fail(m);
            }
            if (!(std::abs(num.value) <= Limits::max_abs_value)) {
                out.add_lazy([&] { return Problem{cell_path(), *value_problem(num.value)}; });
                return fail(m);
            }
            if (m.storing) store(m, c, num.value);
            return;
        }
        if (!in_.ok()) return;
        const std::string d = in_.describe_next(out.keeps_next());
        if (!in_.ok()) return;
        out.add_lazy([&] { return Problem{cell_path(), "expected a number, got " + d}; });
        fail(m);
    }

    void read_matrix(MatrixBuild& m, ProblemList& out) {
        m.seen = true;
        if (in_.peek() != JsonReader::Kind::array) {
            if (!in_.ok()) return;
            const std::string d = in_.describe_next(out.keeps_next());
            out.add_lazy([&] { return Problem{m.path, "expected an array of rows, got " + d}; });
            return fail(m);
        }
        in_.begin_array();
        while (in_.next_element()) {
            const std::int64_t r = m.rows++;
            if (m.storing && ((m.want_rows >= 0 && r >= m.want_rows) || r >= tallest)) drop(m);  // a row too many
            const auto row_path = [&] { return path_index(m.path, static_cast<std::size_t>(r)); };
            if (in_.peek() != JsonReader::Kind::array) {
                if (!in_.ok()) return;
                const std::string d = in_.describe_next(out.keeps_next());
                out.add_lazy([&] { return Problem{row_path(), "expected a row (an array of numbers), got " + d}; });
                fail(m);
                continue;
            }
            in_.begin_array();
            std::int64_t c = 0;
            while (in_.next_element()) read_cell(m, r, c++, out);
            if (!in_.ok()) return;
            if (m.cols < 0) {
                m.cols = c;
                if (m.storing && m.want_cols >= 0 && c != m.want_cols) drop(m);
            } else if (c != m.cols) {
                out.add_lazy([&] {
                    return Problem{row_path(), "ragged: this row has " + std::to_string(c) + " values, row 0 has " +
                                                   std::to_string(m.cols)};
                });
                fail(m);
            }
        }
    }

    // The matrix, or an empty one after reporting it missing or of the wrong shape.
    Matrix finish_matrix(MatrixBuild& m, std::int64_t rows, std::int64_t cols, ProblemList& out) {
        if (!m.seen) {
            out.add(m.path, "missing");
            return {};
        }
        if (m.failed) return {};
        const std::int64_t got_cols = std::max<std::int64_t>(m.cols, 0);
        if (m.rows != rows || got_cols != cols) {
            out.add(m.path, "expected " + shape_text(rows, cols) + ", got " + shape_text(m.rows, got_cols));
            return {};
        }
        if (!m.storing || static_cast<std::int64_t>(m.data.size()) != rows * cols) return {};  // over the budget
        Matrix out_m(rows, cols);
        std::copy(m.data.begin(), m.data.end(), out_m.data());
        drop(m);
        return out_m;
    }

    // -- tokens and heads

    void read_labels(LabelsBuild& b, const char* path, std::int64_t keep) {  // more than `keep` cannot be valid
        b.seen = true;
        if (in_.peek() != JsonReader::Kind::array) {
            b.desc = in_.describe_next();
            return;
        }
        b.array = true;
        in_.begin_array();
        while (in_.next_element()) {
            const std::int64_t i = b.count++;
            if (in_.peek() == JsonReader::Kind::string) {
                if (i < keep) {
                    std::string label;
                    in_.read_string(label);
                    b.labels.push_back(std::move(label));
                } else {
                    in_.skip_value();
                }
                continue;
            }
            if (!in_.ok()) return;
            const std::string d = in_.describe_next(b.problems.keeps_next());
            b.problems.add_lazy([&] {
                return Problem{path_index(path, static_cast<std::size_t>(i)), "expected a text label, got " + d};
            });
        }
    }

    // The labels of a list of `want` entries (`defaults` when absent), after reporting what is wrong.
    std::vector<std::string> finish_labels(LabelsBuild& b, const char* path, int want, const char* config_field,
                                           std::vector<std::string> defaults, ProblemList& out) {
        if (!b.seen) return defaults;
        if (!b.array) {
            out.add(path, "expected an array of " + std::to_string(want) + " labels, got " + b.desc);
        } else if (b.count != want) {
            out.add(path, "expected " + std::to_string(want) + " labels (" + config_field + "), got " +
                              std::to_string(b.count));
        } else {
            out.append(std::move(b.problems));
            return std::move(b.labels);
        }
        return {};
    }

    void read_heads() {
        heads_seen_ = true;
        if (in_.peek() != JsonReader::Kind::array) {
            heads_desc_ = in_.describe_next();
            return;
        }
        heads_array_ = true;
        in_.begin_array();
        const std::int64_t keep = known_ ? known_->heads : Limits::max_heads;  // more cannot be valid
        std::string key;
        while (in_.next_element()) {
            const std::int64_t i = head_count_++;
            if (i >= keep) {
                in_.skip_value();
                continue;
            }
            heads_.emplace_back();
            HeadBuild& h = heads_.back();
            const std::string path = path_index("heads", static_cast<std::size_t>(i));
            if (in_.peek() != JsonReader::Kind::object) {
                if (!in_.ok()) return;
                const std::string d = in_.describe_next(heads_problems_.keeps_next());
                heads_problems_.add_lazy([&] {
                    return Problem{path, "expected an object with W_Q, W_K and W_V, got " + d};
                });
                continue;
            }
            h.object = true;
            for (MatrixId id : all_matrix_ids) {
                if (!is_head_field(id)) continue;
                MatrixBuild& w = h.w[static_cast<std::size_t>(id)];
                w.path = path + "." + name(id);
                if (known_) want(w, rows_of(id, *known_), cols_of(id, *known_));
            }
            in_.begin_object();
            while (in_.next_key(key)) {
                const std::optional<MatrixId> id = head_field(key);
                const std::size_t k = id ? static_cast<std::size_t>(*id) : 0;
                if (!id) {
                    in_.skip_value();
                } else if (h.w[k].seen) {
                    structure_.add(path_key(path, key), duplicate_message);
                    in_.skip_value();
                } else {
                    read_matrix(h.w[k], heads_problems_);
                }
            }
        }
    }

    // A field of the layer (X, Y, mask, W_O, b_O) at the config's shape once it is known. One the
    // config leaves out is only marked seen: it is refused at the end and its values are not needed.
    void read_layer_field(MatrixId id) {
        const std::size_t k = static_cast<std::size_t>(id);
        MatrixBuild& m = layer_[k];
        m.path = name(id);
        if (known_ && !exists(id, *known_)) {
            m.seen = true;
            in_.skip_value();
            return;
        }
        if (known_) want(m, rows_of(id, *known_), cols_of(id, *known_));
        read_matrix(m, layer_problems_[k]);
    }

    // -- the result

    static bool known_version(const json& v) {
        for (int version = 1; version <= session_version; ++version)
            if (v == version) return true;
        return false;
    }

    // The file's format and version; false when they are not this reader's (nothing else is read).
    bool check_header(ProblemList& out) {
        if (!format_) {
            header_.add("format", "missing");
        } else if (!format_->overflow.empty()) {
            header_.add("format", overflow_message(format_->overflow));
        } else if (format_->value != session_format) {
            header_.add("format",
                        std::string("expected \"") + session_format + "\", got " + describe_json(format_->value));
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

    // The config, valid and within the file's version; false when not (shapes need a valid config).
    bool check_config(ProblemList& out) {
        if (!config_seen_)
            config_problems_.add("config", "missing");
        else if (!config_object_)
            config_problems_.add("config", "expected an object, got " + config_desc_);
        if (const int need = file_version(config_); config_problems_.empty() && version_->value.get<int>() < need) {
            const char* what = need == 5   ? "a sliding window, soft-capping, q/k norms and scaled RoPE need"
                               : need == 4 ? "the softmax \"plus_one\" needs"
                               : need == 3 ? "cross-attention (n_kv) and a custom mask need"
                                           : "biases, kv_heads and rope need";
            config_problems_.add("version", std::string(what) + " version " + std::to_string(need) +
                                                ", the file says " + version_->value.dump());
        }
        if (config_problems_.empty()) return true;
        out.append(std::move(config_problems_));
        return false;
    }

    // The tokens, and the kv_tokens under cross-attention.
    void finish_tokens(Session& s, ProblemList& out) {
        const Config& c = config_;
        s.tokens = finish_labels(tokens_, "tokens", c.n, "config.n", default_tokens(c.n), out);
        if (c.cross())
            s.kv_tokens = finish_labels(kv_tokens_, "kv_tokens", c.n_kv, "config.n_kv", default_kv_tokens(c.n_kv), out);
        else if (kv_tokens_.seen)
            out.add("kv_tokens", "given, but config.n_kv is not set (they label Y's rows under cross-attention)");
    }

    // A matrix of the file into `value`: at its shape where the layer uses it (with the problems met
    // while reading it), refused where the file gives one the layer does not use, else unused_value.
    void finish_field(MatrixId id, MatrixBuild& m, ProblemList* read_problems, Matrix& value, ProblemList& out) {
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

    // The layer's inputs and the heads, in the registry's order, which is the file's: X, Y, mask,
    // the heads, W_O, b_O.
    void finish_inputs(Session& s, ProblemList& out) {
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

    // Head i's fields into s.params.heads[i]: a K/V group's only from its first head; a bias
    // without biases is kept at its shape as zeros.
    void finish_head(Session& s, std::size_t i, ProblemList& out) {
        const Config& c = config_;
        HeadBuild& h = heads_[i];
        const int head = static_cast<int>(i);
        const bool owner = s.params.kv_owner(head) == head;
        for (MatrixId id : all_matrix_ids) {
            if (!is_head_field(id)) continue;
            MatrixBuild& w = h.w[static_cast<std::size_t>(id)];
            if (is_kv_shared(id) && !owner) {
                if (w.seen)
                    out.add(w.path,
                            "shared by the heads of a K/V group (config.kv_heads = " + std::to_string(c.kv_count()) +
                                "): give it only in the group's first head, heads[" +
                                std::to_string(s.params.kv_owner(head)) + "]");
                continue;
            }
            finish_field(id, w, nullptr, *find_input(s.params, {id, head}), out);
        }
    }

    void finish_heads(Session& s, ProblemList& out) {
        const Config& c = config_;
        if (!heads_seen_) {
            out.add("heads", "missing");
        } else if (!heads_array_) {
            out.add("heads", "expected an array of " + std::to_string(c.heads) + " heads, got " + heads_desc_);
        } else if (head_count_ != c.heads) {
            out.add("heads", "expected " + std::to_string(c.heads) + " heads (config.heads), got " +
                                 std::to_string(head_count_));
        } else {
            out.append(std::move(heads_problems_));
            s.params.kv_group_size = c.group_size();
            // A head that is not an object stays empty; its problem is in heads_problems_.
            s.params.heads.resize(heads_.size());
            for (std::size_t i = 0; i < heads_.size(); ++i)
                if (heads_[i].object) finish_head(s, i, out);
        }
    }

    // The pin, read as a session of its own.
    void finish_pin(Session& s, ProblemList& out) {
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

    Result<Session> assemble() {
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

    JsonReader in_;
    // Problems by part of the file, put in the format's order at the end.
    ProblemList structure_;  // keys given twice, the numbers' budget
    ProblemList header_, config_problems_, heads_problems_;
    ProblemList layer_problems_[matrix_count];  // by MatrixId: met while reading a layer's field
    bool pinned_ = false;

    std::optional<JsonScalar> format_, version_;
    bool config_seen_ = false, config_object_ = false;
    std::string config_desc_;
    std::optional<JsonScalar> config_values_[std::size(config_keys)];
    Config config_;
    std::optional<Config> known_;  // the config, once read and valid: shapes are checked as values arrive

    LabelsBuild tokens_, kv_tokens_;  // at most config.n (n_kv, or Limits::max_n) labels

    MatrixBuild layer_[matrix_count];  // by MatrixId: the layer's fields (is_layer_field)
    bool pin_seen_ = false;
    std::string_view pin_text_;  // the pin's value, read once the outer session is
    bool rope_seen_ = false, rope_object_ = false;
    std::string rope_desc_;
    std::optional<JsonScalar> rope_values_[std::size(rope_keys)];

    bool heads_seen_ = false, heads_array_ = false;
    std::string heads_desc_;
    std::int64_t head_count_ = 0;
    std::vector<HeadBuild> heads_;  // at most config.heads (or Limits::max_heads)

    std::int64_t stored_ = 0;  // numbers kept, every matrix together
    bool over_budget_ = false;
};

}  // namespace

Result<Session> parse_session(std::string_view text) { return SessionReader(text).run(); }

}  // namespace attnviz::core
