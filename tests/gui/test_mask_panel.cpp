// The mask editor driven headless: a click toggles a cell, a drag paints a row as one edit, a row
// left without keys is refused, the presets; and the AppState rules behind it (mask cells are 0 or
// 1, switching from causal to custom starts from the causal pattern, cross-attention's Y and its
// labels through dimension changes and undo).
#include <gtest/gtest.h>

#include <imgui.h>

#include <string>

#include "core/attention/masks.hpp"
#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "panels/layer/mask_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"

using namespace attnviz;
using app::AppState;
using app::MaskPanel;
using core::MatrixId;

namespace {

// 4 queries, 6 keys from Y, a custom mask of ones.
core::Session cross_masked() {
    core::Session s = core::random_session({4, 8, 2, 4, 4, true, core::Mask::custom, {}, false, 0, {}, 6}, 3);
    s.params.mask.setOnes();
    return s;
}

class MaskEditor : public ::testing::Test {
protected:
    void draw(AppState& state, MaskPanel& panel, int count = 1) {
        for (int k = 0; k < count; ++k) {
            ImGui::NewFrame();
            report.clear();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize({600, 500});
            ImGui::Begin("mask", nullptr, ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize);
            app::draw_mask_panel(state, imgui_.ui, panel);
            ImGui::End();
            ImGui::Render();
            state.update();
        }
    }
    // The centre of cell (row, col) of the mask grid, from where the heatmap drew its cells.
    ImVec2 cell(const AppState& state, int row, int col) {
        for (const auto& h : report.heatmaps)
            if (h.matrix == "mask") {
                const core::Matrix& m = *state.input({MatrixId::mask, 0});
                const float w = (h.max.x - h.min.x) / m.cols(), ht = (h.max.y - h.min.y) / m.rows();
                return {h.min.x + (col + 0.5f) * w, h.min.y + (row + 0.5f) * ht};
            }
        ADD_FAILURE() << "the mask grid was not drawn";
        return {-1, -1};
    }
    // Presses at the first cell, moves over the others, releases at the last.
    void drag(AppState& state, MaskPanel& panel, const std::vector<std::pair<int, int>>& cells) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = cell(state, cells.front().first, cells.front().second);
        draw(state, panel);
        io.MouseDown[0] = true;
        draw(state, panel);
        for (const auto& [r, c] : cells) {
            io.MousePos = cell(state, r, c);
            draw(state, panel);
        }
        io.MouseDown[0] = false;
        draw(state, panel);
        io.MousePos = {-100, -100};
        draw(state, panel);
    }
    const core::Matrix& mask(const AppState& state) { return *state.input({MatrixId::mask, 0}); }

    test::HeadlessImGui imgui_{{1000, 800}};
    app::DrawReport report;
    void SetUp() override { imgui_.ui.report = &report; }
};

}  // namespace

TEST_F(MaskEditor, AClickTogglesACellAndTheWeightFollows) {
    AppState state(cross_masked());
    MaskPanel panel;
    draw(state, panel, 2);
    drag(state, panel, {{1, 2}});
    EXPECT_EQ(mask(state)(1, 2), 0.0);
    EXPECT_EQ(mask(state).sum(), 23.0);  // only that cell
    for (int h = 0; h < 2; ++h) EXPECT_EQ(state.trace().heads[h].weights(1, 2), 0.0);
    EXPECT_GT(state.trace().heads[0].weights(0, 2), 0.0);
    drag(state, panel, {{1, 2}});  // and back
    EXPECT_EQ(mask(state)(1, 2), 1.0);
}

TEST_F(MaskEditor, ADragPaintsOneValueAsOneEdit) {
    AppState state(cross_masked());
    MaskPanel panel;
    draw(state, panel, 2);
    // From (2, 0) along row 2 to (2, 4): all five masked, key 5 left.
    drag(state, panel, {{2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}});
    for (int k = 0; k < 5; ++k) EXPECT_EQ(mask(state)(2, k), 0.0) << k;
    EXPECT_EQ(mask(state)(2, 5), 1.0);
    // Query 2 now attends to key 5 alone.
    EXPECT_EQ(state.trace().heads[1].weights(2, 5), 1.0);
    ASSERT_TRUE(state.undo());  // the whole drag is one step
    EXPECT_EQ(mask(state).sum(), 24.0);
}

