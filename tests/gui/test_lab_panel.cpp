// The attention lab driven headless: what it shows for hand-made heads, and that a large session's
// numbers come from the worker for the snapshot on screen.
#include <gtest/gtest.h>

#include <imgui.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/attention/presets.hpp"
#include "core/model/circuits.hpp"
#include "core/model/head_effect.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "tests/test_support.hpp"

using namespace attnviz;
using app::AppState;

namespace {

class Lab : public ::testing::Test {
protected:
    void frames(AppState& state, int count = 2) {
        app::show_panel(panels, app::PanelId::lab);
        imgui_.frames(state, panels, count, &report);
    }
    std::optional<double> value(const std::string& name) const { return test::reported_value(report, name); }
    // Frames until the model's run and the lab's jobs on its worker have finished and been taken (at
    // least three, at most 50).
    void settle_model(AppState& state) {
        app::ModelRun& run = panels.model.run;
        for (int k = 0; k < 50 && (run.busy() || app::lab_busy(panels.lab) || k < 3); ++k) {
            run.wait();
            app::wait_for_model_ablation(panels.lab.model);
            app::wait_for_lab_tokens(panels.lab.tokens);
            frames(state, 1);
        }
    }

    test::HeadlessImGui imgui_;
    app::Panels panels;
    app::DrawReport report;
};

}  // namespace

TEST_F(Lab, AHeadOnTokenZeroIsASinkThatCopiesAndItsAblationRemovesTheOutput) {
    AppState state(test::sink_session());
    panels.lab.show_view = 4;  // Sinks
    frames(state);
    ASSERT_TRUE(panels.lab.result);
    ASSERT_TRUE(value("lab: sink share 1"));
    EXPECT_EQ(*value("lab: sink share 1"), 1.0);
    EXPECT_EQ(*value("lab: sink key 1"), 0.0);
    panels.lab.show_view = 1;  // Circuits: W_OV = I copies, score 1
    frames(state);
    ASSERT_TRUE(value("lab: copying"));
    EXPECT_NEAR(*value("lab: copying"), 1.0, 1e-12);
    panels.lab.show_view = 2;  // Ablation: zeroing the only head's Z leaves output = 0 (no b_O)
    frames(state);
    ASSERT_TRUE(value("lab: ablation zero 1"));
    EXPECT_NEAR(*value("lab: ablation zero 1"), state.trace().output.norm(), 1e-12);
    // The mean row of a Z whose rows are all V_0 is V_0 again: nothing changes.
    EXPECT_NEAR(*value("lab: ablation mean 1"), 0.0, 1e-9);
}

TEST_F(Lab, RopePairsProfilesAreShownOnlyWithRope) {
    core::Config c = test::make_config(5, 8, 2, 4, 4);
    c.rope.on = true;
    AppState state(core::random_session(c, 2));
    panels.lab.show_view = 3;
    frames(state);
    ASSERT_TRUE(panels.lab.result);
    ASSERT_EQ(panels.lab.result->rope_profiles.size(), 2u);
    ASSERT_TRUE(value("lab: rope mean abs"));
    EXPECT_DOUBLE_EQ(*value("lab: rope mean abs"), panels.lab.result->rope_profiles[0].mean_abs);
    AppState plain(core::random_session(test::make_config(5, 8, 2, 4, 4), 2));
    panels.lab.result.reset();  // another AppState: its generations start again
    panels.lab.show_view = 3;
    frames(plain);
    EXPECT_FALSE(value("lab: rope mean abs"));
}

