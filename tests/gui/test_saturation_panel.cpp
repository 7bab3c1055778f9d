// The saturation lab, headless: its slider changes the session's scale, its callout follows the
// rows at the current divisor, its curves (computed a block of rows per frame) equal core's, and
// moving the divisor does not recompute them. And the line plot's ticks.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cmath>

#include "core/attention/presets.hpp"
#include "core/attention/saturation.hpp"
#include "panels/lab/saturation_panel.hpp"
#include "widgets/line_plot.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;

namespace {

class SaturationLab : public test::WindowTest {
protected:
    SaturationLab() : WindowTest("Saturation lab") {}
};

// A session whose trace is computed at once (no worker), with its divisor.
core::Session session_with_divisor(double s) {
    core::Session session = core::random_session({16, 32, 4, 8, 8, true, core::Mask::none, {}, false, 0, {}}, 4);
    session.config.scale = {core::Scale::Kind::divisor, s};
    return session;
}

// Rows with max weight ≥ 0.99 among those with two keys or more, by a direct loop over the weights.
std::pair<int, int> one_hot_rows(const core::Trace& t) {
    int one_hot = 0, choosing = 0;
    for (const core::HeadTrace& head : t.heads)
        for (Eigen::Index i = 0; i < head.weights.rows(); ++i) {
            int keys = 0;
            for (Eigen::Index j = 0; j < head.scores.cols(); ++j) keys += std::isfinite(head.scores(i, j));
            if (keys < 2) continue;
            ++choosing;
            one_hot += head.weights.row(i).maxCoeff() >= 0.99;
        }
    return {one_hot, choosing};
}

}  // namespace

TEST_F(SaturationLab, ItIsATabBesideCompareInLabAndStaysChosen) {
    AppState state(core::worked_example());
    frames(state, 3);
    EXPECT_EQ(report.workspace, "Lab");
    EXPECT_TRUE(window("Saturation lab"));
    EXPECT_FALSE(window("Compare"));   // one place, one panel shown
    EXPECT_TRUE(window("Gradients"));  // the place beside it
    EXPECT_NE(item("tab: Compare"), nullptr);
    EXPECT_NE(item("saturation: divisor"), nullptr);
    EXPECT_NE(item("saturation: entropy plot"), nullptr);
    EXPECT_NE(item("saturation: max plot"), nullptr);

    // A click on another tab of its place shows that panel, and one on this tab brings the lab back.
    ImGuiIO& io = ImGui::GetIO();
    for (const char* title : {"Compare", "Saturation lab", "Compare"}) {
        const app::DrawReport::Item* tab = item(std::string("tab: ") + title);
        ASSERT_NE(tab, nullptr) << title;
        io.MousePos = {(tab->min.x + tab->max.x) / 2, (tab->min.y + tab->max.y) / 2};
        frames(state, 1);
        io.MouseDown[0] = true;
        frames(state, 1);
        io.MouseDown[0] = false;
        frames(state, 3);
        EXPECT_TRUE(window(title)) << title;
        EXPECT_EQ(window("Saturation lab"), std::string(title) == "Saturation lab");
    }
}

TEST_F(SaturationLab, DraggingTheSliderChangesTheSessionsScale) {
    AppState state(core::worked_example());
    frames(state, 2);
    const app::DrawReport::Item* slider = item("saturation: divisor");
    ASSERT_NE(slider, nullptr);
    const ImVec2 min = slider->min, max = slider->max;
    ImGuiIO& io = ImGui::GetIO();
    // Press at the slider's left end: the smallest divisor, 0.05·√d_k.
    io.MousePos = {min.x + 1, (min.y + max.y) / 2};
    frames(state, 1);
    io.MouseDown[0] = true;
    frames(state, 2);
    ASSERT_EQ(state.config().scale.kind, core::Scale::Kind::divisor);
    EXPECT_NEAR(state.config().scale.divisor, 0.05 * std::sqrt(2.0), 1e-3);
    // Drag to the right end: 20·√d_k; the trace follows.
    io.MousePos = {max.x - 1, (min.y + max.y) / 2};
    frames(state, 2);
    io.MouseDown[0] = false;
    frames(state, 2);
    EXPECT_NEAR(state.config().scale.divisor, 20 * std::sqrt(2.0), 0.5);
    EXPECT_EQ(state.trace().scale, state.config().scale.divisor);
    EXPECT_EQ(state.session().params, core::worked_example().params);  // only the scale changed
    // The whole drag is one undo step, back to √d_k.
    EXPECT_EQ(state.undo_label(), "change of the scale");
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.config().scale.kind, core::Scale::Kind::sqrt_dk);
    EXPECT_FALSE(state.can_undo());
}

