// `attnviz forward`, run as a process: the JSON it writes for each reference model against the
// forward pass of tests/reference/models/generate.py, and its errors and exit codes (nothing
// written then).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub_cache_tree.hpp"
#include "model_test_support.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using attnviz::test::expected_of;
using attnviz::test::max_error;
using attnviz::test::models_dir;
using attnviz::test::Outcome;
using attnviz::test::run_attnviz;
using attnviz::test::ScratchFolder;
using attnviz::test::slurp;
using nlohmann::json;

std::string model(const std::string& name) { return (models_dir / name).string(); }

// The largest error of a JSON array of rows against another (max_error's measure).
double max_error(const json& got, const json& want) {
    const bool vector = !got.empty() && got[0].is_number();
    Eigen::MatrixXd m(vector ? 1 : got.size(), vector ? got.size() : got.empty() ? 0 : got[0].size());
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            const json& row = vector ? got : got[static_cast<size_t>(i)];
            if (static_cast<Eigen::Index>(row.size()) != m.cols()) return INFINITY;
            m(i, j) = row[static_cast<size_t>(j)].get<double>();
        }
    return attnviz::test::max_error(m, want);
}

// The tokens of a tokenizer fixture's case (Hugging Face's pieces for the text).
json fixture_tokens(const std::string& tokenizer, const std::string& text) {
    const json f = json::parse(slurp(fs::path(ATTNVIZ_TESTS_DIR) / "model/fixtures" / (tokenizer + ".json")));
    for (const json& c : f.at("cases"))
        if (c.at("text") == text && c.at("add_special") == true) return c.at("tokens");
    return {};
}

class ForwardCli : public ::testing::Test {
protected:
    // forward with these arguments, -o the scratch folder's out.json; its JSON when it succeeded.
    Outcome run(std::vector<std::string> args) {
        args.insert(args.begin(), "forward");
        args.insert(args.end(), {"-o", out.string()});
        return run_attnviz(args);
    }
    json written() const { return json::parse(slurp(out)); }

    ScratchFolder scratch;
    fs::path out = scratch.path / "out.json";
};

// Every field against the reference, for every model, in double and float.
TEST_F(ForwardCli, WritesEveryLayerTheHiddenStateAndThePrediction) {
    const std::vector<std::pair<std::string, std::string>> models = {
        {"gpt2", "gpt2-tiny"},    {"bert", "bert-tiny"},   {"roberta", "roberta-tiny"},
        {"llama", "llama2-tiny"}, {"qwen2", "qwen2-tiny"}, {"olmo2", "llama2-tiny"}};
    for (const auto& [name, tokenizer] : models)
        for (const auto& [dtype, tolerance] :
             std::vector<std::pair<std::string, double>>{{"double", 1e-9}, {"float", 2e-5}}) {
            SCOPED_TRACE(name + " " + dtype);
            const json e = expected_of(name);
            const Outcome o = run({model(name), "--text", e.at("text"), "--dtype", dtype});
            ASSERT_EQ(o.code, 0) << o.err;
            EXPECT_EQ(o.err, "");
            EXPECT_EQ(o.out, "");
            const json got = written();
            EXPECT_EQ(got.at("format"), "attnviz-forward");
            EXPECT_EQ(got.at("model_type"), name);
            EXPECT_EQ(got.at("dtype"), dtype);
            EXPECT_EQ(got.at("token_ids"), e.at("token_ids"));
            EXPECT_EQ(got.at("tokens"), fixture_tokens(tokenizer, e.at("text")));
            ASSERT_EQ(got.at("layers").size(), e.at("layers").size());
            for (size_t L = 0; L < e["layers"].size(); ++L) {
                const json& heads = got["layers"][L].at("weights");
                ASSERT_EQ(heads.size(), e["layers"][L]["weights"].size());
                for (size_t h = 0; h < heads.size(); ++h)
                    EXPECT_LE(max_error(heads[h], e["layers"][L]["weights"][h]), tolerance) << L << " " << h;
            }
            EXPECT_LE(max_error(got.at("hidden"), e.at("hidden")), tolerance);
            if (!e.contains("logits_last")) {  // an encoder: no prediction
                EXPECT_FALSE(got.contains("logits_last"));
                EXPECT_FALSE(got.contains("top"));
                continue;
            }
            EXPECT_LE(max_error(got.at("logits_last"), e["logits_last"]), tolerance);
            ASSERT_EQ(got.at("top").size(), 10u);
            for (size_t k = 0; k < 10; ++k) {
                EXPECT_EQ(got["top"][k].at("id"), e["top"][k].at("id"));
                EXPECT_NEAR(got["top"][k].at("p").get<double>(), e["top"][k].at("p").get<double>(), tolerance);
            }
        }
}

