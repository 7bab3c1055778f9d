// libFuzzer target for GPT-2's vocab.json (with merges.txt fixed): read it; when accepted, run it on
// texts (and on the input).
#include <cstddef>
#include <cstdint>

#include "fuzz_tokenizer.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = attnviz::fuzz::as_text(data, size);
    const core::Result<attnviz::model::Tokenizer> t =
        attnviz::model::read_gpt2_vocab(text, "vocab.json", "#version: 0.2\na b\n", "merges.txt");
    if (!t) {
        check(!t.problems.empty(), "read_gpt2_vocab failed without saying why");
        const std::string& path = t.problems.front().path;
        check(path == "vocab.json" || path == "merges.txt", "a refusal that does not name a file");
        return 0;
    }
    attnviz::fuzz::exercise(*t.value, text);
    return 0;
}
