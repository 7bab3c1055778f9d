// What the tokenizer fuzz targets share: a tokenizer that was accepted is run on texts that reach
// every stage (added tokens, whitespace, accents, CJK, emoji, byte fallback), and its output is
// checked for consistency.
#pragma once

#include <string>
#include <string_view>

#include "core/model/tokenizer.hpp"
#include "fuzz_check.hpp"

namespace attnviz::fuzz {

inline void check_encoding(const model::Tokenizer& t, std::string_view text) {
    for (const bool special : {true, false}) {
        const core::Result<model::Encoding> e = t.encode(text, special);
        if (!e) {
            check(!e.problems.empty(), "encode failed without saying why");
            continue;
        }
        check(e.value->ids.size() == e.value->tokens.size(), "encode gave ids and tokens of different lengths");
        const core::Result<model::Encoding> again = t.encode(text, special);  // from the word cache
        check(again && again.value->ids == e.value->ids, "encoding the same text twice differs");
        for (const std::int32_t id : e.value->ids) (void)t.token_text(id);
        (void)t.decode(e.value->ids, false);
        (void)t.decode(e.value->ids, true);
    }
}

inline void exercise(const model::Tokenizer& t, std::string_view input_as_text = {}) {
    static const char* const texts[] = {
        "",
        "Hello  world's 123 <s>ab</s> [CLS] abc </s> a</s>b",
        "  \t\n\r\n x\xC2\xA0y ",
        "Caf\xC3\xA9 e\xCC\x81 \xC4\xB0 \xEF\xAC\x81",                     // accents, İ, ﬁ
        "\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80\xE2\x80\x8D \x01\x7F",  // CJK, emoji, controls
        "abcabcabc ab ab a b c \xE2\x96\x81\x61 ##b",                      // ▁a
    };
    for (const char* text : texts) check_encoding(t, text);
    if (input_as_text.size() <= 4096) check_encoding(t, input_as_text);
    (void)t.decode({0, 1, 2, -1, 2147483647}, false);
}

}  // namespace attnviz::fuzz
