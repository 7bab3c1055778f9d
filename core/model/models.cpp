// The models of tokenizer.json (see pipeline.hpp): BPE, WordPiece and WordLevel.
#include <cstdio>
#include <functional>
#include <queue>
#include <utility>

#include "core/model/pipeline.hpp"

namespace attnviz::model {

void Vocab::reserve(std::size_t n) {
    ids_.reserve(n);
    pieces_.reserve(n);
}

void Vocab::add(std::string piece, std::int32_t id) {
    pieces_[id] = piece;
    ids_[std::move(piece)] = id;
}

std::optional<std::int32_t> Vocab::id(std::string_view piece) const {
    const auto it = ids_.find(piece);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

const std::string* Vocab::piece(std::int32_t id) const {
    const auto it = pieces_.find(id);
    return it == pieces_.end() ? nullptr : &it->second;
}

namespace {

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (std::uint64_t{static_cast<std::uint32_t>(left)} << 32) | static_cast<std::uint32_t>(right);
}

// The pieces of a word's tokens.
void emit(const Vocab& vocab, const std::vector<std::int32_t>& ids, std::vector<Token>& out) {
    for (const std::int32_t id : ids) {
        const std::string* piece = vocab.piece(id);
        out.push_back({id, piece ? *piece : std::string()});
    }
}

class Bpe final : public Model {
public:
    Bpe(Vocab vocab, BpeOptions options) : vocab_(std::move(vocab)), o_(std::move(options)) {}

    // The merge table: the pair's ids → (rank, the merged token's id). A later duplicate of a pair
    // takes its rank, as in the tokenizers library.
    bool add_merges(const std::vector<BpeMerge>& merges, std::string& error) {
        const std::size_t prefix = o_.continuing_subword_prefix.size();
        merges_.reserve(merges.size());
        std::string merged;
        for (std::size_t rank = 0; rank < merges.size(); ++rank) {
            const BpeMerge& m = merges[rank];
            const auto left = vocab_.id(m.left), right = vocab_.id(m.right);
            const std::string where = "merges[" + std::to_string(rank) + "]: ";
            if (!left || !right) {
                error = where + "\"" + (left ? m.right : m.left) + "\" is not in the vocabulary";
                return false;
            }
            if (m.right.size() < prefix) {
                error = where + "\"" + m.right + "\" is shorter than the continuing_subword_prefix";
                return false;
            }
            merged.assign(m.left).append(m.right, prefix);
            const auto id = vocab_.id(merged);
            if (!id) {
                error = where + "the merged token \"" + merged + "\" is not in the vocabulary";
                return false;
            }
            merges_[pair_key(*left, *right)] = {static_cast<std::int32_t>(rank), *id};
        }
        if (o_.unk_token && !vocab_.id(*o_.unk_token)) {
            error = "the unk_token \"" + *o_.unk_token + "\" is not in the vocabulary";
            return false;
        }
        return true;
    }

    void tokenize(std::string_view word, std::vector<Token>& out, Failure&) const override {
        if (word.empty()) return;
        if (o_.ignore_merges) {
            if (const auto id = vocab_.id(word)) return out.push_back({*id, std::string(word)});
        }
        {
            const std::lock_guard<std::mutex> lock(cache_mutex_);
            const auto hit = cache_.find(std::string(word));
            if (hit != cache_.end()) return emit(vocab_, hit->second, out);
        }
        std::vector<std::int32_t> ids = merge_word(word);
        emit(vocab_, ids, out);
        if (word.size() < max_cached_word) {
            const std::lock_guard<std::mutex> lock(cache_mutex_);
            if (cache_.size() < cache_capacity) cache_.emplace(std::string(word), std::move(ids));
        }
    }

    const Vocab& vocab() const override { return vocab_; }

private:
    static constexpr std::size_t cache_capacity = 10000;  // words remembered, as in the tokenizers library
    static constexpr std::size_t max_cached_word = 256;   // bytes

    struct Symbol {
        std::int32_t id;
        int prev, next;  // -1 at the ends
        bool gone = false;
    };

    // The word's characters as tokens (with the prefix, the suffix, byte fallback or the unknown
    // token), then merged by rank, the lowest first and, among equals, the leftmost first.
    std::vector<std::int32_t> merge_word(std::string_view word) const {
        std::vector<Symbol> symbols;
        std::optional<std::int32_t> unk;  // a pending unknown token (fused with the next if fuse_unk)
        const auto push = [&](std::int32_t id) {
            const int n = static_cast<int>(symbols.size());
            symbols.push_back({id, n - 1, n + 1});
        };
        const auto flush_unk = [&] {
            if (unk) push(*unk);
            unk.reset();
        };
        for (std::size_t at = 0; at < word.size();) {
            const std::size_t len = std::min(utf8_length(static_cast<unsigned char>(word[at])), word.size() - at);
            std::string s(word.substr(at, len));
            if (at > 0) s.insert(0, o_.continuing_subword_prefix);
            at += len;
            if (at == word.size()) s += o_.end_of_word_suffix;
            if (const auto id = vocab_.id(s)) {
                flush_unk();
                push(*id);
                continue;
            }
            if (o_.byte_fallback && byte_tokens(s, push)) continue;
            if (o_.unk_token) {
                if (unk && !o_.fuse_unk) flush_unk();
                unk = vocab_.id(*o_.unk_token);
            }
        }
        flush_unk();
        if (!symbols.empty()) symbols.back().next = -1;

        struct Candidate {
            std::int32_t rank;
            int pos;
            std::int32_t new_id;
            bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
        const auto consider = [&](int pos) {
            const int next = symbols[static_cast<std::size_t>(pos)].next;
            if (next < 0) return;
            const auto it = merges_.find(
                pair_key(symbols[static_cast<std::size_t>(pos)].id, symbols[static_cast<std::size_t>(next)].id));
            if (it != merges_.end()) queue.push({it->second.first, pos, it->second.second});
        };
        for (int pos = 0; pos + 1 < static_cast<int>(symbols.size()); ++pos) consider(pos);
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            Symbol& left = symbols[static_cast<std::size_t>(top.pos)];
            if (left.gone || left.next < 0) continue;
            Symbol& right = symbols[static_cast<std::size_t>(left.next)];
            // A stale candidate: its pair has changed since it was queued.
            const auto it = merges_.find(pair_key(left.id, right.id));
            if (it == merges_.end() || it->second.second != top.new_id) continue;
            left.id = top.new_id;
            right.gone = true;
            left.next = right.next;
            if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = top.pos;
            if (left.prev >= 0) consider(left.prev);
            consider(top.pos);
        }
        std::vector<std::int32_t> ids;
        for (const Symbol& s : symbols)
            if (!s.gone) ids.push_back(s.id);
        return ids;
    }

    // The bytes of `s` as the tokens <0x00> … <0xFF>, if the vocabulary has every one.
    template <class Push>
    bool byte_tokens(const std::string& s, Push& push) const {
        std::vector<std::int32_t> ids;
        for (const char c : s) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(c));
            const auto id = vocab_.id(name);
            if (!id) return false;
            ids.push_back(*id);
        }
        for (const std::int32_t id : ids) push(id);
        return true;
    }

