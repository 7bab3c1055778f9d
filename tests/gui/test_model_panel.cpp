// The model view driven headless: layers added beside the session, the grid of layers × heads the
// panel draws (read back from the draw report), sorting, clicking a head, and the layers' loading.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include "../model/hub_cache_tree.hpp"
#include "../test_support.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/io/import.hpp"
#include "core/io/session_file.hpp"
#include "core/model/hub_cache.hpp"
#include "core/model/tokenizer.hpp"
#include "headless.hpp"
#include "panels/model/model_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/model_layers.hpp"

using namespace attnviz;
using app::AppState;
using core::MatrixId;

namespace {

core::Config config(int n, int d_model, int heads, core::Mask mask = core::Mask::none) {
    core::Config c;
    c.n = n;
    c.d_model = d_model;
    c.heads = heads;
    c.d_k = c.d_v = d_model / heads;
    c.mask = mask;
    return c;
}

// Where the panel drew each head: "model R:H" items (row R, head H from 1), by row, in drawing order.
struct Grid {
    std::map<int, std::vector<std::pair<int, ImVec2>>> rows;  // row → (head, top left), left to right
    int count = 0;
};

class ModelPanel : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(app::show_panel(panels_, "Model view"));
        // The panel fills the work area, so that every row is drawn (none clipped away).
        panels_.shares = app::default_shares(ImGui::GetIO().DisplaySize);
        panels_.shares_set = true;  // (else the first frame sets the default layout, unmaximized)
        for (size_t k = 0; k < app::explorer_panels().size(); ++k)
            if (std::string(app::explorer_panels()[k].title) == "Model view") panels_.maximized = static_cast<int>(k);
        imgui_.ui.report = &report_;
    }

    void frames(AppState& state, int count = 2) { imgui_.frames(state, panels_, count); }
    // Frames until the layers' worker is done and its results are drawn.
    void settle(AppState& state) {
        for (int k = 0; k < 4; ++k) {
            panels_.model.layers.wait();
            frames(state, 1);
        }
        EXPECT_FALSE(panels_.model.layers.busy());
    }

    Grid grid() const {
        Grid g;
        for (const app::DrawReport::Item& item : report_.items) {
            int r = 0, h = 0;
            if (std::sscanf(item.name.c_str(), "model %d:%d", &r, &h) != 2) continue;
            g.rows[r].push_back({h, item.min});
            ++g.count;
        }
        for (auto& [r, heads] : g.rows)
            std::sort(heads.begin(), heads.end(), [](const auto& a, const auto& b) { return a.second.x < b.second.x; });
        return g;
    }

    // A click at the middle of the item named `name`.
    void click(AppState& state, const std::string& name) {
        const app::DrawReport::Item* at = nullptr;
        for (const app::DrawReport::Item& item : report_.items)
            if (item.name == name) at = &item;
        ASSERT_NE(at, nullptr) << name << " was not drawn";
        imgui_.click(state, panels_, *at);
    }

    test::HeadlessImGui imgui_;
    app::Panels panels_;
    app::DrawReport report_;
};

}  // namespace

TEST_F(ModelPanel, ThreeLayersBesideMakeAGridOfLayersByHeads) {
    AppState state(core::random_session(config(6, 8, 4), 1));
    app::Layers& layers = panels_.model.layers;
    for (int k = 0; k < 3; ++k)
        layers.add("layer " + std::to_string(k), core::random_session(config(6, 8, 4, core::Mask::causal), 10 + k));
    settle(state);
    ASSERT_EQ(layers.size(), 4);  // this session and the three
    const Grid g = grid();
    EXPECT_EQ(g.count, 4 * 4);
    ASSERT_EQ(g.rows.size(), 4u);
    for (const auto& [r, heads] : g.rows) {
        SCOPED_TRACE(r);
        ASSERT_EQ(heads.size(), 4u);
        for (size_t c = 0; c < 4; ++c) EXPECT_EQ(heads[c].first, static_cast<int>(c) + 1);  // unsorted: 1 2 3 4
        if (r > 0) {
            EXPECT_GT(heads[0].second.y, g.rows.at(r - 1)[0].second.y);  // layers down
        }
    }
    // Each row's numbers are its layer's: head 3 of layer 1 by a direct computation.
    const app::Layers::Row& row = layers.row(2);
    ASSERT_TRUE(row.summary);
    const core::Trace t = core::forward<double>(row.session->config, row.session->params);
    const core::HeadSummary direct = core::summarize_head(t.heads[2].weights);
    EXPECT_EQ(row.summary->heads[2].mean_entropy, direct.mean_entropy);
    EXPECT_EQ(row.summary->heads[2].first_share, direct.first_share);
    EXPECT_EQ(row.summary->thumbnails[2].cells, t.heads[2].weights);  // 6 × 6 is its own thumbnail
    EXPECT_EQ(row.name, "layer 1");
}

