// The matrix viewer and the heads panel driven headless: zoom (wheel, buttons), pan (drag), go to
// cell, the hovered cell's row and column when cells are smaller than a pixel, and the heads grid.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cmath>
#include <string>

#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "panels/layer/heads_panel.hpp"
#include "panels/layer/viewer_panel.hpp"

using namespace attnviz;
using app::AppState;
using app::ViewerPanel;
using core::MatrixId;

namespace {

// --- The zoom arithmetic.

TEST(ViewerZoom, FitsTheWholeMatrix) {
    EXPECT_FLOAT_EQ(app::fit_cell(512, 512, {400, 300}, 96), 300.0f / 512);
    EXPECT_FLOAT_EQ(app::fit_cell(2, 4, {400, 300}, 96), 96.0f);  // capped
    EXPECT_FLOAT_EQ(app::fit_cell(10, 100, {400, 300}, 96), 4.0f);
}

TEST(ViewerZoom, TheWheelKeepsTheCellUnderThePointer) {
    ViewerPanel p;
    const ImVec2 view{400, 400};
    const ImVec2 at{123, 301};
    // Fitted, 512 cells in 400 px: the pointer is on cell (301·512/400, 123·512/400).
    const double row = 301 * 512.0 / 400, col = 123 * 512.0 / 400;
    app::viewer_zoom(p, 4, at, 512, 512, view);
    EXPECT_FLOAT_EQ(p.cell, 4 * 400.0f / 512);
    EXPECT_NEAR(p.row0 + at.y / p.cell, row, 1e-4);
    EXPECT_NEAR(p.col0 + at.x / p.cell, col, 1e-4);
    app::viewer_zoom(p, 10, at, 512, 512, view);
    EXPECT_NEAR(p.row0 + at.y / p.cell, row, 1e-4);
    // Never beyond the largest zoom, never out past the fit: all the way out is fitted again.
    app::viewer_zoom(p, 1000, at, 512, 512, view);
    EXPECT_FLOAT_EQ(p.cell, app::viewer_max_cell);
    app::viewer_zoom(p, 1e-6f, at, 512, 512, view);
    EXPECT_EQ(p.cell, 0);
}

TEST(ViewerZoom, PanningStaysOnTheMatrix) {
    ViewerPanel p;
    const ImVec2 view{400, 200};
    app::viewer_zoom(p, 8, {0, 0}, 100, 100, view);  // fitted 2 px/cell → 16 px/cell at the top left
    ASSERT_FLOAT_EQ(p.cell, 16);
    EXPECT_EQ(p.row0, 0);
    app::viewer_pan(p, {-160, -80}, 100, 100, view);  // drag up and left: the view moves right and down
    EXPECT_DOUBLE_EQ(p.col0, 10);
    EXPECT_DOUBLE_EQ(p.row0, 5);
    app::viewer_pan(p, {-1e6f, -1e6f}, 100, 100, view);  // not past the last row and column
    EXPECT_DOUBLE_EQ(p.col0, 100 - 400 / 16.0);
    EXPECT_DOUBLE_EQ(p.row0, 100 - 200 / 16.0);
    app::viewer_pan(p, {1e6f, 1e6f}, 100, 100, view);
    EXPECT_DOUBLE_EQ(p.col0, 0);
    EXPECT_DOUBLE_EQ(p.row0, 0);
}

TEST(ViewerZoom, GoToCellCentresItLargeEnoughToRead) {
    ViewerPanel p;
    const ImVec2 view{300, 300};
    app::viewer_center(p, 700, 1, 1024, 1024, view);
    EXPECT_GE(p.cell, 64);
    EXPECT_NEAR(p.row0 + view.y / p.cell / 2, 700.5, 1e-9);
    EXPECT_DOUBLE_EQ(p.col0, 0);  // near the left edge: the view stops at the first column
}

// --- The panels, headless.

class Viewer : public ::testing::Test {
protected:
    // Draws the viewer alone in a 700×600 window at (0, 0) with the pointer at `mouse`.
    void draw(AppState& state, ViewerPanel& panel, int count = 1) {
        for (int k = 0; k < count; ++k) {
            ImGui::NewFrame();
            report.clear();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize({700, 600});
            ImGui::Begin("viewer", nullptr, ImGuiWindowFlags_NoDecoration);
            app::draw_viewer_panel(state, imgui_.ui, panel);
            ImGui::End();
            imgui_.ui.heatmaps.end_frame();
            ImGui::Render();
            ImGui::GetIO().MouseWheel = 0;
        }
    }
    const app::DrawReport::Heatmap& cells() {
        EXPECT_EQ(report.heatmaps.size(), 1u);
        return report.heatmaps.at(0);
    }
    ImVec2 item(const std::string& name) {
        for (const auto& i : report.items)
            if (i.name == name) return {(i.min.x + i.max.x) / 2, (i.min.y + i.max.y) / 2};
        ADD_FAILURE() << "no item " << name;
        return {-1, -1};
    }
    void click(AppState& state, ViewerPanel& panel, ImVec2 at) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = at;
        draw(state, panel);
        io.MouseDown[0] = true;
        draw(state, panel);
        io.MouseDown[0] = false;
        draw(state, panel);
    }

