// The attentions mode through the whole window, headless: any model's weights opened from a file
// show in the head view and the model view alone (weights only, the session's panels gone, the
// session kept underneath), with the layer selector, the mean of the heads and hidden special
// tokens renormalised as core computes them; a refused file keeps everything as it was and names
// the bad row; File > Open attentions…, Close attentions and opening a session; a click in the
// model view; exports of the views as the app shows them; and the head view's layers in model mode.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/io/session_file.hpp"
#include "shell/frame_commands.hpp"
#include "shell/frame_exports.hpp"
#include "state/model_run.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;

namespace {

namespace fs = std::filesystem;

constexpr int key_s = 'S', key_z = 'Z';  // GLFW's codes, as the shortcuts read them

// A temporary folder, removed with its files.
struct Dir {
    fs::path path;
    Dir() {
        path = fs::temp_directory_path() / ("attnviz-attentions-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
        fs::create_directories(path);
    }
    ~Dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// Made-up weights: layer l, head h, row i over `keys` keys, v_j = 1 + ((7l + 5h + 3i + j²) mod 11)
// divided by the row's sum (uneven, every weight above 0).
double weight(int l, int h, int i, int j, int keys) {
    const auto v = [&](int k) { return 1.0 + ((l * 7 + h * 5 + i * 3 + k * k) % 11); };
    double sum = 0;
    for (int k = 0; k < keys; ++k) sum += v(k);
    return v(j) / sum;
}

// A stacked .npy of layers × heads × q × k float64 weights; `bad` (layer, head, row) sums to 1.5.
void write_npy(const fs::path& path, int layers, int heads, int q, int k, std::array<int, 3> bad = {-1, -1, -1}) {
    std::ostringstream shape;
    shape << "{'descr': '<f8', 'fortran_order': False, 'shape': (" << layers << ", " << heads << ", " << q << ", " << k
          << "), }";
    std::string header = shape.str();
    header += std::string(63 - (header.size() + 10) % 64, ' ') + "\n";
    std::ofstream out(path, std::ios::binary);
    out << "\x93NUMPY\x01" << '\0';
    const auto length = static_cast<std::uint16_t>(header.size());
    out.put(static_cast<char>(length & 0xff)).put(static_cast<char>(length >> 8)) << header;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < q; ++i)
                for (int j = 0; j < k; ++j) {
                    double w = weight(l, h, i, j, k);
                    if (bad == std::array<int, 3>{l, h, i}) w *= 1.5;
                    out.write(reinterpret_cast<const char*>(&w), sizeof w);
                }
}

// The mean over heads of layer l's row i renormalised over `keys` (kept key indices).
std::vector<double> mean_renormalised(int l, int heads, int i, const std::vector<int>& keys, int k) {
    std::vector<double> mean(keys.size(), 0);
    for (int h = 0; h < heads; ++h) {
        double sum = 0;
        for (int j : keys) sum += weight(l, h, i, j, k);
        for (std::size_t c = 0; c < keys.size(); ++c) mean[c] += weight(l, h, i, keys[c], k) / sum / heads;
    }
    return mean;
}

class AttentionsMode : public test::WindowTest {
protected:
    void SetUp() override {
        WindowTest::SetUp();
        setenv("ATTNVIZ_NATIVE_DIALOGS", "0", 1);
        write_npy(npy, 3, 2, 4, 4);
        std::ofstream(tokens) << R"(["[CLS]", "the", "cat", "[SEP]"])";
        ImGui::GetIO().KeyMap[ImGuiKey_Escape] = 2;
    }
    void TearDown() override { unsetenv("ATTNVIZ_NATIVE_DIALOGS"); }
    // Opens the made-up attentions as --attentions does.
    void open(AppState& state) {
        ASSERT_TRUE(app::open_attentions(state, panels.attentions, npy.string(), tokens.string()))
            << state.message().text;
        app::attentions_opened(state, panels);
        frames(state, 3);
    }
    double value(const std::string& name) const {
        for (const auto& v : report.values)
            if (v.name == name) return v.value;
        ADD_FAILURE() << "no value " << name;
        return NAN;
    }
    bool has_value(const std::string& name) const {
        for (const auto& v : report.values)
            if (v.name == name) return true;
        return false;
    }
    Dir dir;
    fs::path npy = dir.path / "att.npy", tokens = dir.path / "tokens.json";
};

}  // namespace

TEST_F(AttentionsMode, TheHeadViewAndTheModelViewAloneShowTheWeightsOnly) {
    AppState state(core::worked_example());
    frames(state, 2);
    ASSERT_TRUE(window("Inputs: X and weights"));
    open(state);
    EXPECT_TRUE(window("Head view"));
    EXPECT_TRUE(window("Model view"));
    for (const char* session_panel : {"Dimensions", "Inputs: X and weights", "Pipeline", "Every intermediate",
                                      "Matrix viewer", "Attention per head", "Gradients"})
        EXPECT_FALSE(window(session_panel)) << session_panel << " has no session to show";
    EXPECT_NE(item("head view: weights only"), nullptr);
    EXPECT_NE(item("model: weights only"), nullptr);
    EXPECT_EQ(value("head view layers"), 3);
    EXPECT_EQ(value("head view layer"), 0);
    EXPECT_EQ(value("head view heads"), 2);
    EXPECT_EQ(value("head view queries"), 4);
    EXPECT_NE(item("head view: query [CLS]"), nullptr);
    EXPECT_NE(item("head view: key cat"), nullptr);
    EXPECT_NE(item("head view: layer"), nullptr) << "three layers: a selector";
    // The model view's numbers are the file's: layer 2, head 2's mean entropy.
    double entropy = 0;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) entropy -= weight(2, 1, i, j, 4) * std::log(weight(2, 1, i, j, 4)) / 4;
    EXPECT_NEAR(value("model row 2 head 1 entropy"), entropy, 1e-12);
    EXPECT_EQ(app::window_title(state, panels), "att.npy (attentions) — attnviz");
    // The session underneath is untouched.
    EXPECT_EQ(state.session(), AppState(core::worked_example()).session());
    EXPECT_FALSE(state.modified());
}

