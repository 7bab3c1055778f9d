// `attnviz tokenize`, run as a process: its JSON on stdout, its errors and exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path tests_dir = ATTNVIZ_TESTS_DIR;

using attnviz::test::Outcome;
using attnviz::test::slurp;
Outcome run(const std::vector<std::string>& args) { return attnviz::test::run_attnviz(args); }

std::string data(const std::string& name) { return (tests_dir / "model/data" / name).string(); }

// The fixture's case for this text.
json fixture_case(const std::string& fixture, const std::string& text, bool add_special) {
    const json f = json::parse(slurp(tests_dir / "model/fixtures" / (fixture + ".json")));
    for (const json& c : f.at("cases"))
        if (c.at("text") == text && c.at("add_special") == add_special) return c;
    return {};
}

TEST(TokenizeCli, PrintsTheIdsAndTokensOfHuggingFace) {
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"bert-tiny", "Hello world"},
             {"gpt2-tiny",
              "I'm sure you'll see we've done what they'd say; she's right, we're ready, don't you "
              "think? It's Tom's."},
             {"llama2-tiny",
              "Emoji \xF0\x9F\x98\x80\xF0\x9F\x98\x82 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xF0\x9F\x8E\x89 "
              "family \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 "
              "\xE2\x9D\xA4\xEF\xB8\x8F flag \xF0\x9F\x87\xAB\xF0\x9F\x87\xB7"},
             {"sentencepiece-tiny", "Hello world"},
             {"gpt2-classic", "Hello world"}}) {
        for (const bool special : {true, false}) {
            const json expected = fixture_case(name, text, special);
            ASSERT_FALSE(expected.is_null()) << name << ": no case for " << text;
            std::vector<std::string> args{"tokenize", data(name), "--text", text};
            if (!special) args.push_back("--no-special");
            const Outcome o = run(args);
            ASSERT_EQ(o.code, 0) << o.err;
            EXPECT_EQ(o.err, "");
            const json got = json::parse(o.out);
            EXPECT_EQ(got.size(), 2u);
            EXPECT_EQ(got.at("ids"), expected.at("ids")) << name;
            EXPECT_EQ(got.at("tokens"), expected.at("tokens")) << name;
        }
    }
}

TEST(TokenizeCli, SpecialTokensAreBertsClsSepAndLlamasBosOnly) {
    const json bert = json::parse(run({"tokenize", data("bert-vocab-txt/vocab.txt"), "--text", "the dog"}).out);
    EXPECT_EQ(bert.at("tokens"), json({"[CLS]", "the", "dog", "[SEP]"}));
    const json llama = json::parse(run({"tokenize", data("llama3-tiny/tokenizer.json"), "--text", "the dog"}).out);
    EXPECT_EQ(llama.at("tokens").front(), "<|begin_of_text|>");
    EXPECT_NE(llama.at("tokens").back(), "<|end_of_text|>");
    // GPT-2 adds nothing: the same with and without --no-special.
    const json gpt2 = json::parse(run({"tokenize", data("gpt2-tiny"), "--text", "Hello world"}).out);
    EXPECT_EQ(gpt2.at("ids"), fixture_case("gpt2-tiny", "Hello world", false).at("ids"));
    const json empty = json::parse(run({"tokenize", data("bert-tiny"), "--text", "", "--no-special"}).out);
    EXPECT_EQ(empty, json({{"ids", json::array()}, {"tokens", json::array()}}));
}

TEST(TokenizeCli, ErrorsAndExitCodes) {
    // A file that cannot be read: 1.
    Outcome o = run({"tokenize", "/nonexistent/model", "--text", "x"});
    EXPECT_EQ(o.code, 1);
    EXPECT_EQ(o.err, "error: /nonexistent/model: no such file or folder\n");
    EXPECT_EQ(o.out, "");
    // A folder without a tokenizer, an unsupported one, text that is not UTF-8: 2.
    o = run({"tokenize", (tests_dir / "model").string(), "--text", "x"});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("no tokenizer in the folder"), std::string::npos) << o.err;
    char name[] = "/tmp/attnviz-unigram-XXXXXX.json";
    const int fd = mkstemps(name, 5);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(name) << R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})";
    o = run({"tokenize", name, "--text", "x"});
    fs::remove(name);
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(o.err, std::string("error: ") + name +
                         ": model.type: the model \"Unigram\" is not supported (BPE, "
                         "WordPiece and WordLevel are)\n");
    o = run({"tokenize", data("gpt2-tiny"), "--text", "bad \xFF byte"});
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(o.err, "error: --text: the text is not UTF-8 (byte 4)\n");
    EXPECT_EQ(o.out, "");
    // Usage: --text is required.
    o = run({"tokenize", data("gpt2-tiny")});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("--text"), std::string::npos) << o.err;
}

}  // namespace
