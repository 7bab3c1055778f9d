// The panels driven headless: a bare ImGui context (no window, no GL) with its fonts built and a
// display size set runs the real draw functions; the tests assert on AppState.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cfloat>
#include <cmath>
#include <map>
#include <set>

#include "core/attention/gemm.hpp"
#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/io/session_file.hpp"
#include "core/io/tensors.hpp"
#include "core/render/view_figures.hpp"
#include "headless.hpp"
#include "panels/layer/dimensions_panel.hpp"
#include "panels/layer/inputs_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "shell/status_bar.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/matrix_view.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;
using app::MatrixRef;
using core::MatrixId;

namespace {

class Headless : public ::testing::Test {
protected:
    void frames(AppState& state, app::Panels& panels, int count = 3) { imgui_.frames(state, panels, count); }

    test::HeadlessImGui imgui_;
    const app::Fonts& fonts_ = imgui_.fonts;
};

}  // namespace

TEST_F(Headless, EveryPanelDrawsTheWorkedExample) {
    AppState state(core::worked_example());
    state.set_notation(fonts_.notation);
    app::Panels panels;
    frames(state, panels);
    EXPECT_FALSE(state.message().error) << state.message().text;
    EXPECT_GT(ImGui::GetDrawData()->TotalVtxCount, 1000);  // something substantial was drawn
}

TEST_F(Headless, EveryPanelDrawsARandomEightTokenThreeHeadSession) {
    AppState state(core::random_session({8, 12, 3, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 5));
    app::Panels panels;
    frames(state, panels);
    EXPECT_EQ(state.trace().heads.size(), 3u);
    EXPECT_FALSE(state.message().error) << state.message().text;
}

TEST_F(Headless, LargeMatricesDrawWithoutATextureBackend) {
    AppState state(core::random_session({256, 64, 4, 16, 16, true, core::Mask::none, {}, false, 0, {}}, 2));
    app::Panels panels;
    frames(state, panels, 2);
    // Without a texture uploader the heatmaps merge cells into blocks: the vertex count stays bounded.
    EXPECT_LT(ImGui::GetDrawData()->TotalVtxCount, 2000000);
}

TEST_F(Headless, AnEditShowsInTheTraceOfTheSameFrame) {
    AppState state(core::worked_example());
    app::Panels panels;
    frames(state, panels, 1);
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 5.0);
    frames(state, panels, 1);  // draw_frame brings the trace up to date before the views draw
    EXPECT_FALSE(state.dirty());
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(0, 0), 6.0);  // 5 + X[0][2] = 5 + 1
}

TEST_F(Headless, ATypedValueIsAppliedOnEnterNotAtEachKeystroke) {
    AppState state(core::worked_example());
    app::Panels panels;
    app::DrawReport report;
    imgui_.ui.report = &report;
    frames(state, panels, 2);
    const app::DrawReport::Item* field = nullptr;
    for (const auto& f : report.items)
        if (f.name == "X[0][1]") field = &f;
    ASSERT_NE(field, nullptr) << "the X editor shows X[0][1]";
    const ImVec2 at{(field->min.x + field->max.x) / 2, (field->min.y + field->max.y) / 2};
    imgui_.ui.report = nullptr;

    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Enter] = 1;
    // Ctrl+click turns the field into a text field with its text selected; then "0.25" is typed.
    io.MousePos = at;
    frames(state, panels, 1);
    io.KeyCtrl = true;
    io.MouseDown[0] = true;
    frames(state, panels, 1);
    io.MouseDown[0] = false;
    io.KeyCtrl = false;
    frames(state, panels, 1);
    for (const char* ch : {"0", ".", "2", "5"}) {
        io.AddInputCharactersUTF8(ch);
        frames(state, panels, 1);
        EXPECT_DOUBLE_EQ(state.session().params.X(0, 1), 0.0) << "after typing " << ch;  // nothing applied yet
        EXPECT_FALSE(state.can_undo());
    }
    io.KeysDown[1] = true;  // Enter
    frames(state, panels, 1);
    io.KeysDown[1] = false;
    frames(state, panels, 2);
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 1), 0.25);
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(0, 1), 0.25);  // X[0][1]·W_Q⁽¹⁾[1][1] with the rest 0
    EXPECT_EQ(state.undo_label(), "edit of X[0][1]");
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), core::worked_example());  // one step for the whole typed value
}

TEST_F(Headless, DimensionsPanelResizeKeepsTheOverlap) {
    AppState state(core::worked_example());
    app::Panels panels;
    frames(state, panels, 1);
    state.set_cell({{MatrixId::W_Q, 1}, 3, 1}, -2.5);
    core::Config wanted = state.config();
    wanted.heads = 4;  // the lock makes d_k = d_v = 4 / 4 = 1
    ASSERT_TRUE(app::apply_dimensions(state, panels.dimensions, wanted, 'h'));
    frames(state, panels, 2);
    const core::Config& c = state.config();
    EXPECT_EQ(c.heads, 4);
    EXPECT_EQ(c.d_k, 1);
    EXPECT_EQ(c.d_v, 1);
    EXPECT_EQ(state.trace().heads.size(), 4u);
    EXPECT_EQ(state.trace().concat.cols(), 4);
    EXPECT_EQ(state.trace().output.cols(), 4);
    // Column 0 of every kept head still holds its values; column 1 no longer fits.
    EXPECT_DOUBLE_EQ(state.session().params.heads[0].W_Q(2, 0), 1.0);
    EXPECT_DOUBLE_EQ(state.session().params.heads[1].W_Q(1, 0), 1.0);
    // Growing d_k back restores the edit that did not fit, and the seed's values beside it.
    panels.dimensions.lock_per_head = false;
    wanted = state.config();
    wanted.d_k = 2;
    ASSERT_TRUE(app::apply_dimensions(state, panels.dimensions, wanted, 'k'));
    EXPECT_DOUBLE_EQ(state.session().params.heads[1].W_Q(3, 1), -2.5);
    EXPECT_DOUBLE_EQ(state.session().params.heads[1].W_Q(2, 1), core::worked_example().params.heads[1].W_Q(2, 1));
    // X did not change shape, so it is exactly the seed's.
    EXPECT_EQ(state.session().params.X, core::worked_example().params.X);
}

TEST_F(Headless, LockRefusesDModelNotDivisibleByHeads) {
    AppState state(core::worked_example());
    app::Panels panels;
    core::Config wanted = state.config();
    wanted.heads = 3;
    EXPECT_FALSE(app::apply_dimensions(state, panels.dimensions, wanted, 'h'));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("not divisible"), std::string::npos);
    EXPECT_EQ(state.session(), core::worked_example());
    frames(state, panels, 1);  // the message is drawn, nothing breaks
}

