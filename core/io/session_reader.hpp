// The session file's reader (parse_session, session_file.hpp), shared by its parts and internal to
// them: the reader's class and what it builds while it reads. The root's fields and the result
// are read in session_reader.cpp, the config in session_reader_config.cpp, the matrices, tokens
// and heads in session_reader_matrices.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention/registry.hpp"
#include "core/io/json_read.hpp"
#include "core/io/session_file.hpp"

namespace attnviz::core::detail {

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

inline const char* const duplicate_message = "given twice (each key may appear only once)";

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

inline constexpr const char* config_keys[] = {
    "n",        "d_model", "heads", "d_k",     "d_v",    "output_projection", "mask",       "scale", "biases",
    "kv_heads", "rope",    "n_kv",  "softmax", "window", "softcap",           "qk_norm_eps"};
// n … scale; biases, kv_heads and rope (version 2), n_kv (version 3), softmax (version 4), window,
// softcap and qk_norm_eps (version 5) are optional
inline constexpr int config_required = 8;
inline constexpr int rope_key = 10;
inline constexpr int n_kv_key = 11;
inline constexpr int softmax_key = 12;
inline constexpr int window_key = 13;
inline constexpr int softcap_key = 14;
inline constexpr int qk_norm_key = 15;
// base, style, dims (version 2); scaling and its fields (version 5)
inline constexpr const char* rope_keys[] = {
    "base", "style", "dims", "scaling", "factor", "low_freq_factor", "high_freq_factor", "original_max_positions"};
inline constexpr const char* root_keys[] = {"format", "version", "config",    "tokens", "X",   "heads",  "W_O",
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

class SessionReader {
public:
    // `pinned`: the text is a session's "pin", which may not hold a pin of its own.
    explicit SessionReader(std::string_view text, bool pinned = false) : in_(text), pinned_(pinned) {}

    Result<Session> run();

private:
    Result<Session> syntax() const { return Result<Session>::fail({in_.error()}); }

    // -- config (session_reader_config.cpp)

    // An object of scalars, each kept at its key's index in `keys`: config and config.rope. What was
    // there goes to `seen`, `object` and `desc`; unknown keys are skipped, a key given twice is
    // refused (at `path` + key). The field `nested_key` is an object of its own, read by
    // `read_nested` (-1: none). Whether it was an object.
    template <std::size_t N, class ReadNested>
    bool read_scalars(const char* const (&keys)[N], std::optional<JsonScalar> (&values)[N], const std::string& path,
                      bool& seen, bool& object, std::string& desc, int nested_key, ReadNested read_nested);
    void read_config();
    // The config's field, or nullptr after reporting it missing or too large to represent.
    const json* config_field(int k);
    // A whole number from `low` to `max` (0 when absent or wrong, after reporting it).
    int whole_number(const std::optional<JsonScalar>& value, const std::string& path, int low, int max);
    // A positive integer no larger than `max`.
    int dimension(int k, int max);
    Config evaluate_config();
    // config.rope: {"base": 10000, "style": "half" | "interleaved", "dims": 64}, each key optional.
    void evaluate_rope(Rope& rope);
    // The number config.rope.FIELD (rope_values_[k]) into `into`; when absent, the problem `missing`
    // ("": none, `into` kept).
    void rope_number(int k, const char* field, double& into, const std::string& missing);
    // config.rope's "scaling": "linear" | "dynamic" | "llama3" with "factor", and for dynamic and
    // llama3 "original_max_positions", for llama3 "low_freq_factor" and "high_freq_factor"
    // (validate(config) checks their ranges).
    void evaluate_rope_scaling(RopeScaling& s);

    // -- matrices (session_reader_matrices.cpp)

    static void want(MatrixBuild& m, std::int64_t rows, std::int64_t cols);
    void drop(MatrixBuild& m);
    void fail(MatrixBuild& m);
    void store(MatrixBuild& m, std::int64_t c, double v);
    void read_cell(MatrixBuild& m, std::int64_t r, std::int64_t c, ProblemList& out);
    void read_matrix(MatrixBuild& m, ProblemList& out);
    // The matrix, or an empty one after reporting it missing or of the wrong shape.
    Matrix finish_matrix(MatrixBuild& m, std::int64_t rows, std::int64_t cols, ProblemList& out);

    // -- tokens and heads (session_reader_matrices.cpp)

    void read_labels(LabelsBuild& b, const char* path, std::int64_t keep);  // more than `keep` cannot be valid
    // The labels of a list of `want` entries (`defaults` when absent), after reporting what is wrong.
    std::vector<std::string> finish_labels(LabelsBuild& b, const char* path, int want, const char* config_field,
                                           std::vector<std::string> defaults, ProblemList& out);
    void read_heads();
    // A field of the layer (X, Y, mask, W_O, b_O) at the config's shape once it is known. One the
    // config leaves out is only marked seen: it is refused at the end and its values are not needed.
    void read_layer_field(MatrixId id);

    // -- the result (session_reader.cpp)

    static bool known_version(const json& v);
    // The file's format and version; false when they are not this reader's (nothing else is read).
    bool check_header(ProblemList& out);
    // The config, valid and within the file's version; false when not (shapes need a valid config).
    bool check_config(ProblemList& out);
    // The tokens, and the kv_tokens under cross-attention.
    void finish_tokens(Session& s, ProblemList& out);
    // A matrix of the file into `value`: at its shape where the layer uses it (with the problems met
    // while reading it), refused where the file gives one the layer does not use, else unused_value.
    void finish_field(MatrixId id, MatrixBuild& m, ProblemList* read_problems, Matrix& value, ProblemList& out);
    // The layer's inputs and the heads, in the registry's order, which is the file's: X, Y, mask,
    // the heads, W_O, b_O.
    void finish_inputs(Session& s, ProblemList& out);
    // Head i's fields into s.params.heads[i]: a K/V group's only from its first head; a bias
    // without biases is kept at its shape as zeros.
    void finish_head(Session& s, std::size_t i, ProblemList& out);
    void finish_heads(Session& s, ProblemList& out);
    // The pin, read as a session of its own.
    void finish_pin(Session& s, ProblemList& out);
    Result<Session> assemble();

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

}  // namespace attnviz::core::detail
