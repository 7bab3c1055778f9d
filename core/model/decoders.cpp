// The decoders of tokenizer.json (see pipeline.hpp).
#include <utility>

#include "core/base/utf8.hpp"
#include "core/model/pipeline.hpp"

namespace attnviz::model {

namespace {

const std::string replacement_character = "\xEF\xBF\xBD";  // U+FFFD

// How many bytes at the start of `b` (not valid UTF-8 there) one U+FFFD stands for: the longest
// start of a well-formed sequence, at least one byte (the "maximal subpart" of Unicode §3.9).
std::size_t invalid_run(std::string_view b) {
    const auto lead = static_cast<unsigned char>(b[0]);
    const std::size_t len = utf8_length(lead);
    if (len == 1 || lead < 0xC2 || lead > 0xF4) return 1;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
    std::size_t k = 1;
    for (; k < len && k < b.size(); ++k) {
        const auto c = static_cast<unsigned char>(b[k]);
        if (k == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) break;
    }
    return k;
}

// Bytes as text, each invalid stretch as U+FFFD (as Rust's String::from_utf8_lossy).
std::string lossy_utf8(std::string_view bytes) {
    std::string out;
    while (!bytes.empty()) {
        const std::size_t bad = invalid_utf8_at(bytes);
        out.append(bytes.substr(0, bad));
        if (bad == bytes.size()) break;
        out += replacement_character;
        bytes.remove_prefix(bad + invalid_run(bytes.substr(bad)));
    }
    return out;
}

class ByteLevelDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& pieces) const override {
        std::string bytes, piece_bytes;
        for (const std::string& p : pieces) bytes += byte_level_bytes(p, piece_bytes) ? piece_bytes : p;
        pieces.assign(1, lossy_utf8(bytes));
    }
};

class WordPieceDecoder final : public Decoder {
public:
    WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            std::string& p = pieces[i];
            if (i != 0) {
                if (p.compare(0, prefix_.size(), prefix_) == 0)
                    p.erase(0, prefix_.size());
                else
                    p.insert(0, " ");
            }
            if (cleanup_) p = cleaned(p);
        }
    }

private:
    // The spaces before punctuation and contractions that joining with spaces put there.
    static std::string cleaned(std::string s) {
        static const std::pair<const char*, const char*> rules[] = {
            {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
            {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto& [from, to] : rules) {
            const std::string f = from, t = to;
            std::string out;
            std::size_t at = 0;
            for (std::size_t hit; (hit = s.find(f, at)) != std::string::npos; at = hit + f.size())
                out += s.substr(at, hit - at) + t;
            s = out + s.substr(at);
        }
        return s;
    }
    std::string prefix_;
    bool cleanup_;
};

class MetaspaceDecoder final : public Decoder {
public:
    MetaspaceDecoder(char32_t replacement, PrependScheme scheme) : replacement_(replacement), scheme_(scheme) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            std::u32string chars;
            if (!decode_utf8(pieces[i], chars)) continue;
            std::u32string out;
            for (const char32_t c : chars) {
                if (c != replacement_)
                    out += c;
                else if (i != 0 || scheme_ == PrependScheme::never)
                    out += U' ';
            }
            pieces[i] = encode_utf8(out);
        }
    }

private:
    char32_t replacement_;
    PrependScheme scheme_;
};

// <0x41><0xC3><0xA9> → "Aé": runs of byte tokens become their text, or one U+FFFD per byte when
// the run is not UTF-8.
class ByteFallbackDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& pieces) const override {
        std::vector<std::string> out;
        std::string run;
        std::size_t run_length = 0;
        const auto flush = [&] {
            if (run_length == 0) return;
            if (valid_utf8(run))
                out.push_back(run);
            else
                for (std::size_t k = 0; k < run_length; ++k) out.push_back(replacement_character);
            run.clear();
            run_length = 0;
        };
        for (std::string& p : pieces) {
            int byte = -1;
            if (p.size() == 6 && p.compare(0, 3, "<0x") == 0 && p[5] == '>') byte = hex_byte(p[3], p[4]);
            if (byte >= 0) {
                run += static_cast<char>(byte);
                ++run_length;
            } else {
                flush();
                out.push_back(std::move(p));
            }
        }
        flush();
        pieces = std::move(out);
    }