TEST_F(Headless, MatrixLoadsFromANpyFileOfItsShapeOnly) {
    AppState state(core::worked_example());
    const MatrixRef wq{MatrixId::W_Q, 1};
    const std::string dir = ::testing::TempDir();
    auto write = [&](const std::string& name, const std::string& bytes) {
        const std::string path = dir + name;
        EXPECT_TRUE(core::write_file_atomic(path, bytes).empty());
        return path;
    };
    const std::string good = write("wq.npy", core::npy_bytes({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8.5}));
    const std::string wrong = write("wrong.npy", core::npy_bytes({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
    const std::string bad = write("bad.npy", "\x93NUMPY garbage");
    EXPECT_FALSE(app::matrix_load(state, wq, wrong));
    EXPECT_NE(state.message().text.find("expected 4×2, got 2×4"), std::string::npos) << state.message().text;
    EXPECT_FALSE(app::matrix_load(state, wq, bad));
    EXPECT_NE(state.message().text.find("bad.npy"), std::string::npos) << state.message().text;
    EXPECT_FALSE(app::matrix_load(state, wq, dir + "absent.npy"));
    EXPECT_EQ(state.session(), core::worked_example());
    ASSERT_TRUE(app::matrix_load(state, wq, good)) << state.message().text;
    EXPECT_EQ(state.session().params.heads[1].W_Q(3, 1), 8.5);
    EXPECT_EQ(state.session().params.heads[1].W_Q(0, 1), 2.0);
}

TEST_F(Headless, ImportLayerDialogListsTensorsAndImportsWithItsOptions) {
    AppState state(core::worked_example());
    app::Panels panels;
    imgui_.ui.request(app::command::ImportLayer{});
    frames(state, panels, 2);  // the dialog opens and draws
    app::ImportDialog& d = panels.menu.import;
    d.path = ATTNVIZ_REFERENCE_DIR "/checkpoints/llama/model.safetensors";
    app::list_tensors(d);
    ASSERT_EQ(d.listing.size(), 4u);
    EXPECT_NE(d.listing[0].find("BF16"), std::string::npos) << d.listing[0];
    frames(state, panels, 1);  // the listing is drawn
    d.x_path = ATTNVIZ_REFERENCE_DIR "/checkpoints/absent.npy";
    EXPECT_FALSE(app::import_options(d));
    d.x_path = ATTNVIZ_REFERENCE_DIR "/checkpoints/llama-x.npy";
    d.convention = 4;  // llama
    d.tokens = "a b c d e f";
    const core::Result<core::ImportOptions> o = app::import_options(d);
    ASSERT_TRUE(o) << o.problems.front().str();
    EXPECT_EQ(o.value->convention, core::Convention::llama);
    ASSERT_TRUE(state.import_checkpoint(d.path, *o.value)) << state.message().text;
    state.wait_for_trace();
    EXPECT_EQ(state.session().tokens[5], "f");
    EXPECT_EQ(state.config().n, 6);
    d.path = ATTNVIZ_REFERENCE_DIR "/checkpoints/expected.json";
    app::list_tensors(d);
    ASSERT_EQ(d.listing.size(), 1u);  // the reason it is not a tensor file
    EXPECT_NE(d.listing[0].find("expected.json"), std::string::npos) << d.listing[0];
    frames(state, panels, 1);
}

TEST_F(Headless, MatrixToolbarActions) {
    AppState state(core::worked_example());
    const MatrixRef wq{MatrixId::W_Q, 0};
    EXPECT_FALSE(app::matrix_paste(state, wq, "1,2,3\n4,5,6\n"));
    EXPECT_NE(state.message().text.find("expected 4×2, got 2×3"), std::string::npos) << state.message().text;
    EXPECT_FALSE(app::matrix_paste(state, wq, "1,x\n"));
    EXPECT_NE(state.message().text.find("not a number"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), core::worked_example());

    ASSERT_TRUE(app::matrix_paste(state, wq, "1\t2\n3\t4\n5\t6\n7\t8\n"));
    EXPECT_DOUBLE_EQ(state.session().params.heads[0].W_Q(3, 1), 8.0);
    EXPECT_EQ(app::matrix_copy(state, wq), "1, 2\n3, 4\n5, 6\n7, 8\n");

    app::matrix_zero(state, wq);
    EXPECT_DOUBLE_EQ(state.session().params.heads[0].W_Q.cwiseAbs().sum(), 0.0);
    app::matrix_identity(state, wq);
    EXPECT_EQ(state.session().params.heads[0].W_Q, core::Matrix::Identity(4, 2));
    app::matrix_random(state, wq, 42);
    const core::Matrix r = state.session().params.heads[0].W_Q;
    EXPECT_LE(r.cwiseAbs().maxCoeff(), core::glorot_limit(4, 2));
    EXPECT_GT(r.cwiseAbs().minCoeff(), 0.0);
    app::matrix_random(state, wq, 42);
    EXPECT_EQ(state.session().params.heads[0].W_Q, r);  // reproducible from its seed
}

TEST_F(Headless, StatusBarNamesTheDimensions) {
    AppState state(core::random_session({5, 6, 3, 2, 2, false, core::Mask::none, {}, false, 0, {}}, 1));
    const std::string text = app::status_text(state, 16.0f);
    EXPECT_NE(text.find("n=5"), std::string::npos);
    EXPECT_NE(text.find("d_model=6"), std::string::npos);
    EXPECT_NE(text.find("h=3"), std::string::npos);
    EXPECT_NE(text.find("W_O off"), std::string::npos);
}

// The mechanisms of today's models are named where the layer uses them: the sliding window, the
// soft-cap, partial rotary and RoPE's scaling, and the scale's divisor (query_pre_attn_scalar).
TEST_F(Headless, StatusBarNamesTheWindowTheSoftCapAndPartialRotary) {
    core::Config c{6, 8, 2, 4, 4, false, core::Mask::causal, {}, false, 0, {}};
    AppState plain(core::random_session(c, 1));
    const std::string before = app::status_text(plain, 16.0f);
    EXPECT_EQ(before.find("sliding window"), std::string::npos) << before;
    EXPECT_EQ(before.find("soft-cap"), std::string::npos) << before;
    c.window = 3;
    c.softcap = 50;
    c.rope.on = true;
    c.rope.dims = 2;
    c.rope.scaling.kind = core::RopeScaling::Kind::linear;
    c.rope.scaling.factor = 8;
    c.scale = {core::Scale::Kind::divisor, 16};
    AppState state(core::random_session(c, 1));
    const std::string text = app::status_text(state, 16.0f);
    EXPECT_NE(text.find("| sliding window 3 |"), std::string::npos) << text;
    EXPECT_NE(text.find("| soft-cap 50 |"), std::string::npos) << text;
    EXPECT_NE(text.find("| RoPE half, 2 of 4 columns, linear ×8 |"), std::string::npos) << text;
    EXPECT_NE(text.find("| scale divisor 16 |"), std::string::npos) << text;
}

// The frame time shows while frames follow one another (frame_ms ≥ 0), as ms or s; an idle
// window's last frame (frame_ms < 0) shows none: "frame 270 ms" read as a slow app.
TEST_F(Headless, StatusBarShowsTheFrameTimeOnlyWhileItMeansSomething) {
    AppState state(core::worked_example());
    EXPECT_EQ(app::status_text(state, -1.0f).find("frame"), std::string::npos);
    const std::string busy = app::status_text(state, 2720.0f);
    EXPECT_NE(busy.find("| frame 2.72 s"), std::string::npos) << busy;
    EXPECT_EQ(busy.find("e+"), std::string::npos) << busy;
    EXPECT_NE(app::status_text(state, 16.66f).find("| frame 16.7 ms"), std::string::npos);
}

// A status line and a message too wide for the bar: items leave in their stated order (largest drop
// first) until the message fits beside them; where not even the items that stay do, the message
// goes on a second line whole and the line takes back what fits; nothing is cut with "…" but a
// message wider than the bar itself.
TEST_F(Headless, StatusBarsTooltipNamesTheKernelOfTheProducts) {
    ImGui::NewFrame();
    const std::vector<app::StatusItem> items{{"n=6 d_model=8"}, {"trace 0.06 ms", 1}};
    const auto w = [](const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; };
    for (const core::gemm::Kernel kernel : core::gemm::cpu_kernels()) {
        ASSERT_TRUE(core::gemm::use(kernel));
        const std::string named = std::string("kernel ") + core::gemm::name(kernel) + " (";
        // The whole line shown: the tooltip names the kernel alone.
        const std::string whole = app::status_tooltip(app::status_layout(items, "", 1000));
        EXPECT_EQ(whole.rfind("Matrix products: " + named, 0), 0u) << whole;
        // An item left out: the whole line first, then the kernel.
        const std::string part = app::status_tooltip(app::status_layout(items, "", w("n=6 d_model=8") + 1));
        EXPECT_EQ(part.rfind("n=6 d_model=8 | trace 0.06 ms\nMatrix products: " + named, 0), 0u) << part;
    }
    core::gemm::choose(nullptr);
    ImGui::EndFrame();
}

TEST_F(Headless, StatusBarLeavesItemsOutInOrderThenMovesTheMessageBelowInsteadOfCutting) {
    ImGui::NewFrame();
    const std::vector<app::StatusItem> items{{"n=6 d_model=8 h=4 d_k=2 d_v=2"},
                                             {"W_O on", 3},
                                             {"mask causal"},
                                             {"scale sqrt(d_k)", 2},
                                             {"2 K/V groups"},
                                             {"tokens as rows", 4},
                                             {"trace 0.06 ms", 5},
                                             {"frame 16.7 ms", 6}};
    const std::string message = "The session of the lesson \"Grouped-query attention and the KV cache\"";
    const auto w = [](const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; };
    const float gap = ImGui::GetFontSize();
    const std::string all =
        "n=6 d_model=8 h=4 d_k=2 d_v=2 | W_O on | mask causal | scale sqrt(d_k) | 2 K/V groups | "
        "tokens as rows | trace 0.06 ms | frame 16.7 ms";
    const std::string without_times =
        "n=6 d_model=8 h=4 d_k=2 d_v=2 | W_O on | mask causal | scale sqrt(d_k) | 2 K/V groups | tokens as rows";
    const std::string kept = "n=6 d_model=8 h=4 d_k=2 d_v=2 | mask causal | 2 K/V groups";

    const app::StatusLayout wide = app::status_layout(items, message, w(all) + gap + w(message) + 1);
    EXPECT_EQ(wide.line, all);
    EXPECT_EQ(wide.message, message);
    EXPECT_EQ(wide.lines, 1);

    // The frame time, then the trace's time leave; the rest stays with the message beside it.
    const app::StatusLayout fewer = app::status_layout(items, message, w(without_times) + gap + w(message) + 1);
    EXPECT_EQ(fewer.line, without_times);
    EXPECT_EQ(fewer.whole_line, all);
    EXPECT_FALSE(fewer.line_cut);
    EXPECT_FALSE(fewer.message_below);
    EXPECT_EQ(fewer.message, message);

    // Only the items that stay fit beside the message.
    const app::StatusLayout least = app::status_layout(items, message, w(kept) + gap + w(message) + 1);
    EXPECT_EQ(least.line, kept);
    EXPECT_EQ(least.lines, 1);

    // Not even those: the message below, whole, and the line gets back every item that fits alone.
    const float narrow = std::max(w(message), w(without_times)) + 1;
    ASSERT_LT(narrow, w(kept) + gap + w(message));
    const app::StatusLayout two = app::status_layout(items, message, narrow);
    EXPECT_TRUE(two.message_below);
    EXPECT_EQ(two.lines, 2);
    EXPECT_EQ(two.message, message);
    EXPECT_FALSE(two.line_cut);
    EXPECT_LE(w(two.line), narrow);
    EXPECT_GE(two.line.size(), without_times.size());

    // No message: one line, items left out as needed.
    const app::StatusLayout alone = app::status_layout(items, "", w(kept) + 1);
    EXPECT_EQ(alone.line, kept);
    EXPECT_EQ(alone.lines, 1);

    // A message wider than the bar itself is the one thing cut (whole in its tooltip and the log).
    const app::StatusLayout tiny = app::status_layout(items, message, w(kept) + 1);
    EXPECT_TRUE(tiny.message_below);
    EXPECT_NE(tiny.message, message);
    EXPECT_NE(tiny.message.find("…"), std::string::npos);
    EXPECT_EQ(tiny.line, kept);
    ImGui::Render();
}

// The status items of a session in their order, each with the drop the header states.
TEST_F(Headless, StatusItemsLeaveInTheStatedOrder) {
    AppState state(core::worked_example());
    const std::vector<app::StatusItem> items = app::status_items(state, 16.0f);
    std::map<std::string, int> drop;
    for (const app::StatusItem& item : items) drop[item.text.substr(0, item.text.find(' '))] = item.drop;
    EXPECT_EQ(drop["frame"], 6);
    EXPECT_EQ(drop["trace"], 5);
    EXPECT_EQ(drop["tokens"], 4);
    EXPECT_EQ(drop["W_O"], 3);
    EXPECT_EQ(drop["scale"], 2);
    EXPECT_EQ(drop["mask"], 0);
    EXPECT_EQ(items.front().drop, 0);  // the dimensions stay
    EXPECT_EQ(items.front().text.rfind("n=", 0), 0u);
}

// A frame whose heatmaps left a colour range for later (their budget spent) says so: the idle
// window draws frames until none is left, instead of sleeping on an estimate.
TEST_F(Headless, HeatmapWorkLeftForLaterKeepsFramesComing) {
    AppState state(core::random_session({128, 64, 4, 16, 16, true, core::Mask::none, {}, false, 0, {}}, 3));
    app::Panels panels;
    imgui_.ui.heatmaps.set_rebuild_budget_ms(0);  // one rebuild a frame, from the next
    frames(state, panels, 2);
    state.randomize(9);  // every matrix new: each range made again
    frames(state, panels, 1);
    EXPECT_TRUE(imgui_.ui.heatmaps.behind());
    int more = 0;
    while (imgui_.ui.heatmaps.behind() && more < 200) {
        frames(state, panels, 1);
        ++more;
    }
    EXPECT_FALSE(imgui_.ui.heatmaps.behind()) << "every range made exact within " << more << " frames";
    EXPECT_GT(more, 1);
}

TEST_F(Headless, TextCutToItsRoomEndsInAnEllipsis) {
    ImGui::NewFrame();
    const std::string path = "Opened /home/someone/models/bert-base-uncased/layer-11/attention.json";
    const float full = ImGui::CalcTextSize(path.c_str()).x;
    EXPECT_EQ(app::fitted_text(path, full), path);  // fits: unchanged
    // A label exactly as wide as its room (a heatmap's row labels get the widest one's width) fits.
    const float exact = ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0, "x1").x;
    EXPECT_EQ(app::fitted_text("x1", exact), "x1");
    EXPECT_EQ(app::text_width_up_to("x1", exact * 2), exact);
    EXPECT_EQ(app::text_width_up_to(path, exact), exact);  // measured only up to the limit
    const std::string cut = app::fitted_text(path, full / 2);
    EXPECT_LE(ImGui::CalcTextSize(cut.c_str()).x, full / 2);
    EXPECT_GT(ImGui::CalcTextSize(cut.c_str()).x, full / 2 - 2 * ImGui::CalcTextSize("W").x);  // not cut short
    ASSERT_GE(cut.size(), 3u);
    EXPECT_EQ(cut.substr(cut.size() - 3), "…");
    EXPECT_EQ(path.compare(0, cut.size() - 3, cut, 0, cut.size() - 3), 0);  // a prefix of the text
    // A cut never splits a UTF-8 character: "ααα…" has only whole α's (2 bytes each) before "…".
    const std::string greek = "αααααααααααααααααααα";
    const std::string g = app::fitted_text(greek, ImGui::CalcTextSize(greek.c_str()).x / 3);
    EXPECT_EQ((g.size() - 3) % 2, 0u);
    EXPECT_EQ(app::fitted_text(path, 1), "…");
    ImGui::Render();
}

TEST_F(Headless, EveryCellOfEveryMatrixHasAnExplanation) {
    // Biases, one K/V group for both heads, RoPE, a custom mask, cross-attention from Y's 4 tokens and
    // soft-capping; then q/k norms (which go with self-attention only): every matrix of the registry
    // exists in one of the two.
    const core::Rope rope{true, 10000, core::Rope::Style::half, 0, {}};
    core::Config all{3, 4, 2, 2, 2, true, core::Mask::custom, {}, true, 1, rope, 4};
    all.softcap = 0.5;  // scores_capped too
    core::Config normed{3, 4, 2, 2, 2, true, core::Mask::causal, {}, true, 1, rope};
    normed.qk_norm.on = true;
    std::set<MatrixId> seen;
    for (const core::Config& c : {all, normed}) {
        AppState state(core::random_session(c, 9));
        for (MatrixId id : core::all_matrix_ids) {
            if (!core::exists(id, c)) continue;
            seen.insert(id);
            for (int h = 0; h < 2; ++h) {
                const core::Matrix* m = state.matrix({id, h});
                ASSERT_NE(m, nullptr) << core::name(id);
                for (int i = 0; i < m->rows(); ++i)
                    for (int j = 0; j < m->cols(); ++j) {
                        const auto e = state.explain({{id, h}, i, j});
                        ASSERT_TRUE(e) << core::name(id) << " " << i << " " << j;
                        EXPECT_FALSE(e.value->lines.empty());
                    }
            }
        }
    }
    EXPECT_EQ(seen.size(), core::matrix_count);
}

TEST(Colormap, TextColourFollowsLuminance) {
    EXPECT_EQ(app::text_color_on(IM_COL32(250, 250, 250, 255)), IM_COL32(0, 0, 0, 255));
    EXPECT_EQ(app::text_color_on(IM_COL32(20, 20, 60, 255)), IM_COL32(255, 255, 255, 255));
    // Viridis runs from dark purple to yellow: white text at 0, black at 1.
    EXPECT_EQ(app::text_color_on(app::colormap_color(app::Colormap::sequential, 0.0f)), IM_COL32(255, 255, 255, 255));
    EXPECT_EQ(app::text_color_on(app::colormap_color(app::Colormap::sequential, 1.0f)), IM_COL32(0, 0, 0, 255));
    // The diverging map is near-white at its middle (value 0).
    const ImVec4 mid = ImGui::ColorConvertU32ToFloat4(app::colormap_color(app::Colormap::diverging, 0.5f));
    EXPECT_GT(mid.x, 0.9f);
    EXPECT_GT(mid.y, 0.9f);
    EXPECT_GT(mid.z, 0.9f);
}

TEST_F(Headless, ColumnVectorViewDrawsEveryMatrixTransposed) {
    AppState state(core::worked_example());
    app::Panels panels;
    EXPECT_EQ(state.shape_text({MatrixId::X, 0}), "2×4");
    EXPECT_EQ(state.shape_text({MatrixId::W_Q, 1}), "4×2");
    state.set_column_vectors(true);  // seed 004: tokens are columns
    EXPECT_EQ(state.shape_text({MatrixId::X, 0}), "4×2");
    EXPECT_EQ(state.shape_text({MatrixId::W_Q, 1}), "2×4");
    EXPECT_EQ(state.shape_text({MatrixId::concat, 0}), "4×2");
    frames(state, panels);
    // Only the views change: the session and the math stay in row form.
    EXPECT_EQ(state.session(), core::worked_example());
    EXPECT_EQ(state.trace().heads[0].Q.rows(), 2);
    EXPECT_NE(app::status_text(state, 16.0f).find("tokens as columns"), std::string::npos);
}

TEST_F(Headless, QuitAsksFirstWhenTheSessionIsModified) {
    AppState state(core::worked_example());
    app::Panels panels;
    imgui_.ui.request(app::command::Quit{});
    frames(state, panels, 1);
    EXPECT_TRUE(panels.quit);  // nothing to lose: quits at once

    app::Panels edited;
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 4.0);
    imgui_.ui.request(app::command::Quit{});
    frames(state, edited, 3);
    EXPECT_FALSE(edited.quit);  // the "Unsaved changes" dialog is waiting for an answer
    EXPECT_TRUE(ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel));
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 0), 4.0);
}

