// The pre-tokenizers of tokenizer.json (see pipeline.hpp).
#include <algorithm>
#include <array>
#include <utility>

#include "core/base/utf8.hpp"
#include "core/model/pipeline.hpp"

namespace attnviz::model {

namespace {

// A text cut into consecutive segments, each a delimiter (is_match) or what lies between two.
struct Segment {
    Span span;
    bool is_match = false;
};
using Segments = std::vector<Segment>;

// The segments of a text of `size` bytes around the matches (leftmost first, not overlapping).
Segments segments_around(std::size_t size, const std::vector<Span>& matches) {
    Segments out;
    std::size_t at = 0;
    for (const Span& m : matches) {
        if (at != m.begin) out.push_back({{at, m.begin}, false});
        out.push_back({m, true});
        at = m.end;
    }
    if (at != size) out.push_back({{at, size}, false});
    return out;
}

// The segments of a text where each character for which `is_delimiter` holds is a delimiter.
template <class Pred>
Segments segments_by_char(std::string_view text, Pred is_delimiter) {
    std::u32string chars;
    decode_utf8(text, chars);
    Segments out;
    std::size_t at = 0, last = 0;
    for (const char32_t c : chars) {
        const std::size_t len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (is_delimiter(c)) {
            if (last < at) out.push_back({{last, at}, false});
            out.push_back({{at, at + len}, true});
            last = at + len;
        }
        at += len;
    }
    if (at > last) out.push_back({{last, at}, false});
    return out;
}

// NormalizedString::split: the segments grouped by the behavior, the pieces appended to `out`.
void split_piece(const Piece& piece, Segments segments, Behavior behavior, Pieces& out) {
    std::vector<std::pair<Span, bool>> kept;  // span, removed
    bool previous_match = false;
    switch (behavior) {
        case Behavior::isolated:
            for (const Segment& s : segments) kept.push_back({s.span, false});
            break;
        case Behavior::removed:
            for (const Segment& s : segments) kept.push_back({s.span, s.is_match});
            break;
        case Behavior::contiguous:
            for (const Segment& s : segments) {
                if (s.is_match == previous_match && !kept.empty())
                    kept.back().first.end = s.span.end;
                else
                    kept.push_back({s.span, false});
                previous_match = s.is_match;
            }
            break;
        case Behavior::merged_with_previous:
            for (const Segment& s : segments) {
                if (s.is_match && !previous_match && !kept.empty())
                    kept.back().first.end = s.span.end;
                else
                    kept.push_back({s.span, false});
                previous_match = s.is_match;
            }
            break;
        case Behavior::merged_with_next:
            for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
                if (s->is_match && !previous_match && !kept.empty())
                    kept.back().first.begin = s->span.begin;
                else
                    kept.push_back({s->span, false});
                previous_match = s->is_match;
            }
            std::reverse(kept.begin(), kept.end());
            break;
    }
    for (const auto& [span, removed] : kept) {
        if (removed || span.end == span.begin) continue;
        out.push_back({piece.text.substr(span.begin, span.end - span.begin), piece.at_start && span.begin == 0, {}});
    }
}

// Every piece still to tokenize replaced by what `split` makes of it (appended to its argument).
template <class Split>
void split_each(Pieces& pieces, Split split) {
    Pieces out;
    out.reserve(pieces.size());
    for (Piece& p : pieces) {
        if (p.added)
            out.push_back(std::move(p));
        else if (!p.text.empty())
            split(p, out);
    }
    pieces = std::move(out);
}

Regex must_compile(std::string_view pattern) {
    std::string error;
    return Regex::compile(pattern, error);
}

// GPT-2's pattern: contractions, letters, digits, other symbols (each with one leading space),
// whitespace not followed by a non-space (so the last space of a run starts the next word).
const Regex& gpt2_pattern() {
    static const Regex re =
        must_compile(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
    return re;
}

class ByteLevel final : public PreTokenizer {
public:
    ByteLevel(bool add_prefix_space, bool use_regex) : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {}
    void pre_tokenize(Pieces& pieces, Failure& failure) const override {
        split_each(pieces, [&](Piece& p, Pieces& out) {
            if (add_prefix_space_ && p.text[0] != ' ') p.text.insert(0, " ");
            if (!use_regex_) return out.push_back(std::move(p));
            std::vector<Span> matches;
            if (!gpt2_pattern().find_all(p.text, matches)) return failure.set("GPT-2's pattern failed to match");
            split_piece(p, segments_around(p.text.size(), matches), Behavior::isolated, out);
        });
        for (Piece& p : pieces) {
            if (p.added) continue;
            std::string mapped;
            mapped.reserve(p.text.size() * 2);
            for (const char b : p.text) mapped += byte_level_char(static_cast<unsigned char>(b));
            p.text = std::move(mapped);
        }
    }

private:
    bool add_prefix_space_, use_regex_;
};

class Split final : public PreTokenizer {
public:
    Split(Regex pattern, Behavior behavior, bool invert)
        : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
    void pre_tokenize(Pieces& pieces, Failure& failure) const override {
        split_each(pieces, [&](Piece& p, Pieces& out) {
            std::vector<Span> matches;
            if (!pattern_.find_all(p.text, matches)) return failure.set("the Split pattern failed to match");
            Segments segments = segments_around(p.text.size(), matches);
            if (invert_)
                for (Segment& s : segments) s.is_match = !s.is_match;
            split_piece(p, std::move(segments), behavior_, out);
        });
    }

private:
    Regex pattern_;
    Behavior behavior_;
    bool invert_;
};

bool is_bert_punctuation(char32_t c) { return is_ascii_punctuation(c) || is_punctuation(c); }

class BertPreTokenizer final : public PreTokenizer {
public:
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        split_each(pieces, [](Piece& p, Pieces& out) {
            split_piece(p, segments_by_char(p.text, is_whitespace), Behavior::removed, out);
        });
        split_each(pieces, [](Piece& p, Pieces& out) {
            split_piece(p, segments_by_char(p.text, is_bert_punctuation), Behavior::isolated, out);
        });
    }
};

// Words (\w+: letters, marks, decimal digits, connector punctuation, as Unicode's regular
// expressions define \w) and runs of other non-space characters; the whitespace is dropped.
class Whitespace final : public PreTokenizer {
public:
    void pre_tokenize(Pieces& pieces, Failure& failure) const override {
        static const Regex words = must_compile(
            R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\s]+)");
        split_each(pieces, [&](Piece& p, Pieces& out) {
            std::vector<Span> matches;
            if (!words.find_all(p.text, matches)) return failure.set("the Whitespace pattern failed to match");
            Segments segments = segments_around(p.text.size(), matches);
            for (Segment& s : segments) s.is_match = !s.is_match;
            split_piece(p, std::move(segments), Behavior::removed, out);
        });
    }
};