TEST_F(SaturationLab, ApplyingADivisorAndGoingBackToTheRootOfDk) {
    AppState state(core::worked_example());
    ASSERT_TRUE(app::apply_divisor(state, 0.5));
    frames(state, 1);
    EXPECT_EQ(state.config().scale.kind, core::Scale::Kind::divisor);
    EXPECT_EQ(state.trace().scale, 0.5);
    // scores = scores_raw / 0.5: head 1's scores_raw[0][0] = 4 gives 8.
    EXPECT_EQ(state.trace().heads[0].scores(0, 0), 8.0);
    EXPECT_FALSE(app::apply_divisor(state, -1));  // refused with a message, nothing changed
    EXPECT_TRUE(state.message().error);
    EXPECT_EQ(state.config().scale.divisor, 0.5);
    ASSERT_TRUE(app::back_to_sqrt_dk(state));
    frames(state, 1);
    EXPECT_EQ(state.config().scale.kind, core::Scale::Kind::sqrt_dk);
    EXPECT_EQ(state.trace().scale, std::sqrt(2.0));
}

TEST_F(SaturationLab, TheCalloutShowsWhenMostRowsAreNearlyOneHot) {
    AppState state(session_with_divisor(0.01));
    frames(state, 2);
    const auto [one_hot, choosing] = one_hot_rows(state.trace());
    ASSERT_GT(2 * one_hot, choosing) << "a divisor of 0.01 saturates this session";
    EXPECT_EQ(panels.saturation.current_all.one_hot, one_hot);
    EXPECT_EQ(panels.saturation.current_all.choosing, choosing);
    EXPECT_NE(item("saturation: callout"), nullptr);
    const std::string text = app::saturation_callout(panels.saturation.current_all, core::Notation::unicode);
    EXPECT_EQ(text.rfind(std::to_string(one_hot) + " of " + std::to_string(choosing) +
                             " rows put ≥\u00a099% of their "
                             "weight on one key",
                         0),
              0u)
        << text;

    // Back to √d_k: this session's rows are soft, the callout goes.
    ASSERT_TRUE(app::back_to_sqrt_dk(state));
    frames(state, 2);
    const auto [soft, all] = one_hot_rows(state.trace());
    EXPECT_LE(2 * soft, all);
    EXPECT_EQ(item("saturation: callout"), nullptr);
}

TEST_F(SaturationLab, NoCalloutForTheWorkedExampleAtTheRootOfDk) {
    AppState state(core::worked_example());
    frames(state, 2);
    // Its second query puts 0.99999 on one key in each head (scores 0 and 16/√2): 2 of 4 rows, not most.
    EXPECT_EQ(panels.saturation.current_all.one_hot, 2);
    EXPECT_EQ(panels.saturation.current_all.choosing, 4);
    EXPECT_EQ(item("saturation: callout"), nullptr);
    EXPECT_EQ(app::saturation_callout(panels.saturation.current_all, core::Notation::unicode), "");
}

