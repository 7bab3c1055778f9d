// The Compare panel, headless: pinning (its button, undo, unpin), B − A of the panel against two
// forward passes, the largest change of a designed edit, a pin that survives a save, a change of
// dimensions (the shapes differ, nothing read out of range), masked scores, and A's trace computed
// on the worker.
#include <gtest/gtest.h>

#include <imgui.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <string>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "panels/lab/compare_panel.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;
using core::MatrixId;

namespace {

class Compare : public test::WindowTest {
protected:
    Compare() : WindowTest("Compare") {}
    // Frames until B's trace and A's are computed and drawn.
    void settle(AppState& state) {
        for (int k = 0; k < 3; ++k) {
            state.wait_for_trace();
            app::wait_for_compare(panels.compare);
            frames(state);
        }
        ASSERT_FALSE(app::compare_busy(panels.compare));
    }
    const app::ComparePanel& panel() const { return panels.compare; }
};

// A session small enough to be computed at once.
core::Session small_session() {
    return core::random_session({5, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 9);
}

// B − A of `ref` by two forward passes of the sessions' own inputs.
core::Matrix direct_difference(const core::Session& a, const core::Session& b, core::MatrixRef ref) {
    const core::Trace ta = core::forward<double>(a.config, a.params), tb = core::forward<double>(b.config, b.params);
    return *core::find_matrix(b.params, tb, ref) - *core::find_matrix(a.params, ta, ref);
}

std::filesystem::path temp_file(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("attnviz_compare_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir / name;
}

}  // namespace

TEST_F(Compare, ItIsATabBesideTheMatrixViewerAndItsButtonPinsWithUndo) {
    AppState state(core::worked_example());
    frames(state, 3);
    bool shown = false;
    for (const auto& w : report.windows) shown |= w.title == "Compare";
    EXPECT_TRUE(shown);
    EXPECT_NE(item("tab: Matrix viewer"), nullptr);
    EXPECT_EQ(item("compare: unpin"), nullptr);  // no pin yet: the explanation and the pin button
    click(state, "compare: pin");
    ASSERT_NE(state.session().pin, nullptr);
    EXPECT_EQ(*state.session().pin, core::worked_example());
    frames(state);
    EXPECT_NE(item("compare: unpin"), nullptr);
    EXPECT_TRUE(panel().compared);
    EXPECT_EQ(panel().comparison.changed, 0);  // nothing edited: B = A exactly
    EXPECT_TRUE(app::changes_text(state, panel()).empty());

    ASSERT_TRUE(state.undo());  // the pin is an undo step
    frames(state, 2);
    EXPECT_EQ(state.session().pin, nullptr);
    EXPECT_EQ(panel().pin, nullptr);
    EXPECT_NE(item("compare: pin"), nullptr);
    ASSERT_TRUE(state.redo());
    frames(state, 2);
    EXPECT_NE(panel().pin, nullptr);
}

TEST_F(Compare, BMinusAIsTheDifferenceOfTwoForwardPasses) {
    AppState state(small_session());
    frames(state);
    state.pin();
    const core::Session a = *state.session().pin;
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, state.session().params.X(0, 0) + 0.75));
    frames(state, 2);
    EXPECT_EQ(app::changes_text(state, panel()), "X");
    const core::Session& b = state.session();
    for (const core::MatrixRef ref : {core::MatrixRef{MatrixId::output, 0}, core::MatrixRef{MatrixId::weights, 1},
                                      core::MatrixRef{MatrixId::X, 0}}) {
        panels.compare.chosen = ref;
        frames(state);
        ASSERT_TRUE(panel().compared) << core::name(ref.id);
        const core::Matrix direct = direct_difference(a, b, ref);
        const core::Matrix& shown = panel().comparison.difference;
        ASSERT_EQ(shown.rows(), direct.rows());
        ASSERT_EQ(shown.cols(), direct.cols());
        for (const auto& [i, j] : {std::pair{0, 0}, std::pair{1, 2}, std::pair{4, 3}, std::pair{2, 1}})
            EXPECT_EQ(shown(i, j), direct(i, j)) << core::name(ref.id) << "[" << i << "][" << j << "]";
    }
    // X changed in one cell only: that cell is the only change, by exactly the edit.
    EXPECT_EQ(panel().comparison.changed, 1);
    ASSERT_EQ(panel().comparison.top.size(), 1u);
    EXPECT_EQ(panel().comparison.top[0].row, 0);
    EXPECT_EQ(panel().comparison.top[0].col, 0);
    EXPECT_EQ(panel().comparison.top[0].delta(), b.params.X(0, 0) - a.params.X(0, 0));
}

