// Reading tokenizers: which file of a model folder is read, and every malformed or unsupported file
// refused with a message naming the file and what is wrong.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/model/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using attnviz::core::Result;
using attnviz::model::Tokenizer;

const fs::path data_dir = fs::path(ATTNVIZ_TESTS_DIR) / "model/data";

class TokenizerFiles : public ::testing::Test {
protected:
    void SetUp() override {
        char name[] = "/tmp/attnviz-tokenizer-XXXXXX";
        ASSERT_NE(mkdtemp(name), nullptr);
        dir = name;
    }
    void TearDown() override { fs::remove_all(dir); }

    fs::path write(const std::string& name, const std::string& text) {
        const fs::path p = dir / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }

    // The one problem of loading `path`, as "file: message".
    std::string refusal(const fs::path& path, bool* unreadable = nullptr) {
        const Result<Tokenizer> t = attnviz::model::load_tokenizer(path.string(), unreadable);
        if (t) return "(loaded)";
        EXPECT_EQ(t.problems.size(), 1u);
        return t.problems.front().str();
    }

    fs::path dir;
};

::testing::AssertionResult has(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// A tokenizer.json around a model.
std::string tokenizer_json(const std::string& model, const std::string& rest = "") {
    return R"({"version": "1.0", )" + rest + R"("model": )" + model + "}";
}
const std::string tiny_bpe = R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

TEST_F(TokenizerFiles, AFolderIsReadInOrderTokenizerJsonFirst) {
    fs::copy(data_dir / "bert-vocab-txt/vocab.txt", dir / "vocab.txt");
    Result<Tokenizer> t = attnviz::model::load_tokenizer(dir.string());
    ASSERT_TRUE(t) << t.problems.front().str();
    EXPECT_TRUE(has(t.value->description(), "vocab.txt (WordPiece)"));
    fs::copy(data_dir / "sentencepiece-tiny/tokenizer.model", dir / "tokenizer.model");
    t = attnviz::model::load_tokenizer(dir.string());
    EXPECT_TRUE(has(t.value->description(), "vocab.txt"));
    write("tokenizer.json", tokenizer_json(tiny_bpe));
    t = attnviz::model::load_tokenizer(dir.string());
    ASSERT_TRUE(t) << t.problems.front().str();
    EXPECT_TRUE(has(t.value->description(), "tokenizer.json (BPE)"));
    EXPECT_EQ(t.value->encode("ab").value->ids, (std::vector<std::int32_t>{2}));
    // A single file is read as what its name says.
    t = attnviz::model::load_tokenizer((dir / "tokenizer.model").string());
    ASSERT_TRUE(t) << t.problems.front().str();
    EXPECT_TRUE(has(t.value->description(), "SentencePiece"));
}

TEST_F(TokenizerFiles, DecodeAndTokenTextRoundTrip) {
    for (const char* name : {"gpt2-tiny", "bert-tiny", "llama2-tiny", "sentencepiece-tiny", "llama3-tiny"}) {
        const Result<Tokenizer> t = attnviz::model::load_tokenizer((data_dir / name).string());
        ASSERT_TRUE(t) << t.problems.front().str();
        const std::string text = "the lazy dog";
        const auto e = t.value->encode(text, false);
        ASSERT_TRUE(e);
        EXPECT_EQ(t.value->decode(e.value->ids), text) << name;
        for (std::size_t k = 0; k < e.value->ids.size(); ++k)
            EXPECT_EQ(t.value->token_text(e.value->ids[k]), e.value->tokens[k]) << name;
        EXPECT_EQ(t.value->token_text(-1), "");
        EXPECT_GT(t.value->vocab_size(), 100u);
    }
}

TEST_F(TokenizerFiles, MissingFilesAreUnreadable) {
    bool unreadable = false;
    EXPECT_TRUE(has(refusal(dir / "nothing", &unreadable), "no such file or folder"));
    EXPECT_TRUE(unreadable);
    EXPECT_TRUE(has(refusal(dir, &unreadable), "no tokenizer in the folder"));
    EXPECT_FALSE(unreadable);
    write("x/vocab.json", "{}");
    EXPECT_TRUE(has(refusal(dir / "x/vocab.json"), "needs both vocab.json and merges.txt"));
    EXPECT_TRUE(has(refusal(write("weights.bin", "")), "not a tokenizer file"));
}

TEST_F(TokenizerFiles, MalformedTokenizerJsonIsRefusedWithItsField) {
    const auto refused = [&](const std::string& text) { return refusal(write("tokenizer.json", text)); };
    EXPECT_TRUE(has(refused("{\"model\": "), "tokenizer.json: the JSON ends too early"));
    EXPECT_TRUE(has(refused("[]"), "expected a JSON object"));
    EXPECT_TRUE(has(refused("{}"), "model: missing"));
    EXPECT_TRUE(has(refused(tokenizer_json(R"({"type": "Unigram", "vocab": []})")),
                    "model.type: the model \"Unigram\" is not supported"));
    EXPECT_TRUE(has(refused(tokenizer_json(R"({"type": "BPE", "vocab": {"a": -1}, "merges": []})")),
                    "model.vocab.a: expected a token id"));
    EXPECT_TRUE(has(refused(tokenizer_json(R"({"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]})")),
                    "model.merges[0]: expected \"left right\""));
    EXPECT_TRUE(has(refused(tokenizer_json(R"({"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "a"]]})")),
                    "merges[0]: the merged token \"aa\" is not in the vocabulary"));
    EXPECT_TRUE(
        has(refused(tokenizer_json(R"({"type": "BPE", "vocab": {}, "merges": [], "dropout": 0.1})")), "dropout"));
    EXPECT_TRUE(has(refused(tokenizer_json(tiny_bpe, R"("normalizer": {"type": "Precompiled"}, )")),
                    "normalizer.type: the normalizer \"Precompiled\" is not supported"));
    EXPECT_TRUE(
        has(refused(tokenizer_json(
                tiny_bpe, R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "UnicodeScripts"}]}, )")),
            "pre_tokenizer.pretokenizers[0].type: the pre-tokenizer \"UnicodeScripts\" is not supported"));
    EXPECT_TRUE(has(refused(tokenizer_json(
                        tiny_bpe,
                        R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}, )")),
                    "pre_tokenizer.pattern: the pattern does not compile"));
    EXPECT_TRUE(has(refused(tokenizer_json(
                        tiny_bpe,
                        R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"}, )")),
                    "\"Sideways\" is not a split behavior"));
    EXPECT_TRUE(has(
        refused(tokenizer_json(
            tiny_bpe,
            R"("post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}], "special_tokens": {}}, )")),
        "post_processor.special_tokens[\"<s>\"]: missing"));
    EXPECT_TRUE(has(refused(tokenizer_json(tiny_bpe, R"("decoder": {"type": "CTC"}, )")),
                    "decoder.type: the decoder \"CTC\" is not supported"));
    EXPECT_TRUE(has(refused(tokenizer_json(tiny_bpe, R"("added_tokens": [{"content": "x"}], )")),
                    "added_tokens[0]: expected an object with the token's content and id"));
    EXPECT_TRUE(
        has(refused(tokenizer_json(tiny_bpe, R"("pre_tokenizer": {"type": "Metaspace", "replacement": "ab"}, )")),
            "pre_tokenizer.replacement: expected one character"));
    // Sequences nested without end.
    std::string deep = R"({"type": "Lowercase"})";
    for (int k = 0; k < 20; ++k) deep = R"({"type": "Sequence", "normalizers": [)" + deep + "]}";
    EXPECT_TRUE(has(refused(tokenizer_json(tiny_bpe, R"("normalizer": )" + deep + ", ")), "nested more than 16"));
}

