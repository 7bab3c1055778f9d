// The head view driven headless: token selection by clicks (alone, Ctrl+click), the selection's
// summed and mean attention against the weights' rows, heads toggled off, Esc, and the tab that
// brings the panel forward in its place.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <cmath>
#include <string>

#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "panels/model/head_view_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "ui/palette.hpp"

using namespace attnviz;
using app::AppState;
using app::HeadViewPanel;

namespace {

// A random causal session of 8 tokens and 4 heads (tokens x1 … x8).
core::Session eight_tokens_four_heads() {
    return core::random_session({8, 16, 4, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 5);
}

class HeadView : public ::testing::Test {
protected:
    // Draws the head view alone in a window of `size` at (0, 0).
    void draw(AppState& state, HeadViewPanel& panel, int count = 1) {
        for (int k = 0; k < count; ++k) {
            ImGui::NewFrame();
            report.clear();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize(size);
            ImGui::Begin("head view", nullptr, ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize);
            app::draw_head_view_panel(state, imgui_.ui, panel);
            scrollbar = ImGui::GetCurrentWindow()->ScrollbarY;
            ImGui::End();
            ImGui::Render();
        }
    }
    ImVec2 item(const std::string& name) {
        for (const auto& i : report.items)
            if (i.name == name) return {(i.min.x + i.max.x) / 2, (i.min.y + i.max.y) / 2};
        ADD_FAILURE() << "no item " << name;
        return {-1, -1};
    }
    void click(AppState& state, HeadViewPanel& panel, const std::string& name, bool ctrl = false) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = item(name);
        draw(state, panel);
        io.KeyCtrl = ctrl;
        io.MouseDown[0] = true;
        draw(state, panel);
        io.MouseDown[0] = false;
        draw(state, panel);
        io.KeyCtrl = false;
    }
    void away(AppState& state, HeadViewPanel& panel) {
        ImGui::GetIO().MousePos = {-100, -100};
        draw(state, panel, 2);
    }

    test::HeadlessImGui imgui_{{1000, 800}};
    app::DrawReport report;
    ImVec2 size{640, 480};
    bool scrollbar = false;
    void SetUp() override { imgui_.ui.report = &report; }
};

TEST_F(HeadView, ClicksSelectTokensAndTheSumIsTheSumOfTheirRows) {
    AppState state(eight_tokens_four_heads());
    HeadViewPanel panel;
    away(state, panel);
    EXPECT_FALSE(scrollbar);
    const core::Trace& trace = state.trace();
    ASSERT_EQ(trace.heads.size(), 4u);

    click(state, panel, "head view: query x3");
    EXPECT_EQ(panel.queries, std::vector<int>{2});
    EXPECT_TRUE(panel.keys.empty());
    // While the pointer is on x3, only its lines are drawn: one per key it attends to per head.
    for (const core::HeadLine& l : panel.lines.lines) EXPECT_EQ(l.query, 2);
    EXPECT_GT(panel.lines.lines.size(), 0u);

    click(state, panel, "head view: query x6", true);
    EXPECT_EQ(panel.queries, (std::vector<int>{2, 5}));
    // The summed attention shown: per head row 2 + row 5 of its weights, and their mean over heads.
    ASSERT_EQ(panel.of_queries.size(), 8);
    ASSERT_EQ(panel.of_queries_per_head.size(), 4u);
    for (int j = 0; j < 8; ++j) {
        double over_heads = 0;
        for (size_t h = 0; h < 4; ++h) {
            const double sum = trace.heads[h].weights(2, j) + trace.heads[h].weights(5, j);
            EXPECT_NEAR(panel.of_queries_per_head[h](j), sum, 1e-15) << "head " << h << " key " << j;
            over_heads += sum;
        }
        EXPECT_NEAR(panel.of_queries(j), over_heads / 4, 1e-15) << "key " << j;
    }
    EXPECT_NEAR(panel.of_queries.sum(), 2, 1e-12);  // two rows of weights, each summing to 1
    EXPECT_EQ(panel.of_queries(6), 0);              // causal: neither x3 nor x6 sees x7
    // With the pointer away, the lines drawn are the selection's.
    away(state, panel);
    for (const core::HeadLine& l : panel.lines.lines) EXPECT_TRUE(l.query == 2 || l.query == 5);

    // The mean: the sum divided by two.
    click(state, panel, "head view: mean");
    EXPECT_TRUE(panel.mean);
    for (int j = 0; j < 8; ++j) {
        double over_heads = 0;
        for (size_t h = 0; h < 4; ++h) over_heads += trace.heads[h].weights(2, j) + trace.heads[h].weights(5, j);
        EXPECT_NEAR(panel.of_queries(j), over_heads / 4 / 2, 1e-15);
    }

    // Ctrl+click x3 again: it leaves the selection.
    click(state, panel, "head view: query x3", true);
    EXPECT_EQ(panel.queries, std::vector<int>{5});
    for (int j = 0; j < 8; ++j) EXPECT_NEAR(panel.of_queries_per_head[1](j), trace.heads[1].weights(5, j), 1e-15);

    // A key: how much of each query's attention it gets (its column), beside the query selection.
    click(state, panel, "head view: key x1", true);
    EXPECT_EQ(panel.keys, std::vector<int>{0});
    ASSERT_EQ(panel.to_keys.size(), 8);
    for (int i = 0; i < 8; ++i) {
        double column = 0;
        for (size_t h = 0; h < 4; ++h) column += trace.heads[h].weights(i, 0);
        EXPECT_NEAR(panel.to_keys(i), column / 4, 1e-15);  // one key: its mean is its sum
    }
    EXPECT_NEAR(panel.to_keys(0), 1, 1e-15);  // causal: x1 attends only to itself

    // A plain click replaces the selection; on the only selected token it clears it.
    click(state, panel, "head view: key x2");
    EXPECT_TRUE(panel.queries.empty());
    EXPECT_EQ(panel.keys, std::vector<int>{1});
    click(state, panel, "head view: key x2");
    EXPECT_TRUE(panel.keys.empty());
    away(state, panel);
    EXPECT_EQ(panel.of_queries.size(), 0);
    EXPECT_EQ(panel.to_keys.size(), 0);
}

TEST_F(HeadView, ClearAndEscapeEmptyTheSelection) {
    AppState state(eight_tokens_four_heads());
    HeadViewPanel panel;
    away(state, panel);
    click(state, panel, "head view: query x2");
    click(state, panel, "head view: key x1", true);
    EXPECT_FALSE(panel.queries.empty());
    click(state, panel, "head view: clear");
    EXPECT_TRUE(panel.queries.empty());
    EXPECT_TRUE(panel.keys.empty());

    click(state, panel, "head view: query x4");
    ASSERT_EQ(panel.queries, std::vector<int>{3});
    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Escape] = 2;
    io.KeysDown[2] = true;  // the panel's window has the focus since the click
    draw(state, panel);
    io.KeysDown[2] = false;
    draw(state, panel);
    EXPECT_TRUE(panel.queries.empty());
}