    test::HeadlessImGui imgui_{{800, 700}};
    app::DrawReport report;
    void SetUp() override { imgui_.ui.report = &report; }
};

TEST_F(Viewer, TheHoveredCellIsNamedWhenCellsAreSmallerThanAPixel) {
    AppState state(core::random_session({1024, 16, 1, 8, 8, true, core::Mask::none, {}, false, 0, {}}, 3));
    state.view({MatrixId::weights, 0});
    ViewerPanel panel;
    ImGui::GetIO().MousePos = {-100, -100};
    draw(state, panel, 2);
    const auto view = cells();
    const float w = view.max.x - view.min.x, h = view.max.y - view.min.y;
    const float cell = std::min(w, h) / 1024;  // fitted: about 0.4 px a cell, the matrix centred
    ASSERT_LT(cell, 1.0f);
    const ImVec2 corner{view.min.x + (w - cell * 1024) / 2, view.min.y + (h - cell * 1024) / 2};
    // ImGui places the pointer on whole pixels.
    const ImVec2 at{std::floor(corner.x + 0.373f * 1024 * cell), std::floor(corner.y + 0.618f * 1024 * cell)};
    ImGui::GetIO().MousePos = at;
    draw(state, panel, 2);
    EXPECT_EQ(panel.hover_row, static_cast<int>(std::floor((at.y - corner.y) / cell)));
    EXPECT_EQ(panel.hover_col, static_cast<int>(std::floor((at.x - corner.x) / cell)));
    // The wheel zooms in around the pointer: the same cell stays under it.
    const int row = panel.hover_row, col = panel.hover_col;
    ImGui::GetIO().MouseWheel = 3;
    draw(state, panel, 2);
    EXPECT_NEAR(panel.cell, cell * std::pow(1.25f, 3), 1e-3);
    EXPECT_EQ(panel.hover_row, row);
    EXPECT_EQ(panel.hover_col, col);
    // A drag moves the matrix with the pointer: the cell under it is still the same one.
    ImGuiIO& io = ImGui::GetIO();
    io.MouseDown[0] = true;
    draw(state, panel);
    for (int k = 0; k < 10; ++k) {
        io.MousePos.x -= 8;
        io.MousePos.y -= 5;
        draw(state, panel);
    }
    io.MouseDown[0] = false;
    draw(state, panel, 2);
    EXPECT_GT(panel.col0, 0);
    EXPECT_NEAR(panel.hover_row, row, 1);
    EXPECT_NEAR(panel.hover_col, col, 1);
}

TEST_F(Viewer, ZoomButtonsFitAndGoToCell) {
    AppState state(core::random_session({300, 16, 2, 8, 8, true, core::Mask::causal, {}, false, 0, {}}, 4));
    state.view({MatrixId::scores, 1});
    ViewerPanel panel;
    ImGui::GetIO().MousePos = {-100, -100};
    draw(state, panel, 2);
    EXPECT_EQ(panel.cell, 0);  // fitted
    click(state, panel, item("viewer: zoom in"));
    const float zoomed = panel.cell;
    EXPECT_GT(zoomed, 0);
    click(state, panel, item("viewer: zoom in"));
    EXPECT_FLOAT_EQ(panel.cell, zoomed * 1.5f);
    click(state, panel, item("viewer: fit"));
    EXPECT_EQ(panel.cell, 0);
    // Go to scores⁽²⁾[250][40]: zoomed until readable, centred, selected.
    panel.goto_row = "250";
    panel.goto_col = "40";
    click(state, panel, item("viewer: go"));
    EXPECT_GE(panel.cell, 64);
    ASSERT_NE(state.selection(), nullptr);
    EXPECT_EQ(*state.selection(), (core::CellRef{{MatrixId::scores, 1}, 250, 40}));
    const auto view = cells();
    EXPECT_NEAR(panel.row0 + (view.max.y - view.min.y) / panel.cell / 2, 250.5, 1e-6);
    // Its number is printed: the cell is large enough and in view.
    bool printed = false;
    for (const auto& n : report.numbers) printed |= n.matrix == "scores(2)" && n.row == 250 && n.col == 40;
    EXPECT_TRUE(printed);
    // A cell outside the matrix is refused with a message, and the view stays.
    panel.goto_row = "300";
    const float before = panel.cell;
    click(state, panel, item("viewer: go"));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("300×300"), std::string::npos) << state.message().text;
    EXPECT_EQ(panel.cell, before);
}

