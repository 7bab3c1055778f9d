// `attnviz analyze`, run as a process on the random sessions of tests/reference/lab against the
// analyses tests/reference/lab/generate.py computed with NumPy from the definitions; and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <nlohmann/json.hpp>
#include <string>

#include "model/process.hpp"

namespace {

namespace fs = std::filesystem;
using attnviz::test::Outcome;
using attnviz::test::run_attnviz;
using attnviz::test::slurp;
using nlohmann::json;

const fs::path lab = fs::path(ATTNVIZ_TESTS_DIR) / "reference/lab";

// The largest difference of two equally nested arrays of numbers (or two numbers); infinity when
// their shapes differ.
double max_difference(const json& a, const json& b) {
    if (a.is_number() && b.is_number()) return std::abs(a.get<double>() - b.get<double>());
    if (!a.is_array() || !b.is_array() || a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, max_difference(a[i], b[i]));
    return worst;
}

TEST(AnalyzeCli, EveryHeadsAnalysesAgreeWithNumPy) {
    const json expected = json::parse(slurp(lab / "expected.json")).at("cases");
    ASSERT_GE(expected.size(), 5u);
    for (const auto& [name, want] : expected.items()) {
        SCOPED_TRACE(name);
        const Outcome r = run_attnviz({"analyze", (lab / name).string()});
        ASSERT_EQ(r.code, 0) << r.err;
        const json got = json::parse(r.out);
        EXPECT_EQ(got.at("format"), "attnviz-analysis");
        ASSERT_EQ(got.at("heads").size(), want.at("heads").size());
        for (size_t h = 0; h < want["heads"].size(); ++h) {
            const json &g = got["heads"][h], &w = want["heads"][h];
            for (const auto& [key, value] : w.items()) {
                ASSERT_TRUE(g.contains(key)) << "head " << h << ": " << key;
                if (key == "ov_eigenvalues") {  // equal magnitudes (conjugate pairs) may come in either order
                    ASSERT_EQ(g[key].size(), value.size());
                    for (const json& l : value) {
                        const std::complex<double> want_l(l[0].get<double>(), l[1].get<double>());
                        double nearest = INFINITY;
                        for (const json& m : g[key])
                            nearest = std::min(nearest, std::abs(std::complex<double>(m[0], m[1]) - want_l));
                        EXPECT_LT(nearest, 1e-9) << "head " << h << " eigenvalue " << want_l;
                    }
                    continue;
                }
                EXPECT_LE(max_difference(g[key], value), 1e-9) << "head " << h << ": " << key;
            }
            EXPECT_EQ(g.size(), w.size()) << "head " << h << ": fields beyond NumPy's";
        }
    }
}

// A model's analysis is, layer by layer, the analysis of the session `import` makes of that layer;
// a causal LM's head ablations move the next-token distribution (KL ≥ 0, some > 0) and leave the
// run as it was (the layers analysed after them agree with import's sessions).
TEST(AnalyzeCli, AModelsLayersAreAnalysedAsTheirImportedSessions) {
    const fs::path models = fs::path(ATTNVIZ_TESTS_DIR) / "reference/models";
    char dir_name[] = "/tmp/attnviz-analyze-XXXXXX";
    ASSERT_NE(mkdtemp(dir_name), nullptr);
    const fs::path dir = dir_name;
    for (const std::string name : {"gpt2", "bert"}) {
        SCOPED_TRACE(name);
        const Outcome r = run_attnviz({"analyze", (models / name).string(), "--text", "Hello world"});
        ASSERT_EQ(r.code, 0) << r.err;
        const json got = json::parse(r.out);
        EXPECT_EQ(got.at("model_type"), name);
        ASSERT_EQ(got.at("layers").size(), 2u);
        double largest_kl = 0;
        for (size_t l = 0; l < 2; ++l) {
            const fs::path session = dir / (name + std::to_string(l) + ".json");
            const Outcome imported = run_attnviz({"import", (models / name).string(), "--text", "Hello world",
                                                  "--layer", std::to_string(l), "-o", session.string()});
            ASSERT_EQ(imported.code, 0) << imported.err;
            const Outcome one = run_attnviz({"analyze", session.string()});
            ASSERT_EQ(one.code, 0) << one.err;
            const json want = json::parse(one.out).at("heads");
            const json& heads = got["layers"][l]["heads"];
            ASSERT_EQ(heads.size(), want.size());
            for (size_t h = 0; h < want.size(); ++h) {
                for (const auto& [key, value] : want[h].items()) {
                    if (key == "ov_eigenvalues") continue;  // compared by test EveryHeadsAnalysesAgreeWithNumPy
                    EXPECT_LE(max_difference(heads[h].at(key), value), 1e-9) << l << h << key;
                }
                EXPECT_EQ(heads[h].contains("ablation_next_token"), name == "gpt2");
                if (!heads[h].contains("ablation_next_token")) continue;
                const json& a = heads[h]["ablation_next_token"];
                EXPECT_GE(a.at("kl").get<double>(), 0);
                largest_kl = std::max(largest_kl, a["kl"].get<double>());
                EXPECT_EQ(a.at("top").size(), 5u);
            }
        }
        if (name == "gpt2") {
            EXPECT_GT(largest_kl, 1e-6);
            EXPECT_EQ(got.at("top").size(), 5u);
        }
    }
    fs::remove_all(dir);
}

// A ranking as analyze writes it ([{"id", "token", "value"}, …]) as NumPy's [[id, value], …].
json as_pairs(const json& ranking) {
    json out = json::array();
    for (const json& r : ranking) out.push_back({r.at("id"), r.at("value")});
    return out;
}

// A model's token circuits (every head) and layer 0's position split (models with learned
// positions) are tests/reference/models/circuits.py's NumPy computation from the stored weights.
TEST(AnalyzeCli, AModelsTokenCircuitsAndPositionSplitAgreeWithNumPy) {
    const fs::path models = fs::path(ATTNVIZ_TESTS_DIR) / "reference/models";
    for (const std::string name : {"gpt2", "bert", "llama"}) {
        SCOPED_TRACE(name);
        const json want = json::parse(slurp(models / name / "circuits.json"));
        const Outcome r = run_attnviz({"analyze", (models / name).string(), "--text", "Hello world"});
        ASSERT_EQ(r.code, 0) << r.err;
        const json got = json::parse(r.out);
        ASSERT_EQ(got.at("layers").size(), want.at("token_circuits").size());
        for (size_t l = 0; l < got["layers"].size(); ++l) {
            const json& heads = got["layers"][l].at("heads");
            const json& w = want["token_circuits"][l];
            ASSERT_EQ(heads.size(), w.at("heads").size());
            for (size_t h = 0; h < heads.size(); ++h) {
                const json& c = heads[h].at("token_circuits");
                ASSERT_EQ(c.at("tokens").size(), w.at("tokens").size());
                for (size_t t = 0; t < c["tokens"].size(); ++t) {
                    EXPECT_EQ(c["tokens"][t].at("id"), w["tokens"][t]);
                    EXPECT_TRUE(c["tokens"][t].at("token").is_string());
                }
                const json& wh = w["heads"][h];
                EXPECT_LE(max_difference(c.at("qk"), wh.at("qk")), 1e-9) << l << " " << h;
                ASSERT_EQ(c.at("top_keys").size(), wh.at("top_keys").size());
                for (size_t t = 0; t < wh["top_keys"].size(); ++t) {
                    EXPECT_LE(max_difference(as_pairs(c["top_keys"][t]), wh["top_keys"][t]), 1e-9) << l << h << t;
                    EXPECT_LE(max_difference(as_pairs(c.at("top_outputs")[t]), wh.at("top_outputs")[t]), 1e-9)
                        << l << h << t;
                }
                ASSERT_EQ(c.at("top_pairs").size(), 5u);
                EXPECT_GE(c["top_pairs"][0].at("value").get<double>(), c["top_pairs"][4].at("value").get<double>());
                EXPECT_EQ(heads[h].contains("position_split"), l == 0 && name != "llama") << l << " " << h;
                if (!heads[h].contains("position_split")) continue;
                for (const auto& [part, value] : want.at("position_split")[h].items())
                    EXPECT_LE(max_difference(heads[h]["position_split"].at(part), value), 1e-9) << h << part;
                EXPECT_EQ(heads[h]["position_split"].size(), 5u);
            }
        }
    }
}

TEST(AnalyzeCli, ErrorsAndExitCodesAsCompute) {
    const Outcome missing = run_attnviz({"analyze", "/nonexistent/session.json"});
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("error: /nonexistent/session.json"), std::string::npos) << missing.err;
    const Outcome bad = run_attnviz({"analyze", (lab / "expected.json").string()});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("error: "), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.out.empty());
    const Outcome budget = run_attnviz({"analyze", (lab / "case-0.json").string(), "--memory-budget", "1K"});
    EXPECT_EQ(budget.code, 2);
    EXPECT_NE(budget.err.find("over the memory budget"), std::string::npos) << budget.err;
    const Outcome text = run_attnviz({"analyze", (lab / "case-0.json").string(), "--text", "hi"});
    EXPECT_EQ(text.code, 2);
    EXPECT_NE(text.err.find("--text and --token-ids are a model folder's input"), std::string::npos) << text.err;
    const Outcome no_input = run_attnviz({"analyze", (fs::path(ATTNVIZ_TESTS_DIR) / "reference/models/gpt2").string()});
    EXPECT_EQ(no_input.code, 2);
    EXPECT_NE(no_input.err.find("--text"), std::string::npos) << no_input.err;
}

}  // namespace