TEST_F(Headless, TypedAndDraggedValuesKeepDoublePrecision) {
    // A drag moves in float steps: what shows as 2.45 is stored as 2.45, not 2.4499999675….
    const double dragged = 1.0 + 145 * static_cast<double>(0.01f);  // 2.4499999675899744
    EXPECT_NE(dragged, 2.45);
    EXPECT_EQ(app::dragged_value(dragged), 2.45);
    EXPECT_EQ(app::dragged_value(-0.30000001192092896), -0.3);  // -0.3f
    EXPECT_EQ(app::dragged_value(0.123456789), 0.123456789);    // a real value is not rounded
    // A typed 2.45 is stored as the double 2.45 (and written as "2.45").
    AppState state(core::worked_example());
    app::Panels panels;
    app::DrawReport report;
    imgui_.ui.report = &report;
    frames(state, panels, 2);
    const app::DrawReport::Item* field = nullptr;
    for (const auto& f : report.items)
        if (f.name == "X[1][2]") field = &f;
    ASSERT_NE(field, nullptr);
    imgui_.ui.report = nullptr;
    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Enter] = 1;
    io.MousePos = {(field->min.x + field->max.x) / 2, (field->min.y + field->max.y) / 2};
    frames(state, panels, 1);
    io.KeyCtrl = true;
    io.MouseDown[0] = true;
    frames(state, panels, 1);
    io.MouseDown[0] = false;
    io.KeyCtrl = false;
    frames(state, panels, 1);
    io.AddInputCharactersUTF8("2.45");
    frames(state, panels, 1);
    io.KeysDown[1] = true;
    frames(state, panels, 1);
    io.KeysDown[1] = false;
    frames(state, panels, 2);
    EXPECT_EQ(state.session().params.X(1, 2), 2.45);
    EXPECT_NE(core::write_session(state.session()).find("[0, 2, 2.45, 2]"), std::string::npos);
}

