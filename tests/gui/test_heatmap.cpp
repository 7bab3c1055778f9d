// The heatmap widget: which cell the pointer is on, plain and transposed.
#include <gtest/gtest.h>

#include <imgui.h>

#include "headless.hpp"
#include "widgets/heatmap.hpp"

using namespace attnviz;

namespace {

class HeatmapHits : public ::testing::Test {
protected:
    // Draws the matrix in a bare window at (0, 0) with the pointer at `mouse`; returns the hit.
    app::HeatmapHit hover(const core::Matrix& m, bool transposed, ImVec2 mouse) {
        app::HeatmapOptions o;
        o.max_cell = 40;
        o.max_size = {400, 400};
        o.transposed = transposed;
        app::HeatmapHit hit;
        for (int frame = 0; frame < 3; ++frame) {  // windows become hoverable after their first frame
            ImGui::GetIO().MousePos = mouse;
            ImGui::NewFrame();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize({500, 500});
            ImGui::Begin("heatmap", nullptr, ImGuiWindowFlags_NoDecoration);
            hit = app::heatmap("m", m, o);
            ImGui::End();
            ImGui::Render();
        }
        return hit;
    }

    test::HeadlessImGui imgui_{{800, 600}, false};
};

const float pad = 8;  // the default window padding: cells start at (8, 8), 40 px each

}  // namespace

TEST_F(HeatmapHits, ThePointerPicksRowAndColumn) {
    const core::Matrix m{{1, 2, 3}, {4, 5, 6}};  // 2×3
    const app::HeatmapHit hit = hover(m, false, {pad + 2 * 40 + 5, pad + 40 + 5});
    ASSERT_TRUE(hit.hovered);
    EXPECT_EQ(hit.row, 1);
    EXPECT_EQ(hit.col, 2);
    EXPECT_FALSE(hover(m, false, {pad + 40 + 5, pad + 2 * 40 + 5}).hovered);  // below the last row
}

TEST_F(HeatmapHits, TransposedSwapsTheAxes) {
    const core::Matrix m{{1, 2, 3}, {4, 5, 6}};  // drawn as 3×2
    const app::HeatmapHit hit = hover(m, true, {pad + 40 + 5, pad + 2 * 40 + 5});
    ASSERT_TRUE(hit.hovered);
    EXPECT_EQ(hit.row, 2);  // drawn row 2 = column 2 of m
    EXPECT_EQ(hit.col, 1);  // drawn column 1 = row 1 of m
    EXPECT_FALSE(hover(m, true, {pad + 2 * 40 + 5, pad + 5}).hovered);  // only 2 drawn columns
}
