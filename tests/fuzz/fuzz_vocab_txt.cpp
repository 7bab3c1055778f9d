// libFuzzer target for BERT's vocab.txt: read it (uncased, as without tokenizer_config.json, and
// cased); when accepted, run it on texts (and on the input).
#include <cstddef>
#include <cstdint>

#include "fuzz_tokenizer.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = attnviz::fuzz::as_text(data, size);
    attnviz::model::BertVocabOptions cased;
    cased.lowercase = false;
    for (const attnviz::model::BertVocabOptions& options : {attnviz::model::BertVocabOptions{}, cased}) {
        const core::Result<attnviz::model::Tokenizer> t = attnviz::model::read_bert_vocab(text, "vocab.txt", options);
        if (!t) {
            check(!t.problems.empty() && t.problems.front().path == "vocab.txt",
                  "a refusal that does not name the file");
            return 0;
        }
        attnviz::fuzz::exercise(*t.value, text);
    }
    return 0;
}
