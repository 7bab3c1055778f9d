// tokenizer.json, the Hugging Face tokenizers library's format, read into a Pipeline.
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "core/base/format.hpp"
#include "core/io/json_read.hpp"
#include "core/model/engines.hpp"

namespace attnviz::model {

namespace {

using nlohmann::json;

// A name from the file as a message quotes it: "Unigram" (a long one cut short).
std::string quote_name(const std::string& s) {
    const std::string d = core::describe_text(s);
    const std::string prefix = "the text ";
    return d.rfind(prefix, 0) == 0 ? d.substr(prefix.size()) : d;
}

// Reading with the first problem kept: every reader returns a harmless value after a problem, and
// the caller checks ok() at the end.
class Reader {
public:
    bool ok() const { return message_.empty(); }
    void fail(const std::string& field, std::string message) {
        if (ok()) message_ = field.empty() ? std::move(message) : field + ": " + std::move(message);
    }
    const std::string& message() const { return message_; }

    // A member that is present and not null, else nullptr.
    static const json* member(const json& object, const char* key) {
        if (!object.is_object()) return nullptr;
        const auto it = object.find(key);
        return it == object.end() || it->is_null() ? nullptr : &*it;
    }

    bool boolean(const json& object, const std::string& path, const char* key, bool otherwise) {
        const json* v = member(object, key);
        if (!v) return otherwise;
        if (!v->is_boolean()) fail(core::path_key(path, key), "expected true or false, got " + core::describe_json(*v));
        return v->is_boolean() ? v->get<bool>() : otherwise;
    }

    std::string string(const json& object, const std::string& path, const char* key, const std::string& otherwise) {
        const json* v = member(object, key);
        if (!v) return otherwise;
        if (!v->is_string()) {
            fail(core::path_key(path, key), "expected a string, got " + core::describe_json(*v));
            return otherwise;
        }
        return v->get<std::string>();
    }

    std::optional<std::string> optional_string(const json& object, const std::string& path, const char* key) {
        if (!member(object, key)) return std::nullopt;
        return string(object, path, key, "");
    }

    // A whole number from 0 to `max`.
    std::size_t count(const json& object, const std::string& path, const char* key, std::size_t otherwise,
                      std::size_t max = std::size_t{1} << 31) {
        const json* v = member(object, key);
        if (!v) return otherwise;
        if (!v->is_number_unsigned() || v->get<std::uint64_t>() > max) {
            fail(core::path_key(path, key),
                 "expected a whole number from 0 to " + std::to_string(max) + ", got " + core::describe_json(*v));
            return otherwise;
        }
        return static_cast<std::size_t>(v->get<std::uint64_t>());
    }

    // A token id: a whole number from 0 to 2^31 − 1.
    std::int32_t id(const json& value, const std::string& path) {
        if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0x7FFFFFFF) {
            fail(path, "expected a token id (a whole number from 0 to 2147483647), got " + core::describe_json(value));
            return 0;
        }
        return static_cast<std::int32_t>(value.get<std::uint64_t>());
    }

    // A single character (Metaspace's replacement, Strip's content).
    char32_t character(const json& object, const std::string& path, const char* key, char32_t otherwise) {
        if (!member(object, key)) return otherwise;
        const std::string s = string(object, path, key, "");
        std::u32string chars;
        if (!ok()) return otherwise;
        if (!decode_utf8(s, chars) || chars.size() != 1) {
            fail(core::path_key(path, key), "expected one character, got " + core::describe_text(s));
            return otherwise;
        }
        return chars[0];
    }

    // {"String": "…"} (matched literally) or {"Regex": "…"}.
    Regex pattern(const json& object, const std::string& path, const char* key) {
        const std::string field = core::path_key(path, key);
        const json* v = member(object, key);
        if (!v || !v->is_object() || v->size() != 1) {
            fail(field, "expected {\"String\": …} or {\"Regex\": …}");
            return {};
        }
        std::string error;
        Regex re;
        if (const json* s = member(*v, "String"); s && s->is_string())
            re = Regex::literal(s->get<std::string>(), error);
        else if (const json* r = member(*v, "Regex"); r && r->is_string())
            re = Regex::compile(r->get<std::string>(), error);
        else
            fail(field, "expected {\"String\": …} or {\"Regex\": …}");
        if (ok() && !re.valid()) fail(field, "the pattern does not compile: " + error);
        return re;
    }

