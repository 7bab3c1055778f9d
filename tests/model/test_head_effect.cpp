// A head ablated through a model (core/model/head_effect.hpp), on the tiny reference models: the
// edited block's weights do what replacing Z does (core::ablation_delta), a change that changes
// nothing gives KL 0 and the same top tokens, KL against the sum written out, and the run given is
// left as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/attention/forward.hpp"
#include "core/model/head_effect.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::core::Ablation;
using attnviz::core::Matrix;
using attnviz::model::HeadEffect;
using attnviz::model::ModelFolder;
using attnviz::model::RunState;
using attnviz::test::expected_of;
using attnviz::test::open_model;
using attnviz::test::run_expected;
using attnviz::test::session_of;

// GPT-2 (biases, b_O), Llama (no biases, K/V groups) and Qwen2 (biases without b_O).
const std::vector<std::string> causal = {"gpt2", "llama", "qwen2"};

TEST(HeadEffect, TheAblatedBlockChangesItsOutputAsReplacingZDoes) {
    for (const std::string& name : causal) {
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, expected_of(name));
        for (int layer = 0; layer < static_cast<int>(s.layers.size()); ++layer) {
            const attnviz::core::Session session = session_of(m, s, layer);
            const attnviz::core::Config& c = session.config;
            const attnviz::core::Trace t = attnviz::core::forward<double>(c, session.params);
            for (int h = 0; h < c.heads; ++h)
                for (const Ablation how : {Ablation::zero, Ablation::mean}) {
                    SCOPED_TRACE(name + " layer " + std::to_string(layer) + " head " + std::to_string(h) +
                                 (how == Ablation::zero ? " zero" : " mean"));
                    const Eigen::RowVectorXd Z_mean = t.heads[static_cast<size_t>(h)].Z.colwise().mean();
                    const auto ablated = attnviz::model::ablated_session(session, h, how, Z_mean);
                    ASSERT_TRUE(ablated) << ablated.problems.front().str();
                    const attnviz::core::Trace after = attnviz::core::forward<double>(ablated.value->config,
                                                                                      ablated.value->params);
                    const Matrix want = attnviz::core::ablation_delta(c, session.params, t, h, how);
                    EXPECT_GT(want.norm(), 0);
                    EXPECT_LE((after.output - t.output - want).cwiseAbs().maxCoeff(), 1e-12);
                }
        }
    }
}

TEST(HeadEffect, KlIsTheSumWrittenOutAndTheTopsAreTheRunsAndTheAblatedOnes) {
    for (const std::string& name : causal) {
        SCOPED_TRACE(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, expected_of(name));
        const RunState<double> copy = s;
        const int last = static_cast<int>(s.layers.size()) - 1;
        const auto e = attnviz::model::head_effect(m, s, 0, 1, Ablation::zero, 5);
        ASSERT_TRUE(e) << e.problems.front().str();
        EXPECT_TRUE(s.logits_last == copy.logits_last && s.layers[0].output == copy.layers[0].output);
        EXPECT_EQ(s.layers[0].edited, nullptr);  // the run given is not changed
        // The same ablation made by hand: block 0 edited, rerun.
        RunState<double> by_hand = s;
        const attnviz::core::Session session = session_of(m, s, 0);
        const auto ablated = attnviz::model::ablated_session(session, 1, Ablation::zero, {});
        ASSERT_TRUE(ablated);
        by_hand.layers[0].edited = std::make_shared<const attnviz::core::Session>(*ablated.value);
        ASSERT_TRUE(attnviz::model::rerun_from(m, by_hand, 0).empty());
        const auto softmax = [](const Eigen::RowVectorXd& logits) {
            Eigen::RowVectorXd p(logits.size());
            double sum = 0;
            for (Eigen::Index i = 0; i < logits.size(); ++i) sum += p(i) = std::exp(logits(i) - logits.maxCoeff());
            return Eigen::RowVectorXd(p / sum);
        };
        const Eigen::RowVectorXd p = softmax(s.logits_last), q = softmax(by_hand.logits_last);
        double kl = 0;
        for (Eigen::Index i = 0; i < p.size(); ++i) kl += p(i) * std::log(p(i) / q(i));
        EXPECT_NEAR(e.value->kl, kl, 1e-12 * std::max(1.0, kl));
        EXPECT_GT(e.value->kl, 0);
        ASSERT_EQ(e.value->top_before.size(), 5u);
        ASSERT_EQ(e.value->top_after.size(), 5u);
        for (size_t k = 0; k < 5; ++k) {
            EXPECT_EQ(e.value->top_before[k].id, attnviz::model::top_tokens(s.logits_last, 5)[k].id);
            EXPECT_EQ(e.value->top_after[k].id, attnviz::model::top_tokens(by_hand.logits_last, 5)[k].id);
            EXPECT_NEAR(e.value->top_after[k].p, q(e.value->top_after[k].id), 1e-12);
        }
        Eigen::Index most_likely = 0;
        q.maxCoeff(&most_likely);
        EXPECT_EQ(e.value->top_after[0].id, most_likely);
        // Every block from 0 on: ‖Δ stream after it‖_F; block 0's weights do not change.
        ASSERT_EQ(e.value->residual_delta.size(), s.layers.size());
        for (int l = 0; l <= last; ++l)
            EXPECT_NEAR(
                e.value->residual_delta[static_cast<size_t>(l)],
                (by_hand.layers[static_cast<size_t>(l)].output - s.layers[static_cast<size_t>(l)].output).norm(),
                1e-12);
        EXPECT_EQ(e.value->weights_delta[0], 0);
        EXPECT_GT(e.value->weights_delta.back(), 0);
    }
}