template <bool (*Delimiter)(char32_t), Behavior B>
class CharSplit final : public PreTokenizer {
public:
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        split_each(pieces, [](Piece& p, Pieces& out) { split_piece(p, segments_by_char(p.text, Delimiter), B, out); });
    }
};

class Punctuation final : public PreTokenizer {
public:
    explicit Punctuation(Behavior behavior) : behavior_(behavior) {}
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        split_each(pieces, [&](Piece& p, Pieces& out) {
            split_piece(p, segments_by_char(p.text, is_bert_punctuation), behavior_, out);
        });
    }

private:
    Behavior behavior_;
};

class CharDelimiter final : public PreTokenizer {
public:
    explicit CharDelimiter(char32_t delimiter) : delimiter_(delimiter) {}
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        split_each(pieces, [&](Piece& p, Pieces& out) {
            split_piece(p, segments_by_char(p.text, [&](char32_t c) { return c == delimiter_; }), Behavior::removed,
                        out);
        });
    }

private:
    char32_t delimiter_;
};

class Metaspace final : public PreTokenizer {
public:
    Metaspace(char32_t replacement, PrependScheme scheme, bool split)
        : scheme_(scheme), split_(split), replacement_char_(replacement) {
        core::append_utf8(replacement_, replacement);
    }
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        split_each(pieces, [&](Piece& p, Pieces& out) {
            std::string text;
            for (const char c : p.text) {
                if (c == ' ')
                    text += replacement_;
                else
                    text += c;
            }
            const bool starts = text.compare(0, replacement_.size(), replacement_) == 0;
            if (!starts && (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && p.at_start)))
                text.insert(0, replacement_);
            p.text = std::move(text);
            if (!split_) return out.push_back(std::move(p));
            const char32_t r = replacement_char_;
            split_piece(p, segments_by_char(p.text, [r](char32_t c) { return c == r; }), Behavior::merged_with_next,
                        out);
        });
    }