    Behavior behavior(const json& object, const std::string& path, const char* key, Behavior otherwise) {
        if (!member(object, key)) return otherwise;
        const std::string s = string(object, path, key, "");
        static const std::pair<const char*, Behavior> names[] = {{"Removed", Behavior::removed},
                                                                 {"Isolated", Behavior::isolated},
                                                                 {"MergedWithPrevious", Behavior::merged_with_previous},
                                                                 {"MergedWithNext", Behavior::merged_with_next},
                                                                 {"Contiguous", Behavior::contiguous}};
        for (const auto& [name, b] : names)
            if (s == name) return b;
        if (ok())
            fail(core::path_key(path, key),
                 quote_name(s) +
                     " is not a split behavior (Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
        return otherwise;
    }

    // The "type" of a stage; "" after a problem.
    std::string type(const json& object, const std::string& path) {
        if (!object.is_object()) {
            fail(path, "expected an object, got " + core::describe_json(object));
            return "";
        }
        const json* t = member(object, "type");
        if (!t || !t->is_string()) {
            fail(core::path_key(path, "type"), "missing (expected the name of the stage)");
            return "";
        }
        return t->get<std::string>();
    }

    // The elements of an array member.
    const json* array(const json& object, const std::string& path, const char* key) {
        const json* v = member(object, key);
        if (!v || !v->is_array()) {
            fail(core::path_key(path, key), "expected an array");
            return nullptr;
        }
        return v;
    }

    void unsupported(const std::string& path, const std::string& kind, const std::string& type) {
        fail(core::path_key(path, "type"), kind + " " + quote_name(type) + " is not supported");
    }

    int depth = 0;  // of nested Sequences

private:
    std::string message_;
};

constexpr int max_sequence_depth = 16;

PrependScheme prepend_scheme(Reader& r, const json& j, const std::string& path) {
    if (const json* add = Reader::member(j, "add_prefix_space"); add && !Reader::member(j, "prepend_scheme"))
        return r.boolean(j, path, "add_prefix_space", true) ? PrependScheme::always : PrependScheme::never;
    const std::string s = r.string(j, path, "prepend_scheme", "always");
    if (s == "always") return PrependScheme::always;
    if (s == "first") return PrependScheme::first;
    if (s == "never") return PrependScheme::never;
    r.fail(core::path_key(path, "prepend_scheme"), quote_name(s) + " is not always, first or never");
    return PrependScheme::always;
}

NormalizerPtr read_normalizer(Reader& r, const json& j, const std::string& path) {
    const std::string type = r.type(j, path);
    if (type == "BertNormalizer") {
        BertNormalizerOptions o;
        o.clean_text = r.boolean(j, path, "clean_text", true);
        o.handle_chinese_chars = r.boolean(j, path, "handle_chinese_chars", true);
        if (Reader::member(j, "strip_accents")) o.strip_accents = r.boolean(j, path, "strip_accents", false);
        o.lowercase = r.boolean(j, path, "lowercase", true);
        return bert_normalizer(o);
    }
    if (type == "NFC") return unicode_normalizer(NormalForm::nfc);
    if (type == "NFD") return unicode_normalizer(NormalForm::nfd);
    if (type == "NFKC") return unicode_normalizer(NormalForm::nfkc);
    if (type == "NFKD") return unicode_normalizer(NormalForm::nfkd);
    if (type == "Lowercase") return lowercase_normalizer();
    if (type == "StripAccents") return strip_accents_normalizer();
    if (type == "Strip")
        return strip_normalizer(r.boolean(j, path, "strip_left", true), r.boolean(j, path, "strip_right", true));
    if (type == "Replace") {
        Regex pattern = r.pattern(j, path, "pattern");
        return replace_normalizer(std::move(pattern), r.string(j, path, "content", ""));
    }
    if (type == "Prepend") return prepend_normalizer(r.string(j, path, "prepend", ""));
    if (type == "Sequence") {
        std::vector<NormalizerPtr> parts;
        const json* list = r.array(j, path, "normalizers");
        if (!list || ++r.depth > max_sequence_depth) {
            if (list) r.fail(path, "Sequences nested more than " + std::to_string(max_sequence_depth) + " deep");
            return nullptr;
        }
        for (std::size_t k = 0; k < list->size() && r.ok(); ++k)
            parts.push_back(read_normalizer(r, (*list)[k], core::path_index(core::path_key(path, "normalizers"), k)));
        --r.depth;
        return sequence_normalizer(std::move(parts));
    }
    if (r.ok()) r.unsupported(path, "the normalizer", type);
    return nullptr;
}

PreTokenizerPtr read_pre_tokenizer(Reader& r, const json& j, const std::string& path) {
    const std::string type = r.type(j, path);
    if (type == "ByteLevel")
        return byte_level_pre_tokenizer(r.boolean(j, path, "add_prefix_space", true),
                                        r.boolean(j, path, "use_regex", true));
    if (type == "Split") {
        Regex pattern = r.pattern(j, path, "pattern");
        const Behavior b = r.behavior(j, path, "behavior", Behavior::removed);
        return split_pre_tokenizer(std::move(pattern), b, r.boolean(j, path, "invert", false));
    }
    if (type == "BertPreTokenizer") return bert_pre_tokenizer();
    if (type == "Whitespace") return whitespace_pre_tokenizer();
    if (type == "WhitespaceSplit") return whitespace_split_pre_tokenizer();
    if (type == "Metaspace") {
        const char32_t replacement = r.character(j, path, "replacement", U'\u2581');
        const PrependScheme scheme = prepend_scheme(r, j, path);
        return metaspace_pre_tokenizer(replacement, scheme, r.boolean(j, path, "split", true));
    }
    if (type == "Digits") return digits_pre_tokenizer(r.boolean(j, path, "individual_digits", false));
    if (type == "Punctuation") return punctuation_pre_tokenizer(r.behavior(j, path, "behavior", Behavior::isolated));
    if (type == "CharDelimiterSplit") return char_delimiter_pre_tokenizer(r.character(j, path, "delimiter", U' '));
    if (type == "Sequence") {
        std::vector<PreTokenizerPtr> parts;
        const json* list = r.array(j, path, "pretokenizers");
        if (!list || ++r.depth > max_sequence_depth) {
            if (list) r.fail(path, "Sequences nested more than " + std::to_string(max_sequence_depth) + " deep");
            return nullptr;
        }
        for (std::size_t k = 0; k < list->size() && r.ok(); ++k)
            parts.push_back(
                read_pre_tokenizer(r, (*list)[k], core::path_index(core::path_key(path, "pretokenizers"), k)));
        --r.depth;
        return sequence_pre_tokenizer(std::move(parts));
    }
    if (r.ok()) r.unsupported(path, "the pre-tokenizer", type);
    return nullptr;
}

// ["[SEP]", 102]: a special token of BertProcessing and RobertaProcessing.
Token special_pair(Reader& r, const json& j, const std::string& path, const char* key) {
    const std::string field = core::path_key(path, key);
    const json* v = Reader::member(j, key);
    if (!v || !v->is_array() || v->size() != 2 || !(*v)[0].is_string()) {
        r.fail(field, "expected [\"token\", id]");
        return {};
    }
    return {r.id((*v)[1], core::path_index(field, 1)), (*v)[0].get<std::string>()};
}

// TemplateProcessing: the single template's special tokens before and after $A.
PostProcessorPtr read_template(Reader& r, const json& j, const std::string& path) {
    const json* single = r.array(j, path, "single");
    const json* specials = Reader::member(j, "special_tokens");
    if (!single) return nullptr;
    std::vector<Token> before, after;
    bool seen_sequence = false;
    const std::string single_path = core::path_key(path, "single");
    for (std::size_t k = 0; k < single->size() && r.ok(); ++k) {
        const json& item = (*single)[k];
        const std::string item_path = core::path_index(single_path, k);
        if (const json* seq = Reader::member(item, "Sequence")) {
            const std::string id = r.string(*seq, core::path_key(item_path, "Sequence"), "id", "A");
            if (id != "A" || seen_sequence) r.fail(item_path, "a single template takes $A once, and no $B");
            seen_sequence = true;
            continue;
        }
        const json* special = Reader::member(item, "SpecialToken");
        if (!special) {
            r.fail(item_path, "expected {\"Sequence\": …} or {\"SpecialToken\": …}");
            break;
        }
        const std::string name = r.string(*special, core::path_key(item_path, "SpecialToken"), "id", "");
        const json* entry = specials ? Reader::member(*specials, name.c_str()) : nullptr;
        const std::string entry_path = core::path_key(core::path_key(path, "special_tokens"), name);
        const json* ids = entry ? Reader::member(*entry, "ids") : nullptr;
        const json* tokens = entry ? Reader::member(*entry, "tokens") : nullptr;
        if (!ids || !tokens || !ids->is_array() || !tokens->is_array() || ids->size() != tokens->size()) {
            r.fail(entry_path, "missing, or without ids and tokens of the same length");
            break;
        }
        for (std::size_t t = 0; t < ids->size() && r.ok(); ++t) {
            if (!(*tokens)[t].is_string())
                r.fail(core::path_index(core::path_key(entry_path, "tokens"), t), "expected a string");
            if (!r.ok()) break;
            const Token token{r.id((*ids)[t], core::path_index(core::path_key(entry_path, "ids"), t)),
                              (*tokens)[t].get<std::string>()};
            (seen_sequence ? after : before).push_back(token);
        }
    }
    if (r.ok() && !seen_sequence) r.fail(single_path, "the template has no $A");
    return surround_processor(std::move(before), std::move(after));
}

PostProcessorPtr read_post_processor(Reader& r, const json& j, const std::string& path) {
    const std::string type = r.type(j, path);
    if (type == "ByteLevel") return surround_processor({}, {});
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        Token cls = special_pair(r, j, path, "cls");
        Token sep = special_pair(r, j, path, "sep");
        return surround_processor({std::move(cls)}, {std::move(sep)});
    }
    if (type == "TemplateProcessing") return read_template(r, j, path);
    if (type == "Sequence") {
        std::vector<PostProcessorPtr> parts;
        const json* list = r.array(j, path, "processors");
        if (!list || ++r.depth > max_sequence_depth) {
            if (list) r.fail(path, "Sequences nested more than " + std::to_string(max_sequence_depth) + " deep");
            return nullptr;
        }
        for (std::size_t k = 0; k < list->size() && r.ok(); ++k)
            parts.push_back(
                read_post_processor(r, (*list)[k], core::path_index(core::path_key(path, "processors"), k)));
        --r.depth;
        return sequence_processor(std::move(parts));
    }
    if (r.ok()) r.unsupported(path, "the post-processor", type);
    return nullptr;
}

DecoderPtr read_decoder(Reader& r, const json& j, const std::string& path) {
    const std::string type = r.type(j, path);
    if (type == "ByteLevel") return byte_level_decoder();
    if (type == "WordPiece")
        return wordpiece_decoder(r.string(j, path, "prefix", "##"), r.boolean(j, path, "cleanup", true));
    if (type == "Metaspace") {
        const char32_t replacement = r.character(j, path, "replacement", U'\u2581');
        return metaspace_decoder(replacement, prepend_scheme(r, j, path));
    }
    if (type == "ByteFallback") return byte_fallback_decoder();
    if (type == "Fuse") return fuse_decoder();
    if (type == "Strip") {
        const char32_t content = r.character(j, path, "content", U' ');
        const std::size_t start = r.count(j, path, "start", 0), stop = r.count(j, path, "stop", 0);
        return strip_decoder(content, start, stop);
    }
    if (type == "Replace") {
        Regex pattern = r.pattern(j, path, "pattern");
        return replace_decoder(std::move(pattern), r.string(j, path, "content", ""));
    }
    if (type == "BPEDecoder") return bpe_decoder(r.string(j, path, "suffix", "</w>"));
    if (type == "Sequence") {
        std::vector<DecoderPtr> parts;
        const json* list = r.array(j, path, "decoders");
        if (!list || ++r.depth > max_sequence_depth) {
            if (list) r.fail(path, "Sequences nested more than " + std::to_string(max_sequence_depth) + " deep");
            return nullptr;
        }
        for (std::size_t k = 0; k < list->size() && r.ok(); ++k)
            parts.push_back(read_decoder(r, (*list)[k], core::path_index(core::path_key(path, "decoders"), k)));
        --r.depth;
        return sequence_decoder(std::move(parts));
    }
    if (r.ok()) r.unsupported(path, "the decoder", type);
    return nullptr;
}

// {"token": id, …}
Vocab read_vocab(Reader& r, const json& j, const std::string& path) {
    Vocab vocab;
    const json* v = Reader::member(j, "vocab");
    const std::string field = core::path_key(path, "vocab");
    if (!v || !v->is_object()) {
        r.fail(field, "expected an object of tokens and their ids");
        return vocab;
    }
    if (v->size() > max_vocab_entries) {
        r.fail(field,
               std::to_string(v->size()) + " tokens, more than the " + std::to_string(max_vocab_entries) + " allowed");
        return vocab;
    }
    vocab.reserve(v->size());
    for (const auto& [piece, id] : v->items()) {
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() > 0x7FFFFFFF) {
            r.id(id, core::path_key(field, piece));  // the problem, its path built only now
            break;
        }
        vocab.add(piece, static_cast<std::int32_t>(id.get<std::uint64_t>()));
    }
    return vocab;
}