// "go to" takes a row counted from 0 or a token's label: "x101" is row 100 of a random session,
// and going to row 100 says it is "x101" (the labels count from 1, the rows from 0).
TEST_F(Viewer, GoToTakesARowFromZeroOrATokensLabelAndSaysWhichTokenItIs) {
    AppState state(core::random_session({120, 16, 2, 8, 8, true, core::Mask::none, {}, false, 0, {}}, 4));
    state.view({MatrixId::weights, 0});
    ViewerPanel panel;
    ImGui::GetIO().MousePos = {-100, -100};
    draw(state, panel, 2);
    panel.goto_row = "100";
    panel.goto_col = "x4";
    click(state, panel, item("viewer: go"));
    ASSERT_NE(state.selection(), nullptr);
    EXPECT_EQ(*state.selection(), (core::CellRef{{MatrixId::weights, 0}, 100, 3}));
    EXPECT_FALSE(state.message().error) << state.message().text;
    EXPECT_NE(state.message().text.find("row 100 (\"x101\")"), std::string::npos) << state.message().text;
    EXPECT_NE(state.message().text.find("count from 0"), std::string::npos) << state.message().text;
    panel.goto_row = "x101";
    panel.goto_col = "0";
    click(state, panel, item("viewer: go"));
    EXPECT_EQ(*state.selection(), (core::CellRef{{MatrixId::weights, 0}, 100, 0}));
    // Neither a number nor a token: refused, naming the text.
    panel.goto_row = "x500";
    click(state, panel, item("viewer: go"));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("\"x500\" is no row number (from 0) and no token's label"), std::string::npos)
        << state.message().text;
    EXPECT_EQ(*state.selection(), (core::CellRef{{MatrixId::weights, 0}, 100, 0}));
}

TEST(HeadsGrid, WrapsToTheWidthWithoutHorizontalScrolling) {
    // Twelve heads of 8×8 cells (labels 20 wide and 16 high) in a wide, short panel: a few rows of
    // many columns, every heatmap inside.
    const ImVec2 labels{20, 16};
    const auto box = [&](const app::HeadsGrid& g) { return ImVec2{labels.x + 8 * g.cell, labels.y + 8 * g.cell}; };
    const app::HeadsGrid wide = app::heads_grid(12, 8, 8, labels, {900, 300}, 20, 10, 4, 80);
    EXPECT_GE(wide.cell, 4);
    const int rows = (12 + wide.columns - 1) / wide.columns;
    EXPECT_LE(wide.columns * box(wide).x + (wide.columns - 1) * 10, 900.0f + 1e-3f);
    EXPECT_LE(rows * (box(wide).y + 20) + (rows - 1) * 10, 300.0f + 1e-3f);
    // A tall, narrow panel: one or two columns.
    EXPECT_LE(app::heads_grid(12, 8, 8, labels, {200, 2000}, 20, 10, 4, 80).columns, 2);
    // Too many heads for the height: as many columns as fit, never wider than the panel.
    const app::HeadsGrid many = app::heads_grid(64, 8, 8, labels, {500, 200}, 20, 10, 6, 80);
    EXPECT_LE(many.columns * box(many).x + (many.columns - 1) * 10, 500.0f + 1e-3f);
    EXPECT_GE(many.cell, 6);
}

// Four heads of 4 tokens: the arrangement whose cells come out largest once the token labels and
// titles are counted. Square boxes without them are a half pixel larger in one row of four
// (140.5 wide) than in two rows of two (140 high), which left half the panel empty; with the
// labels (24 wide, 18 high) two rows of two give cells of 30.5 against 29.1, and fill the height.
TEST(HeadsGrid, CountsTheLabelsAndGrowsCellsToFillTheRoom) {
    const ImVec2 labels{24, 18};
    const app::HeadsGrid g = app::heads_grid(4, 4, 4, labels, {610, 386}, 45, 16, 4, 80);
    EXPECT_EQ(g.columns, 2);
    // Two rows: each (386 − 16) / 2 − 45 − 18 = 122 high, 122 / 4 = 30.5 a cell.
    EXPECT_NEAR(g.cell, 30.5f, 0.01f);
    // Room to spare: cells stop at 80 pixels.
    EXPECT_EQ(app::heads_grid(2, 2, 2, labels, {2000, 2000}, 45, 16, 4, 80).cell, 80);
}

TEST_F(Viewer, TheHeadsPanelShowsTwelveHeadsWithinItsWidth) {
    AppState state(core::random_session({64, 48, 12, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 6));
    app::HeadsPanel heads;
    for (int k = 0; k < 2; ++k) {
        ImGui::NewFrame();
        report.clear();
        ImGui::SetNextWindowPos({0, 0});
        ImGui::SetNextWindowSize({600, 400});
        ImGui::Begin("heads", nullptr, ImGuiWindowFlags_NoDecoration);
        app::draw_heads_panel(state, imgui_.ui, heads);
        ImGui::End();
        ImGui::Render();
    }
    ASSERT_EQ(report.heatmaps.size(), 12u);
    for (const auto& h : report.heatmaps) {
        EXPECT_LE(h.max.x, 600.0f) << h.matrix;  // no thumbnail past the panel's right edge
        EXPECT_GE(h.max.x - h.min.x, 40.0f) << h.matrix;
    }
}

}  // namespace
