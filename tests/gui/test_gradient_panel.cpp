// The gradients view, headless: the output cell it shows comes from the selection or its own
// fields, its gradient is core::output_gradient's for that cell and the shown trace, computed once
// per trace and cell (on a thread of its own for large layers), ∂/∂Y appears under
// cross-attention, a cell outside the output is refused, and it draws every kind of layer.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/attention/gradient.hpp"
#include "core/attention/presets.hpp"
#include "panels/lab/gradient_panel.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;
using core::MatrixId;

namespace {

class GradientView : public test::WindowTest {
protected:
    GradientView() : WindowTest("Gradients") {}
    const app::GradientResult& shown() const { return *panels.gradients.result; }
};

// core's gradient of output[row][col] for the state's shown snapshot.
core::Gradients expected(const AppState& state, int row, int col) {
    const core::Session& s = state.shown().session;
    core::Result<core::Gradients> g = core::output_gradient(s.config, s.params, state.trace(), row, col);
    EXPECT_TRUE(g);
    return g ? *g.value : core::Gradients{};
}

// Every matrix of `a` equals `b`'s exactly, and there are as many.
void expect_same(const core::Params& a, const core::Params& b) {
    EXPECT_EQ(a, b);
    ASSERT_EQ(a.heads.size(), b.heads.size());
}

core::Config extended_config() {
    core::Config c;
    c.n = 6;
    c.d_model = 8;
    c.heads = 4;
    c.d_k = c.d_v = 2;
    c.biases = true;
    c.kv_heads = 2;
    c.rope.on = true;
    c.mask = core::Mask::custom;
    return c;
}

}  // namespace

TEST_F(GradientView, ItIsATabBesideTheMatrixViewer) {
    AppState state(core::worked_example());
    frames(state, 3);
    EXPECT_TRUE(window("Gradients"));
    EXPECT_FALSE(window("Matrix viewer"));
    EXPECT_NE(item("tab: Matrix viewer"), nullptr);
    EXPECT_NE(item("tab: Saturation lab"), nullptr);
    EXPECT_NE(item("gradients: row"), nullptr);
    EXPECT_NE(item("gradients: show"), nullptr);
}

TEST_F(GradientView, ASelectedOutputCellIsFollowedAndItsGradientIsCores) {
    AppState state(core::worked_example());
    frames(state, 2);
    state.select({{MatrixId::output, 0}, 1, 2});
    frames(state, 2);
    ASSERT_NE(panels.gradients.result, nullptr);
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_EQ(shown().gradients.col, 2);
    EXPECT_EQ(panels.gradients.field_row, 1);
    EXPECT_EQ(panels.gradients.field_col, 2);
    const core::Gradients g = expected(state, 1, 2);
    EXPECT_EQ(shown().gradients.d.X(1, 3), g.d.X(1, 3));
    EXPECT_EQ(shown().gradients.d.heads[0].W_Q(2, 1), g.d.heads[0].W_Q(2, 1));
    EXPECT_EQ(shown().gradients.d.heads[1].W_V(3, 0), g.d.heads[1].W_V(3, 0));
    expect_same(shown().gradients.d, g.d);
    EXPECT_EQ(shown().value, state.trace().output(1, 2));
    // By hand: output = concat·W_O, so ∂output[1][2]/∂W_O[k][c] is concat[1][k] in column 2, else 0.
    const core::Matrix& dW_O = shown().gradients.d.W_O;
    for (int k = 0; k < 4; ++k)
        for (int c = 0; c < 4; ++c) EXPECT_EQ(dW_O(k, c), c == 2 ? state.trace().concat(1, k) : 0.0) << k << c;
    // The heatmaps are on screen: X, every head's three weights, W_O.
    for (const char* name : {"gradients: d/dX", "gradients: d/dW_Q(1)", "gradients: d/dW_K(2)", "gradients: d/dW_V(2)",
                             "gradients: d/dW_O"})
        EXPECT_NE(item(name), nullptr) << name;
    EXPECT_EQ(item("gradients: d/dY"), nullptr);  // no Y in self-attention

    // A cell of another matrix leaves the cell alone; with "follow" off, so does an output cell.
    state.select({{MatrixId::weights, 0}, 0, 1});
    frames(state, 1);
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_EQ(shown().gradients.col, 2);
    panels.gradients.follow = false;
    state.select({{MatrixId::output, 0}, 0, 0});
    frames(state, 1);
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_EQ(shown().gradients.col, 2);
}

