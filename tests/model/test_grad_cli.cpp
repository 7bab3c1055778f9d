// `attnviz grad`, `attribute` and `patch`, run as processes: the safetensors file grad writes for a
// reference model against PyTorch's autograd (tests/reference/gradients, written by
// tests/reference/models/gradients.py), read back by attnviz's own reader, and attribute's and
// patch's JSON against the same file's attribution and patching; their errors and exit codes
// (nothing written then).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/io/tensors.hpp"
#include "model_test_support.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using attnviz::core::TensorFile;
using attnviz::test::expected_of;
using attnviz::test::models_dir;
using attnviz::test::Outcome;
using attnviz::test::run_attnviz;
using attnviz::test::ScratchFolder;
using nlohmann::json;

class GradCli : public ::testing::Test {
protected:
    Outcome run(std::vector<std::string> args) {
        args.insert(args.begin(), "grad");
        args.insert(args.end(), {"-o", out.string()});
        return run_attnviz(args);
    }
    static std::string ids_of(const std::string& name) {
        const json expected = expected_of(name);
        std::string ids;
        for (const json& id : expected.at("token_ids")) ids += (ids.empty() ? "" : ",") + id.dump();
        return ids;
    }

    ScratchFolder scratch;
    fs::path out = scratch.path / "grads.safetensors";
};

// Every tensor of the written file against the reference's "difference" objective: the same names
// and shapes as the folder's weights, values to 1e-9 of each tensor's largest entry.
TEST_F(GradCli, WritesEveryWeightsGradientAsAutogradHasIt) {
    for (const std::string name : {"gpt2", "llama", "qwen2"}) {
        SCOPED_TRACE(name);
        const auto ref = TensorFile::open((models_dir.parent_path() / "gradients" / (name + ".safetensors")).string());
        ASSERT_TRUE(ref);
        const json difference = json::parse(ref.value->metadata().at("objectives")).at(0);
        ASSERT_EQ(difference.at("name"), "difference");
        const Outcome o =
            run({(models_dir / name).string(), "--token-ids", ids_of(name), "--target", difference.at("target").dump(),
                 "--versus", difference.at("versus").dump(), "--dtype", "double"});
        ASSERT_EQ(o.code, 0) << o.err;
        const auto got = TensorFile::open(out.string());
        ASSERT_TRUE(got) << got.problems.front().str();
        const auto& meta = got.value->metadata();
        EXPECT_EQ(meta.at("objective_kind"), "difference");
        EXPECT_EQ(meta.at("target"), difference.at("target").dump());
        const double value = ref.value->read("difference.value").value->values[0];
        EXPECT_NEAR(std::stod(meta.at("objective")), value, 1e-9 * std::max(1.0, std::abs(value)));
        const auto weights = TensorFile::open((models_dir / name / "model.safetensors").string());
        size_t compared = 0;
        for (const attnviz::core::TensorInfo& info : got.value->tensors()) {
            SCOPED_TRACE(info.name);
            EXPECT_EQ(info.dtype, "F64");
            const auto want = ref.value->read("difference.weight." + info.name);
            ASSERT_TRUE(want);
            std::vector<double> whole = want.value->values;
            if (ref.value->find("difference.rows." + info.name)) {  // the reference keeps the rows that are not zero
                whole.assign(info.shape[0] * info.shape[1], 0.0);
                const std::vector<double> rows = ref.value->read("difference.rows." + info.name).value->values;
                for (size_t r = 0; r < rows.size(); ++r)
                    std::copy_n(want.value->values.begin() + static_cast<std::ptrdiff_t>(r * info.shape[1]),
                                info.shape[1],
                                whole.begin() +
                                    static_cast<std::ptrdiff_t>(rows[r] * static_cast<double>(info.shape[1])));
            }
            const std::vector<double> values = got.value->read(info.name).value->values;
            ASSERT_EQ(values.size(), whole.size());
            double scale = 1e-300, error = 0;
            for (size_t k = 0; k < values.size(); ++k) {
                scale = std::max(scale, std::abs(whole[k]));
                error = std::max(error, std::abs(values[k] - whole[k]));
            }
            EXPECT_LE(error / scale, 1e-9);
            ++compared;
        }
        if (weights) {
            EXPECT_EQ(compared, weights.value->tensors().size());
        }
    }
}