// Partial rotary: past the pairs, the columns RoPE leaves alone, their part of scores_raw and its
// mean |value| (the part Q·Kᵀ has from those columns, with no position in it).
TEST_F(Lab, PartialRotaryShowsTheUnrotatedColumns) {
    core::Config c = test::make_config(5, 8, 1, 6, 4);
    c.rope.on = true;
    c.rope.dims = 2;
    AppState state(core::random_session(c, 4));
    panels.lab.show_view = 3;
    panels.lab.pair = 1;  // one pair (columns 0 and 1), then the rest: columns 2 to 5
    frames(state);
    ASSERT_TRUE(panels.lab.result);
    ASSERT_EQ(panels.lab.result->rope.pairs.size(), 1u);
    const core::HeadTrace& h = state.trace().heads[0];
    const core::Matrix rest = h.Q_rot.rightCols(4) * h.K_rot.rightCols(4).transpose();
    EXPECT_LE((panels.lab.result->rope.rest - rest).cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_TRUE(value("lab: rope rest mean abs"));
    EXPECT_NEAR(*value("lab: rope rest mean abs"), rest.cwiseAbs().mean(), 1e-12);
    EXPECT_GT(*value("lab: rope rest mean abs"), 0.0);
    EXPECT_FALSE(value("lab: rope mean abs"));  // the pair's view is not the one drawn
    // The unrotated columns are Q's and K's as projected: RoPE left them as they were.
    EXPECT_EQ(h.Q_rot.rightCols(4), h.Q.rightCols(4));
    EXPECT_NE(h.Q_rot.row(3).head(2), h.Q.row(3).head(2));
}

// A session over the synchronous limit: the lab's numbers come from the worker, for the snapshot on
// screen and the head chosen.
TEST_F(Lab, ALargeSessionsNumbersComeFromTheWorker) {
    AppState state(core::random_session(test::make_config(128, 256, 4, 64, 64), 3));
    state.wait_for_trace();
    panels.lab.head = 2;
    frames(state, 1);
    for (int k = 0; k < 2000 && app::lab_busy(panels.lab); ++k) {
        panels.lab.job.wait();
        frames(state, 1);
    }
    ASSERT_TRUE(panels.lab.result);
    EXPECT_EQ(panels.lab.result->snapshot->generation, state.generation());
    EXPECT_EQ(panels.lab.result->head, 2);
    EXPECT_EQ(panels.lab.result->norm_weighted.rows(), 128);
    EXPECT_EQ(panels.lab.result->ablation_zero.size(), 4u);
}

namespace {

const std::string models = std::string(ATTNVIZ_REFERENCE_DIR) + "/models";

// What the lab reported of a head's effect against what core computes on the run shown.
void expect_effect_shown(const app::DrawReport& report, const model::HeadEffect& want) {
    ASSERT_TRUE(test::reported_value(report, "lab: model kl"));
    EXPECT_NEAR(*test::reported_value(report, "lab: model kl"), want.kl, 1e-12 * std::max(1.0, want.kl));
    for (size_t k = 0; k < 5; ++k) {
        const std::string at = std::to_string(k + 1);
        ASSERT_TRUE(test::reported_value(report, "lab: model top before " + at));
        EXPECT_EQ(*test::reported_value(report, "lab: model top before " + at), want.top_before[k].id);
        EXPECT_EQ(*test::reported_value(report, "lab: model top before " + at + " p"), want.top_before[k].p);
        EXPECT_EQ(*test::reported_value(report, "lab: model top after " + at), want.top_after[k].id);
        EXPECT_NEAR(*test::reported_value(report, "lab: model top after " + at + " p"), want.top_after[k].p, 1e-12);
    }
    for (size_t l = 0; l < want.residual_delta.size(); ++l) {
        const std::string name = "lab: model residual delta " + std::to_string(want.layer + static_cast<int>(l));
        ASSERT_TRUE(test::reported_value(report, name)) << name;
        EXPECT_NEAR(*test::reported_value(report, name), want.residual_delta[l], 1e-9);
    }
}

}  // namespace

// attnviz --model on the tiny GPT-2, block 0 edited: the Ablation view runs the chosen head's
// ablation through block 1 and the LM head on the model's worker, and shows what core computes on
// the run shown; a head whose rows of W_O are zero (an edit) has KL 0; every head's KL on a click.
TEST_F(Lab, InModelModeTheAblationRunsThroughTheLaterBlocksOnTheWorker) {
    AppState state(core::worked_example());
    app::ModelRun& run = panels.model.run;
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget, 0);
    settle_model(state);
    ASSERT_EQ(run.editing_layer(), 0);
    panels.lab.head = 1;
    panels.lab.show_view = 2;
    bool queued = false;  // seen submitted and not yet done: the frame did not compute it
    for (int k = 0; k < 4 && !queued; ++k) {
        frames(state, 1);
        queued = panels.lab.model.job.valid() && !panels.lab.model.effect;
    }
    EXPECT_TRUE(queued);
    settle_model(state);
    const auto shown = [&] { return run.results()->run; };
    const core::Result<model::HeadEffect> zero = model::head_effect(*run.folder(), *shown(), 0, 1,
                                                                    core::Ablation::zero);
    ASSERT_TRUE(zero);
    EXPECT_GT(zero.value->kl, 0);
    expect_effect_shown(report, *zero.value);

    panels.lab.model.how = core::Ablation::mean;
    settle_model(state);
    const core::Result<model::HeadEffect> mean = model::head_effect(*run.folder(), *shown(), 0, 1,
                                                                    core::Ablation::mean);
    ASSERT_TRUE(mean);
    EXPECT_NE(mean.value->kl, zero.value->kl);
    expect_effect_shown(report, *mean.value);

    // Head 3's rows of W_O zeroed in the block edited: the edit runs through the model, and zeroing
    // the head's Z then changes nothing.
    panels.lab.model.how = core::Ablation::zero;
    core::Matrix W_O = state.session().params.W_O;
    const int d_v = state.config().d_v;
    W_O.middleRows(2 * d_v, d_v).setZero();
    ASSERT_TRUE(state.set_matrix({core::MatrixId::W_O, 0}, W_O));
    panels.lab.head = 2;
    settle_model(state);
    ASSERT_EQ(run.results()->edited_layer, 0);
    ASSERT_TRUE(value("lab: model kl"));
    EXPECT_EQ(*value("lab: model kl"), 0.0);
    for (const std::string k : {"1", "2", "3", "4", "5"})
        EXPECT_EQ(value("lab: model top after " + k + " p"), value("lab: model top before " + k + " p"));

    // Every head's KL, on a click of the button: the table's numbers are core's.
    const auto item = std::find_if(report.items.begin(), report.items.end(),
                                   [](const app::DrawReport::Item& i) { return i.name == "lab: model every head"; });
    ASSERT_NE(item, report.items.end());
    imgui_.click(state, panels, *item, &report);
    settle_model(state);
    for (int h = 0; h < 4; ++h) {
        const core::Result<model::HeadEffect> e = model::head_effect(*run.folder(), *shown(), 0, h,
                                                                     core::Ablation::zero);
        ASSERT_TRUE(e);
        const std::optional<double> shown_kl = value("lab: model kl head " + std::to_string(h + 1));
        ASSERT_TRUE(shown_kl) << h;
        EXPECT_NEAR(*shown_kl, e.value->kl, 1e-12 * std::max(1.0, e.value->kl));
        if (h == 2)
            EXPECT_EQ(*shown_kl, 0.0);
        else
            EXPECT_GT(*shown_kl, 0.0);
    }
}