TEST_F(ModelPanel, SortingOrdersEachLayersHeadsByItsOwnNumbers) {
    AppState state(core::random_session(config(8, 12, 6), 2));
    app::Layers& layers = panels_.model.layers;
    for (int k = 0; k < 3; ++k)
        layers.add("layer " + std::to_string(k), core::random_session(config(8, 12, 6), 20 + k));
    settle(state);
    for (bool ascending : {false, true}) {
        SCOPED_TRACE(ascending);
        panels_.model.sort = core::HeadKey::entropy;
        panels_.model.ascending = ascending;
        frames(state);
        const Grid g = grid();
        for (int r = 1; r < 4; ++r) {
            SCOPED_TRACE(r);
            // The heads' entropies from the layer's own trace, by a direct loop.
            const core::Session& s = *layers.row(r).session;
            const core::Trace t = core::forward<double>(s.config, s.params);
            std::vector<double> entropy;
            for (const core::HeadTrace& h : t.heads) {
                double sum = 0;
                for (int i = 0; i < h.weights.rows(); ++i)
                    for (int j = 0; j < h.weights.cols(); ++j)
                        if (h.weights(i, j) > 0) sum -= h.weights(i, j) * std::log(h.weights(i, j));
                entropy.push_back(sum / h.weights.rows());
            }
            const std::vector<std::pair<int, ImVec2>>& drawn = g.rows.at(r);
            ASSERT_EQ(drawn.size(), 6u);
            for (size_t c = 1; c < drawn.size(); ++c) {
                const double before = entropy[static_cast<size_t>(drawn[c - 1].first - 1)];
                const double after = entropy[static_cast<size_t>(drawn[c].first - 1)];
                if (ascending)
                    EXPECT_LE(before, after + 1e-12);
                else
                    EXPECT_GE(before + 1e-12, after);
            }
        }
    }
    // The first 3 heads of the whole model outlined (drawn; which ones is core's top_heads, tested there).
    panels_.model.highlight = 3;
    frames(state);
}

TEST_F(ModelPanel, ClickingAHeadEditsItsLayerAndViewsTheHead) {
    const core::Session mine = core::random_session(config(6, 8, 4), 3);
    AppState state(mine);
    state.set_memory_budget(core::default_memory_budget);
    app::Layers& layers = panels_.model.layers;
    layers.add("layer 0", core::random_session(config(6, 8, 4), 30));
    layers.add("layer 1", core::random_session(config(5, 12, 3, core::Mask::causal), 31));
    settle(state);
    click(state, "model 2:3");
    settle(state);
    const core::Session& layer = *layers.row(2).session;
    EXPECT_EQ(state.session(), layer);
    EXPECT_EQ(state.session().params.heads[0].W_Q, layer.params.heads[0].W_Q);
    EXPECT_EQ(state.viewed().id, MatrixId::weights);
    EXPECT_EQ(state.viewed().head, 2);
    EXPECT_TRUE(layers.editing(state, 2));
    EXPECT_FALSE(layers.editing(state, 1));
    EXPECT_TRUE(state.file_path().empty());  // a layer not read from a file comes in unsaved
    EXPECT_TRUE(state.modified());
    // Row 0 now shows this layer: its numbers follow the shown trace.
    const core::Trace t = core::forward<double>(layer.config, layer.params);
    ASSERT_TRUE(layers.row(0).summary);
    ASSERT_EQ(layers.row(0).summary->heads.size(), 3u);
    EXPECT_EQ(layers.row(0).summary->heads[1].mean_entropy, core::summarize_head(t.heads[1].weights).mean_entropy);
    // An edit: the layer is no longer the one being edited as it was; undo brings my session back.
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 0.5);
    EXPECT_FALSE(layers.editing(state, 2));
    ASSERT_TRUE(state.undo());
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), mine);
    // Clicking a head of this session only views it.
    settle(state);
    click(state, "model 0:2");
    EXPECT_EQ(state.session(), mine);
    EXPECT_EQ(state.viewed().head, 1);
}

