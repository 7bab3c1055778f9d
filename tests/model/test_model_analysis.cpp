// What the model view shows beside the attention (core/model/analysis.hpp), on the tiny models of
// tests/reference/models against tests/reference/models/generate.py's float64 computation from the
// definitions: residual norms and attention rollout of every model, the logit lens of the causal
// LMs; and the top tokens at a temperature against the softmax written out.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/model/analysis.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::model::ModelFolder;
using attnviz::model::RunState;
using attnviz::test::expected_of;
using attnviz::test::max_error;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using attnviz::test::run_expected;
using nlohmann::json;

const std::vector<std::string> models = {"gpt2",   "bert",  "roberta",         "llama",  "qwen2", "llama3", "mistral",
                                         "pythia", "gemma", "neox-sequential", "gemma2", "phi3",  "olmo2"};

TEST(ModelAnalysis, ResidualNormsAndRolloutAgreeWithTheDefinitions) {
    for (const std::string& name : models) {
        SCOPED_TRACE(name);
        const json e = expected_of(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, e);
        const attnviz::core::Matrix norms = attnviz::model::residual_norms(s);
        EXPECT_EQ(norms.rows(), static_cast<Eigen::Index>(s.layers.size()) + 1);
        EXPECT_LE(max_error(norms, e.at("residual_norms")), 1e-9);
        const std::vector<attnviz::core::Matrix> rollout = attnviz::model::attention_rollout(s);
        ASSERT_EQ(rollout.size(), e.at("rollout").size());
        for (size_t l = 0; l < rollout.size(); ++l) {
            EXPECT_LE(max_error(rollout[l], e["rollout"][l]), 1e-9) << "after block " << l;
            EXPECT_LE((rollout[l].rowwise().sum().array() - 1).abs().maxCoeff(), 1e-12);  // rows are distributions
            if (m.config().causal()) {  // nothing flows back from a later token
                EXPECT_EQ(rollout[l].triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff(), 0);
            }
        }
    }
}

TEST(ModelAnalysis, TheLogitLensAgreesWithTheDefinitionAndEndsInThePrediction) {
    for (const std::string name : {"gpt2", "llama", "qwen2"}) {
        SCOPED_TRACE(name);
        const json e = expected_of(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, e);
        const attnviz::core::Result<attnviz::model::LogitLens> lens = attnviz::model::logit_lens(m, s);
        ASSERT_TRUE(lens) << lens.problems.front().str();
        const json& ids = e.at("lens_ids");
        ASSERT_EQ(lens.value->ids.rows(), static_cast<Eigen::Index>(ids.size()));
        for (Eigen::Index l = 0; l < lens.value->ids.rows(); ++l)
            for (Eigen::Index i = 0; i < lens.value->ids.cols(); ++i)
                EXPECT_EQ(lens.value->ids(l, i), ids[static_cast<size_t>(l)][static_cast<size_t>(i)].get<int>())
                    << "stream " << l << " position " << i;
        EXPECT_LE(max_error(lens.value->p, e.at("lens_p")), 1e-9);
        // The last stream at the last position is the model's own prediction.
        const Eigen::Index L = lens.value->ids.rows() - 1, last = lens.value->ids.cols() - 1;
        EXPECT_EQ(lens.value->ids(L, last), e.at("top")[0].at("id").get<int>());
        EXPECT_NEAR(lens.value->p(L, last), e["top"][0].at("p").get<double>(), 1e-12);
    }
}

TEST(ModelAnalysis, TheLogitLensIsRefusedWithoutAnLmHeadOrAWholeRun) {
    const ModelFolder bert = open_model("bert");
    const attnviz::core::Result<attnviz::model::LogitLens> none =
        attnviz::model::logit_lens(bert, run_expected<double>(bert, expected_of("bert")));
    ASSERT_FALSE(none);
    EXPECT_NE(none.problems.front().message.find("no LM head"), std::string::npos);
    const ModelFolder gpt2 = open_model("gpt2");
    const attnviz::core::Result<RunState<double>> part = attnviz::model::run_model<double>(
        gpt2, expected_of("gpt2").at("token_ids").get<std::vector<std::int32_t>>(), {}, 1 << 30, 1);
    ASSERT_TRUE(part);
    EXPECT_FALSE(attnviz::model::logit_lens(gpt2, *part.value));
}

// Asked to stop, the lens ends early with a problem instead of a lens (the app's newer run cancels
// it); asked and told to go on, it is the lens.
TEST(ModelAnalysis, TheLogitLensStopsWhenAsked) {
    const ModelFolder gpt2 = open_model("gpt2");
    const RunState<double> s = run_expected<double>(gpt2, expected_of("gpt2"));
    int asked = 0;
    const attnviz::core::Result<attnviz::model::LogitLens> stopped =
        attnviz::model::logit_lens(gpt2, s, [&asked] { return ++asked > 0; });
    ASSERT_FALSE(stopped);
    EXPECT_EQ(asked, 1);
    EXPECT_NE(stopped.problems.front().message.find("stopped"), std::string::npos);
    const attnviz::core::Result<attnviz::model::LogitLens> whole = attnviz::model::logit_lens(gpt2, s);
    const attnviz::core::Result<attnviz::model::LogitLens> went_on = attnviz::model::logit_lens(gpt2, s,
                                                                                                [] { return false; });
    ASSERT_TRUE(whole && went_on);
    EXPECT_TRUE(whole.value->ids == went_on.value->ids);
    EXPECT_TRUE(whole.value->p == went_on.value->p);
}

TEST(ModelAnalysis, TopTokensAtATemperatureAreTheScaledSoftmaxsLargest) {
    const Eigen::RowVectorXd logits{{2.0, -1.0, 3.5, 3.5, 0.25}};
    for (const double T : {1.0, 0.5, 2.0, 10.0}) {
        SCOPED_TRACE(T);
        const std::vector<attnviz::model::TopToken> top = attnviz::model::top_tokens(logits, 3, T);
        ASSERT_EQ(top.size(), 3u);
        double sum = 0;
        for (Eigen::Index j = 0; j < logits.size(); ++j) sum += std::exp(logits(j) / T);
        EXPECT_EQ(top[0].id, 2);  // 3.5 twice: the smaller id first
        EXPECT_EQ(top[1].id, 3);
        EXPECT_EQ(top[2].id, 0);
        EXPECT_NEAR(top[0].p, std::exp(3.5 / T) / sum, 1e-15);
        EXPECT_NEAR(top[2].p, std::exp(2.0 / T) / sum, 1e-15);
    }
    EXPECT_EQ(attnviz::model::top_tokens(logits, 9).size(), 5u);  // no more than the vocabulary
    EXPECT_TRUE(attnviz::model::top_tokens(logits, 3, 0).empty());
    EXPECT_TRUE(attnviz::model::top_tokens(logits, 3, -1).empty());
    // A low temperature sharpens: the top probability rises.
    EXPECT_GT(attnviz::model::top_tokens(Eigen::RowVectorXd{{1.0, 0.0}}, 1, 0.1)[0].p,
              attnviz::model::top_tokens(Eigen::RowVectorXd{{1.0, 0.0}}, 1, 1.0)[0].p);
}

}  // namespace