// A head whose rows of W_O are already 0 (an edit of the block): zeroing its Z changes nothing, KL
// is 0 and the tops are the same; its mean ablation is then no change either (z̄·0 = 0).
TEST(HeadEffect, AHeadThatMovesNothingHasNoEffect) {
    const ModelFolder m = open_model("gpt2");
    RunState<double> s = run_expected<double>(m, expected_of("gpt2"));
    auto silent = std::make_shared<attnviz::core::Session>(session_of(m, s, 0));
    const int d_v = silent->config.d_v;
    silent->params.W_O.middleRows(2 * d_v, d_v).setZero();
    s.layers[0].edited = silent;
    ASSERT_TRUE(attnviz::model::rerun_from(m, s, 0).empty());
    for (const Ablation how : {Ablation::zero, Ablation::mean}) {
        const auto e = attnviz::model::head_effect(m, s, 0, 2, how);
        ASSERT_TRUE(e);
        EXPECT_EQ(e.value->kl, 0);
        for (size_t k = 0; k < e.value->top_before.size(); ++k) {
            EXPECT_EQ(e.value->top_after[k].id, e.value->top_before[k].id);
            EXPECT_EQ(e.value->top_after[k].p, e.value->top_before[k].p);
        }
        for (const double d : e.value->residual_delta) EXPECT_EQ(d, 0);
    }
    // A live head of the same block does change the prediction.
    const auto live = attnviz::model::head_effect(m, s, 0, 1, Ablation::zero);
    ASSERT_TRUE(live);
    EXPECT_GT(live.value->kl, 0);
}

// One token: each head's mean row of Z is its only row, so mean ablation changes nothing.
TEST(HeadEffect, MeanAblationOfOneTokenChangesNothing) {
    const ModelFolder m = open_model("llama");
    const auto s = attnviz::model::run_model<double>(m, {5}, {});
    ASSERT_TRUE(s);
    const auto e = attnviz::model::head_effect(m, *s.value, 0, 0, Ablation::mean);
    ASSERT_TRUE(e) << e.problems.front().str();
    EXPECT_LE(e.value->kl, 1e-14);
    EXPECT_EQ(e.value->top_after.front().id, e.value->top_before.front().id);
    const auto zero = attnviz::model::head_effect(m, *s.value, 0, 0, Ablation::zero);
    ASSERT_TRUE(zero);
    EXPECT_GT(zero.value->kl, 1e-10);
}

TEST(HeadEffect, ABadHeadOrAnEncoderIsSaidOrHasNoNextToken) {
    const ModelFolder gpt2 = open_model("gpt2");
    const RunState<double> s = run_expected<double>(gpt2, expected_of("gpt2"));
    const auto bad = attnviz::model::head_effect(gpt2, s, 0, 9, Ablation::zero);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.problems.front().str().find("head 10"), std::string::npos) << bad.problems.front().str();
    const ModelFolder bert = open_model("bert");
    const RunState<double> b = run_expected<double>(bert, expected_of("bert"));
    const auto e = attnviz::model::head_effect(bert, b, 0, 0, Ablation::zero);
    ASSERT_TRUE(e) << e.problems.front().str();
    EXPECT_FALSE(e.value->next_token);
    EXPECT_TRUE(e.value->top_before.empty());
    EXPECT_GT(e.value->residual_delta.back(), 0);
}

}  // namespace
