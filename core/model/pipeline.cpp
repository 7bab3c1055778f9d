// The pipeline of a Hugging Face tokenizer: added tokens, then the stages (see pipeline.hpp).
#include "core/model/pipeline.hpp"

#include <algorithm>
#include <utility>

namespace attnviz::model {

namespace {

// The code point that ends `text` (valid UTF-8, not empty).
char32_t last_char(std::string_view text) {
    std::size_t at = text.size() - 1;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
    std::u32string c;
    decode_utf8(text.substr(at), c);
    return c.empty() ? 0 : c[0];
}

char32_t first_char(std::string_view text) {
    std::u32string c;
    decode_utf8(text.substr(0, std::min(text.size(), utf8_length(static_cast<unsigned char>(text[0])))), c);
    return c.empty() ? 0 : c[0];
}

// Where the whitespace that ends `text` begins (text.size() when there is none).
std::size_t trailing_space_start(std::string_view text) {
    std::size_t at = text.size();
    while (at > 0) {
        std::size_t begin = at - 1;
        while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
        std::u32string c;
        decode_utf8(text.substr(begin, at - begin), c);
        if (c.size() != 1 || !is_whitespace(c[0])) break;
        at = begin;
    }
    return at;
}

// How many bytes of whitespace `text` starts with.
std::size_t leading_space_length(std::string_view text) {
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t len = std::min(utf8_length(static_cast<unsigned char>(text[at])), text.size() - at);
        std::u32string c;
        decode_utf8(text.substr(at, len), c);
        if (c.size() != 1 || !is_whitespace(c[0])) break;
        at += len;
    }
    return at;
}

}  // namespace

void Pipeline::prepare() {
    raw_ = normalized_ = Matcher{};
    raw_.patterns.assign(added_tokens.size(), "");
    normalized_.patterns.assign(added_tokens.size(), "");
    added_by_id_.clear();
    for (std::size_t k = 0; k < added_tokens.size(); ++k) {
        const AddedToken& t = added_tokens[k];
        added_by_id_.emplace(t.id, k);
        if (t.content.empty()) continue;
        Matcher& m = t.normalized ? normalized_ : raw_;
        std::string pattern = t.content;
        if (t.normalized && normalizer) {
            Failure ignored;
            normalizer->normalize(pattern, ignored);
            if (pattern.empty()) continue;
        }
        m.by_first_byte[static_cast<unsigned char>(pattern[0])].push_back(k);
        m.patterns[k] = std::move(pattern);
    }
    for (Matcher* m : {&raw_, &normalized_})
        for (std::vector<std::size_t>& candidates : m->by_first_byte)
            std::stable_sort(candidates.begin(), candidates.end(), [m](std::size_t a, std::size_t b) {
                return m->patterns[a].size() > m->patterns[b].size();
            });
}

// Cuts the pieces around the added tokens they contain: matches leftmost first, the longest at a
// position; a single_word token touching a word character is passed over, lstrip and rstrip take
// the whitespace beside the token with it.
void Pipeline::split_added(Pieces& pieces, const Matcher& matcher) const {
    Pieces out;
    for (Piece& p : pieces) {
        if (p.added || p.text.empty()) {
            if (p.added || !p.text.empty()) out.push_back(std::move(p));
            continue;
        }
        const std::string& text = p.text;
        std::size_t kept = 0;  // the end of what has been emitted
        const auto emit_text = [&](std::size_t begin, std::size_t end) {
            if (end > begin) out.push_back({text.substr(begin, end - begin), p.at_start && begin == 0, {}});
        };
        for (std::size_t at = 0; at < text.size();) {
            std::size_t found = added_tokens.size();
            for (const std::size_t k : matcher.by_first_byte[static_cast<unsigned char>(text[at])]) {
                const std::string& pattern = matcher.patterns[k];
                if (text.compare(at, pattern.size(), pattern) == 0) {
                    found = k;
                    break;
                }
            }
            if (found == added_tokens.size()) {
                ++at;
                continue;
            }
            const AddedToken& t = added_tokens[found];
            std::size_t start = at, stop = at + matcher.patterns[found].size();
            at = stop;
            if (t.single_word) {
                const bool word_before = start > 0 && is_word_char(last_char(std::string_view(text).substr(0, start)));
                const bool word_after = stop < text.size() &&
                                        is_word_char(first_char(std::string_view(text).substr(stop)));
                if (word_before || word_after) continue;
            }
            if (t.lstrip) start = std::max(trailing_space_start(std::string_view(text).substr(0, start)), kept);
            if (t.rstrip) stop += leading_space_length(std::string_view(text).substr(stop));
            emit_text(kept, start);
            out.push_back({text.substr(start, stop - start), p.at_start && start == 0,
                           Token{t.id, text.substr(start, stop - start)}});
            kept = at = stop;
        }
        emit_text(kept, text.size());
    }
    pieces = std::move(out);
}

std::vector<Token> Pipeline::encode(std::string_view text, bool add_special, Failure& failure) const {
    Pieces pieces{{std::string(text), true, {}}};
    split_added(pieces, raw_);
    if (normalizer)
        for (Piece& p : pieces)
            if (!p.added) normalizer->normalize(p.text, failure);
    split_added(pieces, normalized_);
    if (pre_tokenizer) pre_tokenizer->pre_tokenize(pieces, failure);
    std::vector<Token> tokens;
    for (const Piece& p : pieces) {
        if (p.added)
            tokens.push_back(*p.added);
        else if (!p.text.empty())
            model->tokenize(p.text, tokens, failure);
    }
    const std::size_t special = add_special && post_processor ? post_processor->added_tokens() : 0;
    if (truncation && tokens.size() + special > truncation->max_length) {
        const std::size_t keep = truncation->max_length > special ? truncation->max_length - special : 0;
        if (truncation->left)
            tokens.erase(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(keep));
        else
            tokens.resize(keep);
    }
    if (add_special && post_processor) post_processor->process(tokens);
    if (padding) {
        std::size_t length = std::max(tokens.size(), padding->fixed.value_or(0));
        if (padding->multiple > 0 && length % padding->multiple != 0)
            length += padding->multiple - length % padding->multiple;
        const std::vector<Token> pads(length - tokens.size(), padding->pad);
        tokens.insert(padding->left ? tokens.begin() : tokens.end(), pads.begin(), pads.end());
    }
    return tokens;
}

const std::string* Pipeline::piece(std::int32_t id) const {
    const auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) {
        const std::string& normalized = normalized_.patterns[it->second];
        return normalized.empty() ? &added_tokens[it->second].content : &normalized;
    }
    return model->vocab().piece(id);
}

std::string Pipeline::decode(const std::vector<std::int32_t>& ids, bool skip_special) const {
    std::vector<std::string> pieces;
    for (const std::int32_t id : ids) {
        const auto added = added_by_id_.find(id);
        if (skip_special && added != added_by_id_.end() && added_tokens[added->second].special) continue;
        if (const std::string* p = piece(id)) pieces.push_back(*p);
    }
    if (!decoder) {
        std::string out;
        for (std::size_t k = 0; k < pieces.size(); ++k) out += (k ? " " : "") + pieces[k];
        return out;
    }
    decoder->decode(pieces);
    std::string out;
    for (const std::string& p : pieces) out += p;
    return out;
}

}  // namespace attnviz::model