TEST(SaturationCurves, BlockByBlockTheyEqualCoresAndTheDivisorDoesNotRecomputeThem) {
    test::HeadlessImGui imgui;
    core::Session session = core::random_session({24, 16, 3, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 8);
    AppState state(session);
    app::SaturationPanel panel;
    // A budget of 200 evaluations: one row per frame (24 keys × 49 divisors each).
    EXPECT_FALSE(app::advance_saturation(state, panel, 200));  // compares and summarizes only
    int frames = 0;
    while (!app::advance_saturation(state, panel, 200)) ++frames;
    EXPECT_EQ(frames, 3 * 24 - 1);  // one row a frame, the last returning true
    ASSERT_EQ(panel.curves.size(), 3u);
    for (int h = 0; h < 3; ++h) {
        const core::SaturationCurves want = core::saturation_curves(
            core::masked_scores_raw(state.trace().heads[static_cast<size_t>(h)]), panel.divisors);
        for (size_t p = 0; p < panel.divisors.size(); ++p) {
            const core::SaturationSummary& got = panel.curves[static_cast<size_t>(h)][p];
            EXPECT_EQ(got.rows, 24);
            EXPECT_EQ(got.choosing, 23);  // the first query has one key under the causal mask
            EXPECT_EQ(got.one_hot, want.summaries[p].one_hot);
            EXPECT_NEAR(got.mean_entropy, want.summaries[p].mean_entropy, 1e-14);
            EXPECT_NEAR(got.mean_max, want.summaries[p].mean_max, 1e-15);
        }
    }
    // The current divisor's summary is the trace's own rows.
    const core::SaturationSummary head2 = core::summarize(state.trace().heads[1], state.trace().rows[1]);
    EXPECT_EQ(panel.current[1].mean_entropy, head2.mean_entropy);

    // A new divisor: a new trace, the same scores_raw; the curves stay, the current summary follows.
    const int computed = panel.compute_frames;
    ASSERT_TRUE(app::apply_divisor(state, 0.1));
    state.wait_for_trace();
    EXPECT_TRUE(app::advance_saturation(state, panel, 200));
    EXPECT_EQ(panel.compute_frames, computed);
    EXPECT_EQ(panel.current[1].mean_entropy,
              core::summarize(state.trace().heads[1], state.trace().rows[1]).mean_entropy);
    EXPECT_LT(panel.current[1].mean_entropy, head2.mean_entropy);  // sharper at 0.1 than at √4 = 2
    // An edit of X changes scores_raw: computed again.
    ASSERT_TRUE(state.set_cell({{core::MatrixId::X, 0}, 5, 2}, 0.75));
    state.update();
    EXPECT_FALSE(app::advance_saturation(state, panel, 200));
    EXPECT_EQ(panel.next_head, 0);
    // So does the mask, which changes no score_raw but which keys a row may look at.
    while (!app::advance_saturation(state, panel, 1e9)) {
    }
    core::Config open = state.config();
    open.mask = core::Mask::none;
    ASSERT_TRUE(state.set_config(open));
    EXPECT_FALSE(app::advance_saturation(state, panel, 1e9));
    EXPECT_TRUE(app::advance_saturation(state, panel, 1e9));
    EXPECT_EQ(panel.curves[0][0].choosing, 24);
}

TEST(ScoresProfile, EqualForTheSameScoresWhateverTheLastBit) {
    const core::Session s = core::random_session({8, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 2);
    core::Trace a = core::forward<double>(s.config, s.params);
    core::Trace b = a;
    b.heads[1].scores_raw(3, 4) = std::nextafter(b.heads[1].scores_raw(3, 4), 1e9);  // the last bit
    EXPECT_TRUE(app::scores_profile(a).same_as(app::scores_profile(b)));
    b.heads[1].scores_raw(3, 4) *= 1 + 1e-9;
    EXPECT_FALSE(app::scores_profile(a).same_as(app::scores_profile(b)));
    // Two cells of a row changed so that the row's plain sum stays: the weighted sum sees it.
    b = a;
    b.heads[0].scores_raw(2, 1) += 0.5;
    b.heads[0].scores_raw(2, 6) -= 0.5;
    EXPECT_FALSE(app::scores_profile(a).same_as(app::scores_profile(b)));
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-12 * want[k]) << k;
}

TEST(LinePlot, TicksAreRoundNumbersInsideTheRange) {
    const double lo = 0.05 * std::sqrt(8.0), hi = 20 * std::sqrt(8.0);  // 0.141 to 56.6
    expect_near(app::log_ticks(lo, hi, 9), {0.2, 0.5, 1, 2, 5, 10, 20, 50});
    expect_near(app::log_ticks(lo, hi, 5), {0.3, 1, 3, 10, 30});
    expect_near(app::log_ticks(lo, hi, 3), {1, 10});
    // Thirteen decades in four ticks: every fourth one.
    expect_near(app::log_ticks(1e-6, 1e6, 4), {1e-4, 1, 1e4});
    expect_near(app::linear_ticks(0, 1.08, 6), {0, 0.2, 0.4, 0.6, 0.8, 1.0});
    EXPECT_EQ(app::linear_ticks(0, 2.99, 3), (std::vector<double>{0, 1, 2}));
    EXPECT_TRUE(app::linear_ticks(1, 1, 5).empty());
    EXPECT_TRUE(app::log_ticks(0, 1, 5).empty());
    EXPECT_EQ(app::tick_text(1000), "1000");
    EXPECT_EQ(app::tick_text(0.05), "0.05");
    EXPECT_EQ(app::tick_text(0.6000000000000001), "0.6");
    EXPECT_EQ(app::tick_text(2.5), "2.5");
}