TEST(Layout, PlacesTileTheWorkAreaAtEverySize) {
    for (const ImVec2 display : {ImVec2{1024, 640}, ImVec2{1280, 800}, ImVec2{1920, 1080}, ImVec2{3840, 2160}}) {
        for (const app::LayoutShares& shares :
             {app::default_shares(display), app::LayoutShares{0.9f, 0.05f, 0.97f, 0.03f, 0.5f}}) {
            const float menu = 20, status = 26;
            const app::Layout l = app::tiled_layout(display, menu, status, shares);
            double area = 0;
            for (size_t a = 0; a < l.size(); ++a) {
                const app::Rect& r = l[a];
                // Inside the work area, never smaller than a title bar and a few lines.
                EXPECT_GE(r.pos.x, 0);
                EXPECT_GE(r.pos.y, menu);
                EXPECT_LE(r.pos.x + r.size.x, display.x + 0.01f);
                EXPECT_LE(r.pos.y + r.size.y, display.y - status + 0.01f);
                EXPECT_GE(r.size.x, 150) << display.x << " place " << a;
                EXPECT_GE(r.size.y, 80) << display.y << " place " << a;
                area += static_cast<double>(r.size.x) * r.size.y;
                for (size_t b = a + 1; b < l.size(); ++b) {
                    const app::Rect& q = l[b];
                    const float ox = std::min(r.pos.x + r.size.x, q.pos.x + q.size.x) - std::max(r.pos.x, q.pos.x);
                    const float oy = std::min(r.pos.y + r.size.y, q.pos.y + q.size.y) - std::max(r.pos.y, q.pos.y);
                    EXPECT_FALSE(ox > 0.5f && oy > 0.5f) << "places " << a << " and " << b << " overlap";
                }
            }
            EXPECT_NEAR(area, static_cast<double>(display.x) * (display.y - menu - status), 1.0);  // no gaps
        }
    }
}

