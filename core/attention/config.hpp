// The dimensions and switches of one attention layer.
//
//   X ∈ R^{n×d_model}; per head i: W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾ ∈ R^{d_model×d_k}, W_V⁽ⁱ⁾ ∈ R^{d_model×d_v};
//   W_O ∈ R^{(h·d_v)×d_model} when output_projection is on.
//   Beyond the seeds, as real layers have them (each off by default, which is the seeds' layer):
//   biases b_Q, b_K ∈ R^{1×d_k}, b_V ∈ R^{1×d_v} per head and b_O ∈ R^{1×d_model}; grouped-query
//   attention (kv_heads K/V groups shared by heads / kv_heads query heads each); rotary position
//   embeddings (RoPE) applied to Q and K; norms of Q and K over all heads (q_norm ∈ R^{1×h·d_k},
//   k_norm ∈ R^{1×g·d_k}, g the K/V groups).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/problem.hpp"

namespace attnviz::core {

// Which keys a query may look at: all, those not after it (causal), or the session's own n×kv_len
// grid of 0/1 (custom: 1 = may attend; every query keeps at least one key).
enum class Mask { none, causal, custom };

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

// How a RoPE's frequencies are stretched for contexts longer than the model was trained on (Hugging
// Face's rope_scaling; θ_i = base^(−2i/dims) the plain frequency of pair i, λ_i = 2π/θ_i its wavelength):
//   none
//   linear   θ_i / factor                              (position interpolation)
//   dynamic  plain RoPE with the base base·(factor·n/L − (factor − 1))^(dims/(dims − 2)) when the
//            n positions exceed L = original_max_positions, else the plain base (dynamic NTK)
//   llama3   λ_i < L/high_freq_factor: θ_i; λ_i > L/low_freq_factor: θ_i / factor; between, the
//            blend (1 − t)·θ_i/factor + t·θ_i, t = (L/λ_i − low_freq_factor)/(high_freq_factor −
//            low_freq_factor) (Llama 3.1 and 3.2)
struct RopeScaling {
    enum class Kind { none, linear, dynamic, llama3 };
    Kind kind = Kind::none;
    double factor = 1;               // ≥ 1
    double low_freq_factor = 1;      // llama3
    double high_freq_factor = 4;     // llama3, > low_freq_factor
    int original_max_positions = 0;  // dynamic and llama3: L ≥ 1
    bool operator==(const RopeScaling& o) const {
        return kind == o.kind &&
               (kind == Kind::none ||
                (factor == o.factor && (kind == Kind::linear || original_max_positions == o.original_max_positions) &&
                 (kind != Kind::llama3 ||
                  (low_freq_factor == o.low_freq_factor && high_freq_factor == o.high_freq_factor))));
    }
};

// Rotary position embeddings (RoPE): the query and key of position p have each pair of their first
// `dims` columns rotated by the angle p·θ_i, θ_i = base^(−2i/dims), i = 0 … dims/2 − 1 (stretched
// by `scaling`).
//   half:        pairs (i, i + dims/2), as rotate_half in Llama and GPT-NeoX
//   interleaved: pairs (2i, 2i + 1), as GPT-J
// Columns from `dims` on are not rotated (partial rotary: GPT-NeoX's rotary_pct, Phi's
// partial_rotary_factor).
struct Rope {
    enum class Style { half, interleaved };
    bool on = false;
    double base = 10000;  // θ
    Style style = Style::half;
    int dims = 0;              // rotated columns of each head's Q and K; 0: all d_k of them
    RopeScaling scaling = {};  // none