// ["a b", …] (before tokenizers 0.20) or [["a", "b"], …].
std::vector<BpeMerge> read_merges(Reader& r, const json& j, const std::string& path) {
    std::vector<BpeMerge> merges;
    const std::string field = core::path_key(path, "merges");
    const json* list = Reader::member(j, "merges");
    if (!list) return merges;
    if (!list->is_array() || list->size() > max_vocab_entries) {
        r.fail(field,
               list->is_array() ? "more than " + std::to_string(max_vocab_entries) + " merges" : "expected an array");
        return merges;
    }
    merges.reserve(list->size());
    for (std::size_t k = 0; k < list->size(); ++k) {
        const json& m = (*list)[k];
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const std::size_t space = s.find(' ');
            if (space != std::string::npos && s.find(' ', space + 1) == std::string::npos) {
                merges.push_back({s.substr(0, space), s.substr(space + 1)});
                continue;
            }
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            merges.push_back({m[0].get<std::string>(), m[1].get<std::string>()});
            continue;
        }
        r.fail(core::path_index(field, k),
               "expected \"left right\" or [\"left\", \"right\"], got " + core::describe_json(m));
        break;
    }
    return merges;
}

ModelPtr read_model(Reader& r, const json& j, std::string& kind) {
    const std::string path = "model";
    if (!j.is_object()) {
        r.fail(path, "expected an object");
        return nullptr;
    }
    std::string type;
    if (Reader::member(j, "type")) {
        type = r.type(j, path);
    } else if (Reader::member(j, "merges")) {  // files from before the type was written
        type = "BPE";
    } else if (Reader::member(j, "continuing_subword_prefix")) {
        type = "WordPiece";
    }
    kind = type;
    std::string error;
    ModelPtr model;
    if (type == "BPE") {
        BpeOptions o;
        if (const json* d = Reader::member(j, "dropout"); d && !(d->is_number() && d->get<double>() == 0))
            r.fail(core::path_key(path, "dropout"), "BPE dropout (random merges) is not supported");
        o.unk_token = r.optional_string(j, path, "unk_token");
        o.continuing_subword_prefix = r.string(j, path, "continuing_subword_prefix", "");
        o.end_of_word_suffix = r.string(j, path, "end_of_word_suffix", "");
        o.fuse_unk = r.boolean(j, path, "fuse_unk", false);
        o.byte_fallback = r.boolean(j, path, "byte_fallback", false);
        o.ignore_merges = r.boolean(j, path, "ignore_merges", false);
        Vocab vocab = read_vocab(r, j, path);
        const std::vector<BpeMerge> merges = read_merges(r, j, path);
        if (!r.ok()) return nullptr;
        model = bpe_model(std::move(vocab), merges, o, error);
    } else if (type == "WordPiece") {
        const std::string unk = r.string(j, path, "unk_token", "[UNK]");
        const std::string prefix = r.string(j, path, "continuing_subword_prefix", "##");
        const std::size_t max_chars = r.count(j, path, "max_input_chars_per_word", 100);
        Vocab vocab = read_vocab(r, j, path);
        if (!r.ok()) return nullptr;
        model = wordpiece_model(std::move(vocab), unk, prefix, max_chars, error);
    } else if (type == "WordLevel") {
        const std::string unk = r.string(j, path, "unk_token", "<unk>");
        Vocab vocab = read_vocab(r, j, path);
        if (!r.ok()) return nullptr;
        model = wordlevel_model(std::move(vocab), unk, error);
    } else {
        if (r.ok())
            r.fail(core::path_key(path, "type"),
                   type.empty()
                       ? "missing"
                       : "the model " + quote_name(type) + " is not supported (BPE, WordPiece and WordLevel are)");
        return nullptr;
    }
    if (!model) r.fail(path, error);
    return model;
}

