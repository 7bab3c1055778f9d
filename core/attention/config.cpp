#include "core/attention/config.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>

#include "core/base/format.hpp"

namespace attnviz::core {

double Scale::value(int d_k) const {
    switch (kind) {
        case Kind::sqrt_dk: return std::sqrt(static_cast<double>(d_k));
        case Kind::none: return 1.0;
        case Kind::divisor: return divisor;
    }
    return 1.0;
}

std::int64_t input_numbers(const Config& c) {
    const std::int64_t n = c.n, d = c.d_model, h = c.heads, g = c.kv_count(), dk = c.d_k, dv = c.d_v;
    std::int64_t numbers = n * d + h * d * dk + g * d * (dk + dv) + (c.output_projection ? h * dv * d : 0);
    if (c.cross()) numbers += std::int64_t{c.n_kv} * d;                   // Y
    if (c.mask == Mask::custom) numbers += n * std::int64_t{c.kv_len()};  // the mask
    if (c.biases) numbers += h * dk + g * (dk + dv) + (c.output_projection ? d : 0);
    if (c.qk_norm.on) numbers += (h + g) * dk;  // q_norm, k_norm
    return numbers;
}

std::int64_t total_numbers(const Config& c) {
    const std::int64_t n = c.n, m = c.kv_len(), h = c.heads, dk = c.d_k, dv = c.d_v;
    // per head: Q (n×d_k), K (m×d_k), V (m×d_v), Z (n×d_v), scores_raw, scores, weights (n×m),
    // m = kv_len() keys
    // (and the rotated Q, K with RoPE, scores_capped with soft-capping)
    const std::int64_t per_head = (c.rope.on ? 2 : 1) * (n + m) * dk + (n + m) * dv + (c.softcap > 0 ? 4 : 3) * n * m;
    return input_numbers(c) + h * per_head + n * h * dv + n * c.output_width();
}

std::int64_t bytes_needed(const Config& c) { return total_numbers(c) * static_cast<std::int64_t>(sizeof(double)); }

std::optional<Problem> memory_problem(const Config& c, std::int64_t budget) {
    const std::int64_t need = bytes_needed(c);
    if (need <= budget) return std::nullopt;
    return Problem{"config", "these dimensions need " + format_bytes(need) +
                                 " (the inputs and every intermediate in double), over the memory budget of " +
                                 format_bytes(budget) + "; a larger budget can be set with --memory-budget"};
}

Result<std::int64_t> parse_byte_size(const std::string& text) {
    using R = Result<std::int64_t>;
    const auto fail = [&] {
        return R::fail({{"", "'" + text + "' is not a size; expected a number with an optional unit, e.g. 8G, 500M"}});
    };
    std::size_t k = 0;
    while (k < text.size() && (std::isdigit(static_cast<unsigned char>(text[k])) || text[k] == '.')) ++k;
    if (k == 0) return fail();
    double value = 0;
    try {
        std::size_t used = 0;
        value = std::stod(text.substr(0, k), &used);
        if (used != k) return fail();
    } catch (const std::exception&) {
        return fail();
    }
    std::string unit = text.substr(k);
    for (char& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    // "KiB", "KB" and "K" alike; "B" alone is bytes.
    for (const char* suffix : {"IB", "B"})
        if (unit.size() >= std::strlen(suffix) &&
            unit.compare(unit.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
            unit.resize(unit.size() - std::strlen(suffix));
            break;
        }
    const std::string prefixes = "KMGT";
    if (unit.size() > 1 || (unit.size() == 1 && prefixes.find(unit[0]) == std::string::npos)) return fail();
    const double scale = unit.empty() ? 1 : std::ldexp(1.0, 10 * (1 + static_cast<int>(prefixes.find(unit[0]))));
    const double bytes = value * scale;
    if (!(bytes >= 1) || bytes > 0x1p62)
        return R::fail({{"", "'" + text + "' is not a size between 1 byte and 4 EiB"}});
    return R::ok(static_cast<std::int64_t>(bytes));
}

namespace {
void check_range(Problems& out, const char* field, int value, int max) {
    if (value < 1)
        out.push_back({std::string("config.") + field, "must be at least 1, got " + std::to_string(value)});
    else if (value > max)
        out.push_back(
            {std::string("config.") + field, std::to_string(value) + " is over the limit of " + std::to_string(max)});
}
void validate_rope_scaling(Problems& out, const RopeScaling& s) {
    using K = RopeScaling::Kind;
    if (s.kind == K::none) return;
    const auto bad = [&](const char* field, const std::string& message) {
        out.push_back({std::string("config.rope.scaling.") + field, message});
    };
    if (!(std::isfinite(s.factor) && s.factor >= 1 && s.factor <= Limits::max_rope_factor))
        bad("factor", "must be a number from 1 to " + format_number(Limits::max_rope_factor) + ", got " +
                          format_number(s.factor));
    if (s.kind != K::linear && (s.original_max_positions < 1 || s.original_max_positions > (1 << 24)))
        bad("original_max_positions", "must be a whole number from 1 to " + std::to_string(1 << 24) + ", got " +
                                          std::to_string(s.original_max_positions));
    if (s.kind == K::llama3) {
        if (!(std::isfinite(s.low_freq_factor) && s.low_freq_factor > 0))
            bad("low_freq_factor", "must be a number above 0, got " + format_number(s.low_freq_factor));
        else if (!(std::isfinite(s.high_freq_factor) && s.high_freq_factor > s.low_freq_factor))
            bad("high_freq_factor", "must be a number above low_freq_factor = " + format_number(s.low_freq_factor) +
                                        ", got " + format_number(s.high_freq_factor));
    }
}

}  // namespace

Problems validate(const Config& c) {
    Problems out;
    check_range(out, "n", c.n, Limits::max_n);
    check_range(out, "d_model", c.d_model, Limits::max_d_model);
    check_range(out, "heads", c.heads, Limits::max_heads);
    check_range(out, "d_k", c.d_k, Limits::max_d_k);
    check_range(out, "d_v", c.d_v, Limits::max_d_v);
    if (c.n_kv != 0) check_range(out, "n_kv", c.n_kv, Limits::max_n);
    if (c.mask == Mask::causal && c.cross() && c.n_kv != c.n)
        out.push_back({"config.mask", "a causal mask needs as many keys as queries (n_kv = n = " + std::to_string(c.n) +
                                          "), got n_kv = " + std::to_string(c.n_kv) +
                                          "; use a custom mask to choose which keys each query sees"});
    if (c.scale.kind == Scale::Kind::divisor &&
        !(std::isfinite(c.scale.divisor) && c.scale.divisor >= Limits::min_divisor))
        out.push_back({"config.scale",
                       "a divisor must be a finite number > 0 and at least " + format_number(Limits::min_divisor) +
                           " (smaller ones overflow the scores), got " + format_number(c.scale.divisor)});
    if (c.kv_heads < 0 || c.kv_heads > c.heads || (c.kv_heads > 0 && c.heads % c.kv_heads != 0))
        out.push_back({"config.kv_heads", "must divide heads = " + std::to_string(c.heads) +
                                              " (each K/V group serves the same number of query heads), got " +
                                              std::to_string(c.kv_heads)});
    if (c.rope.on) {
        if (!(std::isfinite(c.rope.base) && c.rope.base > 1 && c.rope.base <= Limits::max_rope_base))
            out.push_back({"config.rope.base", "must be a number above 1 and at most " +
                                                   format_number(Limits::max_rope_base) + ", got " +
                                                   format_number(c.rope.base)});
        const int dims = c.rope.rotated(c.d_k);
        if (c.rope.dims < 0 || dims > c.d_k || dims % 2 != 0)
            out.push_back({"config.rope.dims",
                           "the rotated columns must be an even number from 2 to d_k = " + std::to_string(c.d_k) +
                               (c.rope.dims == 0 ? " (by default all d_k, which is odd here)" : "") + ", got " +
                               std::to_string(dims)});
        validate_rope_scaling(out, c.rope.scaling);
        if (c.rope.scaling.kind == RopeScaling::Kind::dynamic && dims < 4 && dims % 2 == 0)
            out.push_back({"config.rope.scaling",
                           "dynamic scaling needs at least 4 rotated columns, got " + std::to_string(dims)});
    }
    if (c.window != 0 && (c.mask == Mask::custom || c.cross()))
        out.push_back({"config.window", std::string("a sliding window goes with a causal mask or none, over X's own "
                                                    "tokens; ") +
                                            (c.cross() ? "under cross-attention" : "with a custom mask") +
                                            " draw the window into the custom mask instead"});
    if (c.window < 0 || c.window > Limits::max_n)
        out.push_back({"config.window", "a sliding window is a whole number of keys from 1 to " +
                                            std::to_string(Limits::max_n) + " (0: none), got " +
                                            std::to_string(c.window)});
    if (c.softcap != 0 &&
        !(std::isfinite(c.softcap) && c.softcap >= Limits::min_softcap && c.softcap <= Limits::max_softcap))
        out.push_back({"config.softcap", "the soft-cap c must be a number from " + format_number(Limits::min_softcap) +
                                             " to " + format_number(Limits::max_softcap) + " (0: none), got " +
                                             format_number(c.softcap)});
    if (c.qk_norm.on && c.cross())
        out.push_back({"config.qk_norm",
                       "q/k norms go with self-attention: under cross-attention each head projects "
                       "X and Y itself"});
    if (c.qk_norm.on &&
        !(std::isfinite(c.qk_norm.eps) && c.qk_norm.eps > 0 && c.qk_norm.eps <= Limits::max_qk_norm_eps))
        out.push_back({"config.qk_norm.eps", "the q/k norms' eps must be a number above 0 and at most " +
                                                 format_number(Limits::max_qk_norm_eps) + ", got " +
                                                 format_number(c.qk_norm.eps)});
    if (out.empty() && input_numbers(c) > Limits::max_input_numbers)
        out.push_back({"config", "the inputs of these dimensions hold " + std::to_string(input_numbers(c)) +
                                     " numbers, over the limit of " + std::to_string(Limits::max_input_numbers)});
    return out;
}

std::optional<std::string> shape_note(const Config& c) {
    if (c.output_projection || c.concat_width() == c.d_model) return std::nullopt;
    return "without W_O the output is concat, n×(h·d_v) = " + std::to_string(c.n) + "×" +
           std::to_string(c.concat_width()) + ", not X's shape " + std::to_string(c.n) + "×" +
           std::to_string(c.d_model) + " (h·d_v ≠ d_model)";
}

const char* to_string(Mask mask) {
    switch (mask) {
        case Mask::none: return "none";
        case Mask::causal: return "causal";
        case Mask::custom: return "custom";
    }
    return "none";
}

const char* to_string(Rope::Style style) { return style == Rope::Style::interleaved ? "interleaved" : "half"; }

const char* to_string(RopeScaling::Kind kind) {
    switch (kind) {
        case RopeScaling::Kind::none: return "none";
        case RopeScaling::Kind::linear: return "linear";
        case RopeScaling::Kind::dynamic: return "dynamic";
        case RopeScaling::Kind::llama3: return "llama3";
    }
    return "none";
}

std::optional<RopeScaling::Kind> parse_rope_scaling(std::string_view text) {
    using K = RopeScaling::Kind;
    for (const K k : {K::none, K::linear, K::dynamic, K::llama3})
        if (text == to_string(k)) return k;
    return std::nullopt;
}

const char* to_string(Softmax softmax) { return softmax == Softmax::plus_one ? "plus_one" : "standard"; }

std::optional<Softmax> parse_softmax(std::string_view text) {
    for (const Softmax s : {Softmax::standard, Softmax::plus_one})
        if (text == to_string(s)) return s;
    return std::nullopt;
}

std::string to_string(const Scale& s) {
    switch (s.kind) {
        case Scale::Kind::sqrt_dk: return "sqrt_dk";
        case Scale::Kind::none: return "none";
        case Scale::Kind::divisor: return format_exact(s.divisor);
    }
    return "sqrt_dk";
}

}  // namespace attnviz::core