TEST_F(HeadView, AHeadToggledOffDrawsNoLines) {
    AppState state(eight_tokens_four_heads());
    HeadViewPanel panel;
    panel.min_weight = 0;  // every line: 8 queries × 8 keys a head
    away(state, panel);
    ASSERT_EQ(panel.drawn.size(), 4u);
    for (size_t h = 0; h < 4; ++h) EXPECT_EQ(panel.drawn[h], 64u) << "head " << h;

    click(state, panel, "head view: head 2");
    away(state, panel);
    EXPECT_FALSE(app::head_shown(panel, 1));
    EXPECT_EQ(panel.drawn[1], 0u);
    EXPECT_EQ(panel.drawn[0], 64u);
    EXPECT_EQ(panel.lines.considered, 3u * 64);
    // The selection's attention averages the heads shown only.
    click(state, panel, "head view: query x8");
    away(state, panel);
    EXPECT_EQ(panel.of_queries_per_head[1].size(), 0);
    const core::Trace& trace = state.trace();
    for (int j = 0; j < 8; ++j)
        EXPECT_NEAR(panel.of_queries(j),
                    (trace.heads[0].weights(7, j) + trace.heads[2].weights(7, j) + trace.heads[3].weights(7, j)) / 3,
                    1e-15);

    click(state, panel, "head view: none");
    away(state, panel);
    for (size_t h = 0; h < 4; ++h) EXPECT_EQ(panel.drawn[h], 0u);
    EXPECT_EQ(panel.of_queries.size(), 0);  // no head to average
    click(state, panel, "head view: all");
    away(state, panel);
    for (size_t h = 0; h < 4; ++h) EXPECT_EQ(panel.drawn[h], 8u) << "x8's lines, head " << h;
}