TEST_F(MaskEditor, ARowWithoutKeysIsRefusedAndTheMaskStays) {
    AppState state(cross_masked());
    MaskPanel panel;
    draw(state, panel, 2);
    drag(state, panel, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}});
    EXPECT_EQ(mask(state).sum(), 24.0);
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("query 0"), std::string::npos) << state.message().text;
    // The same rule for a typed cell: the last key of a row stays.
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(state.set_cell({{MatrixId::mask, 0}, 3, k}, 0.0));
    EXPECT_FALSE(state.set_cell({{MatrixId::mask, 0}, 3, 5}, 0.0));
    EXPECT_FALSE(state.set_cell({{MatrixId::mask, 0}, 1, 1}, 0.5));  // 0 or 1 only
    EXPECT_NE(state.message().text.find("0 or 1"), std::string::npos);
    EXPECT_EQ(mask(state)(1, 1), 1.0);
}

TEST_F(MaskEditor, PresetsSetTheirPatterns) {
    AppState state(core::random_session({5, 8, 2, 4, 4, true, core::Mask::custom, {}, false, 0, {}}, 4));
    MaskPanel panel;
    draw(state, panel);
    ASSERT_TRUE(app::apply_mask_preset(state, core::sliding_window_mask(5, 5, 2, true), "window"));
    EXPECT_TRUE(core::same(mask(state), *core::sliding_window_mask(5, 5, 2, true).value));
    EXPECT_FALSE(app::apply_mask_preset(state, core::padding_mask(5, 5, 5), "all padding"));
    EXPECT_TRUE(state.message().error);
    EXPECT_TRUE(core::same(mask(state), *core::sliding_window_mask(5, 5, 2, true).value));  // kept
    draw(state, panel);
}