namespace {

// What the token view reported against core's token circuits of head `head`: the candidates, every
// qk value, the top pairs, and the chosen token's keys and output tokens.
void expect_tokens_shown(const app::DrawReport& report, const model::TokenCircuits& want, int head,
                         std::int32_t chosen) {
    const model::HeadTokenCircuits& h = want.heads[static_cast<size_t>(head)];
    const auto value = [&](const std::string& name) { return test::reported_value(report, name); };
    for (size_t a = 0; a < want.tokens.size(); ++a) {
        EXPECT_EQ(value("lab: tokens id " + std::to_string(a)), want.tokens[a]) << a;
        for (size_t b = 0; b < want.tokens.size(); ++b) {
            const std::string name = "lab: tokens qk " + std::to_string(a) + " " + std::to_string(b);
            ASSERT_TRUE(value(name)) << name;
            EXPECT_EQ(*value(name), h.qk(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b))) << name;
        }
    }
    EXPECT_FALSE(value("lab: tokens id " + std::to_string(want.tokens.size())));
    for (size_t k = 0; k < h.top_pairs.size(); ++k) {
        const std::string name = "lab: tokens pair " + std::to_string(k + 1);
        EXPECT_EQ(value(name), h.top_pairs[k].value);
        EXPECT_EQ(value(name + " query"), h.top_pairs[k].query);
        EXPECT_EQ(value(name + " key"), h.top_pairs[k].key);
    }
    ASSERT_EQ(value("lab: tokens chosen"), chosen);
    const auto t = static_cast<size_t>(std::find(want.tokens.begin(), want.tokens.end(), chosen) - want.tokens.begin());
    ASSERT_LT(t, want.tokens.size());
    for (size_t k = 0; k < static_cast<size_t>(app::lab_token_top); ++k) {
        const std::string at = std::to_string(k + 1);
        EXPECT_EQ(value("lab: tokens key " + at), h.top_keys[t][k].id) << at;
        EXPECT_EQ(value("lab: tokens key " + at + " value"), h.top_keys[t][k].value) << at;
        EXPECT_EQ(value("lab: tokens output " + at), h.top_outputs[t][k].id) << at;
        EXPECT_EQ(value("lab: tokens output " + at + " value"), h.top_outputs[t][k].value) << at;
    }
}

}  // namespace

