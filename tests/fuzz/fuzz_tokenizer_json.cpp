// libFuzzer target for tokenizer.json: read it; when accepted, run it on texts (and on the input).
#include <cstddef>
#include <cstdint>

#include "fuzz_tokenizer.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = attnviz::fuzz::as_text(data, size);
    const core::Result<attnviz::model::Tokenizer> t = attnviz::model::read_tokenizer_json(text, "tokenizer.json");
    if (!t) {
        check(!t.problems.empty(), "read_tokenizer_json failed without saying why");
        check(t.problems.front().path == "tokenizer.json", "a problem that does not name the file");
        return 0;
    }
    attnviz::fuzz::exercise(*t.value, text);
    return 0;
}