    int rotated(int d_k) const { return dims > 0 ? dims : d_k; }
    // Only what is in use counts: with RoPE off the other fields are not part of the layer.
    bool operator==(const Rope& o) const {
        return on == o.on && (!on || (base == o.base && style == o.style && dims == o.dims && scaling == o.scaling));
    }
};

// Norms of the queries and keys over all heads (OLMo 2's q_norm and k_norm), before RoPE: each row
// of [Q⁽¹⁾ … Q⁽ʰ⁾] (every head's Q side by side, h·d_k values) is divided by its root mean square
// and multiplied by the weights q_norm, each row of the K/V groups' [K⁽¹⁾ … K⁽ᵍ⁾] alike by k_norm:
//   Q ← Q / √(mean(Q²) + eps) ⊙ q_norm
// so the heads' queries are scaled together, by one number per token.
struct QkNorm {
    bool on = false;
    double eps = 1e-6;  // > 0
    bool operator==(const QkNorm& o) const { return on == o.on && (!on || eps == o.eps); }
};

// The softmax that turns each row of scores into weights (docs/math.md#softmax-plus-one):
//   standard: w_j = e^{s_j} / Σ_k e^{s_k}          (each row sums to 1)
//   plus_one: w_j = e^{s_j} / (1 + Σ_k e^{s_k})    (softmax₁, Miller 2023: the 1 is a place for
//             weight to go that moves nothing, so a row may sum to below 1 and a query that finds
//             nothing relevant needs no sink key)
enum class Softmax { standard, plus_one };

struct Config {
    int n = 2;                      // sequence length (tokens, rows of X)
    int d_model = 4;                // embedding size (columns of X)
    int heads = 2;                  // h
    int d_k = 2;                    // query/key size per head
    int d_v = 2;                    // value size per head
    bool output_projection = true;  // output = concat·W_O, else output = concat
    Mask mask = Mask::none;
    Scale scale;
    bool biases = false;  // Q = X·W_Q + b_Q, K, V alike, output = concat·W_O + b_O
    int kv_heads = 0;     // K/V groups (grouped-query attention); 0: one per head (plain multi-head)
    Rope rope;            // rotary position embeddings of Q and K
    // Cross-attention: keys and values come from a second input Y (n_kv×d_model) instead of X;
    // 0: self-attention (keys and values from X, n of them).
    int n_kv = 0;
    Softmax softmax = Softmax::standard;  // how each row of scores becomes weights
    // A sliding window: query i sees no key j ≤ i − window (the `window` − 1 keys before it, itself
    // and, without a causal mask, the keys after it), as Mistral's and Gemma 2's local layers; 0: none.
    int window = 0;
    // Soft-capping of the scores (Gemma 2): scores_capped = c·tanh(scores / c) before the softmax,
    // every score pressed into (−c, c); 0: none.
    double softcap = 0;
    QkNorm qk_norm = {};  // norms of Q and K over all heads (off)

    int concat_width() const { return heads * d_v; }  // h·d_v
    // The keys (and values) each query attends over: n_kv with a second input Y, else n. The
    // scores and weights are n×kv_len().
    int kv_len() const { return n_kv > 0 ? n_kv : n; }
    bool cross() const { return n_kv > 0; }
    // How many K/V groups there are, how many query heads share each, and head i's group.
    int kv_count() const { return kv_heads > 0 ? kv_heads : heads; }
    int group_size() const { return kv_count() > 0 && heads % kv_count() == 0 ? heads / kv_count() : 1; }
    int kv_group(int head) const { return head / group_size(); }
    bool grouped() const { return kv_count() < heads; }
    // Whether key j is hidden from query i by the causal mask or the sliding window (not the custom
    // mask: see the session's mask).
    bool hides(int i, int j) const { return (mask == Mask::causal && j > i) || (window > 0 && j <= i - window); }
    // The first key query i may see under the sliding window (0 without one).
    int first_key(int i) const { return window > 0 ? std::max(0, i - window + 1) : 0; }
    // Whether anything beyond the seeds' layer is in use (a session then needs file version 2, 3 for
    // cross-attention and a custom mask, 4 for softmax₁, 5 for a sliding window, soft-capping, q/k
    // norms or scaled RoPE).
    bool extended() const {
        return biases || grouped() || rope.on || cross() || mask == Mask::custom || softmax != Softmax::standard ||
               window > 0 || softcap > 0 || qk_norm.on;
    }
    // Columns of the output: d_model with W_O, h·d_v without.
    int output_width() const { return output_projection ? d_model : concat_width(); }
    bool operator==(const Config&) const = default;
};

// Size limits, so a typo cannot ask for terabytes. Documented in docs/session-format.md.
struct Limits {
    static constexpr int max_n = 8192;  // n, and n_kv
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
    // The largest RoPE base θ (real models use 10⁴ to 10⁶; angles stay meaningful far beyond).
    static constexpr double max_rope_base = 1e12;
    // The largest RoPE scaling factor (real models use 2 to 64).
    static constexpr double max_rope_factor = 1e6;
    // The soft-cap c: from 10⁻³ (tanh saturates every score beyond) to 10⁶ (real models use 30 and 50).
    static constexpr double min_softcap = 1e-3, max_softcap = 1e6;
    // The q/k norms' eps: above 0 (a row of zeros would divide by 0) and at most 1 (models use 1e-6).
    static constexpr double max_qk_norm_eps = 1;
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
const char* to_string(Rope::Style style);
// "none", "linear", "dynamic", "llama3", as Hugging Face's rope_type and a session file have them;
// parse_rope_scaling reads them back.
const char* to_string(RopeScaling::Kind kind);
std::optional<RopeScaling::Kind> parse_rope_scaling(std::string_view text);
// "standard" or "plus_one", as a session file has them; parse_softmax reads them back (nullopt for
// any other text).
const char* to_string(Softmax softmax);
std::optional<Softmax> parse_softmax(std::string_view text);
// "sqrt_dk", "none", or the divisor as a number.
std::string to_string(const Scale& scale);

}  // namespace attnviz::core