TEST_F(GradientView, TheFieldsChooseACellAndACellOutsideTheOutputIsRefused) {
    AppState state(core::worked_example());
    frames(state, 1);
    ASSERT_TRUE(app::choose_output_cell(state, panels.gradients, 0, 3));
    frames(state, 1);
    ASSERT_NE(panels.gradients.result, nullptr);
    EXPECT_EQ(shown().gradients.row, 0);
    EXPECT_EQ(shown().gradients.col, 3);
    expect_same(shown().gradients.d, expected(state, 0, 3).d);

    // The output is 2×4: row 2 and column 4 do not exist, nor do negative ones.
    for (auto [row, col] : {std::pair{2, 0}, std::pair{0, 4}, std::pair{-1, 0}}) {
        EXPECT_FALSE(app::choose_output_cell(state, panels.gradients, row, col));
        EXPECT_TRUE(state.message().error);
        EXPECT_NE(state.message().text.find("output[" + std::to_string(row) + "][" + std::to_string(col) + "]"),
                  std::string::npos)
            << state.message().text;
        EXPECT_NE(state.message().text.find("2×4"), std::string::npos) << state.message().text;
        frames(state, 1);
        EXPECT_EQ(shown().gradients.row, 0);
        EXPECT_EQ(shown().gradients.col, 3);
    }
}

TEST_F(GradientView, AnEditRecomputesOnceAndFramesAloneDoNot) {
    core::Session session = core::random_session(extended_config(), 3);
    AppState state(session);
    ASSERT_TRUE(app::choose_output_cell(state, panels.gradients, 2, 5));
    frames(state, 3);
    ASSERT_NE(panels.gradients.result, nullptr);
    const int computed = panels.gradients.computed;
    const core::Matrix before = shown().gradients.d.X;
    frames(state, 5);
    EXPECT_EQ(panels.gradients.computed, computed);  // the same trace and cell: nothing new

    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 1, 4}, 0.75));
    frames(state, 2);
    EXPECT_EQ(panels.gradients.computed, computed + 1);
    EXPECT_EQ(shown().generation, state.generation());
    const core::Gradients g = expected(state, 2, 5);
    expect_same(shown().gradients.d, g.d);
    EXPECT_NE(shown().gradients.d.X, before);
}

TEST_F(GradientView, CrossAttentionShowsTheGradientOfY) {
    core::Config c;
    c.n = 6;
    c.d_model = 8;
    c.heads = 2;
    c.d_k = c.d_v = 4;
    c.n_kv = 5;
    AppState state(core::random_session(c, 7));
    state.select({{MatrixId::output, 0}, 4, 1});
    frames(state, 2);
    ASSERT_NE(panels.gradients.result, nullptr);
    const core::Gradients g = expected(state, 4, 1);
    ASSERT_EQ(shown().gradients.d.Y.rows(), 5);
    EXPECT_EQ(shown().gradients.d.Y(3, 6), g.d.Y(3, 6));
    expect_same(shown().gradients.d, g.d);
    EXPECT_NE(item("gradients: d/dY"), nullptr);
    EXPECT_EQ(shown().kv_tokens, state.shown().session.kv_tokens);
    // Keys and values come from Y: of X only the query's row (4) reaches output[4][·].
    for (int r = 0; r < 6; ++r) {
        if (r == 4) continue;
        EXPECT_EQ(shown().gradients.d.X.row(r).cwiseAbs().maxCoeff(), 0.0) << r;
    }
    EXPECT_GT(shown().gradients.d.X.row(4).cwiseAbs().maxCoeff(), 0.0);
}

TEST_F(GradientView, EveryKindOfLayerDraws) {
    // Biases, RoPE, two K/V groups of two heads and a custom mask.
    AppState state(core::random_session(extended_config(), 11));
    state.select({{MatrixId::output, 0}, 3, 2});
    frames(state, 3);
    ASSERT_NE(panels.gradients.result, nullptr);
    expect_same(shown().gradients.d, expected(state, 3, 2).d);
    for (const char* name : {"gradients: d/dX", "gradients: d/db_Q(2)", "gradients: d/dW_K(1)", "gradients: d/dW_K(3)",
                             "gradients: d/db_V(3)", "gradients: d/dW_O", "gradients: d/db_O"})
        EXPECT_NE(item(name), nullptr) << name;
    // Heads 2 and 4 share their group's K/V, which heads 1 and 3 hold.
    for (const char* name : {"gradients: d/dW_K(2)", "gradients: d/dW_V(4)", "gradients: d/db_K(2)"})
        EXPECT_EQ(item(name), nullptr) << name;
    // The other scale and the column-vector view draw too.
    panels.gradients.one_scale = !panels.gradients.one_scale;
    state.set_column_vectors(true);
    frames(state, 2);
    EXPECT_NE(item("gradients: d/dW_Q(4)"), nullptr);

    AppState worked(core::worked_example());
    frames(worked, 2);
    EXPECT_NE(item("gradients: d/dX"), nullptr);
}

