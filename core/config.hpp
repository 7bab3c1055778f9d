// The dimensions and switches of one attention layer.
//
//   X ∈ R^{n×d_model}; per head i: W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾ ∈ R^{d_model×d_k}, W_V⁽ⁱ⁾ ∈ R^{d_model×d_v};
//   W_O ∈ R^{(h·d_v)×d_model} when output_projection is on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "problem.hpp"

namespace attnviz::core {

enum class Mask { none, causal };

// scores = scores_raw / s, with s chosen here.
struct Scale {
    enum class Kind { sqrt_dk, none, divisor };
    Kind kind = Kind::sqrt_dk;
    double divisor = 1.0;  // used only when kind == divisor (a temperature); ≥ Limits::min_divisor

    // The divisor s actually applied for a given d_k: √d_k, 1, or the user's divisor.
    double value(int d_k) const;
    // The divisor counts only when it is the one in use (a file keeps only that one).
    bool operator==(const Scale& o) const { return kind == o.kind && (kind != Kind::divisor || divisor == o.divisor); }
};

struct Config {
    int n = 2;                      // sequence length (tokens, rows of X)
    int d_model = 4;                // embedding size (columns of X)
    int heads = 2;                  // h
    int d_k = 2;                    // query/key size per head
    int d_v = 2;                    // value size per head
    bool output_projection = true;  // output = concat·W_O, else output = concat
    Mask mask = Mask::none;
    Scale scale;

    int concat_width() const { return heads * d_v; }  // h·d_v
    // Columns of the output: d_model with W_O, h·d_v without.
    int output_width() const { return output_projection ? d_model : concat_width(); }
    bool operator==(const Config&) const = default;
};

// Size limits, so a typo cannot ask for terabytes. Documented in docs/session-format.md.
struct Limits {
    static constexpr int max_n = 8192;
    static constexpr int max_d_model = 8192;
    static constexpr int max_heads = 256;
    static constexpr int max_d_k = 8192;
    static constexpr int max_d_v = 8192;
    // The numbers of a session's inputs (X and every weight matrix, what a file holds):
    // 2^27 ≈ 134 million, 1 GiB in double. The trace is bounded by the memory budget instead.
    static constexpr std::int64_t max_input_numbers = std::int64_t{1} << 27;
    // The largest magnitude of an input value. With every dimension within its limit, Q·Kᵀ then
    // stays below ~1e72, far from overflow, so no score, weight or output can become ∞ or NaN.
    static constexpr double max_abs_value = 1e15;
    // The smallest temperature divisor s: below it scores_raw / s could overflow to ∞.
    static constexpr double min_divisor = 1e-6;
};

// How many numbers the inputs of this config hold, and the inputs and the full trace together.
std::int64_t input_numbers(const Config& config);
std::int64_t total_numbers(const Config& config);

// Memory. A configuration needs bytes_needed(): its inputs and one full trace, in double (the app
// holds a second trace while it computes the next one). The app and `compute` refuse a
// configuration over the memory budget, saying how much it needs; `--memory-budget` sets it.
inline constexpr std::int64_t default_memory_budget = std::int64_t{8} << 30;  // 8 GiB
std::int64_t bytes_needed(const Config& config);
// The refusal of a config over the budget ("config: these dimensions need 12.9 GB …"), or nullopt.
std::optional<Problem> memory_problem(const Config& config, std::int64_t budget_bytes);
// A size as the budget flag takes it: a whole or decimal number with an optional unit K, M, G or T
// (powers of 1024; "KiB", "MB", "GB" … are read the same), e.g. "8G", "1.5GiB", "500M", "1073741824".
Result<std::int64_t> parse_byte_size(const std::string& text);

// Every problem of the config, each with its field path ("config.d_k: ..."): each dimension within
// its limit, the divisor, and the inputs within Limits::max_input_numbers. The memory budget is
// checked apart (memory_problem), since it is a setting of the machine, not of the file.
Problems validate(const Config& config);

// A remark on a valid config that the user should see but that is not an error:
// without W_O and with h·d_v ≠ d_model the output is not X's shape.
std::optional<std::string> shape_note(const Config& config);

const char* to_string(Mask mask);
// "sqrt_dk", "none", or the divisor as a number.
std::string to_string(const Scale& scale);

}  // namespace attnviz::core