TEST_F(HeadView, LargeSessionsDrawAtMostTheBoundOfLines) {
    AppState state(core::random_session({512, 64, 4, 16, 16, true, core::Mask::none, {}, false, 0, {}}, 5));
    HeadViewPanel panel;
    away(state, panel);
    // By default at this size: each query's 3 strongest keys a head, none below the uniform weight.
    EXPECT_EQ(panel.lines.considered, 4u * 512 * 512);
    EXPECT_LE(panel.lines.lines.size(), 4u * 512 * 3);
    for (const core::HeadLine& l : panel.lines.lines) EXPECT_GE(l.weight, 1.0f / 512);
    EXPECT_GT(panel.lines.beyond_top_k, 0u);
    // Every line: the bound keeps the 20 000 strongest.
    panel.min_weight = 0;
    panel.top_k = 0;
    away(state, panel);
    EXPECT_EQ(panel.lines.considered, 4u * 512 * 512);
    EXPECT_EQ(panel.lines.lines.size(), 20000u);
    EXPECT_EQ(panel.lines.over_bound, 4u * 512 * 512 - 20000);
    size_t drawn = 0;
    for (size_t d : panel.drawn) drawn += d;
    EXPECT_EQ(drawn, 20000u);
    // Tokens less than a pixel apart can still be clicked, labelled or not: the one whose row holds
    // the pointer (ImGui puts it on whole pixels).
    // x300 has no label here: its item is its row, which gives the column's top and pitch.
    const app::DrawReport::Item* row = nullptr;
    for (const auto& i : report.items)
        if (i.name == "head view: query x300") row = &i;
    ASSERT_NE(row, nullptr);
    const float pitch = row->max.y - row->min.y, top = row->min.y - 299 * pitch;
    ASSERT_LT(pitch, 1.0f);
    const float y = std::floor(item("head view: query x300").y);
    const int under = static_cast<int>(std::floor((y - top) / pitch));
    ASSERT_NEAR(under, 299, 1);
    click(state, panel, "head view: query x300");
    EXPECT_EQ(panel.queries, std::vector<int>{under});
    away(state, panel);
    for (const core::HeadLine& l : panel.lines.lines) EXPECT_EQ(l.query, under);
    EXPECT_EQ(panel.lines.considered, 4u * 512);
}

TEST(HeadViewLabels, EveryStepThLabelFitsALine) {
    EXPECT_EQ(app::label_step(8, 20, 17), 1);
    EXPECT_EQ(app::label_step(8, 10, 17), 2);
    EXPECT_EQ(app::label_step(512, 0.6f, 17), 50);  // 0.6·20 = 12 < 17 ≤ 0.6·50
    EXPECT_EQ(app::label_step(512, 1.7f, 17), 10);
    EXPECT_EQ(app::label_step(3, 0.1f, 17), 5);  // more than the count: only the first
}

TEST(HeadViewSelect, TokensFromTheCommandLine) {
    HeadViewPanel p;
    EXPECT_EQ(app::select_tokens(p, "2,0,k5,2", 8, 6), "");
    EXPECT_EQ(p.queries, (std::vector<int>{0, 2}));
    EXPECT_EQ(p.keys, std::vector<int>{5});
    HeadViewPanel q;
    EXPECT_EQ(app::select_tokens(q, "1,k6,x", 8, 6), "key 6 does not exist: there are 6");
    EXPECT_EQ(q.queries, std::vector<int>{1});  // what could be read is selected
    EXPECT_NE(app::select_tokens(q, "", 8, 6), "");
    EXPECT_NE(app::select_tokens(q, "-1", 8, 6), "");
}