TEST_F(AttentionsMode, TheLayerTheMeanOfTheHeadsAndHiddenSpecialTokensAreCoresRenormalisedWeights) {
    AppState state(core::worked_example());
    open(state);
    app::HeadViewPanel& view = panels.head_view;
    view.layer = 2;
    view.hide_special = true;
    view.heads_mean = true;
    view.queries = {0};  // of the tokens shown: "the", row 1 of the file
    frames(state, 3);
    EXPECT_EQ(value("head view layer"), 2);
    EXPECT_EQ(value("head view special hidden"), 1);
    EXPECT_EQ(value("head view mean"), 1);
    EXPECT_EQ(value("head view queries"), 2);
    EXPECT_EQ(value("head view keys"), 2);
    EXPECT_EQ(item("head view: query [CLS]"), nullptr);
    // "the" over "the" and "cat": each head's row renormalised over them, then the heads' mean: the
    // lines drawn and the selection's attention.
    const std::vector<double> expected = mean_renormalised(2, 2, 1, {1, 2}, 4);
    for (int k = 0; k < 2; ++k) {
        EXPECT_NEAR(value("head view line mean 0 " + std::to_string(k)), expected[static_cast<std::size_t>(k)], 1e-12);
        EXPECT_NEAR(value("head view of queries " + std::to_string(k)), expected[static_cast<std::size_t>(k)], 1e-12);
    }
    EXPECT_NEAR(expected[0] + expected[1], 1, 1e-12);
    EXPECT_FALSE(has_value("head view line 1 0 0")) << "no head's own lines while the mean is drawn";
    // The checkbox brings the special tokens back (and clears the selection, whose tokens were others).
    click(state, "head view: hide special tokens", 2);
    EXPECT_FALSE(view.hide_special);
    EXPECT_TRUE(view.queries.empty());
    EXPECT_EQ(value("head view queries"), 4);
    // The mean's chip: each head's lines again.
    click(state, "head view: mean of heads", 2);
    EXPECT_FALSE(view.heads_mean);
    EXPECT_NEAR(value("head view line 2 1 1"), weight(2, 1, 1, 1, 4), 1e-12);
}