TEST(Layout, SharesAreKeptAsTextAndABadLineChangesNothing) {
    const app::LayoutShares s{0.3f, 0.4f, 0.5f, 0.6f, 0.7f};
    app::LayoutShares back;
    app::read_shares(app::shares_text(s), back);
    EXPECT_NEAR(back.left, 0.3f, 1e-4);
    EXPECT_NEAR(back.lower_left, 0.7f, 1e-4);
    for (const char* bad : {"", "left=0.3", "left=2 left_top=0.4 upper=0.5 upper_left=0.6 lower_left=0.7",
                            "left=nan left_top=0.4 upper=0.5 upper_left=0.6 lower_left=0.7"}) {
        app::LayoutShares kept = s;
        app::read_shares(bad, kept);
        EXPECT_EQ(kept, s) << bad;
    }
}

TEST_F(Headless, DraggingASplitterMovesTheBorderAndDoubleClickingATitleMaximises) {
    AppState state(core::worked_example());
    app::Panels panels;
    app::DrawReport report;
    imgui_.ui.report = &report;
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {5, 5};
    frames(state, panels, 2);
    const auto window = [&](const char* title) {
        for (const auto& w : report.windows)
            if (w.title == title) return w;
        ADD_FAILURE() << title << " not drawn";
        return app::DrawReport::Window{};
    };
    // The border between the left column and the rest, halfway down: drag it 100 px right.
    const app::DrawReport::Window dims = window("Dimensions");
    const float border = dims.pos.x + dims.size.x, y = 500;
    io.MousePos = {border, y};
    frames(state, panels, 1);
    io.MouseDown[0] = true;
    frames(state, panels, 1);
    for (int step = 1; step <= 4; ++step) {
        io.MousePos = {border + 25.0f * step, y};
        frames(state, panels, 1);
    }
    io.MouseDown[0] = false;
    frames(state, panels, 2);
    EXPECT_NEAR(window("Dimensions").size.x, dims.size.x + 100, 1.5f);
    EXPECT_NEAR(window("Pipeline").size.x, dims.size.x + 100, 1.5f);  // the whole left column
    const app::DrawReport::Window inputs = window("Inputs: X and weights");
    EXPECT_NEAR(inputs.pos.x, border + 100, 1.5f);
    // Double-click the viewer's title: it fills the work area alone; again: the layout is back.
    const app::DrawReport::Window viewer = window("Matrix viewer");
    const auto double_click = [&](ImVec2 at) {
        io.MousePos = at;
        frames(state, panels, 1);
        for (int k = 0; k < 2; ++k) {
            io.MouseDown[0] = true;
            frames(state, panels, 1);
            io.MouseDown[0] = false;
            frames(state, panels, 1);
        }
        frames(state, panels, 1);
    };
    double_click({viewer.pos.x + 60, viewer.pos.y + 5});
    EXPECT_EQ(report.windows.size(), 1u);
    EXPECT_EQ(window("Matrix viewer").size.x, io.DisplaySize.x);
    double_click({60, window("Matrix viewer").pos.y + 5});
    EXPECT_EQ(report.windows.size(), static_cast<size_t>(app::Place::count));  // one panel a place
    EXPECT_NEAR(window("Matrix viewer").size.x, viewer.size.x, 0.5f);
}