TEST_F(GradCli, FloatAndTheMeanLossByDefault) {
    const Outcome o = run({(models_dir / "gpt2").string(), "--text", "Hello world"});
    ASSERT_EQ(o.code, 0) << o.err;
    const auto got = TensorFile::open(out.string());
    ASSERT_TRUE(got);
    EXPECT_EQ(got.value->metadata().at("objective_kind"), "mean_loss");
    EXPECT_EQ(got.value->metadata().at("dtype"), "float");
    const auto ref = TensorFile::open((models_dir.parent_path() / "gradients" / "gpt2.safetensors").string());
    const double loss = ref.value->read("loss.value").value->values[0];
    EXPECT_NEAR(std::stod(got.value->metadata().at("objective")), loss, 1e-5 * loss);
    for (const attnviz::core::TensorInfo& info : got.value->tensors()) EXPECT_EQ(info.dtype, "F32") << info.name;
}

TEST_F(GradCli, RefusesWhatHasNoGradientAndWritesNothing) {
    const std::string gpt2 = (models_dir / "gpt2").string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{(models_dir / "bert").string(), "--text", "Hello world"}, "encoder without an LM head"},
        {{gpt2, "--text", "Hello world", "--versus", "3"}, "--versus needs --target"},
        {{gpt2, "--text", "Hello world", "--target", "or d"}, "--target \"or d\" is 2 tokens, not one"},
        {{gpt2, "--text", "Hello world", "--target", "99999"}, "the target token id 99999 is outside the vocabulary"},
        {{gpt2, "--text", "Hello world", "--target", "3", "--dtype", "half"}, "--dtype: expected float or double"},
    };
    for (const auto& [args, message] : cases) {
        const Outcome o = run(args);
        EXPECT_EQ(o.code, 2) << message;
        EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
        EXPECT_FALSE(fs::exists(out)) << message;
    }
}

TEST_F(GradCli, AttributeWritesWhatAutogradAndTheDefinitionsGive) {
    const auto ref = TensorFile::open((models_dir.parent_path() / "gradients" / "llama.safetensors").string());
    ASSERT_TRUE(ref);
    const json difference = json::parse(ref.value->metadata().at("objectives")).at(0);
    const fs::path out_json = scratch.path / "attribution.json";
    const Outcome o =
        run_attnviz({"attribute", (models_dir / "llama").string(), "--token-ids", ids_of("llama"), "--target",
                     difference.at("target").dump(), "--versus", difference.at("versus").dump(), "--steps", "16",
                     "--dtype", "double", "-o", out_json.string()});
    ASSERT_EQ(o.code, 0) << o.err;
    const json a = json::parse(attnviz::test::slurp(out_json));
    EXPECT_EQ(a.at("format"), "attnviz-attribution");
    EXPECT_EQ(a.at("target").at("id"), difference.at("target"));
    const auto near = [&](const json& got, const std::string& name) {
        const std::vector<double> want = ref.value->read(name).value->values;
        std::vector<double> flat;
        if (got.is_array())
            for (const json& v : got) flat.push_back(v.get<double>());
        else
            flat.push_back(got.get<double>());
        ASSERT_EQ(flat.size(), want.size()) << name;
        for (size_t i = 0; i < flat.size(); ++i)
            EXPECT_NEAR(flat[i], want[i], 1e-9 * std::max(1.0, std::abs(want[i]))) << name;
    };
    near(a.at("grad_x_input"), "attribution.grad_x_input");
    near(a.at("integrated_gradients"), "attribution.integrated_gradients");
    near(a.at("dla_mlps"), "attribution.dla_mlps");
    near(a.at("dla_embeddings"), "attribution.dla_embeddings");
    near(a.at("objective"), "attribution.objective");
    EXPECT_LE(a.at("dla_residual").get<double>(), 1e-9);
    EXPECT_EQ(a.at("attention_x_gradient").size(), 3u);
}