void read_added_tokens(Reader& r, const json& doc, Pipeline& p) {
    const json* list = Reader::member(doc, "added_tokens");
    if (!list) return;
    if (!list->is_array() || list->size() > max_vocab_entries)
        return r.fail("added_tokens", "expected an array (of at most " + std::to_string(max_vocab_entries) + ")");
    for (std::size_t k = 0; k < list->size() && r.ok(); ++k) {
        const json& t = (*list)[k];
        const std::string path = core::path_index("added_tokens", k);
        AddedToken a;
        if (!t.is_object() || !Reader::member(t, "content") || !Reader::member(t, "id"))
            return r.fail(path, "expected an object with the token's content and id");
        a.content = r.string(t, path, "content", "");
        a.id = r.id(t["id"], core::path_key(path, "id"));
        a.special = r.boolean(t, path, "special", false);
        a.single_word = r.boolean(t, path, "single_word", false);
        a.lstrip = r.boolean(t, path, "lstrip", false);
        a.rstrip = r.boolean(t, path, "rstrip", false);
        a.normalized = r.boolean(t, path, "normalized", !a.special);
        p.added_tokens.push_back(std::move(a));
    }
}

// Padding to more tokens than this is refused (real files pad to 512 or a few thousand at most).
constexpr std::size_t max_padded_length = std::size_t{1} << 17;