TEST(Layout, AHiddenPanelsRoomGoesToItsNeighbours) {
    const ImVec2 d{1280, 800};
    const float menu = 20, status = 26, work_h = 800 - 46;
    auto place = [](const app::Layout& l, app::Place p) { return l[static_cast<size_t>(p)]; };
    app::LayoutShares s = app::default_shares(d);
    s.hidden[static_cast<size_t>(app::Place::left_top)] = true;  // Dimensions
    app::Layout l = app::tiled_layout(d, menu, status, s);
    EXPECT_EQ(place(l, app::Place::left_top).size.y, 0);
    EXPECT_EQ(place(l, app::Place::left_bottom).pos.y, menu);
    EXPECT_EQ(place(l, app::Place::left_bottom).size.y, work_h);
    s.hidden[static_cast<size_t>(app::Place::left_bottom)] = true;  // the whole left column
    l = app::tiled_layout(d, menu, status, s);
    EXPECT_EQ(place(l, app::Place::upper_left).pos.x, 0);
    EXPECT_EQ(place(l, app::Place::upper_left).size.x + place(l, app::Place::upper_right).size.x, 1280);
    s.hidden[static_cast<size_t>(app::Place::upper_left)] = true;
    s.hidden[static_cast<size_t>(app::Place::upper_right)] = true;  // the upper row
    l = app::tiled_layout(d, menu, status, s);
    EXPECT_EQ(place(l, app::Place::lower_left).pos.y, menu);
    EXPECT_EQ(place(l, app::Place::lower_right).size.y, work_h);
    // Kept with the layout: the hidden panels come back from the text.
    app::LayoutShares back;
    app::read_shares(app::shares_text(s), back);
    EXPECT_EQ(back.hidden, s.hidden);
    // A layout line of an older version (no hidden=) shows every panel.
    app::read_shares("left=0.3 left_top=0.4 upper=0.5 upper_left=0.6 lower_left=0.7", back);
    EXPECT_EQ(back.hidden, (std::array<bool, 6>{}));
}

