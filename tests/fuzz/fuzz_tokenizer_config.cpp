// libFuzzer target for tokenizer_config.json's BOS/EOS rules: read them; when accepted, apply them to
// a small tokenizer.json (its post-processor rebuilt for the classes that rebuild it) and run it.
#include <cstddef>
#include <cstdint>

#include "fuzz_tokenizer.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

namespace {

// A byte-level BPE with the tokens of every class's default BOS and EOS.
constexpr const char* tokenizer_json = R"({"version": "1.0",
  "added_tokens": [{"id": 3, "content": "<s>", "special": true}, {"id": 4, "content": "</s>", "special": true},
                   {"id": 5, "content": "<bos>", "special": true}, {"id": 6, "content": "<eos>", "special": true},
                   {"id": 7, "content": "<|endoftext|>", "special": true}],
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3, "</s>": 4, "<bos>": 5, "<eos>": 6,
                                     "<|endoftext|>": 7}, "merges": ["a b"]}})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = attnviz::fuzz::as_text(data, size);
    const core::Result<attnviz::model::SpecialTokenRules> rules =
        attnviz::model::read_special_token_rules(text, "tokenizer_config.json");
    if (!rules) {
        check(!rules.problems.empty(), "read_special_token_rules failed without saying why");
        check(rules.problems.front().path == "tokenizer_config.json", "a problem that does not name the file");
        return 0;
    }
    const core::Result<attnviz::model::Tokenizer> t =
        attnviz::model::read_tokenizer_json(tokenizer_json, "tokenizer.json", &*rules.value);
    if (!t) {
        check(rules.value->rebuild, "a tokenizer refused by rules that change nothing");
        check(t.problems.front().path == "tokenizer.json", "a problem that does not name the file");
        return 0;
    }
    attnviz::fuzz::exercise(*t.value, "ab ba");
    return 0;
}
