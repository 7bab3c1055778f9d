// The "weights | norm-weighted" switch of the heads panel, the head view and the model view driven
// headless: what each reports is core::norm_weighted (the head view's and the model view's each
// query row divided by its sum), hovering gives ‖f_h(x_j)‖, α_ij and their product, a large session's
// numbers come from the worker; and the model view's flag on sink heads.
#include <gtest/gtest.h>

#include <imgui.h>

#include <optional>
#include <string>

#include "../test_support.hpp"
#include "core/attention/head_analysis.hpp"
#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "panels/layer/heads_panel.hpp"
#include "panels/model/head_view_panel.hpp"
#include "panels/model/model_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_exports.hpp"

using namespace attnviz;
using app::AppState;

namespace {

// A random causal session with biases: 6 tokens, 3 heads, d_v 2 (so value outputs differ in length).
core::Session six_tokens_three_heads() {
    core::Config c = test::make_config(6, 6, 3, 2, 2);
    c.biases = true;
    c.mask = core::Mask::causal;
    return core::random_session(c, 23);
}

// The same head looking at itself: every query on its own token (q_i = k_i = 10·x_i, x_i one-hot
// on distinct coordinates), no key taking the weight of most queries.
core::Session diagonal_session() {
    core::Session s = core::random_session(test::make_config(3, 3, 1, 3, 3), 1);
    s.params.X = core::Matrix::Identity(3, 3);
    s.params.heads[0].W_Q = core::Matrix::Identity(3, 3) * 10;
    s.params.heads[0].W_K = core::Matrix::Identity(3, 3) * 10;
    s.params.heads[0].W_V = core::Matrix::Identity(3, 3);
    s.params.W_O = core::Matrix::Identity(3, 3);
    return s;
}

class NormWeighted : public ::testing::Test {
protected:
    // Draws `panel` alone in a window at (0, 0).
    template <class Draw>
    void draw(Draw&& panel, int count = 1) {
        for (int k = 0; k < count; ++k) {
            ImGui::NewFrame();
            report.clear();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize(size);
            ImGui::Begin("panel", nullptr, ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize);
            panel();
            ImGui::End();
            ImGui::Render();
        }
    }
    std::optional<double> value(const std::string& name) const { return test::reported_value(report, name); }
    bool has_item(const std::string& name) const {
        for (const auto& i : report.items)
            if (i.name == name) return true;
        return false;
    }
    ImVec2 item(const std::string& name) const {
        for (const auto& i : report.items)
            if (i.name == name) return {(i.min.x + i.max.x) / 2, (i.min.y + i.max.y) / 2};
        ADD_FAILURE() << "no item " << name;
        return {-1, -1};
    }
    // The centre of cell (row, col) of a heatmap of rows × cols drawn under `name`.
    ImVec2 cell(const std::string& name, int row, int col, int rows, int cols) const {
        for (const auto& h : report.heatmaps)
            if (h.matrix == name) {
                const float w = (h.max.x - h.min.x) / static_cast<float>(cols);
                const float ht = (h.max.y - h.min.y) / static_cast<float>(rows);
                return {h.min.x + (static_cast<float>(col) + 0.5f) * w,
                        h.min.y + (static_cast<float>(row) + 0.5f) * ht};
            }
        ADD_FAILURE() << "no heatmap " << name;
        return {-1, -1};
    }

    test::HeadlessImGui imgui_{{1280, 900}};
    app::DrawReport report;
    ImVec2 size{1200, 860};
    void SetUp() override { imgui_.ui.report = &report; }
    void TearDown() override { ImGui::GetIO().MousePos = {-100, -100}; }
};

}  // namespace

