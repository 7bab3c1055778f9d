// Tokenizers: text to the token ids a model was trained on, exactly as Hugging Face's tokenizers
// library (and SentencePiece) produce them, and back.
//
// load_tokenizer reads a model folder or a single tokenizer file:
//  - tokenizer.json, the tokenizers library's format (BPE, WordPiece or WordLevel with their
//    normalizers, pre-tokenizers, post-processors, decoders and added tokens: GPT-2, RoBERTa,
//    BERT, Llama 3, Qwen2, Pythia, Gemma, Phi-3, OLMo 2, …), with the BOS/EOS rules of the
//    tokenizer_config.json beside it (SpecialTokenRules);
//  - GPT-2's vocab.json + merges.txt (byte-level BPE);
//  - BERT's vocab.txt (WordPiece, with tokenizer_config.json's do_lower_case beside it);
//  - SentencePiece's tokenizer.model (Llama 2, Mistral).
// A folder is searched in that order. What a file uses that is not supported is refused by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/problem.hpp"

namespace attnviz::model {

// Files larger than this are refused (a real tokenizer.json is at most a few tens of MB).
inline constexpr std::size_t max_tokenizer_bytes = std::size_t{256} << 20;
// Vocabularies (and merge lists) longer than this are refused (real ones have up to 256 000).
inline constexpr std::size_t max_vocab_entries = 4'000'000;

struct Encoding {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;  // the vocabulary piece of each id ("Ġworld", "##ing", "[CLS]")
};

class Tokenizer {
public:
    // Internal: the implementation behind a loaded tokenizer.
    class Engine {
    public:
        virtual ~Engine() = default;
        virtual core::Result<Encoding> encode(std::string_view text, bool add_special) const = 0;
        virtual std::string decode(const std::vector<std::int32_t>& ids, bool skip_special) const = 0;
        virtual std::string token_text(std::int32_t id) const = 0;
        virtual std::size_t vocab_size() const = 0;
    };

    explicit Tokenizer(std::shared_ptr<const Engine> engine, std::string description)
        : engine_(std::move(engine)), description_(std::move(description)) {}

    // The ids and pieces of `text` (UTF-8), with the special tokens the tokenizer adds by default
    // (BERT's [CLS] … [SEP], Llama's <s>; GPT-2 none) unless add_special is false. Text that is not
    // valid UTF-8 is refused with a problem saying where.
    core::Result<Encoding> encode(std::string_view text, bool add_special = true) const {
        return engine_->encode(text, add_special);
    }
    // The text of ids; special tokens left out when skip_special. Unknown ids are skipped.
    std::string decode(const std::vector<std::int32_t>& ids, bool skip_special = false) const {
        return engine_->decode(ids, skip_special);
    }
    // The vocabulary piece of an id ("" for an id the vocabulary does not have).
    std::string token_text(std::int32_t id) const { return engine_->token_text(id); }
    std::size_t vocab_size() const { return engine_->vocab_size(); }
    // What was loaded: "tokenizer.json (BPE)", "vocab.txt (WordPiece)", "tokenizer.model (SentencePiece)".
    const std::string& description() const { return description_; }

private:
    std::shared_ptr<const Engine> engine_;
    std::string description_;
};

// The tokenizer of a model folder or a tokenizer file (see the top of this file). Problems name the
// file: "DIR/tokenizer.json: model.type: \"Unigram\" is not supported". `unreadable`, when given,
// tells whether the failure was a file that could not be read (missing, no permission) rather than
// one that was read and refused.
core::Result<Tokenizer> load_tokenizer(const std::string& path, bool* unreadable = nullptr);

// A token as a person names it: its id (digits; whether the model has it is the model's to say),
// its vocabulary piece as the tokenizer writes it ("Ġworld"), else a text the tokenizer makes one
// token of without special tokens (" world"). Refused, the problem starting with `what` and the
// text ("--target \"x y\""): a text of another number of tokens (saying how many), a name other
// than an id without a tokenizer (null).
core::Result<std::int32_t> find_token(const Tokenizer* tokenizer, const std::string& given, const std::string& what);

// The special tokens transformers puts around a sequence for a tokenizer.json, from the
// tokenizer_config.json beside it. The fast tokenizers of Llama (and Code Llama, Phi-3, which say
// "LlamaTokenizer"), Gemma and GPT-NeoX rebuild tokenizer.json's post-processor when they load
// (update_post_processor): [bos_token if add_bos_token] $A [eos_token if add_eos_token], with their
// defaults (Llama and Gemma add the BOS only, GPT-NeoX neither; bos_token and eos_token "<s>" and
// "</s>", "<bos>" and "<eos>", "<|endoftext|>"). Every other class keeps tokenizer.json's own.
struct SpecialTokenRules {
    bool rebuild = false;  // whether the post-processor is replaced (the classes above)
    bool add_bos = false, add_eos = false;
    std::string bos, eos;         // the tokens' text
    std::string tokenizer_class;  // as the config names it ("" when it names none)
};
// The rules of a tokenizer_config.json's text; refused: not a JSON object, add_bos_token or
// add_eos_token not true or false, bos_token or eos_token not a text (or {"content": …}) or null.
core::Result<SpecialTokenRules> read_special_token_rules(std::string_view text, const std::string& name);

// The readers behind load_tokenizer, on texts in memory (the fuzz targets call these); `name` is
// the file name problems start with. `rules` (from tokenizer_config.json) may replace the
// post-processor; a token they add that the vocabulary lacks is refused.
core::Result<Tokenizer> read_tokenizer_json(std::string_view text, const std::string& name,
                                            const SpecialTokenRules* rules = nullptr);
core::Result<Tokenizer> read_gpt2_vocab(std::string_view vocab_json, const std::string& vocab_name,
                                        std::string_view merges_txt, const std::string& merges_name);
struct BertVocabOptions {
    bool lowercase = true;              // do_lower_case
    std::optional<bool> strip_accents;  // unset: as lowercase
    bool tokenize_chinese_chars = true;
};
core::Result<Tokenizer> read_bert_vocab(std::string_view vocab_txt, const std::string& name,
                                        const BertVocabOptions& options = {});
// tokenizer_config.json's do_lower_case, strip_accents and tokenize_chinese_chars (absent: the defaults).
core::Result<BertVocabOptions> read_bert_config(std::string_view text, const std::string& name);

}  // namespace attnviz::model