// tokenizer_config.json beside a tokenizer.json: the BOS/EOS rules of transformers' class, and every
// malformed field refused naming the config file.
TEST_F(TokenizerFiles, TokenizerConfigRulesAreAppliedAndCheckedNamingTheFile) {
    const std::string bpe =
        R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3, "</s>": 4}, "merges": ["a b"]})";
    const std::string added = R"("added_tokens": [{"id": 3, "content": "<s>", "special": true},
                                                   {"id": 4, "content": "</s>", "special": true}], )";
    write("t/tokenizer.json", tokenizer_json(bpe, added));
    const auto ids = [&](const std::string& config) {
        write("t/tokenizer_config.json", config);
        const Result<Tokenizer> t = attnviz::model::load_tokenizer((dir / "t").string());
        EXPECT_TRUE(t) << (t ? "" : t.problems.front().str());
        return t ? t.value->encode("ab").value->ids : std::vector<std::int32_t>{};
    };
    using V = std::vector<std::int32_t>;
    EXPECT_EQ(ids(R"({"tokenizer_class": "LlamaTokenizerFast"})"), (V{3, 2}));  // Llama's default: the BOS
    EXPECT_EQ(ids(R"({"tokenizer_class": "LlamaTokenizer", "add_bos_token": false, "add_eos_token": true})"),
              (V{2, 4}));
    EXPECT_EQ(ids(R"({"tokenizer_class": "GPTNeoXTokenizer", "bos_token": "<s>"})"), (V{2}));  // NeoX: neither
    EXPECT_EQ(
        ids(R"({"tokenizer_class": "GPTNeoXTokenizerFast", "add_bos_token": true, "bos_token": {"content": "<s>"}})"),
        (V{3, 2}));
    EXPECT_EQ(ids(R"({"tokenizer_class": "GPT2Tokenizer", "add_bos_token": true, "bos_token": "<s>"})"),
              (V{2}));  // GPT2TokenizerFast keeps tokenizer.json's post-processor (none here)
    for (const auto& [text, part] : std::vector<std::pair<std::string, std::string>>{
             {"[1, 2]", "expected a JSON object"},
             {R"({"tokenizer_class": "LlamaTokenizer", "add_bos_token": "yes"})",
              "add_bos_token: expected true or false"},
             {R"({"tokenizer_class": "GemmaTokenizer", "eos_token": 7})", "eos_token: expected a text"},
             {R"({"tokenizer_class": "GemmaTokenizer"})", "bos_token \"<bos>\" is not in the vocabulary"},
             {R"({"tokenizer_class": "LlamaTokenizer", "bos_token": null})", "bos_token is null"},
             {"{not json", "tokenizer_config.json"}}) {
        write("t/tokenizer_config.json", text);
        const std::string r = refusal(dir / "t");
        EXPECT_TRUE(has(r, part)) << text;
        EXPECT_TRUE(has(r, "tokenizer_config.json")) << r;
    }
}