TEST_F(GradCli, PatchWritesWhatPatchedRunsOfTheDefinitionsGive) {
    const auto ref = TensorFile::open((models_dir.parent_path() / "gradients" / "gpt2.safetensors").string());
    ASSERT_TRUE(ref);
    const json meta = json::parse(ref.value->metadata().at("patching"));
    const auto ids = [](const json& list) {
        std::string text;
        for (const json& id : list) text += (text.empty() ? "" : ",") + id.dump();
        return text;
    };
    const fs::path out_json = scratch.path / "patching.json";
    const Outcome o =
        run_attnviz({"patch", (models_dir / "gpt2").string(), "--clean-token-ids", ids(meta.at("clean_ids")),
                     "--corrupt-token-ids", ids(meta.at("corrupt_ids")), "--target", meta.at("target").dump(),
                     "--versus", meta.at("versus").dump(), "--dtype", "double", "-o", out_json.string()});
    ASSERT_EQ(o.code, 0) << o.err;
    const json p = json::parse(attnviz::test::slurp(out_json));
    EXPECT_EQ(p.at("format"), "attnviz-patching");
    EXPECT_EQ(p.at("corrupt_token_ids"), meta.at("corrupt_ids"));
    for (const std::string field : {"heads", "residual", "attention"}) {
        const std::vector<double> want = ref.value->read("patching." + field).value->values;
        std::vector<double> got;
        for (const json& row : p.at(field))
            for (const json& v : row) got.push_back(v.get<double>());
        ASSERT_EQ(got.size(), want.size()) << field;
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << field << " " << i;
    }
    EXPECT_NEAR(p.at("clean_diff").get<double>(), ref.value->read("patching.clean_diff").value->values[0], 1e-12);
}

TEST_F(GradCli, PatchRefusesSentencesOfDifferentLengths) {
    const std::string gpt2 = (models_dir / "gpt2").string(), out_json = (scratch.path / "p.json").string();
    for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"patch", gpt2, "--clean", "Hello world", "--corrupt", "Hello", "--target", "3", "--versus", "4", "-o",
               out_json},
              "the clean sentence is 8 tokens and the corrupted one 4"},
             {{"patch", gpt2, "--clean", "Hello world", "--target", "3", "-o", out_json}, "--corrupt TEXT"},
             {{"patch", gpt2, "--clean", "Hello world", "--corrupt-token-ids", "1,x", "--target", "3", "-o", out_json},
              "--corrupt-token-ids: \"x\" is not a token id"}}) {
        const Outcome o = run_attnviz(args);
        EXPECT_EQ(o.code, 2) << message;
        EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
        EXPECT_FALSE(fs::exists(out_json));
    }
}

TEST_F(GradCli, HeadsWritesEveryScoreAndItsRanking) {
    const auto ref = TensorFile::open((models_dir.parent_path() / "gradients" / "gpt2.safetensors").string());
    ASSERT_TRUE(ref);
    const fs::path out_json = scratch.path / "heads.json";
    const Outcome o = run_attnviz({"heads", (models_dir / "gpt2").string(), "--seed", "1", "-o", out_json.string()});
    ASSERT_EQ(o.code, 0) << o.err;
    const json h = json::parse(attnviz::test::slurp(out_json));
    EXPECT_EQ(h.at("probe_token_ids"), json::parse(ref.value->metadata().at("heads")).at("probe"));
    EXPECT_EQ(h.at("probe_tokens").size(), h.at("probe_token_ids").size());
    for (const std::string key : {"previous_token", "induction", "duplicate_token", "sink", "diagonal", "copying"}) {
        const std::vector<double> want = ref.value->read("heads." + key).value->values;
        std::vector<double> got;
        for (const json& row : h.at("scores").at(key))
            for (const json& v : row) got.push_back(v.get<double>());
        ASSERT_EQ(got.size(), want.size()) << key;
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << key << " " << i;
        const json& ranked = h.at("ranked").at(key);
        ASSERT_EQ(ranked.size(), got.size());
        for (size_t i = 1; i < ranked.size(); ++i)
            EXPECT_GE(ranked[i - 1].at("score").get<double>(), ranked[i].at("score").get<double>()) << key;
    }
    const Outcome missing = run_attnviz({"heads", (scratch.path / "none").string(), "-o", out_json.string() + "2"});
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("no such folder"), std::string::npos) << missing.err;
}

TEST_F(GradCli, AttributeRefusesWithoutATargetOrWithBadSteps) {
    const std::string gpt2 = (models_dir / "gpt2").string(), out_json = (scratch.path / "a.json").string();
    for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"attribute", gpt2, "--text", "Hello world", "-o", out_json}, "--target is required"},
             {{"attribute", gpt2, "--text", "Hello world", "--target", "3", "--steps", "0", "-o", out_json}, "--steps"},
             {{"attribute", (models_dir / "bert").string(), "--text", "Hello world", "--target", "3", "-o", out_json},
              "encoder"}}) {
        const Outcome o = run_attnviz(args);
        EXPECT_EQ(o.code, 2) << message;
        EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
        EXPECT_FALSE(fs::exists(out_json));
    }
}

}  // namespace