// Truncation and padding, as encode applies them to a single sequence.
void read_truncation_padding(Reader& r, const json& doc, Pipeline& p) {
    if (const json* t = Reader::member(doc, "truncation")) {
        Truncation trunc;
        trunc.max_length = r.count(*t, "truncation", "max_length", 512);
        trunc.left = r.string(*t, "truncation", "direction", "Right") == "Left";
        p.truncation = trunc;
    }
    if (const json* pad = Reader::member(doc, "padding")) {
        Padding padding;
        const json* strategy = Reader::member(*pad, "strategy");
        if (strategy && strategy->is_object() && Reader::member(*strategy, "Fixed"))
            padding.fixed = r.count(*strategy, "padding.strategy", "Fixed", 0, max_padded_length);
        padding.multiple = r.count(*pad, "padding", "pad_to_multiple_of", 0, max_padded_length);
        padding.left = r.string(*pad, "padding", "direction", "Right") == "Left";
        padding.pad = {static_cast<std::int32_t>(r.count(*pad, "padding", "pad_id", 0, 0x7FFFFFFF)),
                       r.string(*pad, "padding", "pad_token", "[PAD]")};
        p.padding = padding;
    }
}

// The id of a token the rules add: an added token's, else the vocabulary's; nullopt when neither has it.
std::optional<std::int32_t> special_id(const Pipeline& p, const std::string& token) {
    for (const AddedToken& a : p.added_tokens)
        if (a.content == token) return a.id;
    return p.model ? p.model->vocab().id(token) : std::nullopt;
}