    Vocab vocab_;
    BpeOptions o_;
    std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> merges_;
    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<std::int32_t>> cache_;
};

// Greedy longest match from the start of the word; the rest of the word continues with the prefix
// ("##"). A word that cannot be covered, or is longer than the limit, is the unknown token.
class WordPiece final : public Model {
public:
    WordPiece(Vocab vocab, std::string unk, std::string prefix, std::size_t max_chars)
        : vocab_(std::move(vocab)), unk_(std::move(unk)), prefix_(std::move(prefix)), max_chars_(max_chars) {}

    void tokenize(std::string_view word, std::vector<Token>& out, Failure& failure) const override {
        std::u32string chars;
        decode_utf8(word, chars);
        std::vector<Token> pieces;
        bool bad = chars.size() > max_chars_;
        for (std::size_t start = 0; !bad && start < word.size();) {
            std::size_t end = word.size();
            std::optional<Token> found;
            while (start < end) {
                std::string sub(word.substr(start, end - start));
                if (start > 0) sub.insert(0, prefix_);
                if (const auto id = vocab_.id(sub)) {
                    found = Token{*id, std::move(sub)};
                    break;
                }
                // One character shorter.
                do --end;
                while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
            }
            if (!found)
                bad = true;
            else
                pieces.push_back(std::move(*found));
            start = end;
        }
        if (!bad) {
            out.insert(out.end(), pieces.begin(), pieces.end());
            return;
        }
        const auto unk = vocab_.id(unk_);
        if (!unk) return failure.set("the WordPiece unk_token \"" + unk_ + "\" is not in the vocabulary");
        out.push_back({*unk, unk_});
    }

    const Vocab& vocab() const override { return vocab_; }

private:
    Vocab vocab_;
    std::string unk_, prefix_;
    std::size_t max_chars_;
};

// One token per word: the word itself, else the unknown token.
class WordLevel final : public Model {
public:
    WordLevel(Vocab vocab, std::string unk) : vocab_(std::move(vocab)), unk_(std::move(unk)) {}
    void tokenize(std::string_view word, std::vector<Token>& out, Failure& failure) const override {
        if (const auto id = vocab_.id(word)) return out.push_back({*id, std::string(word)});
        const auto unk = vocab_.id(unk_);
        if (!unk) return failure.set("the WordLevel unk_token \"" + unk_ + "\" is not in the vocabulary");
        out.push_back({*unk, unk_});
    }
    const Vocab& vocab() const override { return vocab_; }

private:
    Vocab vocab_;
    std::string unk_;
};

}  // namespace

ModelPtr bpe_model(Vocab vocab, const std::vector<BpeMerge>& merges, const BpeOptions& options, std::string& error) {
    auto bpe = std::make_unique<Bpe>(std::move(vocab), options);
    if (!bpe->add_merges(merges, error)) return nullptr;
    return bpe;
}

ModelPtr wordpiece_model(Vocab vocab, std::string unk_token, std::string continuing_subword_prefix,
                         std::size_t max_input_chars_per_word, std::string&) {
    return std::make_unique<WordPiece>(std::move(vocab), std::move(unk_token), std::move(continuing_subword_prefix),
                                       max_input_chars_per_word);
}

ModelPtr wordlevel_model(Vocab vocab, std::string unk_token, std::string&) {
    return std::make_unique<WordLevel>(std::move(vocab), std::move(unk_token));
}

}  // namespace attnviz::model