TEST_F(NormWeighted, TheHeadsPanelShowsEachHeadsNormWeightedAttentionAndItsFactorsOnHover) {
    AppState state(six_tokens_three_heads());
    app::HeadsPanel panel;
    const auto frame = [&] { app::draw_heads_panel(state, imgui_.ui, panel); };
    draw(frame, 2);
    EXPECT_FALSE(value("heads: norm-weighted 1 0 0"));  // weights: nothing norm-weighted
    panel.shown = app::HeadsShown::norm_weighted;
    draw(frame, 2);
    const core::Session& s = state.shown().session;
    const core::Trace& t = state.trace();
    bool differs = false;  // the norm-weighted values are not the weights
    for (int h = 0; h < 3; ++h) {
        const core::Matrix nw = core::norm_weighted(s.config, s.params, t, h);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                const std::string name = "heads: norm-weighted " + std::to_string(h + 1) + " " + std::to_string(i) +
                                         " " + std::to_string(j);
                ASSERT_TRUE(value(name)) << name;
                EXPECT_EQ(*value(name), nw(i, j)) << name;
                differs = differs || std::abs(nw(i, j) - t.heads[static_cast<size_t>(h)].weights(i, j)) > 1e-6;
            }
    }
    EXPECT_TRUE(differs);
    // Hovering head 2's cell (query 4, key 1): ‖f_h(x_1)‖, α_41 and their product.
    ImGui::GetIO().MousePos = cell("heads: norm-weighted 2", 4, 1, 6, 6);
    draw(frame, 2);
    const double norm = core::value_outputs(s.config, s.params, t, 1).row(1).norm();
    ASSERT_TRUE(value("heads: hovered product"));
    EXPECT_EQ(*value("heads: hovered head"), 1);
    EXPECT_EQ(*value("heads: hovered query"), 4);
    EXPECT_EQ(*value("heads: hovered key"), 1);
    EXPECT_NEAR(*value("heads: hovered value norm"), norm, 1e-12);
    EXPECT_EQ(*value("heads: hovered weight"), t.heads[1].weights(4, 1));
    EXPECT_NEAR(*value("heads: hovered product"), t.heads[1].weights(4, 1) * norm, 1e-12);
}

TEST_F(NormWeighted, ALargeSessionsNormWeightedAttentionComesFromTheWorker) {
    AppState state(six_tokens_three_heads());
    state.set_sync_limit(0);  // every session counts as large
    app::HeadsPanel panel;
    panel.shown = app::HeadsShown::norm_weighted;
    const auto frame = [&] { app::draw_heads_panel(state, imgui_.ui, panel); };
    draw(frame);
    EXPECT_FALSE(value("heads: norm-weighted 1 0 0"));  // not computed in the frame
    panel.norm.wait();
    draw(frame);
    const core::Session& s = state.shown().session;
    ASSERT_TRUE(value("heads: norm-weighted 3 5 2"));
    EXPECT_EQ(*value("heads: norm-weighted 3 5 2"), core::norm_weighted(s.config, s.params, state.trace(), 2)(5, 2));
    EXPECT_FALSE(panel.norm.busy());  // once per snapshot: nothing more to do
    draw(frame, 3);
    EXPECT_FALSE(panel.norm.busy());
}

TEST_F(NormWeighted, TheHeadViewDrawsEachQueryRowOfTheNormWeightedAttentionNormalised) {
    AppState state(six_tokens_three_heads());
    app::HeadViewPanel panel;
    panel.min_weight = 0;  // every line
    const auto frame = [&] { app::draw_head_view_panel(state, imgui_.ui, panel); };
    ImGui::GetIO().MousePos = {-100, -100};
    draw(frame, 2);
    EXPECT_EQ(*value("head view norm-weighted"), 0);
    const core::Trace& t = state.trace();
    ASSERT_TRUE(value("head view line 2 3 1"));
    EXPECT_EQ(*value("head view line 2 3 1"), t.heads[1].weights(3, 1));

    panel.norm_weighted = true;
    draw(frame, 2);
    EXPECT_EQ(*value("head view norm-weighted"), 1);
    EXPECT_TRUE(has_item("head view: norm-weighted note"));  // the view says the rows are normalised
    const core::Session& s = state.shown().session;
    bool differs = false;
    for (int h = 0; h < 3; ++h) {
        const core::Matrix nw = core::norm_weighted(s.config, s.params, t, h);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j <= i; ++j) {  // causal: the keys up to the query
                const std::string name = "head view line " + std::to_string(h + 1) + " " + std::to_string(i) + " " +
                                         std::to_string(j);
                ASSERT_TRUE(value(name)) << name;
                EXPECT_NEAR(*value(name), nw(i, j) / nw.row(i).sum(), 1e-12) << name;
                differs = differs || std::abs(*value(name) - t.heads[static_cast<size_t>(h)].weights(i, j)) > 1e-6;
            }
    }
    EXPECT_TRUE(differs);
    // Hovering query x5: each head's ‖f_h(x_j)‖, α_4j and their product for its strongest keys.
    ImGui::GetIO().MousePos = item("head view: query x5");
    draw(frame, 2);
    bool any = false;
    for (int h = 0; h < 3; ++h)
        for (int j = 0; j <= 4; ++j) {
            const std::string at = " " + std::to_string(h + 1) + " 4 " + std::to_string(j);
            if (!value("head view hover product" + at)) continue;
            any = true;
            const double norm = core::value_outputs(s.config, s.params, t, h).row(j).norm();
            EXPECT_NEAR(*value("head view hover value norm" + at), norm, 1e-12);
            EXPECT_EQ(*value("head view hover weight" + at), t.heads[static_cast<size_t>(h)].weights(4, j));
            EXPECT_NEAR(*value("head view hover product" + at), t.heads[static_cast<size_t>(h)].weights(4, j) * norm,
                        1e-12);
        }
    EXPECT_TRUE(any);
}