TEST_F(Headless, ThePipelineShowsTheHeadOfANewlySelectedCell) {
    AppState state(core::random_session({4, 8, 3, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 2));
    app::Panels panels;
    frames(state, panels, 1);
    EXPECT_EQ(panels.pipeline.head, 0);
    ASSERT_TRUE(state.select_checked({MatrixRef{MatrixId::weights, 2}, 1, 0}));
    frames(state, panels, 1);
    EXPECT_EQ(panels.pipeline.head, 2);
    // The slider's choice stands while the selection stays the same, and a cell of a matrix that is
    // not a head's (the output) leaves it alone.
    panels.pipeline.head = 1;
    frames(state, panels, 1);
    EXPECT_EQ(panels.pipeline.head, 1);
    ASSERT_TRUE(state.select_checked({MatrixRef{MatrixId::output, 0}, 0, 0}));
    frames(state, panels, 1);
    EXPECT_EQ(panels.pipeline.head, 1);
}

// The panel draws the pipeline's layout: the figure's nodes of its head, every one but the weights
// (which the panel writes on its arrows), with the same names, operations and shapes.
TEST_F(Headless, ThePipelinePanelDrawsTheFiguresNodes) {
    core::Config c;
    c.n = 3, c.d_model = 4, c.heads = 1, c.d_k = 4, c.d_v = 4;
    c.biases = true;
    c.rope.on = true;
    c.n_kv = 5;  // cross-attention: Y beside X
    AppState state(core::random_session(c, 4));
    app::Panels panels;
    app::DrawReport report;
    imgui_.ui.report = &report;
    frames(state, panels, 2);
    imgui_.ui.report = nullptr;
    std::vector<std::string> panel, figure;
    const std::string prefix = "pipeline: ";
    for (const auto& item : report.items)
        if (item.name.starts_with(prefix)) panel.push_back(item.name.substr(prefix.size()));
    const core::Figure f = core::pipeline_figure(state.shown().session, state.shown().trace, core::FigureStyle{});
    for (const core::Element& e : f.elements)
        if (const auto* g = std::get_if<core::Group>(&e); g && g->klass == "node" && !g->tooltip.starts_with("W_"))
            figure.push_back(g->tooltip);
    EXPECT_EQ(panel.size(), 13u);  // X, Y, Q, K, V, Q_rot, K_rot, scores_raw, scores, weights, Z, concat, output
    std::sort(panel.begin(), panel.end());
    std::sort(figure.begin(), figure.end());
    EXPECT_EQ(panel, figure);
}

namespace {
class DimensionSteps : public test::WindowTest {};
}  // namespace

// With the lock d_k = d_v = d_model / h on, + and − of h and d_model step to the next value the lock
// allows (h 2 → 4 with d_model 4; 3 would be refused), instead of the next integer.
TEST_F(DimensionSteps, PlusAndMinusStepToTheNextValueTheLockAllows) {
    AppState state(core::worked_example());  // n 2, d_model 4, h 2, the lock on
    ASSERT_TRUE(panels.dimensions.lock_per_head);
    frames(state, 2);
    click(state, "dimensions: h (heads) +");
    EXPECT_EQ(state.config().heads, 4);
    EXPECT_EQ(state.config().d_k, 1);
    EXPECT_FALSE(state.message().error) << state.message().text;
    click(state, "dimensions: h (heads) +");  // h = d_model: nothing larger divides it
    EXPECT_EQ(state.config().heads, 4);
    click(state, "dimensions: h (heads) -");
    EXPECT_EQ(state.config().heads, 2);
    click(state, "dimensions: d_model +");
    EXPECT_EQ(state.config().d_model, 6);  // the next multiple of h = 2
    EXPECT_EQ(state.config().d_k, 3);
    click(state, "dimensions: d_model -");
    EXPECT_EQ(state.config().d_model, 4);
    click(state, "dimensions: h (heads) -");
    EXPECT_EQ(state.config().heads, 1);
    EXPECT_EQ(state.config().d_v, 4);
    click(state, "dimensions: n (tokens) +");  // no lock on n: the next integer
    EXPECT_EQ(state.config().n, 3);
    EXPECT_FALSE(state.message().error) << state.message().text;
}

// The soft-cap typed into the Dimensions panel (Enter applies it): scores_capped = c·tanh(scores / c)
// becomes the softmax's input, one undo step takes it back.
TEST_F(DimensionSteps, TheSoftCapIsTypedAndUndone) {
    AppState state(core::worked_example());
    panels.maximize_at_start = app::PanelId::dimensions;
    frames(state, 2);
    ASSERT_NE(item("dimensions: soft-cap"), nullptr);
    const app::DrawReport::Item field = *item("dimensions: soft-cap");  // the report is drawn anew each frame
    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Enter] = 1;
    io.KeyMap[ImGuiKey_Backspace] = 2;
    io.MousePos = {field.min.x + 40, (field.min.y + field.max.y) / 2};  // in the box, after its "0"
    frames(state, 1);
    io.MouseDown[0] = true;
    frames(state, 1);
    io.MouseDown[0] = false;
    frames(state, 1);
    for (int k = 0; k < 3; ++k) {  // "0" away
        io.KeysDown[2] = true;
        frames(state, 1);
        io.KeysDown[2] = false;
        frames(state, 1);
    }
    io.AddInputCharactersUTF8("0.5");
    frames(state, 1);
    EXPECT_EQ(state.config().softcap, 0.0) << "nothing applies before Enter";
    io.KeysDown[1] = true;
    frames(state, 1);
    io.KeysDown[1] = false;
    frames(state, 2);
    ASSERT_EQ(state.config().softcap, 0.5) << state.message().text;
    const core::HeadTrace& h = state.trace().heads[0];
    ASSERT_EQ(h.scores_capped.rows(), h.scores.rows());
    for (Eigen::Index i = 0; i < h.scores.rows(); ++i)
        for (Eigen::Index j = 0; j < h.scores.cols(); ++j)
            EXPECT_NEAR(h.scores_capped(i, j), 0.5 * std::tanh(h.scores(i, j) / 0.5), 1e-15);
    EXPECT_NE(app::status_text(state, -1).find("soft-cap 0.5"), std::string::npos);
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.config().softcap, 0.0);
    EXPECT_EQ(state.session(), core::worked_example());
}

// "q/k norms" in the Dimensions panel: a click turns on OLMo 2's norms over every head with weights 1
// (each token's queries of both heads divided by one RMS), the status bar names them, and the
// change undoes as one step.
TEST_F(DimensionSteps, TheQkNormsAreTurnedOnAndUndone) {
    AppState state(core::worked_example());
    panels.maximize_at_start = app::PanelId::dimensions;
    frames(state, 2);
    ASSERT_NE(item("dimensions: q/k norms"), nullptr);
    const app::DrawReport::Item box = *item("dimensions: q/k norms");
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {box.min.x + 6, (box.min.y + box.max.y) / 2};
    frames(state, 1);
    io.MouseDown[0] = true;
    frames(state, 1);
    io.MouseDown[0] = false;
    frames(state, 2);
    ASSERT_TRUE(state.config().qk_norm.on) << state.message().text;
    const core::Params& p = state.session().params;
    ASSERT_EQ(p.q_norm.cols(), 4);  // h·d_k = 2·2
    EXPECT_EQ(p.q_norm, core::Matrix::Ones(1, 4));
    // Row 0's queries: X·W_Q of both heads, divided by the RMS of the four.
    core::Matrix q(1, 4);
    q << p.X.row(0) * p.heads[0].W_Q, p.X.row(0) * p.heads[1].W_Q;
    const double rms = std::sqrt(q.squaredNorm() / 4 + 1e-6);
    EXPECT_NEAR(state.trace().heads[1].Q(0, 1), q(0, 3) / rms, 1e-15);
    EXPECT_NE(app::status_text(state, -1).find("| q/k norms |"), std::string::npos) << app::status_text(state, -1);
    ASSERT_TRUE(state.undo());
    EXPECT_FALSE(state.config().qk_norm.on);
    EXPECT_EQ(state.session(), core::worked_example());
}

// The Inputs panel's "q/k norms" tab (only with them on) edits q_norm and k_norm: a typed weight of 0
// for head 2's first column zeroes that column of its queries.
TEST_F(DimensionSteps, TheQkNormsTabEditsTheirWeights) {
    core::Config c{4, 4, 2, 2, 2, true, core::Mask::causal, {}, false, 0, {}};
    AppState plain(core::random_session(c, 3));
    panels.maximize_at_start = app::PanelId::inputs;
    frames(plain, 2);
    EXPECT_EQ(item("inputs: q/k norms"), nullptr);  // no tab without them
    c.qk_norm.on = true;
    AppState state(core::random_session(c, 3));
    frames(state, 2);
    click(state, "inputs: q/k norms");
    frames(state, 2);
    ASSERT_NE(item("q_norm[0][2]"), nullptr);
    ASSERT_NE(item("k_norm[0][1]"), nullptr);
    ASSERT_TRUE(state.set_cell({{MatrixId::q_norm, 0}, 0, 2}, 0.0));
    state.wait_for_trace();
    for (int i = 0; i < c.n; ++i) EXPECT_EQ(state.trace().heads[1].Q(i, 0), 0.0) << i;
    EXPECT_NE(state.trace().heads[1].Q(0, 1), 0.0);
}