TEST_F(Compare, TheLargestChangeOfADesignedEditIsItsCell) {
    // Seed 001: output = concat·W_O with W_O = I. W_O[0][0] = 2 doubles output's first column, so
    // B − A of output is column 0 of concat = Z⁽¹⁾[·][0] and 0 elsewhere. Z⁽¹⁾[0][0] = 2·w with
    // w = weights⁽¹⁾[0][0] = softmax([4, 0] / √2)[0] (V⁽¹⁾ = [[2, 0], [0, 4]]); Z⁽¹⁾[1][0] is
    // 2·weights⁽¹⁾[1][0], about 2.4e-5: the only other change.
    AppState state(core::worked_example());
    frames(state);
    state.pin();
    ASSERT_TRUE(state.set_cell({{MatrixId::W_O, 0}, 0, 0}, 2));
    frames(state, 2);
    ASSERT_TRUE(panel().compared);
    const core::Comparison& c = panel().comparison;
    EXPECT_EQ(c.changed, 2);
    ASSERT_EQ(c.top.size(), 2u);
    EXPECT_EQ(c.top[0].row, 0);
    EXPECT_EQ(c.top[0].col, 0);
    const double w = 1 / (1 + std::exp(-4 / std::sqrt(2.0)));
    EXPECT_NEAR(c.top[0].delta(), 2 * w, 1e-12);
    EXPECT_NEAR(c.max_abs, 2 * w, 1e-12);
    EXPECT_EQ(c.top[1].row, 1);
    EXPECT_EQ(c.top[1].col, 0);
    EXPECT_GT(c.top[1].delta(), 0);
    EXPECT_LT(c.top[1].delta(), 1e-4);
    for (int j = 1; j < 4; ++j) EXPECT_EQ(c.difference(0, j), 0);
    EXPECT_EQ(app::changes_text(state, panel()), "W_O");
}

TEST_F(Compare, UnpinClearsAndItsUndoBringsTheSamePinBack) {
    AppState state(small_session());
    frames(state);
    state.pin();
    frames(state, 2);
    // Pinned again with nothing edited since: another pin of the same inputs, A's trace is kept.
    const app::Snapshot* a = panel().a.get();
    const core::Session* first = panel().pin.get();
    ASSERT_NE(a, nullptr);
    state.pin();
    frames(state, 2);
    EXPECT_NE(panel().pin.get(), first);
    EXPECT_EQ(panel().a.get(), a);

    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 1, 1}, 3));
    frames(state, 2);
    ASSERT_TRUE(panel().compared);
    const core::Matrix before = panel().comparison.difference;

    state.unpin();
    frames(state, 2);
    EXPECT_EQ(state.session().pin, nullptr);
    EXPECT_EQ(panel().pin, nullptr);
    EXPECT_EQ(panel().a, nullptr);  // freed with the pin
    EXPECT_FALSE(panel().compared);
    EXPECT_NE(item("compare: pin"), nullptr);
    ASSERT_TRUE(state.undo());
    frames(state, 2);
    ASSERT_NE(panel().pin, nullptr);
    ASSERT_TRUE(panel().compared);
    EXPECT_TRUE(panel().comparison.difference == before);
}

TEST_F(Compare, ThePinSurvivesASaveAndTheSameDifferenceIsShown) {
    const std::string path = temp_file("pinned.json").string();
    core::Matrix before;
    {
        AppState state(small_session());
        frames(state);
        state.pin();
        ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 2, 5}, -1.5));
        frames(state, 2);
        ASSERT_TRUE(panel().compared);
        before = panel().comparison.difference;
        ASSERT_TRUE(state.save_file(path));
    }
    AppState state(core::worked_example());
    frames(state);
    ASSERT_TRUE(state.open_file(path));
    ASSERT_NE(state.session().pin, nullptr);
    EXPECT_EQ(*state.session().pin, small_session());
    frames(state, 2);
    ASSERT_TRUE(panel().compared);
    EXPECT_TRUE(panel().comparison.difference == before);
    EXPECT_GT(panel().comparison.changed, 0);
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_F(Compare, ADimensionChangeSaysTheShapesDifferAndComparesWhatStillFits) {
    AppState state(small_session());
    frames(state);
    state.pin();
    core::Config bigger = state.config();
    bigger.n = 7;
    ASSERT_TRUE(state.set_config(bigger));
    frames(state, 2);
    EXPECT_FALSE(panel().compared);
    const std::string why = app::compare_unavailable(state, panel());
    EXPECT_NE(why.find("shapes differ"), std::string::npos) << why;
    EXPECT_NE(why.find("5×8 in A and 7×8 in B"), std::string::npos) << why;
    EXPECT_NE(app::changes_text(state, panel()).find("n 5 → 7"), std::string::npos);
    EXPECT_NE(app::changes_text(state, panel()).find("X (shape)"), std::string::npos);
    // The weights do not depend on n: they still compare, and are unchanged.
    panels.compare.chosen = {MatrixId::W_Q, 1};
    frames(state);
    ASSERT_TRUE(panel().compared);
    EXPECT_EQ(panel().comparison.changed, 0);
    // A head B lacks: said so, nothing read.
    core::Config fewer = state.config();
    fewer.heads = 1;
    fewer.d_k = fewer.d_v = 8;
    ASSERT_TRUE(state.set_config(fewer));
    frames(state, 2);
    EXPECT_FALSE(panel().compared);
    EXPECT_NE(app::compare_unavailable(state, panel()).find("A only"), std::string::npos);
}