// transformers' update_post_processor: [bos] $A [eos] as the rules say.
std::string rebuild_post_processor(Pipeline& p, const SpecialTokenRules& rules) {
    std::vector<Token> before, after;
    for (auto [add, token, field, out] : {std::tuple{rules.add_bos, &rules.bos, "bos_token", &before},
                                          std::tuple{rules.add_eos, &rules.eos, "eos_token", &after}}) {
        if (!add) continue;
        if (token->empty())
            return std::string("tokenizer_config.json: ") + field + " is null, and " +
                   (out == &before ? "add_bos_token" : "add_eos_token") + " asks for it";
        const std::optional<std::int32_t> id = special_id(p, *token);
        if (!id)
            return std::string("tokenizer_config.json: ") + field + " \"" + core::printable(*token) +
                   "\" is not in the vocabulary, and " + (out == &before ? "add_bos_token" : "add_eos_token") +
                   " asks for it";
        out->push_back({*id, *token});
    }
    p.post_processor = surround_processor(std::move(before), std::move(after));
    return "";
}

}  // namespace

core::Result<SpecialTokenRules> read_special_token_rules(std::string_view text, const std::string& name) {
    using R = core::Result<SpecialTokenRules>;
    const core::Result<json> doc = core::read_json(text);
    if (!doc) return R::fail({{name, doc.problems.front().str()}});
    const json& j = *doc.value;
    if (!j.is_object()) return R::fail({{name, "expected a JSON object (a tokenizer_config.json)"}});
    SpecialTokenRules r;
    if (const auto c = j.find("tokenizer_class"); c != j.end() && c->is_string())
        r.tokenizer_class = c->get<std::string>();
    std::string family = r.tokenizer_class;
    if (family.size() > 4 && family.compare(family.size() - 4, 4, "Fast") == 0) family.resize(family.size() - 4);
    const bool llama = family == "LlamaTokenizer" || family == "CodeLlamaTokenizer";
    const bool gemma = family == "GemmaTokenizer", neox = family == "GPTNeoXTokenizer";
    r.rebuild = llama || gemma || neox;
    r.add_bos = llama || gemma;
    r.bos = llama ? "<s>" : gemma ? "<bos>" : "<|endoftext|>";
    r.eos = llama ? "</s>" : gemma ? "<eos>" : "<|endoftext|>";
    for (auto [key, flag] : {std::pair{"add_bos_token", &r.add_bos}, std::pair{"add_eos_token", &r.add_eos}}) {
        const auto v = j.find(key);
        if (v == j.end() || v->is_null()) continue;
        if (!v->is_boolean()) return R::fail({{name, std::string(key) + ": expected true or false"}});
        *flag = v->get<bool>();
    }
    for (auto [key, token] : {std::pair{"bos_token", &r.bos}, std::pair{"eos_token", &r.eos}}) {
        const auto v = j.find(key);
        if (v == j.end()) continue;
        if (v->is_null()) {  // none: asking to add it is refused when the post-processor is rebuilt
            token->clear();
            continue;
        }
        const json* content = v->is_object() && v->contains("content") ? &(*v)["content"] : &*v;
        if (!content->is_string()) return R::fail({{name, std::string(key) + ": expected a text or {\"content\": …}"}});
        *token = content->get<std::string>();
    }
    return R::ok(std::move(r));
}