TEST_F(ModelPanel, OnlyThisSessionStillShowsItsRow) {
    AppState state(core::random_session(config(6, 8, 2), 4));
    settle(state);
    const Grid g = grid();
    ASSERT_EQ(g.rows.size(), 1u);
    EXPECT_EQ(g.rows.at(0).size(), 2u);
    EXPECT_EQ(panels_.model.layers.row(0).name, "this session");
}

TEST_F(ModelPanel, AFileOpenedBesideByARelativePathIsTheSessionsOwnFile) {
    // The session's file is kept absolute; a layer opened beside by a relative path to the same file
    // is that file too, so the grid shows it once (the layer's row, not also "this session").
    test::TempDir dir("attnviz_model_relative");
    ASSERT_TRUE(dir.created());
    const std::string file = (dir.path() / "layer.json").string();
    std::ofstream(file) << core::write_session(core::random_session(config(4, 6, 3), 6));
    const std::filesystem::path before = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    AppState state(core::worked_example());
    ASSERT_TRUE(state.open_file(file));
    panels_.model.layers.open_files({"layer.json"});
    settle(state);
    std::filesystem::current_path(before);
    const Grid g = grid();
    EXPECT_EQ(g.rows.size(), 1u) << "the file beside is the file being edited: one row, not two";
    EXPECT_TRUE(panels_.model.layers.editing(state, 1));
}

TEST_F(ModelPanel, FilesThatFailAreReportedAndTheRestOpen) {
    test::TempDir dir("attnviz_model");
    ASSERT_TRUE(dir.created());
    const core::Session other = core::random_session(config(4, 6, 3), 5);
    const std::string good = (dir.path() / "good.json").string(), bad = (dir.path() / "bad.json").string();
    std::ofstream(good) << core::write_session(other);
    std::ofstream(bad) << "{\"format\": \"attnviz-session\"";
    AppState state(core::worked_example());
    panels_.model.layers.open_files({bad, good, (dir.path() / "absent.json").string()});
    settle(state);
    app::Layers& layers = panels_.model.layers;
    ASSERT_EQ(layers.size(), 2);
    EXPECT_EQ(layers.row(1).name, "good.json");
    EXPECT_EQ(*layers.row(1).session, other);
    int errors = 0;
    for (const app::Message& m : state.message_log())
        if (m.error) {
            ++errors;
            EXPECT_TRUE(test::contains(m.text, "bad.json") || test::contains(m.text, "absent.json")) << m.text;
        }
    EXPECT_EQ(errors, 2);
    EXPECT_EQ(state.session(), core::worked_example());  // nothing of the session changed
    // A layer read from a file opens that file: Save writes there.
    click(state, "model 1:1");
    EXPECT_EQ(state.file_path(), good);
    EXPECT_FALSE(state.modified());
    EXPECT_TRUE(layers.editing(state, 1));
    // The session is that layer unchanged: its row is drawn once, as the layer's.
    settle(state);
    Grid g = grid();
    EXPECT_EQ(g.rows.count(0), 0u);
    EXPECT_EQ(g.rows.count(1), 1u);
    // Once edited, it differs from the file: this session's row is back.
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 0.25);
    settle(state);
    g = grid();
    EXPECT_EQ(g.rows.count(0), 1u);
    EXPECT_EQ(g.rows.count(1), 1u);
    // Closing every layer beside leaves this session's row.
    layers.clear();
    EXPECT_EQ(layers.size(), 1);
}