// "softmax: standard | plus one" beside the scale: plus one makes the weights softmax₁ (rows summing
// to below 1, as e^s / (1 + Σ e^s) says), the status bar says so, and undo and redo take it back
// and forth as one step that keeps every matrix.
TEST_F(DimensionSteps, TheSoftmaxPlusOneIsChosenBesideTheScaleAndUndone) {
    AppState state(core::worked_example());
    panels.maximize_at_start = app::PanelId::dimensions;  // the choice in view, below the scale
    frames(state, 2);
    const core::Session before = state.session();
    click(state, "dimensions: softmax plus one");
    ASSERT_EQ(state.config().softmax, core::Softmax::plus_one);
    EXPECT_EQ(state.undo_label(), "change of the softmax");
    const core::Trace& t = state.trace();
    ASSERT_EQ(t.config.softmax, core::Softmax::plus_one);
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 2; ++i) {
            double exps = 0;
            for (int k = 0; k < 2; ++k) exps += std::exp(t.heads[h].scores(i, k));
            EXPECT_NEAR(t.rows[h][i].sum, exps / (1 + exps), 1e-12);
            EXPECT_LT(t.rows[h][i].sum, 1.0);
        }
    EXPECT_NE(app::status_text(state, -1).find("softmax plus one"), std::string::npos);
    EXPECT_EQ(state.session().params, before.params);
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), before);
    frames(state, 2);
    EXPECT_NEAR(state.trace().rows[0][0].sum, 1.0, 1e-12);
    ASSERT_TRUE(state.redo());
    EXPECT_EQ(state.config().softmax, core::Softmax::plus_one);
    frames(state, 2);
    click(state, "dimensions: softmax standard");
    EXPECT_EQ(state.config().softmax, core::Softmax::standard);
    EXPECT_FALSE(state.message().error) << state.message().text;
}

TEST(DimensionStep, TheLockAndTheGroupsChooseTheNextValue) {
    core::Config c = core::worked_example().config;  // d_model 4, h 2
    EXPECT_EQ(app::stepped_dimension(c, true, 'h', 1), 4);
    EXPECT_EQ(app::stepped_dimension(c, false, 'h', 1), 3);  // without the lock any h
    EXPECT_EQ(app::stepped_dimension(c, true, 'h', -1), 1);
    EXPECT_EQ(app::stepped_dimension(c, true, 'd', 1, 8), 12);  // Ctrl: 8 on, then the next multiple of 2
    EXPECT_EQ(app::stepped_dimension(c, true, 'd', -1), 2);
    c.d_model = 2;
    EXPECT_EQ(app::stepped_dimension(c, true, 'd', -1), 2);  // nothing smaller is a multiple of h
    c.heads = 6;
    c.kv_heads = 2;
    EXPECT_EQ(app::stepped_dimension(c, false, 'g', 1), 3);  // the divisors of h: 1, 2, 3, 6
    c.kv_heads = 3;
    EXPECT_EQ(app::stepped_dimension(c, false, 'g', 1), 6);
    EXPECT_EQ(app::stepped_dimension(c, false, 'g', -1), 2);
    c.kv_heads = 0;  // one group a head
    EXPECT_EQ(app::stepped_dimension(c, false, 'g', 1), 6);
}

namespace {
class LiveResize : public test::WindowTest {};
}  // namespace

// A window made smaller while it runs keeps the panels' shares: the Dimensions panel of a 1920-pixel
// window becomes about 225 pixels wide at 1024×640. Its controls wrap there instead of being cut:
// "Randomize" goes to the next line, the lock's label wraps.
TEST_F(LiveResize, DimensionsControlsWrapInsteadOfBeingCut) {
    AppState state(core::worked_example());
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = {1920, 1080};
    frames(state, 3);
    io.DisplaySize = {1024, 640};
    frames(state, 3);
    const app::DrawReport::Window* dims = nullptr;
    for (const auto& w : report.windows)
        if (w.title == "Dimensions") dims = &w;
    ASSERT_NE(dims, nullptr);
    ASSERT_LT(dims->size.x, 270.0f);  // narrower than the default share gives: the case at hand
    const float right = dims->pos.x + dims->size.x - ImGui::GetStyle().ScrollbarSize;
    for (const char* name : {"dimensions: randomize", "dimensions: lock", "dimensions: sentence"}) {
        const app::DrawReport::Item* at = item(name);
        ASSERT_NE(at, nullptr) << name;
        EXPECT_LE(at->max.x, right + 0.5f) << name << " runs past the panel's edge";
    }
    io.DisplaySize = {1280, 800};
}

// A flow of matrices takes the largest whole-pixel cell with which it fits its room (wrapping to
// its width), and never a cell under the readable size it is given: then it scrolls.
TEST(Flow, CellsGrowToFillTheRoomButStayReadable) {
    std::vector<app::FlowItem> items(3);
    for (app::FlowItem& f : items) {
        f.rows = 5;
        f.cols = 4;
        f.head_h = 20;
    }
    items[1].new_line = false;
    // At 30 px three matrices of 120 px need 3·120 + 2·10 = 380 px: one line, 20 + 150 = 170 high. At
    // 35 (440 px) they wrap to two lines of 195: 395.
    EXPECT_EQ(app::flow_height(items, 30, 400, {10, 5}), 170);
    EXPECT_EQ(app::flow_height(items, 35, 400, {10, 5}), 195 + 5 + 195);
    // In 400 × 200: one line up to 31 (3·124 + 20 = 392), two lines of 20 + 5·32 from 32 on (too high).
    EXPECT_EQ(app::flow_cell(items, {400, 200}, {10, 5}, 20, 64), 31);
    // In 400 × 1000: at 64 one matrix a line (256 + 10 + 256 > 400), 3·340 + 10 = 1030 high; at 62, 1000.
    EXPECT_EQ(app::flow_cell(items, {400, 1000}, {10, 5}, 20, 64), 62);
    EXPECT_EQ(app::flow_cell(items, {400, 5000}, {10, 5}, 20, 64), 64);  // room to spare: up to the limit
    EXPECT_EQ(app::flow_cell(items, {400, 50}, {10, 5}, 20, 64), 20);    // no room: readable, scrolling
    // A matrix wider than the room has its cells shrunk to the width.
    app::FlowItem wide;
    wide.rows = 2;
    wide.cols = 100;
    EXPECT_FLOAT_EQ(wide.height(30, 400), 2 * 4.0f);
}
