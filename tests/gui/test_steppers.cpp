// The KV-cache and FlashAttention steppers driven headless: what they show, step by step, against
// the layer computed here from its definition.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cmath>
#include <optional>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "tests/test_support.hpp"

using namespace attnviz;
using app::AppState;

namespace {

class Steppers : public ::testing::Test {
protected:
    // Frames with the panel on screen; the last one's draw report is kept.
    void frames(AppState& state, app::PanelId panel, int count = 2) {
        app::show_panel(panels, panel);
        imgui_.frames(state, panels, count, &report);
    }
    std::optional<double> value(const std::string& name) const { return test::reported_value(report, name); }

    test::HeadlessImGui imgui_;
    app::Panels panels;
    app::DrawReport report;
};

core::Config grouped_causal() {
    core::Config c = test::make_config(6, 8, 4, 2, 2);
    c.kv_heads = 2;
    c.mask = core::Mask::causal;
    return c;
}

}  // namespace

// Each decoding step's output row is the causal layer's row t; the cache's bytes are K and V rows of
// each K/V group for the tokens so far, and a model of this shape holds layers · tokens of them.
TEST_F(Steppers, TheKvCacheStepperDecodesRowByRowAsTheCausalLayer) {
    AppState state(core::random_session(grouped_causal(), 4));
    panels.kv_cache.prefill = 2;
    frames(state, app::PanelId::kv_cache);
    ASSERT_TRUE(panels.kv_cache.run) << panels.kv_cache.error;
    EXPECT_EQ(panels.kv_cache.run->steps.size(), 4u);  // tokens 2 … 5
    for (int step : {0, 3}) {
        panels.kv_cache.step = step;
        frames(state, app::PanelId::kv_cache, 1);
        const int t = 2 + step;
        ASSERT_TRUE(value("kv cache: difference"));
        EXPECT_LE(*value("kv cache: difference"), 1e-12);
        EXPECT_NEAR(*value("kv cache: weights sum"), 1.0, 1e-12);
        // 2 K/V groups × (d_k + d_v = 4) values × (t + 1) tokens × 8 bytes.
        EXPECT_EQ(*value("kv cache: layer bytes"), 2 * 4 * (t + 1) * 8);
    }
    // The default model: 32 layers, 4096 tokens, 2 bytes a value; without groups, 4 K/V heads.
    EXPECT_EQ(*value("kv cache: model bytes"), 32.0 * 4096 * 2 * 4 * 2);
    EXPECT_EQ(*value("kv cache: model bytes without groups"), 32.0 * 4096 * 4 * 4 * 2);
    // The session's own (causal) weights row t is the step's: the cache holds exactly the keys it may see.
    const core::Trace whole = core::forward<double>(state.config(), state.session().params);
    const core::KvCacheStep& last = panels.kv_cache.run->steps.back();
    EXPECT_LE((last.weights[1] - whole.heads[1].weights.row(5)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST_F(Steppers, TheKvCacheStepperSaysWhatItCannotFollow) {
    core::Config cross = test::make_config(3, 8, 2, 4, 4);
    cross.n_kv = 5;
    AppState state(core::random_session(cross, 2));
    frames(state, app::PanelId::kv_cache);
    EXPECT_FALSE(panels.kv_cache.run);
    EXPECT_NE(panels.kv_cache.error.find("ross"), std::string::npos) << panels.kv_cache.error;
    AppState large(core::random_session(test::make_config(200, 8, 2, 4, 4), 2));
    panels.kv_cache = {};  // another AppState: its generations start again
    frames(large, app::PanelId::kv_cache);
    EXPECT_NE(panels.kv_cache.error.find("up to 128 tokens"), std::string::npos) << panels.kv_cache.error;
}

// Tiles of 2 query rows and 4 keys over 6 × 6 scores: 3 row tiles of 2 key tiles. At each step, m is
// the row's max over the keys seen, ℓ the sum of e^(s − m) over them, and the rescaling
// e^(m_old − m_new) of what the first tile summed.
TEST_F(Steppers, TheFlashStepperShowsTheRunningMaxSumAndRescaling) {
    AppState state(core::random_session(test::make_config(6, 8, 2, 4, 4), 9));
    panels.flash.head = 1;
    panels.flash.block_rows = 2;
    panels.flash.block_cols = 4;
    frames(state, app::PanelId::flash);
    ASSERT_TRUE(panels.flash.run) << panels.flash.error;
    ASSERT_EQ(panels.flash.run->steps.size(), 6u);
    const core::Matrix& scores = state.trace().heads[1].scores;
    panels.flash.step = 3;  // rows 2 and 3 against keys 4 and 5
    frames(state, app::PanelId::flash, 1);
    for (int i : {2, 3}) {
        const double m_first = scores.row(i).head(4).maxCoeff(), m_all = scores.row(i).maxCoeff();
        double l = 0;
        for (int j = 0; j < 6; ++j) l += std::exp(scores(i, j) - m_all);
        EXPECT_DOUBLE_EQ(*value("flash: m " + std::to_string(i)), m_all);
        EXPECT_NEAR(*value("flash: l " + std::to_string(i)), l, 1e-12);
        EXPECT_NEAR(*value("flash: rescale " + std::to_string(i)), std::exp(m_first - m_all), 1e-15);
    }
    EXPECT_LE(*value("flash: max difference"), 1e-12);
    EXPECT_EQ(*value("flash: standard n x n accesses"), 4 * 6 * 6);
    EXPECT_EQ(*value("flash: tiled K and V reads"), 3 * 6 * (4 + 4));  // 3 row tiles read K and V
    AppState large(core::random_session(test::make_config(200, 8, 2, 4, 4), 2));
    panels.flash = {};  // another AppState: its generations start again
    frames(large, app::PanelId::flash);
    EXPECT_FALSE(panels.flash.run);
    EXPECT_NE(panels.flash.error.find("attnviz flash"), std::string::npos) << panels.flash.error;
}