TEST_F(ModelPanel, ACheckpointsLayersOpenBesideAsTheirImportsWould) {
    test::TempDir dir("attnviz_model");
    ASSERT_TRUE(dir.created());
    const std::string path = (dir.path() / "three.safetensors").string();
    std::ofstream(path, std::ios::binary)
        << test::stacked_gpt2(ATTNVIZ_REFERENCE_DIR "/checkpoints/gpt2.safetensors", 3);
    AppState state(core::worked_example());
    core::ImportOptions o;
    o.heads = 2;
    panels_.model.layers.import_checkpoint(path, o, "0,2");
    settle(state);
    app::Layers& layers = panels_.model.layers;
    ASSERT_EQ(layers.size(), 3);
    const core::Result<core::TensorFile> f = core::TensorFile::open(path);
    ASSERT_TRUE(f);
    for (int k = 1; k <= 2; ++k) {
        const int l = k == 1 ? 0 : 2;
        SCOPED_TRACE(l);
        EXPECT_EQ(layers.row(k).name, "layer " + std::to_string(l));
        core::ImportOptions single = o;
        single.layer = l;
        const core::Result<core::ImportedLayer> alone = core::import_layer(*f.value, single);
        ASSERT_TRUE(alone);
        EXPECT_EQ(*layers.row(k).session, alone.value->session);
        ASSERT_TRUE(layers.row(k).summary);
        EXPECT_EQ(layers.row(k).summary->heads.size(), 2u);
    }
    // A bad selection is reported; nothing more opens.
    panels_.model.layers.import_checkpoint(path, o, "5");
    settle(state);
    EXPECT_EQ(layers.size(), 3);
    EXPECT_TRUE(state.message().error);
    EXPECT_TRUE(test::contains(state.message().text, "layer 5 is not in the checkpoint")) << state.message().text;
}

TEST_F(ModelPanel, ALargeSessionsRowIsComputedOnTheWorker) {
    // 12 heads of 160 × 160 weights: more than the UI thread summarizes at once.
    AppState state(core::random_session(config(160, 48, 12), 6));
    state.wait_for_trace();
    app::Layers layers;
    layers.sync(state);
    EXPECT_TRUE(layers.row(0).computing());
    EXPECT_TRUE(layers.busy());
    layers.wait();
    layers.poll(state);
    ASSERT_TRUE(layers.row(0).summary);
    ASSERT_EQ(layers.row(0).summary->thumbnails.size(), 12u);
    EXPECT_EQ(layers.row(0).summary->thumbnails[0].cells.rows(), core::thumbnail_side);
    EXPECT_EQ(layers.row(0).summary->thumbnails[5].cells, core::thumbnail(state.trace().heads[5].weights).cells);
    EXPECT_FALSE(layers.busy());
}

TEST_F(ModelPanel, TwelveLayersOfTwelveHeadsDrawBoundedWithoutTextures) {
    ImGui::GetIO().DisplaySize = {1600, 2400};  // every row in view
    AppState state(core::random_session(config(128, 48, 12), 7));
    for (int k = 0; k < 11; ++k)
        panels_.model.layers.add("layer " + std::to_string(k), core::random_session(config(128, 48, 12), 40 + k));
    settle(state);
    frames(state);
    EXPECT_EQ(grid().count, 12 * 12);
    // Without a texture uploader each thumbnail is at most 16 × 16 blocks.
    EXPECT_LT(ImGui::GetDrawData()->TotalVtxCount, 12 * 12 * 16 * 16 * 4 + 200000);
}

