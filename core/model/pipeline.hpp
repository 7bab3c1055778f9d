// The stages of a Hugging Face tokenizer (internal to core/model), each a small type mirroring the
// one of the `tokenizers` library that tokenizer.json names:
//
//   text ─ added tokens split out ─ normalizer ─ pre-tokenizer ─ model ─ post-processor ─ ids
//   ids ─ pieces ─ decoder ─ text
//
// A text travels as Pieces: byte strings in UTF-8, each either still to be tokenized or already an
// added token. The normalizer rewrites a piece, the pre-tokenizer cuts it into words, the model
// (BPE, WordPiece, WordLevel) turns each word into vocabulary tokens, and the post-processor adds
// the special tokens ([CLS] … [SEP], <s>). Offsets into the original text are not tracked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/unicode.hpp"

namespace attnviz::model {

// A vocabulary entry as the encoder emits it: its id and its piece ("Ġthe", "##ing", "[CLS]").
struct Token {
    std::int32_t id = 0;
    std::string piece;
    bool operator==(const Token&) const = default;
};

// A stretch of the text on its way through the pipeline.
struct Piece {
    std::string text;
    bool at_start = false;       // begins where the original text begins (Metaspace "first")
    std::optional<Token> added;  // an added token: passed through as it is
};
using Pieces = std::vector<Piece>;

// What went wrong while encoding (a pattern PCRE2 gave up on, a word the model cannot take);
// empty while all is well. The first failure is kept.
struct Failure {
    std::string message;
    bool failed() const { return !message.empty(); }
    void set(std::string m) {
        if (message.empty()) message = std::move(m);
    }
};

// ---------------------------------------------------------------------------------------------
// Normalizers: a piece's text rewritten (valid UTF-8 in, valid UTF-8 out).

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual void normalize(std::string& text, Failure& failure) const = 0;
};
using NormalizerPtr = std::unique_ptr<const Normalizer>;

struct BertNormalizerOptions {
    bool clean_text = true;             // drop NUL, U+FFFD and control characters; whitespace → ' '
    bool handle_chinese_chars = true;   // spaces around each CJK ideograph
    std::optional<bool> strip_accents;  // NFD and no non-spacing marks; unset: as `lowercase`
    bool lowercase = true;
};
NormalizerPtr bert_normalizer(const BertNormalizerOptions& options);
NormalizerPtr unicode_normalizer(NormalForm form);
NormalizerPtr lowercase_normalizer();
NormalizerPtr strip_accents_normalizer();  // every combining mark (Mn, Mc, Me) removed
NormalizerPtr strip_normalizer(bool left, bool right);
NormalizerPtr replace_normalizer(Regex pattern, std::string content);
NormalizerPtr prepend_normalizer(std::string prefix);  // before a non-empty text
NormalizerPtr sequence_normalizer(std::vector<NormalizerPtr> normalizers);

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers: pieces cut into words (added tokens pass untouched; empty words are dropped).

// What becomes of the delimiters a split finds (SplitDelimiterBehavior).
enum class Behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    virtual void pre_tokenize(Pieces& pieces, Failure& failure) const = 0;
};
using PreTokenizerPtr = std::unique_ptr<const PreTokenizer>;

enum class PrependScheme { always, first, never };

PreTokenizerPtr byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex);
PreTokenizerPtr split_pre_tokenizer(Regex pattern, Behavior behavior, bool invert);
PreTokenizerPtr bert_pre_tokenizer();
PreTokenizerPtr whitespace_pre_tokenizer();        // \w+|[^\w\s]+
PreTokenizerPtr whitespace_split_pre_tokenizer();  // on whitespace
PreTokenizerPtr metaspace_pre_tokenizer(char32_t replacement, PrependScheme scheme, bool split);
PreTokenizerPtr digits_pre_tokenizer(bool individual_digits);
PreTokenizerPtr punctuation_pre_tokenizer(Behavior behavior);
PreTokenizerPtr char_delimiter_pre_tokenizer(char32_t delimiter);
PreTokenizerPtr sequence_pre_tokenizer(std::vector<PreTokenizerPtr> pre_tokenizers);

// The byte-level alphabet of GPT-2: the character standing for each byte (printable bytes stand for
// themselves, the others for U+0100 onwards), and back.
const std::string& byte_level_char(unsigned char byte);
// The bytes of a byte-level string; false when a character is not of the alphabet.
bool byte_level_bytes(std::string_view text, std::string& bytes);

// ---------------------------------------------------------------------------------------------
// Models: a word to vocabulary tokens.

// token → id, with the reverse.
class Vocab {
public:
    void reserve(std::size_t n);
    void add(std::string piece, std::int32_t id);  // a later piece with the same text wins
    std::optional<std::int32_t> id(std::string_view piece) const;
    const std::string* piece(std::int32_t id) const;
    std::size_t size() const { return ids_.size(); }

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, std::int32_t, Hash, std::equal_to<>> ids_;
    std::unordered_map<std::int32_t, std::string> pieces_;
};