TEST_F(Compare, AMaskTurnedOnIsAChangeOfTheMaskNotOfTheScores) {
    AppState state(small_session());
    frames(state);
    state.pin();
    core::Config causal = state.config();
    causal.mask = core::Mask::causal;
    ASSERT_TRUE(state.set_config(causal));
    panels.compare.chosen = {MatrixId::scores, 0};
    frames(state, 2);
    ASSERT_TRUE(panel().compared);
    const core::Comparison& c = panel().comparison;
    EXPECT_EQ(c.masked_b, 5 * 4 / 2);  // the keys after each query
    EXPECT_EQ(c.masked_a, 0);
    EXPECT_EQ(c.changed, 0);  // the scores not masked are the same numbers
    EXPECT_FALSE(c.difference.array().isNaN().any());
    EXPECT_EQ(app::changes_text(state, panel()), "mask none → causal");
}

TEST_F(Compare, APinTooLargeToComputeAtOnceIsTracedOnTheWorker) {
    AppState state(small_session());
    state.set_sync_limit(0);  // B and A on worker threads alike
    frames(state);
    state.pin();
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 3, 3}, 0.5));
    settle(state);
    ASSERT_NE(panel().worker, nullptr);
    ASSERT_TRUE(panel().compared);
    const core::Matrix direct = direct_difference(*state.session().pin, state.session(), {MatrixId::output, 0});
    EXPECT_LT((panel().comparison.difference - direct).cwiseAbs().maxCoeff(), 1e-12);
    // Rows that do not depend on the edit are exactly 0: A and B were computed the same way.
    panels.compare.chosen = {MatrixId::Q, 0};
    frames(state);
    ASSERT_TRUE(panel().compared);
    EXPECT_EQ(panel().comparison.changed, static_cast<std::int64_t>(state.config().d_k));  // row 3 only
}

TEST_F(Compare, AHeatmapsCompareItemPinsWhenNeededAndChoosesItsMatrix) {
    AppState state(core::worked_example());
    ASSERT_TRUE(app::show_panel(panels, "Matrix viewer"));
    frames(state, 2);
    imgui_.ui.request_compare({MatrixId::weights, 1});  // what the heatmap's right-click item asks
    frames(state, 3);
    ASSERT_NE(state.session().pin, nullptr);
    EXPECT_TRUE(panel().chosen == (core::MatrixRef{MatrixId::weights, 1}));
    bool shown = false;
    for (const auto& w : report.windows) shown |= w.title == "Compare";
    EXPECT_TRUE(shown);
    EXPECT_TRUE(panel().compared);
    // With a pin already there, the item keeps it.
    const core::Session* pin = state.session().pin.get();
    imgui_.ui.request_compare({MatrixId::Q, 0});
    frames(state, 2);
    EXPECT_EQ(state.session().pin.get(), pin);
    EXPECT_TRUE(panel().chosen == (core::MatrixRef{MatrixId::Q, 0}));
}

TEST_F(Compare, ColoursSpanTheLargestChangeOrClipAtThe99thPercentile) {
    AppState state(core::random_session({8, 16, 2, 8, 8, true, core::Mask::none, {}, false, 0, {}}, 4));
    frames(state);
    state.pin();
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, 4));
    frames(state, 2);  // output: 8×16 = 128 cells
    ASSERT_TRUE(panel().compared);
    const core::ColorRange full = app::compare_range(panel());
    EXPECT_EQ(full.hi, panel().comparison.max_abs);
    EXPECT_EQ(full.lo, -full.hi);
    // The 99th percentile of |B − A| by a sort, nearest rank (as the other heatmaps' percentile
    // scaling): rank round(0.99·127) = 126 of 0…127, the second largest.
    std::vector<double> v;
    const core::Matrix& d = panel().comparison.difference;
    for (Eigen::Index k = 0; k < d.size(); ++k) v.push_back(std::abs(d.data()[k]));
    std::sort(v.begin(), v.end());
    ASSERT_EQ(v.size(), 128u);
    panels.compare.clip = true;
    const core::ColorRange clipped = app::compare_range(panel());
    EXPECT_EQ(clipped.hi, v[126]);
    EXPECT_LT(clipped.hi, full.hi);
    EXPECT_EQ(clipped.lo, -clipped.hi);
}