TEST_F(NormWeighted, TheModelViewFlagsAHeadPuttingAllItsWeightOnTokenZero) {
    AppState state(test::sink_session());
    app::ModelPanel panel;
    const auto frame = [&] { app::draw_model_panel(state, imgui_.ui, panel); };
    draw(frame, 2);
    ASSERT_TRUE(value("model 0:1 sink share"));
    EXPECT_EQ(*value("model 0:1 sink share"), 1);
    EXPECT_EQ(*value("model 0:1 sink key"), 0);
    EXPECT_TRUE(has_item("sink head 0:1"));
}

TEST_F(NormWeighted, TheModelViewDoesNotFlagAHeadOnTheDiagonal) {
    AppState state(diagonal_session());
    app::ModelPanel panel;
    const auto frame = [&] { app::draw_model_panel(state, imgui_.ui, panel); };
    draw(frame, 2);
    ASSERT_TRUE(value("model 0:1 sink share"));
    EXPECT_NEAR(*value("model 0:1 sink share"), 1.0 / 3, 1e-12);  // key 0 takes query 0 only
    EXPECT_FALSE(has_item("sink head 0:1"));
}

TEST_F(NormWeighted, TheModelViewsNormWeightedThumbnailsAreTheRowsNormalised) {
    AppState state(six_tokens_three_heads());
    app::ModelPanel panel;
    const auto frame = [&] { app::draw_model_panel(state, imgui_.ui, panel); };
    draw(frame, 2);
    EXPECT_FALSE(value("model 0:1 norm-weighted"));
    panel.norm_weighted = true;
    draw(frame, 2);
    EXPECT_TRUE(value("model 0:1 norm-weighted"));
    const core::LayerSummary* summary = panel.layers.row(0).summary.get();
    ASSERT_NE(summary, nullptr);
    ASSERT_EQ(summary->norm_thumbnails.size(), 3u);
    const core::Session& s = state.shown().session;
    for (int h = 0; h < 3; ++h) {
        const core::Matrix nw = core::norm_weighted(s.config, s.params, state.trace(), h);
        const core::Matrix& drawn = summary->norm_thumbnails[static_cast<size_t>(h)].cells;  // 6×6: as it is
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) EXPECT_NEAR(drawn(i, j), nw(i, j) / nw.row(i).sum(), 1e-12);
    }
}

TEST(NormWeightedExport, TheHeadAndModelViewFiguresDrawWhatTheViewShowsAndSaySo) {
    AppState state(six_tokens_three_heads());
    app::Panels panels;
    const auto exported = [&](app::ExportTarget::Kind kind) {
        core::Result<app::AttentionExport> made = app::attention_export(state, panels, kind);
        EXPECT_TRUE(made);
        return made ? made.value->page : core::AttentionPage{};
    };
    const core::AttentionPage weights = exported(app::ExportTarget::Kind::head_view);
    EXPECT_EQ(weights.title.find("norm-weighted"), std::string::npos);
    EXPECT_EQ(weights.weights.layers[0][1], state.trace().heads[1].weights);

    panels.head_view.norm_weighted = true;
    const core::AttentionPage head = exported(app::ExportTarget::Kind::head_view);
    EXPECT_NE(head.title.find("norm-weighted"), std::string::npos);
    const core::Session& s = state.shown().session;
    for (int h = 0; h < 3; ++h)
        EXPECT_EQ(head.weights.layers[0][static_cast<size_t>(h)],
                  core::norm_weighted_rows(core::norm_weighted(s.config, s.params, state.trace(), h)));
    // The model view's figure follows the model view's own switch.
    EXPECT_EQ(exported(app::ExportTarget::Kind::model_view).title.find("norm-weighted"), std::string::npos);
    panels.model.norm_weighted = true;
    EXPECT_NE(exported(app::ExportTarget::Kind::model_view).title.find("norm-weighted"), std::string::npos);
}