class Model {
public:
    virtual ~Model() = default;
    // Appends the word's tokens; a word the model cannot cover and has no unknown token for is a
    // failure.
    virtual void tokenize(std::string_view word, std::vector<Token>& out, Failure& failure) const = 0;
    virtual const Vocab& vocab() const = 0;
};
using ModelPtr = std::unique_ptr<const Model>;

struct BpeOptions {
    std::optional<std::string> unk_token;
    std::string continuing_subword_prefix, end_of_word_suffix;
    bool fuse_unk = false;
    bool byte_fallback = false;  // a character not in the vocabulary as its bytes <0x41>
    bool ignore_merges = false;  // a word that is a token is that token, merges or not
};
// The merges in rank order (the first merged first). Problems name the merge ("merges[3]: …").
struct BpeMerge {
    std::string left, right;
};
// The BPE model, or a message saying what is wrong with the vocabulary or the merges.
ModelPtr bpe_model(Vocab vocab, const std::vector<BpeMerge>& merges, const BpeOptions& options, std::string& error);
ModelPtr wordpiece_model(Vocab vocab, std::string unk_token, std::string continuing_subword_prefix,
                         std::size_t max_input_chars_per_word, std::string& error);
ModelPtr wordlevel_model(Vocab vocab, std::string unk_token, std::string& error);

// ---------------------------------------------------------------------------------------------
// Post-processors: the special tokens around a sequence.

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    virtual void process(std::vector<Token>& tokens) const = 0;
    virtual std::size_t added_tokens() const = 0;  // how many process() adds (for truncation)
};
using PostProcessorPtr = std::unique_ptr<const PostProcessor>;

// Around the sequence: `before` … `after` (BertProcessing, RobertaProcessing, TemplateProcessing's
// single template); ByteLevel's only trims offsets and adds nothing.
PostProcessorPtr surround_processor(std::vector<Token> before, std::vector<Token> after);
PostProcessorPtr sequence_processor(std::vector<PostProcessorPtr> processors);

// ---------------------------------------------------------------------------------------------
// Decoders: the pieces of the ids back to text, in place (decode_chain).

class Decoder {
public:
    virtual ~Decoder() = default;
    virtual void decode(std::vector<std::string>& pieces) const = 0;
};
using DecoderPtr = std::unique_ptr<const Decoder>;

DecoderPtr byte_level_decoder();
DecoderPtr wordpiece_decoder(std::string prefix, bool cleanup);
DecoderPtr metaspace_decoder(char32_t replacement, PrependScheme scheme);
DecoderPtr byte_fallback_decoder();
DecoderPtr fuse_decoder();
DecoderPtr strip_decoder(char32_t content, std::size_t start, std::size_t stop);
DecoderPtr replace_decoder(Regex pattern, std::string content);
DecoderPtr bpe_decoder(std::string suffix);
DecoderPtr sequence_decoder(std::vector<DecoderPtr> decoders);

// ---------------------------------------------------------------------------------------------
// Added tokens and the whole pipeline.

struct AddedToken {
    std::string content;
    std::int32_t id = 0;
    bool special = false;
    bool single_word = false;  // only where no word character touches it
    bool lstrip = false;       // takes the whitespace before it
    bool rstrip = false;       // takes the whitespace after it
    bool normalized = true;    // matched in the normalized text (else in the original)
};

struct Truncation {
    std::size_t max_length = 0;
    bool left = false;  // drop from the start instead of the end
};
struct Padding {
    std::optional<std::size_t> fixed;  // pad to this length (else only to a multiple, if any)
    std::size_t multiple = 0;          // pad_to_multiple_of
    bool left = false;
    Token pad;
};

struct Pipeline {
    std::vector<AddedToken> added_tokens;
    NormalizerPtr normalizer;
    PreTokenizerPtr pre_tokenizer;
    ModelPtr model;
    PostProcessorPtr post_processor;
    DecoderPtr decoder;
    std::optional<Truncation> truncation;
    std::optional<Padding> padding;

    // Call once the stages are in place: normalizes the added tokens that are matched normalized
    // and indexes them.
    void prepare();

    // `text` is valid UTF-8.
    std::vector<Token> encode(std::string_view text, bool add_special, Failure& failure) const;
    std::string decode(const std::vector<std::int32_t>& ids, bool skip_special) const;
    // The piece of an id: an added token's content, else the model's; nullptr for an unknown id.
    const std::string* piece(std::int32_t id) const;

private:
    struct Matcher {
        // Candidates by first byte, longest first: indices into added_tokens.
        std::vector<std::vector<std::size_t>> by_first_byte = std::vector<std::vector<std::size_t>>(256);
        std::vector<std::string> patterns;  // per added token: what is matched ("" for none here)
    };
    void split_added(Pieces& pieces, const Matcher& matcher) const;
    Matcher raw_, normalized_;
    std::unordered_map<std::int32_t, std::size_t> added_by_id_;
};

}  // namespace attnviz::model