TEST_F(GradientView, LargeLayersAreComputedOffTheUiThread) {
    panels.gradients.sync_limit_flops = 0;  // every layer counts as large
    AppState state(core::random_session(extended_config(), 5));
    ASSERT_TRUE(app::choose_output_cell(state, panels.gradients, 5, 7));
    frames(state, 1);
    EXPECT_TRUE(app::gradient_busy(panels.gradients));
    app::wait_for_gradient(panels.gradients);
    frames(state, 1);
    EXPECT_FALSE(app::gradient_busy(panels.gradients));
    ASSERT_NE(panels.gradients.result, nullptr);
    EXPECT_EQ(shown().gradients.row, 5);
    EXPECT_EQ(shown().gradients.col, 7);
    expect_same(shown().gradients.d, expected(state, 5, 7).d);

    // A new cell: the old gradient stays on screen until the new one is in.
    ASSERT_TRUE(app::choose_output_cell(state, panels.gradients, 1, 0));
    frames(state, 1);
    EXPECT_EQ(shown().gradients.row, 5);
    app::wait_for_gradient(panels.gradients);
    frames(state, 1);
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_EQ(shown().gradients.col, 0);
}

TEST_F(GradientView, AShrunkOutputMovesTheCellInsideIt) {
    AppState state(core::random_session(extended_config(), 2));
    ASSERT_TRUE(app::choose_output_cell(state, panels.gradients, 5, 6));
    frames(state, 1);
    core::Config smaller = state.config();
    smaller.n = 3;
    ASSERT_TRUE(state.set_config(smaller));
    frames(state, 2);
    ASSERT_NE(panels.gradients.result, nullptr);
    EXPECT_EQ(shown().gradients.row, 2);
    EXPECT_EQ(shown().gradients.col, 6);
    EXPECT_NE(panels.gradients.note.find("output[5][6]"), std::string::npos) << panels.gradients.note;
    expect_same(shown().gradients.d, expected(state, 2, 6).d);
}

TEST_F(GradientView, TheLargestEntriesAreTheLargestOfAll) {
    AppState state(core::random_session(extended_config(), 9));
    frames(state, 2);
    ASSERT_NE(panels.gradients.result, nullptr);
    const app::GradientResult& r = shown();
    ASSERT_EQ(static_cast<int>(r.largest.size()), app::gradient_largest);
    // Every |entry| of every matrix, by a direct loop, largest first.
    std::vector<double> all;
    for (const app::MatrixRef& ref : r.shown) {
        const core::Matrix& m = *app::gradient_matrix(r.gradients.d, ref);
        for (Eigen::Index i = 0; i < m.size(); ++i) all.push_back(std::abs(m.data()[i]));
    }
    std::sort(all.rbegin(), all.rend());
    for (size_t k = 0; k < r.largest.size(); ++k) {
        const app::GradientEntry& e = r.largest[k];
        EXPECT_EQ(std::abs(e.value), all[k]) << k;
        EXPECT_EQ(e.value, (*app::gradient_matrix(r.gradients.d, e.ref))(e.row, e.col)) << k;
    }
    // With biases, ∂output[0][0]/∂b_O[0][0] is 1: output = concat·W_O + b_O.
    EXPECT_EQ(r.gradients.d.b_O(0, 0), 1.0);
}

TEST(GradientMeaning, SaysWhatTheDerivativeDoes) {
    const app::GradientEntry up{{MatrixId::X, 0}, 2, 1, 0.41327};
    EXPECT_EQ(app::gradient_meaning(up, 0, 3, core::Notation::unicode),
              "Raising X[2][1] by ε raises output[0][3] by ≈ 0.413·ε.");
    const app::GradientEntry down{{MatrixId::W_K, 1}, 0, 1, -2.5e-4};
    EXPECT_EQ(app::gradient_meaning(down, 1, 0, core::Notation::ascii),
              "Raising W_K(2)[0][1] by eps lowers output[1][0] by ~ 0.00025*eps.");
    const app::GradientEntry flat{{MatrixId::W_O, 0}, 3, 0, 0};
    EXPECT_NE(app::gradient_meaning(flat, 0, 1, core::Notation::unicode).find("leaves output[0][1] as it is"),
              std::string::npos);
    EXPECT_EQ(app::gradient_title({MatrixId::W_Q, 0}, core::Notation::unicode), "∂/∂W_Q⁽¹⁾");
    EXPECT_EQ(app::gradient_title({MatrixId::b_O, 0}, core::Notation::ascii), "d/db_O");
}

