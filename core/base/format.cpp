#include "core/base/format.hpp"

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

namespace {

// The length of the valid UTF-8 sequence starting at text[k] (1 to 4), or 0 when the bytes there
// are not one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_length(std::string_view text, std::size_t k) {
    const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
    const unsigned char b = byte(k);
    if (b < 0x80) return 1;
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0) low = 0xA0;   // overlong
        if (b == 0xED) high = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0) low = 0x90;   // overlong
        if (b == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
        return 0;
    }
    if (k + n > text.size() || byte(k + 1) < low || byte(k + 1) > high) return 0;
    for (std::size_t j = 2; j < n; ++j)
        if ((byte(k + j) & 0xC0) != 0x80) return 0;
    return n;
}

}  // namespace

std::string printable(std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t k = 0; k < text.size();) {
        const auto b = static_cast<unsigned char>(text[k]);
        const std::size_t n = utf8_length(text, k);
        if (n == 0 || b < 0x20 || b == 0x7F) {
            // A control character of ASCII, or a byte that is no UTF-8.
            if (b == '\n')
                out += "\\n";
            else if (b == '\t')
                out += "\\t";
            else if (b == '\r')
                out += "\\r";
            else
                out += std::string("\\x") + hex[b >> 4] + hex[b & 0xF];
            ++k;
            continue;
        }
        if (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[k + 1]) < 0xA0) {
            // U+0080–U+009F, the C1 controls (CSI among them).
            const auto c = static_cast<unsigned char>(text[k + 1]);
            out += std::string("\\u{") + hex[c >> 4] + hex[c & 0xF] + "}";
        } else {
            out.append(text.substr(k, n));
        }
        k += n;
    }
    return out;
}

}  // namespace attnviz::core
