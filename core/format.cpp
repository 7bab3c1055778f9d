#include "format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace attnviz::core {

std::string format_exact(double value) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    if (ec != std::errc{}) return "0";
    return std::string(buf, end);
}

std::string format_number(double value, int digits) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    if (value == 0) return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    return buf;
}

std::string format_shape(long long rows, long long cols) { return std::to_string(rows) + "×" + std::to_string(cols); }

std::string format_compact(double value, int digits) {
    std::string s = format_number(value, digits);
    const size_t e = s.find('e');
    if (e == std::string::npos) return s;
    size_t k = e + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) {
        if (s[k] == '+')
            s.erase(k, 1);
        else
            ++k;
    }
    while (k + 1 < s.size() && s[k] == '0') s.erase(k, 1);
    return s;
}

std::string cell_number(double value, int level, const std::string& about_zero) {
    if (level >= 2 || !std::isfinite(value)) return format_compact(value, std::max(level, 2));
    if (level == 1) return value != 0 && std::abs(value) < 1e-3 ? about_zero : format_compact(value, 2);
    if (level < 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1f", value);
        const std::string text = buf;
        if (text == "0.0" || text == "-0.0") return value == 0 ? "0" : about_zero;
        return text.ends_with(".0") ? text.substr(0, text.size() - 2) : text;
    }
    const std::string plain = format_compact(value, 1);
    if (value == 0) return plain;
    int k = static_cast<int>(std::floor(std::log10(std::abs(value))));
    long mantissa = std::lround(std::abs(value) / std::pow(10.0, k));
    if (mantissa == 10) {
        mantissa = 1;
        ++k;
    }
    const std::string exp = std::string(value < 0 ? "-" : "") + std::to_string(mantissa) + "e" + std::to_string(k);
    return exp.size() < plain.size() ? exp : plain;
}

std::string without_leading_zero(const std::string& text) {
    const size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.compare(sign, 2, "0.") != 0) return text;
    return text.substr(0, sign) + text.substr(sign + 1);
}

std::string format_bytes(long long bytes) {
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (std::abs(value) >= 1024 && unit + 1 < static_cast<int>(std::size(units))) {
        value /= 1024;
        ++unit;
    }
    // 1000 to 1023 of a unit would print as "1.02e+03" with 3 digits: whole numbers there.
    const std::string number = std::abs(value) >= 999.5 ? std::to_string(std::llround(value)) : format_number(value, 3);
    return number + " " + units[unit];
}

std::string format_duration(double ms) {
    if (!std::isfinite(ms) || ms < 0) return "?";
    char buf[32];
    if (ms < 0.01)
        return "<0.01 ms";
    else if (ms < 999.5)
        std::snprintf(buf, sizeof buf, "%.3g ms", ms);  // below 1000: no exponent
    else if (ms < 99950)
        std::snprintf(buf, sizeof buf, "%.3g s", ms / 1000);
    else
        std::snprintf(buf, sizeof buf, "%.0f s", ms / 1000);
    return buf;
}

}  // namespace attnviz::core
