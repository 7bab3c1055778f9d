#include "core/model/unicode.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <cstdlib>

#include "core/base/utf8.hpp"

namespace attnviz::model {

namespace {

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// One code point from `text` at `at`: its length in bytes, or a negative number when the bytes
// there are not valid UTF-8.
utf8proc_ssize_t next_char(std::string_view text, std::size_t at, utf8proc_int32_t& c) {
    return utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                            static_cast<utf8proc_ssize_t>(text.size() - at), &c);
}

}  // namespace

bool decode_utf8(std::string_view text, std::u32string& out) {
    out.clear();
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        utf8proc_int32_t c = 0;
        const utf8proc_ssize_t n = next_char(text, at, c);
        if (n <= 0) return false;
        out += static_cast<char32_t>(c);
        at += static_cast<std::size_t>(n);
    }
    return true;
}

std::size_t invalid_utf8_at(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        if (static_cast<unsigned char>(text[at]) < 0x80) {
            ++at;
            continue;
        }
        utf8proc_int32_t c = 0;
        const utf8proc_ssize_t n = next_char(text, at, c);
        if (n <= 0) return at;
        at += static_cast<std::size_t>(n);
    }
    return text.size();
}

bool valid_utf8(std::string_view text) { return invalid_utf8_at(text) == text.size(); }

std::string encode_utf8(std::u32string_view chars) {
    std::string out;
    out.reserve(chars.size());
    for (const char32_t c : chars) core::append_utf8(out, c);
    return out;
}

std::size_t utf8_length(unsigned char lead) {
    if (lead >= 0xF0 && lead < 0xF8) return 4;
    if (lead >= 0xE0) return lead < 0xF0 ? 3 : 1;
    if (lead >= 0xC0) return 2;
    return 1;
}

bool is_letter(char32_t c) {
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

bool is_mark(char32_t c) {
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_MN && k <= UTF8PROC_CATEGORY_ME;
}

bool is_nonspacing_mark(char32_t c) { return category(c) == UTF8PROC_CATEGORY_MN; }

bool is_numeric(char32_t c) {
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t c) {
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

bool is_other(char32_t c) {
    const utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_CN || (k >= UTF8PROC_CATEGORY_CC && k <= UTF8PROC_CATEGORY_CO);
}

bool is_ascii_punctuation(char32_t c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool is_whitespace(char32_t c) {
    if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return true;
    const utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_ZS && k <= UTF8PROC_CATEGORY_ZP;
}

bool is_word_char(char32_t c) {
    static const Regex word = [] {
        std::string error;
        return Regex::compile(R"(^[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]$)", error);
    }();
    std::string text;
    core::append_utf8(text, c);
    std::vector<Span> matches;
    return word.find_all(text, matches) && !matches.empty();
}

void append_lowercase(std::u32string& out, char32_t c) {
    if (c == 0x130) {
        out += U'i';
        out += char32_t{0x307};
        return;
    }
    out += static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}

bool normalize(std::string_view text, NormalForm form, std::string& out) {
    int options = UTF8PROC_STABLE;
    switch (form) {
        case NormalForm::nfc: options |= UTF8PROC_COMPOSE; break;
        case NormalForm::nfd: options |= UTF8PROC_DECOMPOSE; break;
        case NormalForm::nfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
        case NormalForm::nfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    if (text.empty()) {
        out.clear();
        return true;
    }
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                            static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                                            static_cast<utf8proc_option_t>(options));
    if (n < 0) return false;
    out.assign(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(n));
    std::free(mapped);
    return true;
}

Regex Regex::compile(std::string_view pattern, std::string& error) {
    int code = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                         PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    Regex r;
    if (!compiled) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        error = std::string(reinterpret_cast<const char*>(message)) + " at offset " + std::to_string(offset);
        return r;
    }
    pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);  // the interpreter runs it when JIT is not available
    r.code_ = std::shared_ptr<void>(compiled, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
    return r;
}

Regex Regex::literal(std::string_view text, std::string& error) {
    // \Q…\E quotes everything but "\E" itself, which is written outside the quotes.
    std::string pattern;
    std::size_t from = 0;
    for (std::size_t at; (at = text.find("\\E", from)) != std::string_view::npos; from = at + 2)
        pattern += "\\Q" + std::string(text.substr(from, at - from)) + "\\E\\\\E";
    pattern += "\\Q" + std::string(text.substr(from)) + "\\E";
    return compile(pattern, error);
}

bool Regex::find_all(std::string_view text, std::vector<Span>& out) const {
    out.clear();
    if (!code_) return false;
    const auto* code = static_cast<const pcre2_code*>(code_.get());
    const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(
        pcre2_match_data_create_from_pattern(code, nullptr), pcre2_match_data_free);
    if (!data) return false;
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t at = 0;
    while (at <= text.size()) {
        const int rc = pcre2_match(code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) return true;
        if (rc < 0) return false;
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
        const Span m{ovector[0], ovector[1]};
        if (m.end < m.begin) return false;  // \K in a look-ahead can end a match before its start
        out.push_back(m);
        if (m.end > m.begin) {
            at = m.end;
        } else {
            if (m.end >= text.size()) return true;
            at = m.end + utf8_length(static_cast<unsigned char>(text[m.end]));
        }
    }
    return true;
}

bool Regex::replace_all(std::string& text, std::string_view content) const {
    std::vector<Span> matches;
    if (!find_all(text, matches)) return false;
    if (matches.empty()) return true;
    std::string out;
    std::size_t at = 0;
    for (const Span& m : matches) {
        out.append(text, at, m.begin - at);
        out += content;
        at = m.end;
    }
    out.append(text, at);
    text = std::move(out);
    return true;
}

}  // namespace attnviz::model