TEST_F(AttentionsMode, ARefusedFileKeepsWhatWasOpenAndNamesTheBadRow) {
    AppState state(core::worked_example());
    frames(state, 2);
    const fs::path bad = dir.path / "bad.npy";
    write_npy(bad, 3, 2, 4, 4, {1, 1, 2});
    EXPECT_FALSE(app::open_attentions(state, panels.attentions, bad.string(), tokens.string()));
    EXPECT_FALSE(panels.attentions.on());
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("layer 1, head 2, row 2"), std::string::npos) << state.message().text;
    EXPECT_NE(state.message().text.find("your session is unchanged"), std::string::npos) << state.message().text;
    frames(state, 2);
    EXPECT_TRUE(window("Inputs: X and weights"));
    // With attentions open, a refused file leaves them open.
    open(state);
    EXPECT_FALSE(app::open_attentions(state, panels.attentions, bad.string(), tokens.string()));
    EXPECT_TRUE(panels.attentions.on());
    EXPECT_EQ(fs::path(panels.attentions.path).filename(), "att.npy");
    EXPECT_NE(state.message().text.find("the attentions of att.npy stay open"), std::string::npos);
    // Tokens that do not fit the weights: refused too.
    const fs::path three = dir.path / "three.json";
    std::ofstream(three) << R"(["a", "b", "c"])";
    EXPECT_FALSE(app::open_attentions(state, panels.attentions, npy.string(), three.string()));
    EXPECT_NE(state.message().text.find("3 query and 3 key tokens"), std::string::npos) << state.message().text;
}

TEST_F(AttentionsMode, FileOpenAttentionsOpensThemThroughItsDialog) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::OpenAttentions{});
    frames(state, 3);
    ASSERT_NE(item("attentions: open"), nullptr);
    EXPECT_TRUE(app::dialog_open(panels));
    // A file that is not there: the reason in the dialog, which stays open.
    ImGui::ClearActiveID();  // the path field has the keyboard (and its own copy of the path) at first
    panels.attentions.dialog_path = (dir.path / "missing.npz").string();
    frames(state, 2);
    click(state, "attentions: open", 2);
    EXPECT_NE(item("attentions: error"), nullptr) << state.message().text;
    EXPECT_FALSE(panels.attentions.on());
    panels.attentions.dialog_path = npy.string();
    panels.attentions.dialog_tokens = tokens.string();
    click(state, "attentions: open", 3);
    EXPECT_TRUE(panels.attentions.on());
    EXPECT_EQ(item("attentions: open"), nullptr) << "the dialog closed";
    EXPECT_TRUE(window("Head view"));
    EXPECT_FALSE(window("Inputs: X and weights"));
}

TEST_F(AttentionsMode, CloseAttentionsOrAnotherSessionEndsTheModeAndTheSessionsShortcutsWait) {
    AppState state(core::worked_example());
    open(state);
    // Ctrl+S would ask where to save the session, Ctrl+Z undo it: neither while weights are shown.
    press(state, key_s, true);
    EXPECT_EQ(item("files: Save"), nullptr);
    EXPECT_FALSE(app::dialog_open(panels));
    imgui_.ui.request(app::command::CloseAttentions{});
    frames(state, 3);
    EXPECT_FALSE(panels.attentions.on());
    EXPECT_TRUE(window("Inputs: X and weights"));
    EXPECT_EQ(app::window_title(state, panels), "unsaved session — attnviz");
    // Opening a session ends them too.
    open(state);
    const fs::path session = dir.path / "s.json";
    ASSERT_TRUE(core::write_file_atomic(session.string(),
                                        core::write_session(core::random_session(core::worked_example().config, 3)))
                    .empty());
    ASSERT_TRUE(state.open_file(session.string()));
    frames(state, 2);
    EXPECT_FALSE(panels.attentions.on());
    EXPECT_TRUE(window("Inputs: X and weights"));
    // Undo waits while they are open, and works again after.
    open(state);
    press(state, key_z, true);
    EXPECT_EQ(fs::path(state.file_path()).filename(), "s.json") << "the open was not undone";
    EXPECT_TRUE(panels.attentions.on());
}

TEST_F(AttentionsMode, AClickOnAHeadInTheModelViewShowsItAloneInTheHeadView) {
    AppState state(core::worked_example());
    open(state);
    click(state, "model 1:2", 3);
    EXPECT_EQ(panels.head_view.layer, 1);
    EXPECT_FALSE(app::head_shown(panels.head_view, 0));
    EXPECT_TRUE(app::head_shown(panels.head_view, 1));
    EXPECT_EQ(value("head view layer"), 1);
    EXPECT_TRUE(has_value("head view line 2 0 0"));
    EXPECT_FALSE(has_value("head view line 1 0 0"));
}

