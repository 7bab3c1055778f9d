#include "core/io/json_read.hpp"

#include "core/base/format.hpp"
#include "core/base/utf8.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>

namespace attnviz::core {

using nlohmann::json;

std::string text_position(std::string_view text, std::size_t byte) {
    byte = std::min(byte, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < byte; ++k) {
        if (text[k] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string path_key(const std::string& parent, std::string_view key) {
    const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!plain)
        return parent + "[" + printable(json(std::string(key)).dump(-1, ' ', false, json::error_handler_t::replace)) +
               "]";
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string path_index(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

std::string describe_text(const std::string& s) {
    constexpr std::size_t longest = 64, shown = 48;
    // JSON's escapes for C0 controls and quotes, then printable() for what JSON leaves raw (C1 controls).
    auto quoted = [](const std::string& t) {
        return printable(json(t).dump(-1, ' ', false, json::error_handler_t::replace));
    };
    if (s.size() <= longest) return "the text " + quoted(s);
    std::size_t cut = shown;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    std::string q = quoted(s.substr(0, cut));
    q.insert(q.size() - 1, "…");
    return "the text " + q + " (" + std::to_string(s.size()) + " bytes)";
}

std::string describe_json(const json& v) {
    if (v.is_string()) return describe_text(v.get_ref<const std::string&>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_null()) return "null";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    if (v.is_number()) return v.dump();
    return "something else";
}

std::string overflow_message(std::string_view token) {
    return "the number " + std::string(token) + " is too large to represent (values must be finite)";
}

// ---------------------------------------------------------------------------------------------
// JsonReader

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Whether a number token that from_chars found out of range is too large (rather than too small,
// which reads as 0 as strtod would give it): its first significant digit's power of ten.
bool overflows(std::string_view t) {
    std::size_t k = t.front() == '-' ? 1 : 0;
    long long magnitude = 0;
    bool found = false;
    long long int_digits = 0;
    for (; k < t.size() && is_digit(t[k]); ++k) {
        if (!found && t[k] != '0') {
            found = true;
            magnitude = 0;
        }
        if (found) ++int_digits;
    }
    if (found) {
        magnitude = int_digits - 1;
    } else if (k < t.size() && t[k] == '.') {
        for (++k; k < t.size() && is_digit(t[k]); ++k) {
            --magnitude;
            if (t[k] != '0') {
                found = true;
                break;
            }
        }
    }
    while (k < t.size() && t[k] != 'e' && t[k] != 'E') ++k;
    long long exponent = 0;
    if (k < t.size()) {
        ++k;
        const bool negative = k < t.size() && t[k] == '-';
        if (k < t.size() && (t[k] == '-' || t[k] == '+')) ++k;
        for (; k < t.size() && is_digit(t[k]); ++k) exponent = std::min(exponent * 10 + (t[k] - '0'), 1000000000LL);
        if (negative) exponent = -exponent;
    }
    return found && magnitude + exponent > 0;
}

// NaN, Infinity or -Infinity (as JavaScript, Python's json and NumPy write them; any case, "inf"
// too) around the byte where reading stopped: the word and where it starts.
std::optional<std::pair<std::string, std::size_t>> non_finite_at(std::string_view text, std::size_t at) {
    const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    std::size_t start = at, end = at;
    if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
    while (start > 0 && letter(text[start - 1])) --start;
    if (start > 0 && (text[start - 1] == '-' || text[start - 1] == '+')) --start;
    while (end < text.size() && letter(text[end])) ++end;
    const std::string word(text.substr(start, end - start));
    std::string lower;
    for (char c : word) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (!lower.empty() && (lower[0] == '-' || lower[0] == '+')) lower.erase(0, 1);
    if (lower == "nan" || lower == "infinity" || lower == "inf") return std::pair{word, start};
    return std::nullopt;
}

}  // namespace

JsonReader::JsonReader(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte order mark
    kinds_.reserve(16);
}

Problem JsonReader::error() const {
    switch (error_) {
        case Error::none: return {"", ""};
        case Error::truncated:
            return {"", "the JSON ends too early (truncated?) at " + text_position(text_, text_.size())};
        case Error::too_deep:
            return {"", "malformed JSON: nested more than " + std::to_string(max_depth) + " levels deep at " +
                            text_position(text_, error_at_)};
        case Error::malformed:
            if (error_at_ < text_.size() && text_[error_at_] == '\0')
                return {"", "a NUL byte at " + text_position(text_, error_at_) + " (JSON text cannot hold one)"};
            if (const auto word = non_finite_at(text_, error_at_))
                return {"", word->first + " at " + text_position(text_, word->second) +
                                ": NaN and Infinity are not JSON numbers (every value must be a finite number)"};
            return {"", "malformed JSON at " + text_position(text_, error_at_)};
    }
    return {"", "malformed JSON"};
}

void JsonReader::skip_ws() {
    while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
        ++pos_;
    }
}

bool JsonReader::fail_at(std::size_t at) {
    if (at >= text_.size()) return fail_truncated();
    if (error_ == Error::none) {
        error_ = Error::malformed;
        error_at_ = at;
    }
    return false;
}

bool JsonReader::fail_truncated() {
    if (error_ == Error::none) error_ = Error::truncated;
    return false;
}

JsonReader::Kind JsonReader::peek() {
    if (!ok()) return Kind::error;
    skip_ws();
    if (pos_ >= text_.size()) {
        fail_truncated();
        return Kind::error;
    }
    switch (text_[pos_]) {
        case '{': return Kind::object;
        case '[': return Kind::array;
        case '"': return Kind::string;
        case 't':
        case 'f': return Kind::boolean;
        case 'n': return Kind::null;
        default:
            if (text_[pos_] == '-' || is_digit(text_[pos_])) return Kind::number;
            fail_at(pos_);
            return Kind::error;
    }
}

bool JsonReader::enter() {
    if (depth_ >= max_depth) {
        error_ = Error::too_deep;
        error_at_ = pos_;
        return false;
    }
    ++depth_;
    ++pos_;
    first_ = true;
    return true;
}

bool JsonReader::leave(char close) {
    (void)close;
    ++pos_;
    --depth_;
    kinds_.pop_back();
    first_ = false;
    return false;
}

bool JsonReader::begin_object() {
    if (peek() != Kind::object) return ok() ? fail_at(pos_) : false;
    if (!enter()) return false;
    kinds_.push_back(true);
    return true;
}

bool JsonReader::begin_array() {
    if (peek() != Kind::array) return ok() ? fail_at(pos_) : false;
    if (!enter()) return false;
    kinds_.push_back(false);
    return true;
}

bool JsonReader::next_key(std::string& key) { return next_member(&key); }

bool JsonReader::next_item(char close) {
    if (!ok()) return false;
    skip_ws();
    if (pos_ >= text_.size()) return fail_truncated();
    if (text_[pos_] == close) return leave(close);  // "[]", "{}" or after the last item
    if (!first_) {
        if (text_[pos_] != ',') return fail_at(pos_);
        ++pos_;
        skip_ws();
        if (pos_ >= text_.size()) return fail_truncated();
        if (text_[pos_] == close) return fail_at(pos_);  // a trailing comma
    }
    first_ = false;
    return true;
}

bool JsonReader::next_member(std::string* key) {
    if (!next_item('}')) return false;
    if (text_[pos_] != '"') return fail_at(pos_);
    ++pos_;
    if (key) key->clear();
    if (!string_body(key)) return false;
    skip_ws();
    if (pos_ >= text_.size()) return fail_truncated();
    if (text_[pos_] != ':') return fail_at(pos_);
    ++pos_;
    return true;
}

bool JsonReader::next_element() { return next_item(']'); }

bool JsonReader::string_body(std::string* out) {
    const std::size_t n = text_.size();
    for (;;) {
        // A run of plain ASCII characters at once.
        const std::size_t run = pos_;
        while (pos_ < n) {
            const unsigned char c = static_cast<unsigned char>(text_[pos_]);
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
            ++pos_;
        }
        if (out && pos_ > run) out->append(text_.data() + run, pos_ - run);
        if (pos_ >= n) return fail_truncated();
        const unsigned char c = static_cast<unsigned char>(text_[pos_]);
        if (c == '"') {
            ++pos_;
            return true;
        }
        if (c < 0x20) return fail_at(pos_);  // control characters (and NUL) must be escaped
        if (c == '\\') {
            ++pos_;
            if (pos_ >= n) return fail_truncated();
            const char e = text_[pos_];
            char plain = 0;
            switch (e) {
                case '"': plain = '"'; break;
                case '\\': plain = '\\'; break;
                case '/': plain = '/'; break;
                case 'b': plain = '\b'; break;
                case 'f': plain = '\f'; break;
                case 'n': plain = '\n'; break;
                case 'r': plain = '\r'; break;
                case 't': plain = '\t'; break;
                case 'u': break;
                default: return fail_at(pos_);
            }
            ++pos_;
            if (plain) {
                if (out) *out += plain;
                continue;
            }
            auto hex4 = [&](std::uint32_t& cp) {
                cp = 0;
                for (int k = 0; k < 4; ++k, ++pos_) {
                    if (pos_ >= n) return fail_truncated();
                    const int h = hex_value(text_[pos_]);
                    if (h < 0) return fail_at(pos_);
                    cp = cp * 16 + static_cast<std::uint32_t>(h);
                }
                return true;
            };
            std::uint32_t cp = 0;
            if (!hex4(cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return fail_at(pos_ - 1);  // a low surrogate alone
            if (cp >= 0xD800 && cp <= 0xDBFF) {                          // must be followed by a low one
                if (pos_ >= n || pos_ + 1 >= n) return fail_truncated();
                if (text_[pos_] != '\\') return fail_at(pos_);
                if (text_[pos_ + 1] != 'u') return fail_at(pos_ + 1);
                pos_ += 2;
                std::uint32_t low = 0;
                if (!hex4(low)) return false;
                if (low < 0xDC00 || low > 0xDFFF) return fail_at(pos_ - 1);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            if (out) append_utf8(*out, cp);
            continue;
        }
        // A multi-byte UTF-8 character (RFC 3629): the lead byte fixes the range of the next one.
        const std::size_t start = pos_;
        int more = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c == 0xE0) {
            more = 2, lo = 0xA0;
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
            more = 2;
        } else if (c == 0xED) {
            more = 2, hi = 0x9F;
        } else if (c == 0xF0) {
            more = 3, lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3) {
            more = 3;
        } else if (c == 0xF4) {
            more = 3, hi = 0x8F;
        } else {
            return fail_at(pos_);
        }
        ++pos_;
        for (int k = 0; k < more; ++k, ++pos_) {
            if (pos_ >= n) return fail_truncated();
            const unsigned char b = static_cast<unsigned char>(text_[pos_]);
            if (b < lo || b > hi) return fail_at(pos_);
            lo = 0x80, hi = 0xBF;
        }
        if (out) out->append(text_.data() + start, pos_ - start);
    }
}

bool JsonReader::scan_number(Number& out) {
    const std::size_t n = text_.size(), start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (pos_ >= n) return fail_truncated();
    if (text_[pos_] == '0') {
        ++pos_;
    } else if (is_digit(text_[pos_])) {
        while (pos_ < n && is_digit(text_[pos_])) ++pos_;
    } else {
        return fail_at(pos_);
    }
    out.integer = true;
    if (pos_ < n && text_[pos_] == '.') {
        out.integer = false;
        ++pos_;
        if (pos_ >= n) return fail_truncated();
        if (!is_digit(text_[pos_])) return fail_at(pos_);
        while (pos_ < n && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < n && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        out.integer = false;
        ++pos_;
        if (pos_ < n && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
        if (pos_ >= n) return fail_truncated();
        if (!is_digit(text_[pos_])) return fail_at(pos_);
        while (pos_ < n && is_digit(text_[pos_])) ++pos_;
    }
    out.text = text_.substr(start, pos_ - start);
    return true;
}

bool JsonReader::read_number(Number& out) {
    if (peek() != Kind::number) return ok() ? fail_at(pos_) : false;
    if (!scan_number(out)) return false;
    out.overflow = false;
    const char* first = out.text.data();
    const auto [ptr, ec] = std::from_chars(first, first + out.text.size(), out.value);
    if (ec == std::errc::result_out_of_range) {
        out.overflow = overflows(out.text);
        out.value = out.text.front() == '-' && !out.overflow ? -0.0 : 0.0;
    } else if (ec != std::errc{} || ptr != first + out.text.size()) {
        return fail_at(pos_);  // not reached: the token was checked above
    }
    if (out.integer && out.value == 0) out.value = 0.0;  // "-0" is the integer 0
    return true;
}

bool JsonReader::expect_literal(std::string_view word) {
    for (char c : word) {
        if (pos_ >= text_.size()) return fail_truncated();
        if (text_[pos_] != c) return fail_at(pos_);
        ++pos_;
    }
    return true;
}

bool JsonReader::read_bool(bool& out) {
    const Kind k = peek();
    if (k != Kind::boolean) return ok() ? fail_at(pos_) : false;
    out = text_[pos_] == 't';
    return expect_literal(out ? "true" : "false");
}

bool JsonReader::read_null() {
    const Kind k = peek();
    if (k != Kind::null) return ok() ? fail_at(pos_) : false;
    return expect_literal("null");
}

bool JsonReader::read_string(std::string& out) {
    out.clear();
    if (peek() != Kind::string) return ok() ? fail_at(pos_) : false;
    ++pos_;
    return string_body(&out);
}

bool JsonReader::read_scalar(JsonScalar& out) {
    out.overflow.clear();
    switch (peek()) {
        case Kind::string: {
            std::string s;
            if (!read_string(s)) return false;
            out.value = std::move(s);
            return true;
        }
        case Kind::number: {
            Number num;
            if (!read_number(num)) return false;
            if (num.overflow) {
                out.value = nullptr;
                out.overflow = std::string(num.text);
                return true;
            }
            // As nlohmann::json reads it: an integer that fits is signed (negative) or unsigned.
            if (num.integer) {
                const char* first = num.text.data();
                const char* last = first + num.text.size();
                if (num.text.front() == '-') {
                    std::int64_t v = 0;
                    if (auto r = std::from_chars(first, last, v); r.ec == std::errc{} && r.ptr == last) {
                        out.value = v;
                        return true;
                    }
                } else {
                    std::uint64_t v = 0;
                    if (auto r = std::from_chars(first, last, v); r.ec == std::errc{} && r.ptr == last) {
                        out.value = v;
                        return true;
                    }
                }
            }
            out.value = num.value;
            return true;
        }
        case Kind::boolean: {
            bool b = false;
            if (!read_bool(b)) return false;
            out.value = b;
            return true;
        }
        case Kind::null: out.value = nullptr; return read_null();
        case Kind::array: out.value = json::array(); return skip_value();
        case Kind::object: out.value = json::object(); return skip_value();
        case Kind::error: return false;
    }
    return false;
}

bool JsonReader::skip_value(std::string_view& raw) {
    skip_ws();
    const std::size_t start = pos_;
    const bool ok = skip_value();
    raw = ok ? text_.substr(start, pos_ - start) : std::string_view();
    return ok;
}

bool JsonReader::skip_value() {
    const int base = depth_;
    for (;;) {
        switch (peek()) {
            case Kind::object:
                if (!begin_object()) return false;
                break;
            case Kind::array:
                if (!begin_array()) return false;
                break;
            case Kind::string:
                ++pos_;
                if (!string_body(nullptr)) return false;
                break;
            case Kind::number: {
                Number num;
                if (!scan_number(num)) return false;
                break;
            }
            case Kind::boolean: {
                bool b = false;
                if (!read_bool(b)) return false;
                break;
            }
            case Kind::null:
                if (!read_null()) return false;
                break;
            case Kind::error: return false;
        }
        // Move on to the next value to read, closing the containers that end here.
        for (;;) {
            if (depth_ == base) return true;
            const bool more = kinds_.back() ? next_member(nullptr) : next_element();
            if (!ok()) return false;
            if (more) break;
        }
    }
}

std::string JsonReader::describe_next(bool want) {
    if (!want) {
        skip_value();
        return "";
    }
    JsonScalar s;
    if (!read_scalar(s)) return "";
    if (!s.overflow.empty()) return s.overflow;
    return describe_json(s.value);
}

bool JsonReader::finish() {
    if (!ok()) return false;
    skip_ws();
    if (pos_ < text_.size()) return fail_at(pos_);
    return true;
}

// ---------------------------------------------------------------------------------------------
// A small document as nlohmann::json

namespace {

// Reads one value into `out`; a number too large for a double or a repeated key stops the read
// with that problem.
bool build(JsonReader& r, json& out, const std::string& path, std::optional<Problem>& problem) {
    switch (r.peek()) {
        case JsonReader::Kind::object: {
            out = json::object();
            if (!r.begin_object()) return false;
            std::string key;
            while (r.next_key(key)) {
                const std::string child = path_key(path, key);
                if (out.contains(key)) {
                    problem = Problem{child, "given twice (each key may appear only once)"};
                    return false;
                }
                if (!build(r, out[key], child, problem)) return false;
            }
            return r.ok();
        }
        case JsonReader::Kind::array: {
            out = json::array();
            if (!r.begin_array()) return false;
            while (r.next_element()) {
                out.push_back(json());
                if (!build(r, out.back(), path_index(path, out.size() - 1), problem)) return false;
            }
            return r.ok();
        }
        case JsonReader::Kind::error: return false;
        default: {
            JsonScalar s;
            if (!r.read_scalar(s)) return false;
            if (!s.overflow.empty()) {
                problem = Problem{path, overflow_message(s.overflow)};
                return false;
            }
            out = std::move(s.value);
            return true;
        }
    }
}

}  // namespace

Result<json> read_json(std::string_view text) {
    JsonReader r(text);
    json root;
    std::optional<Problem> problem;
    if (build(r, root, "", problem) && r.finish()) return Result<json>::ok(std::move(root));
    if (!r.ok()) return Result<json>::fail({r.error()});
    return Result<json>::fail({problem ? *problem : Problem{"", "malformed JSON"}});
}

}  // namespace attnviz::core