TEST_F(ForwardCli, TokenIdsAndTopK) {
    const json e = expected_of("gpt2");
    std::string ids;
    for (const json& id : e.at("token_ids")) ids += (ids.empty() ? "" : ",") + id.dump();
    ASSERT_EQ(run({model("gpt2"), "--text", e.at("text"), "--dtype", "double"}).code, 0);
    const json from_text = written();
    const Outcome o = run({model("gpt2"), "--token-ids", ids, "--dtype", "double", "--top", "3"});
    ASSERT_EQ(o.code, 0) << o.err;
    const json from_ids = written();
    EXPECT_EQ(from_ids.at("tokens"), from_text.at("tokens"));  // the pieces of the ids
    EXPECT_EQ(from_ids.at("layers"), from_text.at("layers"));
    EXPECT_EQ(from_ids.at("logits_last"), from_text.at("logits_last"));
    ASSERT_EQ(from_ids.at("top").size(), 3u);
    EXPECT_EQ(from_ids["top"][0], from_text["top"][0]);
    // The top token's piece, and its probability as the softmax of the logits gives it.
    EXPECT_EQ(from_ids["top"][0].at("token"), "ðŁ");
    ASSERT_EQ(run({model("gpt2"), "--token-ids", " 5, 7 ", "--top", "0"}).code, 0);
    EXPECT_EQ(written().at("top"), json::array());
    EXPECT_EQ(written().at("token_ids"), json({5, 7}));
}

TEST_F(ForwardCli, WithoutATokenizerIdsAreLabelledByThemselves) {
    const fs::path dir = scratch.copy_of("llama");
    fs::remove(dir / "tokenizer.json");
    const Outcome o = run({dir.string(), "--token-ids", "1,315"});
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.err.find("note: no tokenizer"), std::string::npos) << o.err;
    EXPECT_EQ(written().at("tokens"), json({"#1", "#315"}));
    EXPECT_EQ(written().at("top")[0].at("token").get<std::string>()[0], '#');
    const Outcome text = run({dir.string(), "--text", "Hello"});
    EXPECT_EQ(text.code, 2);
    EXPECT_NE(text.err.find("no tokenizer in the folder"), std::string::npos) << text.err;
}

// A model named as on the hub runs from the local cache ($HF_HUB_CACHE: symlinked blobs, refs/main),
// for forward and tokenize alike; one not there is refused, naming where it was looked for (exit 1).
TEST_F(ForwardCli, AHubNameRunsTheModelOfTheLocalCache) {
    const fs::path cache = scratch.path / "hub";
    attnviz::test::add_to_hub_cache(cache, "models--EleutherAI--pythia-tiny", models_dir / "pythia",
                                    "0123456789abcdef0123456789abcdef01234567");
    ASSERT_EQ(setenv("HF_HUB_CACHE", cache.c_str(), 1), 0);
    const json e = expected_of("pythia");
    const Outcome o = run({"EleutherAI/pythia-tiny", "--text", e.at("text"), "--dtype", "double"});
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(written().at("model_type"), "gpt_neox");
    EXPECT_EQ(written().at("token_ids"), e.at("token_ids"));
    EXPECT_LE(max_error(written().at("hidden"), e.at("hidden")), 1e-9);
    const Outcome tokens = run_attnviz({"tokenize", "EleutherAI/pythia-tiny", "--text", e.at("text")});
    ASSERT_EQ(tokens.code, 0) << tokens.err;
    EXPECT_EQ(json::parse(tokens.out).at("ids"), e.at("token_ids"));

    scratch.write(out, "before");
    const Outcome missing = run({"EleutherAI/pythia-huge", "--text", "x"});
    unsetenv("HF_HUB_CACHE");
    EXPECT_EQ(missing.code, 1);
    EXPECT_EQ(missing.err.rfind("error: EleutherAI/pythia-huge: no such folder here, nor in the Hugging Face hub "
                                "cache (looked in " +
                                    (cache / "models--EleutherAI--pythia-huge").string(),
                                0),
              0u)
        << missing.err;
    EXPECT_NE(missing.err.find("huggingface-cli download EleutherAI/pythia-huge"), std::string::npos) << missing.err;
    EXPECT_EQ(slurp(out), "before");
}

