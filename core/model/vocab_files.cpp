// The older vocabulary files: GPT-2's vocab.json + merges.txt and BERT's vocab.txt, each made into
// the pipeline the tokenizers library builds for them (GPT2TokenizerFast, BertTokenizerFast).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/io/json_read.hpp"
#include "core/model/engines.hpp"

namespace attnviz::model {

namespace {

using nlohmann::json;

core::Result<Tokenizer> refuse(const std::string& name, std::string message) {
    return core::Result<Tokenizer>::fail({{name, std::move(message)}});
}

// The lines of a text (a final newline ends the last line rather than starting an empty one),
// each without its "\r\n" or "\n".
std::vector<std::string_view> lines(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out.push_back(line);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return out;
}

// "line 3" for an index from 0.
std::string line_name(std::size_t index) { return "line " + std::to_string(index + 1); }

// "line 4 is not UTF-8" for the byte where a text stops being UTF-8.
std::string not_utf8(std::string_view text, std::size_t bad) {
    const auto line =
        static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
    return line_name(line) + " is not UTF-8";
}

}  // namespace

core::Result<Tokenizer> read_gpt2_vocab(std::string_view vocab_json, const std::string& vocab_name,
                                        std::string_view merges_txt, const std::string& merges_name) {
    if (vocab_json.size() > max_tokenizer_bytes || merges_txt.size() > max_tokenizer_bytes)
        return refuse(vocab_json.size() > max_tokenizer_bytes ? vocab_name : merges_name,
                      "larger than " + std::to_string(max_tokenizer_bytes >> 20) + " MiB");
    const core::Result<json> doc = core::read_json(vocab_json);
    if (!doc) return refuse(vocab_name, doc.problems.front().str());
    if (!doc.value->is_object()) return refuse(vocab_name, "expected a JSON object of tokens and their ids");
    if (doc.value->size() > max_vocab_entries)
        return refuse(vocab_name, "more than " + std::to_string(max_vocab_entries) + " tokens");
    Vocab vocab;
    vocab.reserve(doc.value->size());
    for (const auto& [piece, id] : doc.value->items()) {
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() > 0x7FFFFFFF)
            return refuse(vocab_name, core::path_key("", piece) +
                                          ": expected a token id (a whole number from 0 to "
                                          "2147483647), got " +
                                          core::describe_json(id));
        vocab.add(piece, static_cast<std::int32_t>(id.get<std::uint64_t>()));
    }

    if (const std::size_t bad = invalid_utf8_at(merges_txt); bad != merges_txt.size())
        return refuse(merges_name, not_utf8(merges_txt, bad));
    std::vector<BpeMerge> merges;
    const std::vector<std::string_view> merge_lines = lines(merges_txt);
    if (merge_lines.size() > max_vocab_entries)
        return refuse(merges_name, "more than " + std::to_string(max_vocab_entries) + " merges");
    for (std::size_t k = 0; k < merge_lines.size(); ++k) {
        const std::string_view line = merge_lines[k];
        if (line.empty() || line.rfind("#version", 0) == 0) continue;
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
            return refuse(merges_name, line_name(k) + ": expected two tokens separated by one space, got " +
                                           core::describe_text(std::string(line)));
        merges.push_back({std::string(line.substr(0, space)), std::string(line.substr(space + 1))});
    }

    auto p = std::make_shared<Pipeline>();
    p->pre_tokenizer = byte_level_pre_tokenizer(false, true);
    p->decoder = byte_level_decoder();
    std::string error;
    p->model = bpe_model(std::move(vocab), merges, {}, error);
    if (!p->model) return refuse(error.rfind("merges", 0) == 0 ? merges_name : vocab_name, error);
    if (const auto eot = p->model->vocab().id("<|endoftext|>"))
        p->added_tokens.push_back({"<|endoftext|>", *eot, true});
    p->prepare();
    return core::Result<Tokenizer>::ok(pipeline_tokenizer(std::move(p), vocab_name + " + merges.txt (BPE)"));
}

core::Result<BertVocabOptions> read_bert_config(std::string_view text, const std::string& name) {
    const auto fail = [&name](std::string message) {
        return core::Result<BertVocabOptions>::fail({{name, std::move(message)}});
    };
    const core::Result<json> doc = core::read_json(text);
    if (!doc) return fail(doc.problems.front().str());
    if (!doc.value->is_object()) return fail("expected a JSON object");
    BertVocabOptions o;
    const json& j = *doc.value;
    for (auto [key, flag] :
         {std::pair{"do_lower_case", &o.lowercase}, std::pair{"tokenize_chinese_chars", &o.tokenize_chinese_chars}}) {
        if (!j.contains(key) || j[key].is_null()) continue;
        if (!j[key].is_boolean())
            return fail(core::path_key("", key) + ": expected true or false, got " + core::describe_json(j[key]));
        *flag = j[key].get<bool>();
    }
    if (j.contains("strip_accents") && !j["strip_accents"].is_null()) {
        if (!j["strip_accents"].is_boolean())
            return fail("strip_accents: expected true, false or null, got " + core::describe_json(j["strip_accents"]));
        o.strip_accents = j["strip_accents"].get<bool>();
    }
    return core::Result<BertVocabOptions>::ok(o);
}

core::Result<Tokenizer> read_bert_vocab(std::string_view vocab_txt, const std::string& name,
                                        const BertVocabOptions& options) {
    if (vocab_txt.size() > max_tokenizer_bytes)
        return refuse(name, "larger than " + std::to_string(max_tokenizer_bytes >> 20) + " MiB");
    if (const std::size_t bad = invalid_utf8_at(vocab_txt); bad != vocab_txt.size())
        return refuse(name, not_utf8(vocab_txt, bad));
    const std::vector<std::string_view> entries = lines(vocab_txt);
    if (entries.size() > max_vocab_entries)
        return refuse(name, "more than " + std::to_string(max_vocab_entries) + " tokens");
    Vocab vocab;
    std::u32string chars;
    for (std::size_t k = 0; k < entries.size(); ++k) {
        // Each line is a token, trailing whitespace removed; its line number is its id.
        decode_utf8(entries[k], chars);
        while (!chars.empty() && is_whitespace(chars.back())) chars.pop_back();
        vocab.add(encode_utf8(chars), static_cast<std::int32_t>(k));
    }
    for (const char* required : {"[UNK]", "[CLS]", "[SEP]"})
        if (!vocab.id(required)) return refuse(name, std::string("no ") + required + " token in the vocabulary");

    auto p = std::make_shared<Pipeline>();
    BertNormalizerOptions normalizer;
    normalizer.handle_chinese_chars = options.tokenize_chinese_chars;
    normalizer.strip_accents = options.strip_accents;
    normalizer.lowercase = options.lowercase;
    p->normalizer = bert_normalizer(normalizer);
    p->pre_tokenizer = bert_pre_tokenizer();
    const Token cls{*vocab.id("[CLS]"), "[CLS]"}, sep{*vocab.id("[SEP]"), "[SEP]"};
    p->post_processor = surround_processor({cls}, {sep});
    p->decoder = wordpiece_decoder("##", true);
    std::string error;
    p->model = wordpiece_model(std::move(vocab), "[UNK]", "##", 100, error);
    for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (const auto id = p->model->vocab().id(special))
            p->added_tokens.push_back({special, *id, true, false, false, false, false});
    p->prepare();
    return core::Result<Tokenizer>::ok(pipeline_tokenizer(std::move(p), name + " (WordPiece)"));
}

}  // namespace attnviz::model