TEST_F(MaskEditor, WithoutACustomMaskTheButtonStartsOneFromTheCausalMask) {
    AppState state(core::random_session({4, 8, 2, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 5));
    MaskPanel panel;
    draw(state, panel);
    // The rule's grid, read only: the causal triangle.
    ASSERT_EQ(report.heatmaps.size(), 1u);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) EXPECT_EQ(panel.rule(i, j), j <= i ? 1.0 : 0.0) << i << "," << j;
    core::Config custom = state.config();
    custom.mask = core::Mask::custom;
    ASSERT_TRUE(state.set_config(custom));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) EXPECT_EQ(mask(state)(i, j), j <= i ? 1.0 : 0.0) << i << "," << j;
    // The same weights as the causal mask.
    const core::Trace custom_trace = state.trace();
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.config().mask, core::Mask::causal);
    for (int h = 0; h < 2; ++h)
        EXPECT_LT((custom_trace.heads[h].weights - state.trace().heads[h].weights).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(CrossAttentionState, DimensionsLabelsAndUndo) {
    core::Config c = core::Config{};
    AppState state(core::worked_example());
    c = state.config();
    c.n_kv = 3;
    ASSERT_TRUE(state.set_config(c));
    EXPECT_EQ(state.session().kv_tokens, (std::vector<std::string>{"y1", "y2", "y3"}));
    ASSERT_NE(state.input({MatrixId::Y, 0}), nullptr);
    EXPECT_EQ(state.input({MatrixId::Y, 0})->rows(), 3);
    EXPECT_EQ(state.trace().heads[0].weights.cols(), 3);
    ASSERT_TRUE(state.set_kv_token(2, "cat"));
    ASSERT_TRUE(state.set_cell({{MatrixId::Y, 0}, 2, 1}, 0.75));
    // Off and on again: Y and its labels come back while the session is open.
    c.n_kv = 0;
    ASSERT_TRUE(state.set_config(c));
    EXPECT_EQ(state.input({MatrixId::Y, 0})->size(), 0);
    c.n_kv = 3;
    ASSERT_TRUE(state.set_config(c));
    EXPECT_EQ(state.session().kv_tokens[2], "cat");
    EXPECT_EQ((*state.input({MatrixId::Y, 0}))(2, 1), 0.75);
    // A causal mask with n_kv ≠ n is refused; the session stays.
    core::Config causal = state.config();
    causal.mask = core::Mask::causal;
    EXPECT_FALSE(state.set_config(causal));
    EXPECT_NE(state.message().text.find("n_kv = n"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.config().mask, core::Mask::none);
    // Undo walks back: cross-attention off, the cell, the label, and to the first Y.
    ASSERT_TRUE(state.undo());
    EXPECT_FALSE(state.config().cross());
    EXPECT_TRUE(state.session().kv_tokens.empty());
    ASSERT_TRUE(state.undo());
    ASSERT_TRUE(state.undo());
    ASSERT_TRUE(state.undo());
    ASSERT_EQ(state.session().kv_tokens.size(), 3u);
    EXPECT_EQ(state.session().kv_tokens[2], "y3");
    EXPECT_NE((*state.input({MatrixId::Y, 0}))(2, 1), 0.75);
}

TEST(CrossAttentionState, ShrinkingKeysUnderACustomMaskThatWouldEmptyARowIsRefused) {
    core::Session s = core::random_session({2, 4, 1, 4, 4, true, core::Mask::custom, {}, false, 0, {}, 3}, 6);
    s.params.mask = core::Matrix{{1, 1, 1}, {0, 0, 1}};  // query 1 sees only the last key
    AppState state(s);
    core::Config fewer = state.config();
    fewer.n_kv = 2;
    EXPECT_FALSE(state.set_config(fewer));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("query 1"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.config().n_kv, 3);
    EXPECT_FALSE(state.can_redo());
}

TEST(CrossAttentionState, EveryPanelDrawsACrossAttentionSessionWithACustomMask) {
    test::HeadlessImGui imgui;
    AppState state(cross_masked());
    app::Panels panels;
    for (const char* title : {"Mask", "Head view", "Model view", "Saturation lab", "Every intermediate"}) {
        app::show_panel(panels, title);
        for (int k = 0; k < 3; ++k) {
            ImGui::NewFrame();
            app::draw_frame(state, imgui.ui, panels, 16.0f);
            ImGui::Render();
        }
    }
    EXPECT_FALSE(state.message().error) << state.message().text;
    EXPECT_EQ(state.trace().heads[0].weights.cols(), 6);
}

// Without a custom mask the panel draws the rule: the causal triangle cut by the sliding window, a
// band of `window` keys; "Use a custom mask" starts from that grid, as one mask with no window.
TEST_F(MaskEditor, TheRuleIsDrawnWithItsSlidingWindowAndACustomMaskStartsFromIt) {
    AppState state(core::random_session({6, 8, 2, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 5));
    core::Config windowed = state.config();
    windowed.window = 3;
    ASSERT_TRUE(state.set_config(windowed));
    MaskPanel panel;
    draw(state, panel, 2);
    bool drawn = false;
    for (const auto& h : report.heatmaps) drawn |= h.matrix == "mask";
    EXPECT_TRUE(drawn);
    ASSERT_EQ(panel.rule.rows(), 6);
    ASSERT_EQ(panel.rule.cols(), 6);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) EXPECT_EQ(panel.rule(i, j), j <= i && i - j < 3 ? 1.0 : 0.0) << i << " " << j;
    // The weights agree: what the grid hides has weight 0.
    EXPECT_EQ(state.trace().heads[0].weights(5, 2), 0.0);
    EXPECT_GT(state.trace().heads[0].weights(5, 3), 0.0);

    const app::DrawReport::Item* button = nullptr;
    for (const auto& item : report.items)
        if (item.name == "mask: use a custom mask") button = &item;
    ASSERT_NE(button, nullptr);
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {(button->min.x + button->max.x) / 2, (button->min.y + button->max.y) / 2};
    draw(state, panel);
    io.MouseDown[0] = true;
    draw(state, panel);
    io.MouseDown[0] = false;
    draw(state, panel);
    io.MousePos = {-100, -100};
    EXPECT_EQ(state.config().mask, core::Mask::custom);
    EXPECT_EQ(state.config().window, 0);
    EXPECT_TRUE(core::same(mask(state), panel.rule)) << mask(state) << "\n" << state.message().text;
    EXPECT_EQ(mask(state).sum(), 1 + 2 + 3 + 3 + 3 + 3);
}