TEST_F(ModelPanel, TheMenusOpenTheirDialogsAndImportAllLayersHandsItsRequestOver) {
    test::TempDir dir("attnviz_model");
    ASSERT_TRUE(dir.created());
    const std::string path = (dir.path() / "three.safetensors").string();
    std::ofstream(path, std::ios::binary)
        << test::stacked_gpt2(ATTNVIZ_REFERENCE_DIR "/checkpoints/gpt2.safetensors", 3);
    AppState state(core::worked_example());
    panels_.model.beside_files.use_native = false;
    imgui_.ui.request(app::command::OpenBeside{});
    frames(state);
    EXPECT_TRUE(panels_.model.beside_files.is_open());
    // File > Import all layers…: the dialog's options and its layer selection reach the layers.
    imgui_.ui.request(app::command::ImportAllLayers{});
    frames(state);
    app::ImportDialog& d = panels_.model.import_all;
    d.path = path;
    d.heads = 2;
    d.layers = "1-2";
    d.requested = true;  // as its Import button does
    settle(state);
    app::Layers& layers = panels_.model.layers;
    ASSERT_EQ(layers.size(), 3);
    EXPECT_EQ(layers.row(1).name, "layer 1");
    EXPECT_EQ(layers.row(2).name, "layer 2");
    EXPECT_EQ(layers.row(2).heads, 2);
    EXPECT_EQ(state.session(), core::worked_example());  // beside it, not instead of it
}

// Every token of the test GPT-2's vocabulary, decoded and made visible as the model panels show it,
// is drawn with the app's font's own glyphs for its Latin-1 characters and U+FFFD: a control
// character is shown escaped (\x01), and a byte token that holds part of a character decodes to
// U+FFFD, which ImGui would otherwise draw as "?", a character the text never had. (Scripts the
// font lacks, as the vocabulary's few CJK tokens, still show its fallback.)
TEST_F(ModelPanel, EveryTokenOfTheVocabularyHasItsGlyphsInTheFont) {
    const core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(ATTNVIZ_REFERENCE_DIR "/models/gpt2");
    ASSERT_TRUE(tokenizer);
    const ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
    int replaced = 0;
    for (std::size_t id = 0; id < tokenizer.value->vocab_size(); ++id) {
        const std::string text = app::visible_token(tokenizer.value->decode({static_cast<std::int32_t>(id)}));
        for (const char* c = text.c_str(); *c;) {
            unsigned int codepoint = 0;
            c += ImTextCharFromUtf8(&codepoint, c, nullptr);
            replaced += codepoint == 0xFFFD;
            if (codepoint >= 0x100 && codepoint != 0xFFFD) continue;
            EXPECT_NE(font->FindGlyphNoFallback(static_cast<ImWchar>(codepoint)), nullptr)
                << "token " << id << " \"" << text << "\": no glyph for U+" << std::hex << codepoint;
        }
    }
    EXPECT_GT(replaced, 0);  // the vocabulary's byte tokens are among them
}

// The vocabulary pieces a chip's tooltip shows are drawn with the font's own glyphs: GPT-2's spell
// bytes with Latin extended letters (Ġ a space, Ċ a newline), Llama's a space with ▁. Before, they
// showed the fallback: "Ġthe" as "?the".
TEST_F(ModelPanel, EveryPieceOfTheVocabulariesHasItsGlyphsInTheFont) {
    const ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
    for (const char* model : {"gpt2", "llama"}) {
        const core::Result<model::Tokenizer> tokenizer =
            model::load_tokenizer(std::string(ATTNVIZ_REFERENCE_DIR "/models/") + model);
        ASSERT_TRUE(tokenizer) << model;
        int checked = 0;
        for (std::size_t id = 0; id < tokenizer.value->vocab_size(); ++id) {
            const std::string piece = tokenizer.value->token_text(static_cast<std::int32_t>(id));
            for (const char* c = piece.c_str(); *c;) {
                unsigned int codepoint = 0;
                c += ImTextCharFromUtf8(&codepoint, c, nullptr);
                if (codepoint < 0x20 || (codepoint >= 0x2E80 && codepoint != 0xFFFD)) continue;  // CJK, emoji
                if (codepoint >= 0x100) ++checked;
                EXPECT_NE(font->FindGlyphNoFallback(static_cast<ImWchar>(codepoint)), nullptr)
                    << model << " piece " << id << " \"" << piece << "\": no glyph for U+" << std::hex << codepoint;
            }
        }
        EXPECT_GT(checked, 10) << model << ": its pieces spell with letters beyond Latin-1";
    }
}

