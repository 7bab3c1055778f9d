#include "config.hpp"

#include <cmath>

#include "format.hpp"

namespace attnviz::core {

double Scale::value(int d_k) const {
    switch (kind) {
        case Kind::sqrt_dk: return std::sqrt(static_cast<double>(d_k));
        case Kind::none: return 1.0;
        case Kind::divisor: return divisor;
    }
    return 1.0;
}

std::int64_t total_numbers(const Config& c) {
    const std::int64_t n = c.n, d = c.d_model, h = c.heads, dk = c.d_k, dv = c.d_v;
    const std::int64_t inputs = n * d + h * d * (2 * dk + dv) + (c.output_projection ? h * dv * d : 0);
    // per head: Q, K (n×d_k), V, Z (n×d_v), scores_raw, scores, weights (n×n)
    const std::int64_t per_head = 2 * n * dk + 2 * n * dv + 3 * n * n;
    return inputs + h * per_head + n * h * dv + n * c.output_width();
}

namespace {
void check_range(Problems& out, const char* field, int value, int max) {
    if (value < 1)
        out.push_back({std::string("config.") + field, "must be at least 1, got " + std::to_string(value)});
    else if (value > max)
        out.push_back(
            {std::string("config.") + field, std::to_string(value) + " is over the limit of " + std::to_string(max)});
}
}  // namespace

Problems validate(const Config& c) {
    Problems out;
    check_range(out, "n", c.n, Limits::max_n);
    check_range(out, "d_model", c.d_model, Limits::max_d_model);
    check_range(out, "heads", c.heads, Limits::max_heads);
    check_range(out, "d_k", c.d_k, Limits::max_d_k);
    check_range(out, "d_v", c.d_v, Limits::max_d_v);
    if (c.scale.kind == Scale::Kind::divisor &&
        !(std::isfinite(c.scale.divisor) && c.scale.divisor >= Limits::min_divisor))
        out.push_back({"config.scale",
                       "a divisor must be a finite number > 0 and at least " + format_number(Limits::min_divisor) +
                           " (smaller ones overflow the scores), got " + format_number(c.scale.divisor)});
    if (out.empty() && total_numbers(c) > Limits::max_total_numbers)
        out.push_back({"config", "these dimensions need " + std::to_string(total_numbers(c)) +
                                     " numbers, over the limit of " + std::to_string(Limits::max_total_numbers)});
    return out;
}

std::optional<std::string> shape_note(const Config& c) {
    if (c.output_projection || c.concat_width() == c.d_model) return std::nullopt;
    return "without W_O the output is concat, n×(h·d_v) = " + std::to_string(c.n) + "×" +
           std::to_string(c.concat_width()) + ", not X's shape " + std::to_string(c.n) + "×" +
           std::to_string(c.d_model) + " (h·d_v ≠ d_model)";
}

const char* to_string(Mask mask) { return mask == Mask::causal ? "causal" : "none"; }

std::string to_string(const Scale& s) {
    switch (s.kind) {
        case Scale::Kind::sqrt_dk: return "sqrt_dk";
        case Scale::Kind::none: return "none";
        case Scale::Kind::divisor: return format_exact(s.divisor);
    }
    return "sqrt_dk";
}

}  // namespace attnviz::core
