// The attention lab driven headless: what it shows for hand-made heads, and that a large session's
// numbers come from the worker for the snapshot on screen.
#include <gtest/gtest.h>

#include <imgui.h>

#include <optional>

#include "core/attention/presets.hpp"
#include "frame.hpp"
#include "frame_driver.hpp"
#include "headless.hpp"
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