private:
    PrependScheme scheme_;
    bool split_;
    char32_t replacement_char_;
    std::string replacement_;
};

class Digits final : public PreTokenizer {
public:
    explicit Digits(bool individual) : individual_(individual) {}
    void pre_tokenize(Pieces& pieces, Failure&) const override {
        const Behavior b = individual_ ? Behavior::isolated : Behavior::contiguous;
        split_each(pieces,
                   [b](Piece& p, Pieces& out) { split_piece(p, segments_by_char(p.text, is_numeric), b, out); });
    }

private:
    bool individual_;
};

class SequencePre final : public PreTokenizer {
public:
    explicit SequencePre(std::vector<PreTokenizerPtr> stages) : stages_(std::move(stages)) {}
    void pre_tokenize(Pieces& pieces, Failure& failure) const override {
        for (const PreTokenizerPtr& s : stages_) s->pre_tokenize(pieces, failure);
    }

private:
    std::vector<PreTokenizerPtr> stages_;
};

struct ByteLevelAlphabet {
    std::array<std::string, 256> chars;
    std::unordered_map<char32_t, unsigned char> bytes;
    ByteLevelAlphabet() {
        // Printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') are their own code point; the others take
        // U+0100, U+0101, … in byte order.
        char32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const char32_t c = printable ? static_cast<char32_t>(b) : next++;
            core::append_utf8(chars[static_cast<std::size_t>(b)], c);
            bytes[c] = static_cast<unsigned char>(b);
        }
    }
};

const ByteLevelAlphabet& alphabet() {
    static const ByteLevelAlphabet a;
    return a;
}

}  // namespace

const std::string& byte_level_char(unsigned char byte) { return alphabet().chars[byte]; }

bool byte_level_bytes(std::string_view text, std::string& bytes) {
    std::u32string chars;
    if (!decode_utf8(text, chars)) return false;
    bytes.clear();
    for (const char32_t c : chars) {
        const auto it = alphabet().bytes.find(c);
        if (it == alphabet().bytes.end()) return false;
        bytes += static_cast<char>(it->second);
    }
    return true;
}

PreTokenizerPtr byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex) {
    return std::make_unique<ByteLevel>(add_prefix_space, use_regex);
}
PreTokenizerPtr split_pre_tokenizer(Regex pattern, Behavior behavior, bool invert) {
    return std::make_unique<Split>(std::move(pattern), behavior, invert);
}
PreTokenizerPtr bert_pre_tokenizer() { return std::make_unique<BertPreTokenizer>(); }
PreTokenizerPtr whitespace_pre_tokenizer() { return std::make_unique<Whitespace>(); }
PreTokenizerPtr whitespace_split_pre_tokenizer() {
    return std::make_unique<CharSplit<is_whitespace, Behavior::removed>>();
}
PreTokenizerPtr metaspace_pre_tokenizer(char32_t replacement, PrependScheme scheme, bool split) {
    return std::make_unique<Metaspace>(replacement, scheme, split);
}
PreTokenizerPtr digits_pre_tokenizer(bool individual_digits) { return std::make_unique<Digits>(individual_digits); }
PreTokenizerPtr punctuation_pre_tokenizer(Behavior behavior) { return std::make_unique<Punctuation>(behavior); }
PreTokenizerPtr char_delimiter_pre_tokenizer(char32_t delimiter) { return std::make_unique<CharDelimiter>(delimiter); }
PreTokenizerPtr sequence_pre_tokenizer(std::vector<PreTokenizerPtr> pre_tokenizers) {
    return std::make_unique<SequencePre>(std::move(pre_tokenizers));
}

}  // namespace attnviz::model