private:
    static int hex_digit(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    static int hex_byte(char hi, char lo) {
        const int h = hex_digit(hi), l = hex_digit(lo);
        return h < 0 || l < 0 ? -1 : h * 16 + l;
    }
};

class FuseDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& pieces) const override {
        std::string all;
        for (const std::string& p : pieces) all += p;
        pieces.assign(1, all);
    }
};

// Up to `start` leading and `stop` trailing copies of `content` removed from each piece.
class StripDecoder final : public Decoder {
public:
    StripDecoder(char32_t content, std::size_t start, std::size_t stop)
        : content_(content), start_(start), stop_(stop) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (std::string& p : pieces) {
            std::u32string chars;
            if (!decode_utf8(p, chars)) continue;
            std::size_t begin = 0, end = chars.size();
            while (begin < std::min(start_, chars.size()) && chars[begin] == content_) ++begin;
            for (std::size_t k = 0; k < stop_ && end > begin && chars[end - 1] == content_; ++k) --end;
            p = encode_utf8(std::u32string_view(chars).substr(begin, end - begin));
        }
    }

private:
    char32_t content_;
    std::size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
public:
    ReplaceDecoder(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (std::string& p : pieces) pattern_.replace_all(p, content_);  // a piece PCRE2 gives up on stays as it is
    }

private:
    Regex pattern_;
    std::string content_;
};

// The end-of-word suffix ("</w>") becomes a space, except on the last piece.
class BpeDecoder final : public Decoder {
public:
    explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            const std::string with = i + 1 == pieces.size() ? "" : " ";
            std::string& p = pieces[i];
            std::string out;
            std::size_t at = 0;
            for (std::size_t hit; !suffix_.empty() && (hit = p.find(suffix_, at)) != std::string::npos;
                 at = hit + suffix_.size())
                out += p.substr(at, hit - at) + with;
            p = out + p.substr(at);
        }
    }

private:
    std::string suffix_;
};

class SequenceDecoder final : public Decoder {
public:
    explicit SequenceDecoder(std::vector<DecoderPtr> decoders) : decoders_(std::move(decoders)) {}
    void decode(std::vector<std::string>& pieces) const override {
        for (const DecoderPtr& d : decoders_) d->decode(pieces);
    }

private:
    std::vector<DecoderPtr> decoders_;
};

}  // namespace

DecoderPtr byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }
DecoderPtr wordpiece_decoder(std::string prefix, bool cleanup) {
    return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
}
DecoderPtr metaspace_decoder(char32_t replacement, PrependScheme scheme) {
    return std::make_unique<MetaspaceDecoder>(replacement, scheme);
}
DecoderPtr byte_fallback_decoder() { return std::make_unique<ByteFallbackDecoder>(); }
DecoderPtr fuse_decoder() { return std::make_unique<FuseDecoder>(); }
DecoderPtr strip_decoder(char32_t content, std::size_t start, std::size_t stop) {
    return std::make_unique<StripDecoder>(content, start, stop);
}
DecoderPtr replace_decoder(Regex pattern, std::string content) {
    return std::make_unique<ReplaceDecoder>(std::move(pattern), std::move(content));
}
DecoderPtr bpe_decoder(std::string suffix) { return std::make_unique<BpeDecoder>(std::move(suffix)); }
DecoderPtr sequence_decoder(std::vector<DecoderPtr> decoders) {
    return std::make_unique<SequenceDecoder>(std::move(decoders));
}

}  // namespace attnviz::model
