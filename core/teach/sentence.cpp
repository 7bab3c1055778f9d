#include "core/teach/sentence.hpp"

#include <algorithm>
#include <cmath>

#include "core/base/splitmix.hpp"
#include "core/base/utf8.hpp"

namespace attnviz::core {

namespace {

// A code point and where its bytes are in the text.
struct CodePoint {
    char32_t c;
    size_t begin, end;
};

// The code points of valid UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF), or the
// offset of the first byte that is not.
Result<std::vector<CodePoint>> decode(std::string_view s) {
    std::vector<CodePoint> out;
    size_t k = 0;
    const auto bad = [&](size_t at) {
        return Result<std::vector<CodePoint>>::fail(
            {{"sentence", "not valid UTF-8 (byte " + std::to_string(at + 1) + " of the text)"}});
    };
    while (k < s.size()) {
        const auto b = static_cast<unsigned char>(s[k]);
        int extra = 0;
        char32_t c = 0;
        unsigned char lo = 0x80, hi = 0xBF;  // the range of the byte after the first
        if (b < 0x80) {
            c = b;
        } else if (b >= 0xC2 && b <= 0xDF) {
            extra = 1;
            c = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            extra = 2;
            c = b & 0x0F;
            if (b == 0xE0) lo = 0xA0;  // no overlong forms
            if (b == 0xED) hi = 0x9F;  // no surrogates
        } else if (b >= 0xF0 && b <= 0xF4) {
            extra = 3;
            c = b & 0x07;
            if (b == 0xF0) lo = 0x90;
            if (b == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
        } else {
            return bad(k);
        }
        if (k + static_cast<size_t>(extra) >= s.size()) return bad(k);  // cut short
        for (int e = 1; e <= extra; ++e) {
            const auto next = static_cast<unsigned char>(s[k + static_cast<size_t>(e)]);
            if (next < (e == 1 ? lo : 0x80) || next > (e == 1 ? hi : 0xBF)) return bad(k + static_cast<size_t>(e));
            c = (c << 6) | (next & 0x3F);
        }
        out.push_back({c, k, k + 1 + static_cast<size_t>(extra)});
        k += 1 + static_cast<size_t>(extra);
    }
    return Result<std::vector<CodePoint>>::ok(std::move(out));
}

// White space (and control characters) separates tokens.
bool is_space(char32_t c) {
    return c <= 0x20 || c == 0x7F || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200B) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

// Punctuation: ASCII's, Latin-1's (¡ § « ¶ · » ¿), the General Punctuation block (dashes, quotes,
// …), CJK's (、。「」) and their full-width forms.
bool is_punctuation(char32_t c) {
    if (c < 0x80) return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || c >= 0x7B;
    return c == 0xA1 || c == 0xA7 || c == 0xAB || c == 0xB6 || c == 0xB7 || c == 0xBB || c == 0xBF ||
           (c >= 0x2010 && c <= 0x205E) || (c >= 0x3001 && c <= 0x3011) || (c >= 0xFF01 && c <= 0xFF0F) ||
           (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65);
}

bool is_word(char32_t c) { return !is_space(c) && !is_punctuation(c); }

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

// Whether `c` joins the characters on either side into one word: an apostrophe or a hyphen between
// letters ("don't", "l’homme", "well-known"), a decimal point or comma between digits ("3.14").
bool joins(char32_t before, char32_t c, char32_t after) {
    if (c == '.' || c == ',') return is_digit(before) && is_digit(after);
    return (c == '\'' || c == 0x2019 || c == '-' || c == 0x2010) && is_word(before) && is_word(after);
}

}  // namespace

Result<std::vector<std::string>> sentence_tokens(std::string_view sentence) {
    using R = Result<std::vector<std::string>>;
    const Result<std::vector<CodePoint>> decoded = decode(sentence);
    if (!decoded) return R::fail(decoded.problems);
    const std::vector<CodePoint>& cp = *decoded.value;
    std::vector<std::string> tokens;
    size_t k = 0;
    while (k < cp.size()) {
        if (is_space(cp[k].c)) {
            ++k;
            continue;
        }
        const size_t start = k;
        if (is_word(cp[k].c)) {
            while (k < cp.size() &&
                   (is_word(cp[k].c) || (k + 1 < cp.size() && joins(cp[k - 1].c, cp[k].c, cp[k + 1].c))))
                ++k;
        } else {
            while (k < cp.size() && cp[k].c == cp[start].c) ++k;  // "..." and "!!" stay one token
        }
        tokens.emplace_back(sentence.substr(cp[start].begin, cp[k - 1].end - cp[start].begin));
    }
    if (tokens.empty()) return R::fail({{"sentence", "the sentence is empty: type a few words"}});
    if (static_cast<int>(tokens.size()) > max_sentence_tokens)
        return R::fail({{"sentence", "the sentence has " + std::to_string(tokens.size()) +
                                         " tokens (words and punctuation); a sentence session takes at most " +
                                         std::to_string(max_sentence_tokens)}});
    return R::ok(std::move(tokens));
}

std::string lower_case(std::string_view word) {
    const Result<std::vector<CodePoint>> decoded = decode(word);
    if (!decoded) return std::string(word);
    std::string out;
    for (const CodePoint& p : *decoded.value) {
        const bool capital = (p.c >= 'A' && p.c <= 'Z') || (p.c >= 0xC0 && p.c <= 0xDE && p.c != 0xD7);
        append_utf8(out, capital ? p.c + 0x20 : p.c);
    }
    return out;
}

Matrix word_embedding(std::string_view word, int d_model) {
    // FNV-1a, 64 bits, of the lower-cased word's UTF-8 bytes.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char ch : lower_case(word)) {
        h ^= static_cast<unsigned char>(ch);
        h *= 0x100000001b3ULL;
    }
    SplitMix64 g(h);
    Matrix row(1, std::max(d_model, 0));
    for (int c = 0; c < d_model; ++c) {
        const double v = std::round((2 * g.uniform() - 1) * 100) / 100;
        row(0, c) = v == 0 ? 0.0 : v;  // no −0
    }
    return row;
}

std::vector<std::string> distinct_words(const std::vector<std::string>& tokens) {
    std::vector<std::string> words;
    for (const std::string& t : tokens)
        if (std::string w = lower_case(t); std::find(words.begin(), words.end(), w) == words.end())
            words.push_back(std::move(w));
    return words;
}

Problems sentence_problems(const std::vector<std::string>& tokens, const Config& current, SentenceRows rows) {
    Config config = current;
    config.n = static_cast<int>(tokens.size());
    if (Problems problems = validate(config); !problems.empty()) return problems;
    const size_t words = distinct_words(tokens).size();
    if (rows == SentenceRows::one_hot && static_cast<int>(words) > config.d_model)
        return {{"d_model", "one-hot rows need a column per distinct word: d_model ≥ " + std::to_string(words) +
                                ", but it is " + std::to_string(config.d_model) +
                                ". Raise d_model, or choose embedding rows."}};
    return {};
}

Result<Session> sentence_session(std::string_view sentence, const Session& current, SentenceRows rows) {
    using R = Result<Session>;
    Result<std::vector<std::string>> tokens = sentence_tokens(sentence);
    if (!tokens) return R::fail(tokens.problems);
    if (Problems problems = sentence_problems(*tokens.value, current.config, rows); !problems.empty())
        return R::fail(std::move(problems));
    Config config = current.config;
    config.n = static_cast<int>(tokens.value->size());
    const std::vector<std::string> words = distinct_words(*tokens.value);
    Session s = resized(current, config);
    s.tokens = std::move(*tokens.value);
    for (int i = 0; i < config.n; ++i) {
        const std::string& token = s.tokens[static_cast<size_t>(i)];
        if (rows == SentenceRows::embedding) {
            s.params.X.row(i) = word_embedding(token, config.d_model);
        } else {
            s.params.X.row(i).setZero();
            const auto k = std::find(words.begin(), words.end(), lower_case(token)) - words.begin();
            s.params.X(i, k) = 1;
        }
    }
    return R::ok(std::move(s));
}

}  // namespace attnviz::core