core::Result<Tokenizer> read_tokenizer_json(std::string_view text, const std::string& name,
                                            const SpecialTokenRules* rules) {
    const auto refuse = [&name](const std::string& message) {
        return core::Result<Tokenizer>::fail({{name, message}});
    };
    if (text.size() > max_tokenizer_bytes)
        return refuse("larger than " + std::to_string(max_tokenizer_bytes >> 20) + " MiB");
    core::Result<json> doc = core::read_json(text);
    if (!doc) return refuse(doc.problems.front().str());
    const json& j = *doc.value;
    if (!j.is_object()) return refuse("expected a JSON object (a tokenizer.json)");
    Reader r;
    auto pipeline = std::make_shared<Pipeline>();
    std::string kind;
    if (const json* m = Reader::member(j, "model"))
        pipeline->model = read_model(r, *m, kind);
    else
        r.fail("model", "missing");
    read_added_tokens(r, j, *pipeline);
    if (const json* n = Reader::member(j, "normalizer"); n && r.ok())
        pipeline->normalizer = read_normalizer(r, *n, "normalizer");
    if (const json* n = Reader::member(j, "pre_tokenizer"); n && r.ok())
        pipeline->pre_tokenizer = read_pre_tokenizer(r, *n, "pre_tokenizer");
    if (const json* n = Reader::member(j, "post_processor"); n && r.ok())
        pipeline->post_processor = read_post_processor(r, *n, "post_processor");
    if (const json* n = Reader::member(j, "decoder"); n && r.ok()) pipeline->decoder = read_decoder(r, *n, "decoder");
    if (r.ok()) read_truncation_padding(r, j, *pipeline);
    if (!r.ok()) return refuse(r.message());
    if (rules && rules->rebuild)
        if (const std::string problem = rebuild_post_processor(*pipeline, *rules); !problem.empty())
            return refuse(problem);
    pipeline->prepare();
    return core::Result<Tokenizer>::ok(pipeline_tokenizer(std::move(pipeline), name + " (" + kind + ")"));
}

}  // namespace attnviz::model