TEST_F(TokenizerFiles, TruncationAndPaddingAreApplied) {
    const std::string model =
        R"({"type": "WordLevel", "vocab": {"<pad>": 0, "a": 1, "b": 2, "c": 3}, "unk_token": "<pad>"})";
    const std::string rest = R"("pre_tokenizer": {"type": "WhitespaceSplit"},
        "truncation": {"max_length": 2, "direction": "Left", "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 4}, "direction": "Right", "pad_to_multiple_of": null, "pad_id": 0,
                    "pad_type_id": 0, "pad_token": "<pad>"}, )";
    const Result<Tokenizer> t =
        attnviz::model::load_tokenizer(write("tokenizer.json", tokenizer_json(model, rest)).string());
    ASSERT_TRUE(t) << t.problems.front().str();
    // The last two of a b c, then padded to four.
    EXPECT_EQ(t.value->encode("a b c").value->ids, (std::vector<std::int32_t>{2, 3, 0, 0}));
    const std::string too_long = R"("padding": {"strategy": {"Fixed": 1000000}}, )";
    EXPECT_TRUE(has(refusal(write("tokenizer.json", tokenizer_json(model, too_long))),
                    "padding.strategy.Fixed: expected a whole number from 0 to 131072"));
}

TEST_F(TokenizerFiles, MalformedVocabularyFilesAreRefusedWithTheirLine) {
    write("g/vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
    write("g/merges.txt", "#version: 0.2\na b\nab\n");
    EXPECT_TRUE(has(refusal(dir / "g"), "merges.txt: line 3: expected two tokens separated by one space"));
    write("g/merges.txt", "a b\n\xC3\n");
    EXPECT_TRUE(has(refusal(dir / "g"), "merges.txt: line 2 is not UTF-8"));
    write("g/merges.txt", "a c\n");
    EXPECT_TRUE(has(refusal(dir / "g"), "merges.txt: merges[0]: \"c\" is not in the vocabulary"));
    write("g/vocab.json", R"(["a"])");
    EXPECT_TRUE(has(refusal(dir / "g"), "vocab.json: expected a JSON object"));
    write("g/vocab.json", R"({"a": "zero"})");
    EXPECT_TRUE(has(refusal(dir / "g"), "vocab.json: a: expected a token id"));

    write("b/vocab.txt", "[UNK]\n[CLS]\nhello\n");
    EXPECT_TRUE(has(refusal(dir / "b"), "vocab.txt: no [SEP] token"));
    write("b/vocab.txt", "[UNK]\n[CLS]\n[SEP]\n\xFF\n");
    EXPECT_TRUE(has(refusal(dir / "b"), "vocab.txt: line 4 is not UTF-8"));
    write("b/vocab.txt", "[UNK]\n[CLS]\n[SEP]\nhello\n");
    write("b/tokenizer_config.json", R"({"do_lower_case": "yes"})");
    EXPECT_TRUE(has(refusal(dir / "b"), "tokenizer_config.json: do_lower_case: expected true or false"));
    write("b/tokenizer_config.json", R"({"do_lower_case": false})");
    const Result<Tokenizer> cased = attnviz::model::load_tokenizer((dir / "b").string());
    ASSERT_TRUE(cased);
    EXPECT_EQ(cased.value->encode("hello Hello").value->tokens,
              (std::vector<std::string>{"[CLS]", "hello", "[UNK]", "[SEP]"}));

    write("s/tokenizer.model", "not a protobuf");
    EXPECT_TRUE(has(refusal(dir / "s"), "tokenizer.model: not a SentencePiece model"));
}

TEST_F(TokenizerFiles, TextThatIsNotUtf8IsRefused) {
    for (const char* name : {"gpt2-tiny", "sentencepiece-tiny"}) {
        const Result<Tokenizer> t = attnviz::model::load_tokenizer((data_dir / name).string());
        ASSERT_TRUE(t);
        const auto e = t.value->encode("ok \xC3(");
        ASSERT_FALSE(e);
        EXPECT_TRUE(has(e.problems.front().str(), "the text is not UTF-8 (byte 3)"));
    }
}

}  // namespace