// Each failure: its exit code and message, and the output left as it was.
TEST_F(ForwardCli, ErrorsAndExitCodesWriteNothing) {
    scratch.write(out, "before");
    const auto refused = [&](const std::vector<std::string>& args, int code, const std::string& part) {
        SCOPED_TRACE(args.front() + " " + (args.size() > 1 ? args[1] : ""));
        const Outcome o = run(args);
        EXPECT_EQ(o.code, code) << o.err;
        EXPECT_NE(o.err.find(part), std::string::npos) << o.err;
        EXPECT_EQ(o.err.rfind("error: ", 0), 0u) << o.err;
        EXPECT_EQ(slurp(out), "before");
    };
    refused({"/nonexistent/model", "--text", "x"}, 1, "error: /nonexistent/model: no such folder");
    refused({(models_dir / "..").string(), "--text", "x"}, 2, "no config.json");
    const fs::path bad = scratch.copy_of("gpt2");
    json config = json::parse(slurp(bad / "config.json"));
    config["n_head"] = 0;
    scratch.write(bad / "config.json", config.dump());
    refused({bad.string(), "--text", "x"}, 2,
            "error: " + (bad / "config.json").string() + ": n_head: expected a whole number from 1 to 256, got 0");
    const fs::path bin = scratch.path / "bin";
    fs::create_directories(bin);
    fs::copy_file(models_dir / "gpt2/config.json", bin / "config.json");
    scratch.write(bin / "pytorch_model.bin", "");
    refused({bin.string(), "--text", "x"}, 2, "save_file(");
    refused({model("gpt2"), "--text", "bad \xFF byte"}, 2, "error: --text: the text is not UTF-8 (byte 4)");
    refused({model("gpt2"), "--text", ""}, 2, "error: --text: no tokens");
    refused({model("gpt2"), "--token-ids", "1,402"}, 2,
            "error: --token-ids: token id 402 (token 2) is outside the vocabulary of 402 ids");
    refused({model("gpt2"), "--token-ids", "1,x"}, 2, "error: --token-ids: \"x\" is not a token id");
    refused({model("gpt2"), "--token-ids", "1,,2"}, 2, "error: --token-ids: \"\" is not a token id");
    refused({model("gpt2"), "--text", "x", "--dtype", "half"}, 2, "error: --dtype: expected float or double");
    refused({model("gpt2"), "--text", "x", "--token-ids", "1"}, 2, "excludes");
    refused({model("gpt2")}, 2, "--text TEXT or as --token-ids");
    refused({model("gpt2"), "--text", "x", "--memory-budget", "1K"}, 2, "over the memory budget of 1 KiB");
    // A model too long for GPT-2's 32 positions.
    std::string long_ids = "1";
    for (int i = 0; i < 32; ++i) long_ids += ",1";
    refused({model("gpt2"), "--token-ids", long_ids}, 2, "beyond the model's position table of 32");
    // Output that cannot be written: 1.
    const Outcome o = run_attnviz({"forward", model("gpt2"), "--text", "x", "-o", "/nonexistent/dir/out.json"});
    EXPECT_EQ(o.code, 1) << o.err;
    EXPECT_EQ(o.err.rfind("error: /nonexistent/dir/out.json", 0), 0u) << o.err;
}

// `attnviz import` of a model folder: each block's session, X its true attention input (the
// reference forward's, to 1e-9), the heads and K/V groups of the config, the tokenizer's pieces as
// labels; one layer to a file, several to a folder; what the folder settles refused.
class ImportFolderCli : public ForwardCli {
protected:
    Outcome import(std::vector<std::string> args, const fs::path& to) {
        args.insert(args.begin(), "import");
        args.insert(args.end(), {"-o", to.string()});
        return run_attnviz(args);
    }
    static void expect_layer(const json& session, const json& e, size_t layer, const std::string& tokenizer) {
        SCOPED_TRACE("layer " + std::to_string(layer));
        EXPECT_EQ(session.at("format"), "attnviz-session");
        EXPECT_LE(max_error(session.at("X"), e["layers"][layer]["attention_input"]), 1e-9);
        EXPECT_EQ(session.at("tokens"), fixture_tokens(tokenizer, e.at("text")));
        EXPECT_EQ(session.at("heads").size(), e["layers"][layer]["weights"].size());
    }
};