TEST_F(AttentionsMode, ExportsTheViewsAsTheAppShowsThem) {
    AppState state(core::worked_example());
    open(state);
    panels.head_view.layer = 2;
    panels.head_view.hide_special = true;
    frames(state, 2);
    const app::AttentionExportMaker maker = [&](app::ExportTarget::Kind kind) {
        return app::attention_export(state, panels, kind);
    };
    const auto read = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    app::ExportDialog d;
    app::open_export_dialog(d, {app::ExportTarget::Kind::head_view, {}});
    EXPECT_EQ(d.format, core::ExportFormat::svg);
    EXPECT_EQ(app::suggested_name(state, d), "head-view.svg");
    ASSERT_TRUE(app::export_to(state, imgui_.ui, d, (dir.path / "head.svg").string(), maker)) << state.message().text;
    const std::string svg = read(dir.path / "head.svg");
    EXPECT_NE(svg.find("Head view, layer 2"), std::string::npos);
    EXPECT_NE(svg.find("Special tokens hidden"), std::string::npos);
    EXPECT_EQ(svg.find("[CLS]"), std::string::npos);
    app::open_export_dialog(d, {app::ExportTarget::Kind::model_view, {}});
    d.format = core::ExportFormat::png;
    ASSERT_TRUE(app::export_to(state, imgui_.ui, d, (dir.path / "model.png").string(), maker));
    EXPECT_EQ(read(dir.path / "model.png").substr(1, 3), "PNG");
    app::open_export_dialog(d, {app::ExportTarget::Kind::page, {}});
    EXPECT_EQ(d.format, core::ExportFormat::html);
    ASSERT_TRUE(app::export_to(state, imgui_.ui, d, (dir.path / "page.html").string(), maker));
    const std::string html = read(dir.path / "page.html");
    EXPECT_NE(html.find("\"layers\":3"), std::string::npos);
    EXPECT_NE(html.find("\"queries\":[\"[CLS]\",\"the\",\"cat\",\"[SEP]\"]"), std::string::npos);
    // The session's page once the attentions are closed: its one layer.
    app::close_attentions(panels.attentions);
    ASSERT_TRUE(app::export_to(state, imgui_.ui, d, (dir.path / "session.html").string(), maker));
    EXPECT_NE(read(dir.path / "session.html").find("\"layers\":1"), std::string::npos);
    // The export dialog offers the attention views only (and the window) while they are open.
    open(state);
    imgui_.ui.request_export({app::ExportTarget::Kind::matrix, {core::MatrixId::X, 0}});
    frames(state, 3);
    EXPECT_EQ(panels.export_dialog.target.kind, app::ExportTarget::Kind::head_view);
}

// Model mode: the layer selector shows another block's weights (its run's), the block being edited
// the session's.
TEST(HeadViewInModelMode, TheLayerSelectorShowsTheRunsBlocks) {
    test::HeadlessImGui imgui({1280, 800});
    app::DrawReport report;
    imgui.ui.report = &report;
    AppState state(core::worked_example());
    app::Layers layers;
    app::ModelRun run;
    run.open(std::string(ATTNVIZ_REFERENCE_DIR) + "/models/gpt2", "Hello world", core::default_memory_budget, 0);
    for (int k = 0; k < 3; ++k) {
        run.wait();
        run.update(state, layers, 100);
    }
    ASSERT_NE(run.results(), nullptr);
    ASSERT_EQ(run.editing_layer(), 0);
    state.wait_for_trace();
    app::HeadViewPanel view;
    const auto draw = [&] {
        for (int k = 0; k < 2; ++k) {
            report.clear();
            ImGui::NewFrame();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize({900, 700});
            ImGui::Begin("head view");
            app::draw_head_view_panel(state, imgui.ui, view, nullptr, &run);
            ImGui::End();
            ImGui::Render();
        }
    };
    const auto value = [&](const std::string& name) -> double {
        for (const auto& v : report.values)
            if (v.name == name) return v.value;
        return NAN;
    };
    draw();
    const int blocks = static_cast<int>(run.results()->run->layers.size());
    EXPECT_EQ(value("head view layers"), blocks);
    EXPECT_EQ(value("head view layer"), 0);  // the block being edited: the session
    view.layer = 1;
    draw();
    EXPECT_EQ(value("head view layer"), 1);
    ASSERT_EQ(view.block_weights.size(), run.results()->run->layers[1].trace.heads.size());
    const core::Matrix run_weights = run.results()->run->layers[1].trace.heads[0].weights.cast<double>();
    EXPECT_EQ(view.block_weights[0], run_weights);
    EXPECT_NE(view.block_weights[0], state.trace().heads[0].weights) << "another block than the session's";
}