// A model opened with its own text (File > Open model…, --model DIR --text) shows that text in the
// sentence box from the frame the model opens in: the box took it after drawing, and a window that
// then slept showed the empty box's hint over the model's chips. Text being typed stays the user's.
TEST_F(ModelPanel, TheSentenceBoxHoldsTheModelsTextBeforeItIsDrawn) {
    AppState state(core::worked_example());
    app::ModelRun& run = panels_.model.run;
    run.open(std::string(ATTNVIZ_REFERENCE_DIR) + "/models/gpt2", "Hello world", core::default_memory_budget);
    run.wait();
    ImGui::NewFrame();
    app::update_model_panel(state, panels_.model);  // as draw_frame does, before any panel is drawn
    ImGui::Render();
    ASSERT_TRUE(run.is_open());
    EXPECT_EQ(panels_.model.sentence, "Hello world");
    frames(state);
    EXPECT_EQ(panels_.model.sentence, "Hello world");
    EXPECT_FALSE(panels_.model.typing);
    panels_.model.typing = true;  // the box being typed in: what it holds is not replaced
    panels_.model.sentence = "Hello wor";
    ImGui::NewFrame();
    app::update_model_panel(state, panels_.model);
    ImGui::Render();
    EXPECT_EQ(panels_.model.sentence, "Hello wor");
    ImGui::NewFrame();  // a frame that did not draw the box (its panel hidden): typed in no more
    app::update_model_panel(state, panels_.model);
    ImGui::Render();
    EXPECT_EQ(panels_.model.sentence, "Hello world");
}

// File > Open cached model: a model of the local hub cache (symlinked blobs, as the hub lays them out)
// is listed with its type and size, and its entry's command runs it in the model view.
TEST_F(ModelPanel, AModelOfTheHubCacheIsListedAndOpensInTheModelView) {
    test::TempDir dir("attnviz_hub");
    ASSERT_TRUE(dir.created());
    test::add_to_hub_cache(dir.path() / "hub", "models--google--gemma-2-tiny",
                           std::string(ATTNVIZ_REFERENCE_DIR) + "/models/gemma2",
                           "0123456789abcdef0123456789abcdef01234567");
    const std::vector<model::CachedModel> cached =
        model::list_cached_models({(dir.path() / "hub").string(), "", "", ""});
    ASSERT_EQ(cached.size(), 1u);
    EXPECT_EQ(cached[0].name, "google/gemma-2-tiny");
    EXPECT_EQ(cached[0].model_type, "gemma2");
    AppState state(core::worked_example());
    imgui_.ui.request(app::command::OpenModelFolder{cached[0].folder});
    frames(state);
    app::ModelRun& run = panels_.model.run;
    run.wait();
    frames(state);
    ASSERT_TRUE(run.is_open());
    EXPECT_EQ(run.folder()->config().architecture, model::Architecture::gemma2);
    EXPECT_EQ(run.folder()->folder(), cached[0].folder);
    // Each block's row names what its layer adds: Gemma 2's window on the even layers, the soft-cap on all.
    const app::Layers& layers = panels_.model.layers;
    // Row 0 is the session being edited (still the worked example: plain attention), then blocks 0 to 2.
    ASSERT_EQ(layers.size(), 4);
    EXPECT_EQ(layers.row(0).mechanisms, "");
    EXPECT_EQ(layers.row(1).mechanisms, "window 4, soft-cap 0.5");
    EXPECT_EQ(layers.row(2).mechanisms, "soft-cap 0.5");
    EXPECT_EQ(layers.row(3).mechanisms, "window 4, soft-cap 0.5");
    EXPECT_EQ(app::row_mechanisms(core::worked_example().config), "");
}
