// The Attribution panel through the whole window, headless: on a model opened in the model mode it
// computes on the model's worker what core/model/attribution.hpp gives for the run shown (the top
// prediction's logit), draws the token strips and the heads' attribution, computes again for a
// "versus" token, and Cancel stops a job for good (until the choice changes). Without a model, and
// on an encoder, it says why there is nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/attention/presets.hpp"
#include "core/model/attribution.hpp"
#include "shell/workspaces.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;
using app::Workspace;

namespace {

const std::string models = std::string(ATTNVIZ_REFERENCE_DIR) + "/models";

class AttributionPanel : public test::WindowTest {
protected:
    // Opens a model in the model mode and shows the Attribution workspace once it has run.
    void open(AppState& state, const std::string& name) {
        panels.model.run.open(models + "/" + name, "Hello world", core::default_memory_budget);
        settle(state);
        app::switch_workspace(panels, Workspace::attribution);
        settle(state);
    }
    void settle(AppState& state) {
        for (int k = 0; k < 4; ++k) {
            panels.model.run.wait();
            app::wait_for_attribution(panels.attribution);
            frames(state, 2);
        }
    }
};

TEST_F(AttributionPanel, ComputesWhatTheCoreGivesForTheRunShown) {
    AppState state(core::worked_example());
    open(state, "gpt2");
    const app::ModelResults* r = panels.model.run.results();
    ASSERT_NE(r, nullptr);
    ASSERT_NE(panels.attribution.shown, nullptr) << panels.attribution.problem;
    Eigen::Index top = 0;
    r->logits.maxCoeff(&top);
    const model::Objective logit{model::Objective::Kind::logit, static_cast<std::int32_t>(top), 0};
    const auto want = model::attribute<float>(*panels.model.run.folder(), *r->run, logit, panels.attribution.steps);
    ASSERT_TRUE(want);
    const model::Attribution& shown = *panels.attribution.shown;
    EXPECT_EQ(shown.objective.target, top);
    EXPECT_EQ(shown.grad_x_input, want.value->grad_x_input);
    EXPECT_EQ(shown.integrated_gradients, want.value->integrated_gradients);
    EXPECT_EQ(shown.dla_heads, want.value->dla_heads);
    EXPECT_NE(item("tokens: grad x input"), nullptr);
    EXPECT_NE(item("tokens: integrated gradients"), nullptr);
    EXPECT_NE(item("dla bars"), nullptr);

    // A versus token: logit[target] − logit[versus], computed again.
    panels.attribution.versus = 3;
    settle(state);
    ASSERT_NE(panels.attribution.shown, nullptr);
    EXPECT_EQ(panels.attribution.shown->objective.kind, model::Objective::Kind::difference);
    EXPECT_NEAR(panels.attribution.shown->value,
                static_cast<double>(r->run->logits_last(top)) - static_cast<double>(r->run->logits_last(3)), 1e-4);
}

TEST_F(AttributionPanel, CancelStopsTheJobUntilTheChoiceChanges) {
    AppState state(core::worked_example());
    open(state, "gpt2");
    // The model's worker kept busy until the click, so that the new job waits in its queue.
    auto hold = std::make_shared<std::atomic<bool>>(true);
    auto blocker = panels.model.run.on_results(
        [hold](const model::ModelFolder&, const model::RunState<float>&, const std::function<bool()>&) {
            while (hold->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return 0;
        });
    panels.attribution.steps = 64;
    frames(state, 1);
    ASSERT_TRUE(app::attribution_busy(panels.attribution));
    click(state, "Cancel", 1);
    hold->store(false);
    blocker.wait();
    settle(state);
    EXPECT_TRUE(panels.attribution.cancelled);
    EXPECT_FALSE(app::attribution_busy(panels.attribution));
    EXPECT_NE(panels.attribution.shown_key.steps, 64);  // what was shown before stays
    panels.attribution.steps = 16;
    settle(state);
    EXPECT_FALSE(panels.attribution.cancelled);
    ASSERT_NE(panels.attribution.shown, nullptr);
    EXPECT_EQ(panels.attribution.shown->steps, 16);
}

// Patch runs the corrupted sentence and patches it on the worker: what core::patch gives for the
// two runs; a sentence of another token count is refused, naming both counts.
TEST_F(AttributionPanel, PatchingAgainstACorruptedSentence) {
    AppState state(core::worked_example());
    open(state, "gpt2");
    panels.attribution.versus = 100;
    settle(state);
    panels.attribution.patching.corrupt = "Hfllo world";
    click(state, "Patch", 1);
    settle(state);
    const app::PatchingSection& s = panels.attribution.patching;
    ASSERT_NE(s.shown, nullptr) << s.problem;
    const model::ModelFolder& folder = *panels.model.run.folder();
    const auto tokens = panels.model.run.tokenizer()->encode("Hfllo world");
    ASSERT_TRUE(tokens);
    const auto corrupt = model::run_model<float>(folder, tokens.value->ids, tokens.value->tokens);
    ASSERT_TRUE(corrupt);
    const model::Objective o{model::Objective::Kind::difference, panels.attribution.shown->objective.target, 100};
    const auto want = model::patch<float>(folder, *panels.model.run.results()->run, *corrupt.value, o);
    ASSERT_TRUE(want) << want.problems.front().str();
    EXPECT_EQ(s.shown->heads, want.value->heads);
    EXPECT_EQ(s.shown->residual, want.value->residual);
    EXPECT_EQ(s.shown->attention, want.value->attention);
    EXPECT_EQ(s.corrupt_tokens.size(), tokens.value->ids.size());

    panels.attribution.patching.corrupt = "Hello";
    click(state, "Patch", 1);
    settle(state);
    EXPECT_NE(panels.attribution.patching.problem.find("the clean sentence is 8 tokens and the corrupted one"),
              std::string::npos)
        << panels.attribution.patching.problem;
}

TEST_F(AttributionPanel, SaysWhyThereIsNothingWithoutAModelOrOnAnEncoder) {
    AppState state(core::worked_example());
    app::switch_workspace(panels, Workspace::attribution);
    frames(state, 2);
    EXPECT_FALSE(app::attribution_busy(panels.attribution));
    EXPECT_EQ(panels.attribution.shown, nullptr);
    open(state, "bert");
    EXPECT_FALSE(app::attribution_busy(panels.attribution));
    EXPECT_EQ(panels.attribution.shown, nullptr);
}

}  // namespace