// The tab mechanism of a place holding two panels: "Attention per head" first, then a click on
// the "Head view" tab shows the head view there instead.
class HeadViewTab : public ::testing::Test {
protected:
    void frames(AppState& state, app::Panels& panels, int count = 1) { imgui_.frames(state, panels, count); }
    bool window(const char* title) const {
        for (const auto& w : report.windows)
            if (w.title == title) return true;
        return false;
    }
    test::HeadlessImGui imgui_;
    app::DrawReport report;
};

TEST_F(HeadViewTab, ClickingTheTabShowsTheHeadViewInItsPlace) {
    AppState state(eight_tokens_four_heads());
    app::Panels panels;
    imgui_.ui.report = &report;
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {-100, -100};
    frames(state, panels, 2);
    ASSERT_TRUE(window("Attention per head"));
    EXPECT_FALSE(window("Head view"));
    const app::DrawReport::Item* tab = nullptr;
    for (const auto& i : report.items)
        if (i.name == "tab: Head view") tab = &i;
    ASSERT_NE(tab, nullptr);
    io.MousePos = {(tab->min.x + tab->max.x) / 2, (tab->min.y + tab->max.y) / 2};
    frames(state, panels);
    io.MouseDown[0] = true;
    frames(state, panels);
    io.MouseDown[0] = false;
    frames(state, panels);  // the tab is chosen: the head view appears
    EXPECT_TRUE(window("Head view"));
    for (int k = 0; k < 3; ++k) {  // from then on, never the other panel again (no flicker)
        frames(state, panels);
        EXPECT_TRUE(window("Head view")) << "frame " << k;
        EXPECT_FALSE(window("Attention per head")) << "frame " << k;
    }
    EXPECT_STREQ(app::explorer_panels()[static_cast<size_t>(app::active_panel(panels, app::Place::upper_right))].title,
                 "Head view");
    // And back.
    for (const auto& i : report.items)
        if (i.name == "tab: Attention per head") tab = &i;
    io.MousePos = {(tab->min.x + tab->max.x) / 2, (tab->min.y + tab->max.y) / 2};
    frames(state, panels);
    io.MouseDown[0] = true;
    frames(state, panels);
    io.MouseDown[0] = false;
    frames(state, panels, 3);
    EXPECT_TRUE(window("Attention per head"));
    EXPECT_FALSE(window("Head view"));
}

TEST_F(HeadViewTab, ThePanelAskedForAtStartIsShown) {
    AppState state(eight_tokens_four_heads());
    app::Panels panels;
    imgui_.ui.report = &report;
    ASSERT_TRUE(app::show_panel(panels, "Head view"));
    frames(state, panels, 3);
    EXPECT_TRUE(window("Head view"));
    EXPECT_FALSE(window("Attention per head"));
}

}  // namespace

// The heads' colours live in core (figures and the interactive page use them too); beyond ten heads
// they are the hues ImGui turns into colours, as the app always drew them.
TEST(HeadColors, BeyondTenHeadsAreImGuisColoursOfTheGoldenRatioHues) {
    for (int heads : {11, 16, 40})
        for (int h = 0; h < heads; ++h) {
            float hue = static_cast<float>(h) * 0.618034f;
            hue -= static_cast<float>(static_cast<int>(hue));
            float r = 0, g = 0, b = 0;
            ImGui::ColorConvertHSVtoRGB(hue, 0.65f, 0.95f, r, g, b);
            EXPECT_EQ(attnviz::app::head_color(h, heads), ImGui::ColorConvertFloat4ToU32({r, g, b, 1}))
                << h << " of " << heads;
        }
    EXPECT_EQ(attnviz::app::head_color(2, 10), IM_COL32(44, 160, 44, 255));  // Tableau's third, up to ten heads
}