TEST_F(GradientView, ARowTypedInTheFieldAppliesOnEnter) {
    AppState state(core::worked_example());
    frames(state, 2);
    const app::DrawReport::Item* field = item("gradients: row");
    ASSERT_NE(field, nullptr);
    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Enter] = 1;
    io.KeyMap[ImGuiKey_Backspace] = 2;
    // Type `text` over the field's "0" (a click leaves the cursor after it), then Enter.
    const auto type = [&](const char* text) {
        const int before = shown().gradients.row;
        io.MousePos = {field->max.x - 2, (field->min.y + field->max.y) / 2};
        frames(state, 1);
        io.MouseDown[0] = true;
        frames(state, 1);
        io.MouseDown[0] = false;
        frames(state, 1);
        for (int k = 0; k < 3; ++k) {
            io.KeysDown[2] = true;
            frames(state, 1);
            io.KeysDown[2] = false;
            frames(state, 1);
        }
        io.AddInputCharactersUTF8(text);
        frames(state, 1);
        EXPECT_EQ(shown().gradients.row, before) << "nothing applies before Enter";
        io.KeysDown[1] = true;
        frames(state, 1);
        io.KeysDown[1] = false;
        frames(state, 2);
    };
    type("1");
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_EQ(shown().gradients.col, 0);
    expect_same(shown().gradients.d, expected(state, 1, 0).d);

    type("7");  // the output has 2 rows
    EXPECT_EQ(shown().gradients.row, 1);
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("output[7][0]"), std::string::npos) << state.message().text;
}

TEST_F(GradientView, HoveringACellExplainsIt) {
    AppState state(core::worked_example());
    state.select({{MatrixId::output, 0}, 1, 2});
    frames(state, 2);
    const app::DrawReport::Item* cells = item("gradients: d/dX");
    ASSERT_NE(cells, nullptr);
    ImGui::GetIO().MousePos = {cells->max.x - 4, cells->max.y - 4};  // X[1][3]
    frames(state, 2);
    // The tooltip is a window of its own; the panel keeps drawing.
    EXPECT_TRUE(window("Gradients"));
    const ImGuiWindow* tooltip = ImGui::FindWindowByName("##Tooltip_00");
    ASSERT_NE(tooltip, nullptr);
    EXPECT_TRUE(tooltip->Active);
    // Away from the cells, no tooltip.
    ImGui::GetIO().MousePos = {-100, -100};
    frames(state, 2);
    EXPECT_FALSE(tooltip->Active);
}

TEST_F(GradientView, MaximizedAtStartItFillsTheWorkArea) {
    AppState state(core::worked_example());
    panels.maximize_at_start = app::PanelId::gradients;
    frames(state, 2);
    EXPECT_EQ(panels.maximized, [] {
        const auto rows = app::explorer_panels();
        for (size_t k = 0; k < rows.size(); ++k)
            if (std::string(rows[k].title) == "Gradients") return static_cast<int>(k);
        return -1;
    }());
    ASSERT_EQ(report.windows.size(), 1u);  // the panel alone (besides the menu and status bars)
    EXPECT_EQ(report.windows[0].title, "Gradients");
    EXPECT_EQ(report.windows[0].size.x, ImGui::GetIO().DisplaySize.x);
}

TEST(GradientViewAscii, DrawsWithTheDefaultFont) {
    test::HeadlessImGui imgui({1024, 640}, false);
    app::Panels panels;
    app::DrawReport report;
    imgui.ui.report = &report;
    ASSERT_TRUE(app::show_panel(panels, "Gradients"));
    AppState state(core::random_session(extended_config(), 4));
    for (int k = 0; k < 3; ++k) {
        report.clear();
        ImGui::NewFrame();
        app::draw_frame(state, imgui.ui, panels, 16.0f);
        ImGui::Render();
    }
    EXPECT_EQ(imgui.ui.notation(), core::Notation::ascii);
    ASSERT_NE(panels.gradients.result, nullptr);
    bool x = false;
    for (const auto& i : report.items) x = x || i.name == "gradients: d/dX";
    EXPECT_TRUE(x);
}
