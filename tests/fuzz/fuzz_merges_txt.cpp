// libFuzzer target for GPT-2's merges.txt (with vocab.json fixed): read it; when accepted, run it on
// texts (and on the input).
#include <cstddef>
#include <cstdint>

#include "fuzz_tokenizer.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = attnviz::fuzz::as_text(data, size);
    static const char* const vocab =
        R"({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "\u0120": 6, "\u0120a": 7, "aa": 8, "<|endoftext|>": 9})";
    const core::Result<attnviz::model::Tokenizer> t = attnviz::model::read_gpt2_vocab(vocab, "vocab.json", text,
                                                                                      "merges.txt");
    if (!t) {
        check(!t.problems.empty() && t.problems.front().path == "merges.txt",
              "a refusal that does not name merges.txt");
        return 0;
    }
    attnviz::fuzz::exercise(*t.value, text);
    return 0;
}