TEST_F(ImportFolderCli, EachBlocksSessionHasItsTrueInput) {
    const json gpt2 = expected_of("gpt2");
    const fs::path one = scratch.path / "gpt2-layer1.json";
    Outcome o = import({model("gpt2"), "--layer", "1", "--text", gpt2.at("text")}, one);
    ASSERT_EQ(o.code, 0) << o.err;
    expect_layer(json::parse(slurp(one)), gpt2, 1, "gpt2-tiny");
    // Sharded BF16 Llama with K/V groups, every layer into a folder; the ids given instead of a text.
    const json llama = expected_of("llama");
    std::string ids;
    for (const json& id : llama.at("token_ids")) ids += (ids.empty() ? "" : ",") + std::to_string(id.get<int>());
    const fs::path dir = scratch.path / "llama-layers";
    o = import({model("llama"), "--layer", "all", "--token-ids", ids}, dir);
    ASSERT_EQ(o.code, 0) << o.err;
    ASSERT_GE(llama.at("layers").size(), 2u);
    for (size_t L = 0; L < llama["layers"].size(); ++L) {
        const json s = json::parse(slurp(dir / ("layer-0" + std::to_string(L) + ".json")));
        expect_layer(s, llama, L, "llama2-tiny");
        EXPECT_LT(s.at("config").value("kv_heads", 0), static_cast<int>(s.at("heads").size()));
    }
}

TEST_F(ImportFolderCli, WhatTheFolderSettlesIsRefused) {
    const fs::path to = scratch.path / "s.json";
    const auto refused = [&](const std::vector<std::string>& args, const std::string& part) {
        SCOPED_TRACE(args.size() > 1 ? args[1] : args[0]);
        const Outcome o = import(args, to);
        EXPECT_EQ(o.code, 2) << o.err;
        EXPECT_NE(o.err.find(part), std::string::npos) << o.err;
        EXPECT_FALSE(fs::exists(to));
    };
    refused({model("gpt2")}, "give --text TEXT or --token-ids");
    refused({model("gpt2"), "--text", "x", "--heads", "2"}, "error: --heads, --kv-heads, --rope-base: a model folder");
    refused({model("gpt2"), "--text", "x", "--convention", "gpt2"}, "error: --convention: a model folder");
    refused({model("gpt2"), "--text", "x", "--tokens", "a"}, "error: --tokens, --tokens-file: a model folder");
    refused({model("gpt2"), "--text", "x", "--layer", "2"}, "--layer");
    refused({(models_dir / "gpt2" / "model.safetensors").string(), "--text", "x"},
            "error: --text: a checkpoint file has no tokenizer");
}

}  // namespace

namespace {

// `attnviz bench --model`: one JSON object, median_ms first, describing the model it ran; n beyond
// the model's positions and a folder that is not a model are refused.
TEST(BenchModelCli, TimesTheModelsForwardPassAndSaysWhatRan) {
    for (const std::string name : {"gpt2", "bert", "llama"}) {
        const json config = json::parse(slurp(models_dir / name / "config.json"));
        const Outcome r =
            run_attnviz({"bench", "--model", model(name), "--n", "7", "--reps", "2", "--dtype", "double", "--json"});
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.out.rfind("{\"median_ms\":", 0), 0u) << r.out;
        const json j = json::parse(r.out);
        EXPECT_EQ(j.at("model_type"), name);
        EXPECT_EQ(j.at("n"), 7);
        EXPECT_EQ(j.at("layers"), config.contains("n_layer") ? config["n_layer"] : config["num_hidden_layers"]);
        EXPECT_EQ(j.at("vocab_size"), config.at("vocab_size"));
        EXPECT_EQ(j.at("dtype"), "double");
        EXPECT_EQ(j.at("reps"), 2);
        EXPECT_GT(j.at("median_ms").get<double>(), 0);
        EXPECT_LE(j.at("min_ms").get<double>(), j.at("median_ms").get<double>());
    }
    const Outcome long_n = run_attnviz({"bench", "--model", model("gpt2"), "--n", "33", "--reps", "1"});
    EXPECT_EQ(long_n.code, 2);
    EXPECT_NE(long_n.err.find("--n 33: 33 tokens need position 32, beyond the model's position table of 32"),
              std::string::npos)
        << long_n.err;
    ScratchFolder s;
    const Outcome no_model = run_attnviz({"bench", "--model", s.path.string(), "--n", "4"});
    EXPECT_EQ(no_model.code, 2);
    EXPECT_NE(no_model.err.find("config.json"), std::string::npos) << no_model.err;
}

}  // namespace
