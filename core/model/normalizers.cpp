// The normalizers of tokenizer.json (see pipeline.hpp).
#include <utility>

#include "core/model/pipeline.hpp"

namespace attnviz::model {

namespace {

// The text's code points rewritten one by one: `map` appends what a code point becomes.
template <class Map>
void map_chars(std::string& text, Failure& failure, Map map) {
    std::u32string chars, out;
    if (!decode_utf8(text, chars)) return failure.set("a normalizer was given text that is not UTF-8");
    out.reserve(chars.size());
    for (const char32_t c : chars) map(c, out);
    text = encode_utf8(out);
}

void to_form(std::string& text, NormalForm form, Failure& failure) {
    std::string out;
    if (!normalize(text, form, out)) return failure.set("Unicode normalization failed");
    text = std::move(out);
}

// CJK ideographs as BERT defines them: the Unicode blocks of CJK Unified Ideographs (and their
// extensions A to E) and of CJK Compatibility Ideographs (and their supplement).
bool is_chinese_char(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

class BertNormalizer final : public Normalizer {
public:
    explicit BertNormalizer(const BertNormalizerOptions& o) : o_(o) {}
    void normalize(std::string& text, Failure& failure) const override {
        if (o_.clean_text || o_.handle_chinese_chars) {
            map_chars(text, failure, [this](char32_t c, std::u32string& out) {
                if (o_.clean_text) {
                    const bool tab_or_newline = c == '\t' || c == '\n' || c == '\r';
                    if (c == 0 || c == 0xFFFD || (!tab_or_newline && is_other(c))) return;
                    if (tab_or_newline || is_whitespace(c)) c = ' ';
                }
                if (o_.handle_chinese_chars && is_chinese_char(c)) {
                    out += U' ';
                    out += c;
                    out += U' ';
                } else {
                    out += c;
                }
            });
        }
        if (o_.strip_accents.value_or(o_.lowercase)) {
            to_form(text, NormalForm::nfd, failure);
            map_chars(text, failure, [](char32_t c, std::u32string& out) {
                if (!is_nonspacing_mark(c)) out += c;
            });
        }
        if (o_.lowercase) map_chars(text, failure, [](char32_t c, std::u32string& out) { append_lowercase(out, c); });
    }

private:
    BertNormalizerOptions o_;
};

class UnicodeNormalizer final : public Normalizer {
public:
    explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
    void normalize(std::string& text, Failure& failure) const override { to_form(text, form_, failure); }

private:
    NormalForm form_;
};

class Lowercase final : public Normalizer {
public:
    void normalize(std::string& text, Failure& failure) const override {
        map_chars(text, failure, [](char32_t c, std::u32string& out) { append_lowercase(out, c); });
    }
};

class StripAccents final : public Normalizer {
public:
    void normalize(std::string& text, Failure& failure) const override {
        map_chars(text, failure, [](char32_t c, std::u32string& out) {
            if (!is_mark(c)) out += c;
        });
    }
};

class Strip final : public Normalizer {
public:
    Strip(bool left, bool right) : left_(left), right_(right) {}
    void normalize(std::string& text, Failure& failure) const override {
        std::u32string chars;
        if (!decode_utf8(text, chars)) return failure.set("a normalizer was given text that is not UTF-8");
        std::size_t begin = 0, end = chars.size();
        if (left_)
            while (begin < end && is_whitespace(chars[begin])) ++begin;
        if (right_)
            while (end > begin && is_whitespace(chars[end - 1])) --end;
        text = encode_utf8(std::u32string_view(chars).substr(begin, end - begin));
    }

private:
    bool left_, right_;
};

class Replace final : public Normalizer {
public:
    Replace(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
    void normalize(std::string& text, Failure& failure) const override {
        if (!pattern_.replace_all(text, content_)) failure.set("the Replace normalizer's pattern failed to match");
    }

private:
    Regex pattern_;
    std::string content_;
};

class Prepend final : public Normalizer {
public:
    explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
    void normalize(std::string& text, Failure&) const override {
        if (!text.empty()) text.insert(0, prefix_);
    }

private:
    std::string prefix_;
};

class Sequence final : public Normalizer {
public:
    explicit Sequence(std::vector<NormalizerPtr> normalizers) : normalizers_(std::move(normalizers)) {}
    void normalize(std::string& text, Failure& failure) const override {
        for (const NormalizerPtr& n : normalizers_) n->normalize(text, failure);
    }

private:
    std::vector<NormalizerPtr> normalizers_;
};

}  // namespace

NormalizerPtr bert_normalizer(const BertNormalizerOptions& options) {
    return std::make_unique<BertNormalizer>(options);
}
NormalizerPtr unicode_normalizer(NormalForm form) { return std::make_unique<UnicodeNormalizer>(form); }
NormalizerPtr lowercase_normalizer() { return std::make_unique<Lowercase>(); }
NormalizerPtr strip_accents_normalizer() { return std::make_unique<StripAccents>(); }
NormalizerPtr strip_normalizer(bool left, bool right) { return std::make_unique<Strip>(left, right); }
NormalizerPtr replace_normalizer(Regex pattern, std::string content) {
    return std::make_unique<Replace>(std::move(pattern), std::move(content));
}
NormalizerPtr prepend_normalizer(std::string prefix) { return std::make_unique<Prepend>(std::move(prefix)); }
NormalizerPtr sequence_normalizer(std::vector<NormalizerPtr> normalizers) {
    return std::make_unique<Sequence>(std::move(normalizers));
}

}  // namespace attnviz::model