// attnviz --model on the tiny GPT-2, block 0 edited: the Circuits tab shows the chosen head's token
// circuits as core computes them, from the model's worker; an edit of the block's W_Q moves them
// (they are then those of the edited weights); the RoPE tab shows layer 0's scores split into five
// parts whose sum is the block's scores_raw, the edit included.
TEST_F(Lab, InModelModeTheTokenCircuitsAndThePositionSplitComeFromTheWorker) {
    AppState state(core::worked_example());
    app::ModelRun& run = panels.model.run;
    run.open(models + "/gpt2", "The cat sat on the mat", core::default_memory_budget, 0);
    settle_model(state);
    ASSERT_EQ(run.editing_layer(), 0);
    constexpr int head = 1;
    panels.lab.head = head;
    panels.lab.show_view = 1;  // Circuits
    bool queued = false;       // seen submitted and not yet done: the frame did not compute it
    for (int k = 0; k < 4 && !queued; ++k) {
        frames(state, 1);
        queued = panels.lab.tokens.circuits_job.valid() && !panels.lab.tokens.circuits;
    }
    EXPECT_TRUE(queued);
    settle_model(state);
    const std::vector<std::int32_t> ids = run.results()->run->token_ids;
    const core::Result<model::TokenCircuits> stored = model::token_circuits(*run.folder(), 0, ids, app::lab_token_top);
    ASSERT_TRUE(stored);
    expect_tokens_shown(report, *stored.value, head, ids.back());  // the sentence's last token by default
    EXPECT_EQ(value("lab: tokens edited"), 0.0);

    // Head 2's W_Q edited in the block: the run is redone, and the view shows the circuits of the
    // edited weights, which differ from the stored ones.
    core::Matrix W_Q = state.session().params.heads[head].W_Q;
    W_Q.col(0) *= -2.0;
    W_Q(3, 1) += 1.5;
    ASSERT_TRUE(state.set_matrix({core::MatrixId::W_Q, head}, W_Q));
    settle_model(state);
    ASSERT_EQ(run.results()->edited_layer, 0);
    model::TokenCircuitOptions options;
    options.edited = &state.session().params;
    const core::Result<model::TokenCircuits> edited = model::token_circuits(*run.folder(), 0, ids, app::lab_token_top,
                                                                            options);
    ASSERT_TRUE(edited);
    ASSERT_TRUE(edited.value->edited);
    EXPECT_GT((edited.value->heads[head].qk - stored.value->heads[head].qk).cwiseAbs().maxCoeff(), 0.1);
    expect_tokens_shown(report, *edited.value, head, ids.back());
    EXPECT_EQ(value("lab: tokens edited"), 1.0);

    // The RoPE tab of a GPT-2 block 0 (no RoPE, learned positions): the five parts of the chosen
    // head, summed cell by cell, are the session's scores_raw (the edited block's, computed apart).
    panels.lab.show_view = 3;
    settle_model(state);
    const core::Matrix& raw = state.trace().heads[head].scores_raw;
    const double scale = raw.cwiseAbs().maxCoeff();
    for (Eigen::Index i = 0; i < raw.rows(); ++i)
        for (Eigen::Index j = 0; j < raw.cols(); ++j) {
            double sum = 0;
            for (const std::string part : {"cc", "cp", "pc", "pp", "bias"}) {
                const std::string name = "lab: split " + part + " " + std::to_string(i) + " " + std::to_string(j);
                ASSERT_TRUE(value(name)) << name;
                sum += *value(name);
            }
            EXPECT_NEAR(sum, raw(i, j), 1e-5 * scale) << i << " " << j;
        }
    EXPECT_FALSE(value("lab: split cc " + std::to_string(raw.rows()) + " 0"));
    EXPECT_EQ(value("lab: split edited"), 1.0);
    ASSERT_TRUE(value("lab: split difference"));
    EXPECT_LE(*value("lab: split difference"), 1e-5 * scale);
    double shares = 0;
    for (const std::string part : {"cc", "cp", "pc", "pp", "bias"})
        shares += value("lab: split " + part + " share").value_or(0);
    EXPECT_NEAR(shares, 1.0, 1e-12);
}

// A block after the first (layer 1 of the tiny GPT-2 edited): the RoPE tab shows no split and says
// why — only layer 0's input is a token's embedding plus its position.
TEST_F(Lab, TheRopeTabSaysWhyABlockAfterTheFirstHasNoPositionSplit) {
    AppState state(core::worked_example());
    app::ModelRun& run = panels.model.run;
    run.open(models + "/gpt2", "The cat sat on the mat", core::default_memory_budget, 1);
    panels.lab.show_view = 3;
    settle_model(state);
    ASSERT_EQ(run.editing_layer(), 1);
    ASSERT_TRUE(app::lab_in_model(&run, state.config().heads));  // the session is block 1
    const auto drawn = [&](const std::string& name) {
        return std::any_of(report.items.begin(), report.items.end(),
                           [&](const app::DrawReport::Item& i) { return i.name == name; });
    };
    EXPECT_TRUE(drawn("lab: position split note"));
    EXPECT_FALSE(value("lab: split cc 0 0"));
    EXPECT_FALSE(panels.lab.tokens.split_job.valid() || panels.lab.tokens.split);  // nothing was started
    EXPECT_NE(app::position_split_note(&run).find("Layer 1 is being edited"), std::string::npos);
    EXPECT_NE(app::position_split_note(nullptr).find("With a model"), std::string::npos);
}
