// Unicode for the tokenizers (internal to core/model): UTF-8 to code points and back, the general
// categories and the normalization forms from utf8proc, and regular expressions from PCRE2 with
// Unicode properties (\p{L}, \p{N}) and look-ahead. Every Unicode fact comes from those two
// libraries; nothing here is a table of characters.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::model {

// The code points of valid UTF-8 (false, with `out` unspecified, for anything else: stray or
// missing continuation bytes, overlong forms, surrogates, values past U+10FFFF).
bool decode_utf8(std::string_view text, std::u32string& out);
bool valid_utf8(std::string_view text);
// Where the first invalid byte of `text` is (text.size() when it is all valid).
std::size_t invalid_utf8_at(std::string_view text);
std::string encode_utf8(std::u32string_view chars);  // each by core::append_utf8
// The byte length of the UTF-8 sequence starting with `lead` (1 for a byte that starts none).
std::size_t utf8_length(unsigned char lead);

// General categories (utf8proc, the Unicode version it was built with).
bool is_letter(char32_t c);             // L*
bool is_mark(char32_t c);               // Mn, Mc, Me
bool is_nonspacing_mark(char32_t c);    // Mn
bool is_numeric(char32_t c);            // Nd, Nl, No
bool is_punctuation(char32_t c);        // Pc, Pd, Ps, Pe, Pi, Pf, Po
bool is_other(char32_t c);              // Cc, Cf, Cs, Co, Cn (unassigned)
bool is_ascii_punctuation(char32_t c);  // !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
// The White_Space property: the separators Zs, Zl, Zp and the controls U+0009–U+000D and U+0085.
bool is_whitespace(char32_t c);

// A character of \w as Unicode's regular expressions (UTS #18) define it: Alphabetic, a mark, a
// decimal digit, connector punctuation or a joiner.
bool is_word_char(char32_t c);

// Lower case as a string: the simple mapping of UnicodeData, except U+0130 (İ), whose lower case is
// two code points ("i" and U+0307), the only unconditional multi-character mapping of
// SpecialCasing.txt.
void append_lowercase(std::u32string& out, char32_t c);

enum class NormalForm { nfc, nfd, nfkc, nfkd };
// `text` (valid UTF-8) in the normal form; false when utf8proc fails (out of memory).
bool normalize(std::string_view text, NormalForm form, std::string& out);

// A byte range of a text: [begin, end).
struct Span {
    std::size_t begin = 0, end = 0;
};

// A compiled PCRE2 pattern in UTF mode with Unicode properties (PCRE2_UTF | PCRE2_UCP): \s, \w and
// \d follow Unicode, \p{L} and \p{N} are the categories. Cheap to copy (the code is shared).
class Regex {
public:
    Regex() = default;
    // The pattern compiled, or "" in `error` with the reason ("missing ) at offset 4").
    static Regex compile(std::string_view pattern, std::string& error);
    // The same for a literal string: every character matched as itself.
    static Regex literal(std::string_view text, std::string& error);

    bool valid() const { return code_ != nullptr; }
    // Every match in `text` (valid UTF-8), leftmost first and not overlapping; after an empty
    // match the search goes on one character later. False when PCRE2 gives up (its match limit).
    bool find_all(std::string_view text, std::vector<Span>& out) const;
    // Every match of find_all() in `text` replaced by `content`; false (and `text` unchanged) when
    // PCRE2 gives up.
    bool replace_all(std::string& text, std::string_view content) const;

private:
    std::shared_ptr<void> code_;  // pcre2_code_8
};

}  // namespace attnviz::model
