// The model mode's run (state/model_run.hpp) on the tiny test models of tests/reference/models,
// without a window: opening a folder (and refusing one that is no model, or over the memory budget,
// keeping the session), the sentence box's text (empty, too long: a message, the previous run
// stays), and an edit of the block being edited running through the later blocks only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/attention/forward.hpp"
#include "core/attention/head_analysis.hpp"
#include "core/attention/layer_summary.hpp"
#include "core/attention/presets.hpp"
#include "headless.hpp"
#include "panels/model/next_token_panel.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/model_layers.hpp"
#include "state/model_run.hpp"

using namespace attnviz;
using app::AppState;

namespace {

const std::string models = std::string(ATTNVIZ_REFERENCE_DIR) + "/models";

nlohmann::json expected(const std::string& model) {
    std::ifstream in(models + "/" + model + "/expected.json");
    return nlohmann::json::parse(in);
}

class ModelRun : public ::testing::Test {
protected:
    // Lets the worker finish and takes what it brought (`now` past any debounce).
    void settle(double now = 100) {
        for (int k = 0; k < 3; ++k) {
            run.wait();
            run.update(state, layers, now);
        }
        EXPECT_FALSE(run.computing());
    }
    AppState state{core::worked_example()};
    app::Layers layers;
    app::ModelRun run;
};

TEST_F(ModelRun, OpensAModelFolderAndRunsTheSentence) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget);
    settle();
    ASSERT_TRUE(run.is_open());
    ASSERT_NE(run.results(), nullptr);
    const nlohmann::json e = expected("gpt2");
    EXPECT_EQ(run.results()->run->token_ids, e["token_ids"].get<std::vector<std::int32_t>>());
    EXPECT_EQ(run.text(), "Hello world");
    EXPECT_TRUE(layers.model());
    EXPECT_EQ(layers.size(), 1 + static_cast<int>(e["rollout"].size()));  // this session, then a row per block
    for (int r = 1; r < layers.size(); ++r) EXPECT_NE(layers.row(r).summary, nullptr);
    EXPECT_EQ(state.session(), AppState(core::worked_example()).session());  // no block edited: the session stays
}

TEST_F(ModelRun, TheBlocksSessionsAreLabelledAsTheSentencesChipsShowItsTokens) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget);
    settle();
    ASSERT_NE(run.results(), nullptr);
    const std::vector<std::string>& texts = run.results()->texts;
    // GPT-2's pieces of a word after a space begin with "Ġ", which the labels show as "·".
    const auto spaced = std::find_if(texts.begin(), texts.end(),
                                     [](const std::string& t) { return t.starts_with(" "); });
    ASSERT_NE(spaced, texts.end());
    const size_t at = static_cast<size_t>(spaced - texts.begin());
    for (int r = 1; r < layers.size(); ++r) {
        const core::Result<core::Session> session = layers.row(r).make_session();
        ASSERT_TRUE(session) << "block " << r - 1;
        ASSERT_EQ(session.value->tokens.size(), texts.size());
        for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(session.value->tokens[i], app::visible_token(texts[i]));
        EXPECT_EQ(session.value->tokens[at], "\u00b7" + texts[at].substr(1));
    }
}

// The model view's norm-weighted thumbnails of every block are what core::norm_weighted gives for
// the block's session (its V through its W_O, each query row divided by its sum), float to 1e-5, and
// are not the weights' (the values' norms differ from key to key).
TEST_F(ModelRun, EveryBlockHasTheThumbnailsOfItsNormWeightedAttention) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget);
    settle();
    ASSERT_GT(layers.size(), 1);
    for (int r = 1; r < layers.size(); ++r) {
        SCOPED_TRACE("block " + std::to_string(r - 1));
        const core::LayerSummary& summary = *layers.row(r).summary;
        const core::Result<core::Session> session = layers.row(r).make_session();
        ASSERT_TRUE(session);
        const core::Config& c = session.value->config;
        const core::Trace trace = core::forward<double>(c, session.value->params);
        ASSERT_EQ(summary.norm_thumbnails.size(), trace.heads.size());
        double unlike_weights = 0;
        for (int h = 0; h < c.heads; ++h) {
            const core::HeadThumbnail expected =
                core::thumbnail(core::norm_weighted_rows(core::norm_weighted(c, session.value->params, trace, h)));
            const core::Matrix& shown = summary.norm_thumbnails[static_cast<size_t>(h)].cells;
            ASSERT_EQ(shown.rows(), expected.cells.rows());
            ASSERT_EQ(shown.cols(), expected.cells.cols());
            EXPECT_LT((shown - expected.cells).cwiseAbs().maxCoeff(), 1e-5) << "head " << h + 1;
            unlike_weights = std::max(unlike_weights,
                                      (shown - summary.thumbnails[static_cast<size_t>(h)].cells).cwiseAbs().maxCoeff());
        }
        EXPECT_GT(unlike_weights, 1e-3);
    }
}

TEST_F(ModelRun, AFolderWithoutConfigIsRefusedAndTheSessionStays) {
    const std::filesystem::path empty = std::filesystem::temp_directory_path() / "attnviz-not-a-model";
    std::filesystem::create_directories(empty);
    run.open(empty.string(), "Hello world", core::default_memory_budget);
    settle();
    EXPECT_FALSE(run.is_open());
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("config.json"), std::string::npos) << state.message().text;
    EXPECT_EQ(layers.size(), 1);
    EXPECT_EQ(state.session(), AppState(core::worked_example()).session());
}

TEST_F(ModelRun, AModelOverTheMemoryBudgetIsRefused) {
    run.open(models + "/gpt2", "Hello world", 1000);
    settle();
    EXPECT_FALSE(run.is_open());
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("memory budget"), std::string::npos) << state.message().text;
}

TEST_F(ModelRun, ATextThatCannotRunKeepsThePreviousRun) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget);
    settle();
    ASSERT_TRUE(run.results());
    const std::uint64_t serial = run.results()->serial;
    run.set_text("", 1);
    run.update(state, layers, 1);  // typed: not run before the debounce
    EXPECT_EQ(run.results()->serial, serial);
    settle(1 + app::ModelRun::debounce_seconds);
    EXPECT_NE(run.text_problem().find("No tokens"), std::string::npos) << run.text_problem();
    EXPECT_EQ(run.results()->serial, serial);
    std::string long_text;
    for (int k = 0; k < 2000; ++k) long_text += "word ";
    run.set_text(long_text, 2);
    settle(3);
    EXPECT_NE(run.text_problem().find("position table"), std::string::npos) << run.text_problem();
    EXPECT_EQ(run.results()->serial, serial);
    EXPECT_EQ(run.results()->run->token_ids.size(), expected("gpt2")["token_ids"].size());
    run.set_text("Hello", 4);  // a text that runs: the problem goes, a new run is shown
    settle(5);
    EXPECT_TRUE(run.text_problem().empty());
    EXPECT_NE(run.results()->serial, serial);
    EXPECT_EQ(run.results()->edited_layer, -1);
}

// The logit lens comes in a job of its own after the run's other numbers: they are shown first
// (lens_to_come), then the same results with their lens, the lens of that run.
TEST_F(ModelRun, TheLogitLensFollowsTheRun) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget);
    run.wait();
    run.update(state, layers, 100);
    ASSERT_NE(run.results(), nullptr);
    EXPECT_TRUE(run.results()->lens_to_come);
    EXPECT_FALSE(run.results()->lens);
    EXPECT_TRUE(run.busy()) << "the window draws frames until the lens is shown";
    const std::uint64_t serial = run.results()->serial;
    const std::shared_ptr<const model::RunState<float>> shown = run.results()->run;
    run.wait();
    run.update(state, layers, 100);
    ASSERT_TRUE(run.results()->lens);
    EXPECT_FALSE(run.results()->lens_to_come);
    EXPECT_FALSE(run.busy()) << "and sleeps once it is";
    EXPECT_EQ(run.results()->serial, serial);
    EXPECT_EQ(run.results()->run, shown);
    const core::Result<model::LogitLens> want = model::logit_lens(*run.folder(), *shown);
    ASSERT_TRUE(want);
    EXPECT_TRUE(run.results()->lens->ids == want.value->ids);
    EXPECT_TRUE(run.results()->lens->p == want.value->p);
}

// An edit of block 1's W_Q reruns blocks 1 and later: block 0's weights are those of the run before,
// block 1's and the prediction changed; the run before is kept for Δp.
TEST_F(ModelRun, AnEditRunsFromItsBlockOn) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget, 1);
    settle();
    ASSERT_EQ(run.editing_layer(), 1);
    ASSERT_TRUE(layers.editing(state, 2));
    const std::shared_ptr<const model::RunState<float>> before = run.results()->run;
    const core::Result<core::Session> block1 = model::layer_session(*run.folder(), *before, 1);
    ASSERT_TRUE(block1);
    EXPECT_EQ(state.session(), *block1.value);
    const core::Result<core::CellRef> cell = core::parse_cell_ref("W_Q:1:0:0");
    ASSERT_TRUE(cell);
    ASSERT_TRUE(state.set_cell(*cell.value, 3.0));
    settle();
    const app::ModelResults after = *run.results();  // a copy: the results shown change below
    EXPECT_EQ(after.edited_layer, 1);
    ASSERT_NE(run.before_edit(), nullptr);
    EXPECT_EQ(run.before_edit()->run, before);
    EXPECT_TRUE(after.run->layers[0].trace.heads[0].weights == before->layers[0].trace.heads[0].weights);
    EXPECT_FALSE(after.run->layers[1].trace.heads[0].weights == before->layers[1].trace.heads[0].weights);
    EXPECT_FALSE(after.logits == before->logits_last.cast<double>());
    EXPECT_EQ(after.summaries[0], run.before_edit()->summaries[0]);  // reused, not recomputed
    EXPECT_TRUE(layers.editing(state, 2));
    // An edit of W_O moves the block's norm-weighted thumbnails as its session's norm_weighted says.
    const core::Result<core::CellRef> w_o = core::parse_cell_ref("W_O:0:0");
    ASSERT_TRUE(w_o);
    ASSERT_TRUE(state.set_cell(*w_o.value, 25.0));
    settle();
    const core::Session& edited = state.session();
    const core::Trace trace = core::forward<double>(edited.config, edited.params);
    const core::Matrix expected =
        core::thumbnail(core::norm_weighted_rows(core::norm_weighted(edited.config, edited.params, trace, 0))).cells;
    const core::Matrix& shown = run.results()->summaries[1]->norm_thumbnails.at(0).cells;
    ASSERT_EQ(shown.rows(), expected.rows());
    EXPECT_LT((shown - expected).cwiseAbs().maxCoeff(), 1e-5);
    EXPECT_GT((shown - after.summaries[1]->norm_thumbnails.at(0).cells).cwiseAbs().maxCoeff(), 1e-4);
    // Another session (other dimensions) in the editor: its edits no longer run through the model.
    ASSERT_TRUE(state.restore_unsaved(core::worked_example(), "", "back"));
    run.update(state, layers, 200);
    EXPECT_EQ(run.editing_layer(), -1);
    EXPECT_FALSE(layers.editing(state, 2));
    EXPECT_FALSE(run.computing());
}

// An edit runs through the model at the next frame without one: a single edit at the next frame, a
// drag's (one a frame) when it pauses, of its last edit; a drag that goes on past
// max_unshown_seconds shows a run on the way.
TEST_F(ModelRun, ADragsEditsRunThroughTheModelWhenTheyPause) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget, 0);
    settle();
    ASSERT_EQ(run.editing_layer(), 0);
    const std::uint64_t opened = run.results()->serial;
    const core::Result<core::CellRef> cell = core::parse_cell_ref("W_Q:1:0:0");
    ASSERT_TRUE(cell);
    const auto shown_value = [&] {  // the cell's value in the session the model's results ran
        const core::Matrix* m = core::find_input(run.results()->run->layers[0].edited->params, cell.value->matrix);
        return m ? (*m)(cell.value->row, cell.value->col) : NAN;
    };
    double now = 100;
    const auto edit_frame = [&](double value) {  // a frame with an edit; the worker is let finish first
        run.wait();
        ASSERT_TRUE(state.set_cell(*cell.value, value));
        run.update(state, layers, now);
        now += 0.02;
    };
    // One edit: it runs at the next frame, which has none.
    edit_frame(1.0);
    run.wait();
    EXPECT_EQ(run.results()->serial, opened);
    EXPECT_TRUE(run.computing());  // it waits for that frame
    run.update(state, layers, now);
    settle(now);
    ASSERT_EQ(run.results()->serial, opened + 1);
    EXPECT_EQ(shown_value(), 1.0);
    // A drag: no edit runs while it goes on, the last one once it pauses.
    for (const double value : {2.0, 3.0, 4.0, 5.0}) edit_frame(value);
    run.wait();
    EXPECT_EQ(run.results()->serial, opened + 1);
    EXPECT_TRUE(run.computing());    // the edits wait
    run.update(state, layers, now);  // a frame without an edit: the last one runs
    settle(now);
    EXPECT_EQ(run.results()->serial, opened + 2);
    EXPECT_EQ(shown_value(), 5.0);
    // A long drag: runs on the way, each of one of its edits, at most max_unshown_seconds apart.
    std::vector<double> shown;
    for (int k = 1; k <= 60; ++k) {
        edit_frame(5.0 + k);
        if (run.results()->serial != opened + 2 + shown.size()) shown.push_back(shown_value());
    }
    const double drag_seconds = 60 * 0.02;
    EXPECT_GE(shown.size(), static_cast<size_t>(drag_seconds / (app::ModelRun::max_unshown_seconds + 0.04)));
    EXPECT_LE(shown.size(), static_cast<size_t>(drag_seconds / app::ModelRun::max_unshown_seconds) + 1);
    for (const double v : shown) EXPECT_TRUE(v > 5.0 && v < 65.0) << v;
    run.update(state, layers, now);
    settle(now);
    EXPECT_EQ(shown_value(), 65.0);
    EXPECT_EQ(*run.results()->run->layers[0].edited, state.session());
    // An undo (not an edit of a named matrix): the session run is still the editor's exactly.
    ASSERT_TRUE(state.undo());
    run.update(state, layers, now);
    run.update(state, layers, now + 0.02);
    settle(now);
    EXPECT_EQ(*run.results()->run->layers[0].edited, state.session());
    EXPECT_NE(shown_value(), 65.0);
}

// A new sentence while a block is open for editing but not edited says nothing of edits.
TEST_F(ModelRun, ANewSentenceWithoutEditsSaysNothingOfThem) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget, 0);
    settle();
    ASSERT_EQ(run.editing_layer(), 0);
    run.set_text("Hello there", 1);
    settle(3);
    EXPECT_EQ(run.text(), "Hello there");
    EXPECT_EQ(state.message().text.find("keeps its edits"), std::string::npos) << state.message().text;
}

// An edit made while a new sentence runs belongs to the old sentence: it is dropped, not run on
// the new one's blocks, and the window says so.
TEST_F(ModelRun, AnEditOfTheOldSentenceIsNotRunOnTheNewOne) {
    run.open(models + "/gpt2", "Hello world", core::default_memory_budget, 0);
    settle();
    ASSERT_EQ(run.editing_layer(), 0);
    run.set_text("Hello", 1);
    run.update(state, layers, 2);  // the new sentence is running (or done, not taken yet)
    const core::Result<core::CellRef> cell = core::parse_cell_ref("W_Q:1:0:0");
    ASSERT_TRUE(cell);
    ASSERT_TRUE(state.set_cell(*cell.value, 3.0));
    run.update(state, layers, 2);  // the edit is seen while the sentence runs: it waits for it
    settle(3);
    EXPECT_EQ(run.results()->edited_layer, -1);
    EXPECT_EQ(run.editing_layer(), -1);
    const core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(models + "/gpt2");
    ASSERT_TRUE(tokenizer);
    EXPECT_EQ(run.results()->run->token_ids, tokenizer.value->encode("Hello").value->ids);
    EXPECT_FALSE(state.message().error) << state.message().text;
    // Said, not silent: the session keeps its edit, which the model no longer runs.
    EXPECT_NE(state.message().text.find("layer 0 on the previous sentence) keeps its edits"), std::string::npos)
        << state.message().text;
    EXPECT_EQ(state.session().params.heads[0].W_Q(0, 0), 3.0);
}

TEST_F(ModelRun, AnEncoderHasNoPredictionAndNoLens) {
    run.open(models + "/bert", "Hello world", core::default_memory_budget);
    settle();
    ASSERT_TRUE(run.results());
    EXPECT_EQ(run.results()->run->token_ids, expected("bert")["token_ids"].get<std::vector<std::int32_t>>());
    EXPECT_EQ(run.results()->logits.size(), 0);
    EXPECT_FALSE(run.results()->lens);
    EXPECT_FALSE(run.results()->lens_problem.empty());
    EXPECT_EQ(run.results()->rollout.size(), expected("bert")["rollout"].size());
}

// File > Open model… as a user meets it: the folder chooser (the built-in one), a folder that is no
// model (refused with a message, the session stays), then a model folder: its sentence box, the
// Next token panel and the model analysis draw, and every panel draws without a failed assertion.
TEST(ModelMode, FileOpenModelOpensTheFolderChosen) {
    test::HeadlessImGui imgui;
    app::DrawReport report;
    imgui.ui.report = &report;
    AppState state(core::worked_example());
    app::Panels panels;
    panels.model.model_folder.use_native = false;
    const auto frames = [&](int count) {
        for (int k = 0; k < count; ++k) {
            report.clear();
            ImGui::NewFrame();
            app::draw_frame(state, imgui.ui, panels, 16.0f);
            ImGui::Render();
        }
    };
    const auto choose = [&](const std::string& folder) {
        imgui.ui.request(app::command::OpenModel{});
        frames(2);
        ASSERT_TRUE(panels.model.model_folder.is_open());
        panels.model.model_folder.name = folder;
        panels.model.model_folder.confirm();
        frames(1);
        EXPECT_FALSE(panels.model.model_folder.is_open());
        panels.model.run.wait();
        frames(2);
    };
    const std::filesystem::path empty = std::filesystem::temp_directory_path() / "attnviz-not-a-model";
    std::filesystem::create_directories(empty);
    choose(empty.string());
    EXPECT_FALSE(panels.model.run.is_open());
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("config.json"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), AppState(core::worked_example()).session());

    choose(models + "/gpt2");
    ASSERT_TRUE(panels.model.run.is_open());
    EXPECT_EQ(state.session(), AppState(core::worked_example()).session());  // opened, not edited
    const auto drawn = [&](const std::string& name) {
        return std::any_of(report.items.begin(), report.items.end(),
                           [&](const app::DrawReport::Item& i) { return i.name == name; });
    };
    EXPECT_TRUE(drawn("model: sentence"));
    EXPECT_TRUE(drawn("model token 0"));
    // Typing in the sentence box: the text runs once it rests for the debounce, its tokens shown.
    const auto at = [&](const std::string& name) {
        const auto i = std::find_if(report.items.begin(), report.items.end(),
                                    [&](const app::DrawReport::Item& item) { return item.name == name; });
        EXPECT_NE(i, report.items.end()) << name;
        return i == report.items.end() ? ImVec2{-1, -1} : ImVec2{(i->min.x + i->max.x) / 2, (i->min.y + i->max.y) / 2};
    };
    ImGuiIO& io = ImGui::GetIO();
    const std::uint64_t serial = panels.model.run.results()->serial;
    io.MousePos = at("model: sentence");
    frames(1);
    io.MouseDown[0] = true;
    frames(1);
    io.MouseDown[0] = false;
    io.AddInputCharactersUTF8("ab");
    frames(2);
    const std::string typed = panels.model.sentence;
    EXPECT_NE(typed, app::default_model_text);
    EXPECT_EQ(panels.model.run.text(), typed);
    EXPECT_EQ(panels.model.run.results()->serial, serial);  // not run before the text rests
    for (int k = 0; k < 40; ++k) {                          // 40 frames of 1/60 s: past the debounce
        panels.model.run.wait();
        frames(1);
    }
    panels.model.run.wait();
    frames(1);
    ASSERT_NE(panels.model.run.results()->serial, serial);
    const core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(models + "/gpt2");
    ASSERT_TRUE(tokenizer);
    EXPECT_EQ(panels.model.run.results()->run->token_ids, tokenizer.value->encode(typed).value->ids);
    io.MousePos = {-FLT_MAX, -FLT_MAX};
    frames(1);

    // A click on head 1 of block 1 (row 2) makes that block the session edited; an edit of it then
    // runs through the model from there.
    for (size_t k = 0; k < app::explorer_panels().size(); ++k)
        if (std::string(app::explorer_panels()[k].title) == "Model view") panels.maximized = static_cast<int>(k);
    frames(2);
    const auto item = std::find_if(report.items.begin(), report.items.end(),
                                   [](const app::DrawReport::Item& i) { return i.name == "model 2:1"; });
    ASSERT_NE(item, report.items.end());
    io.MousePos = {(item->min.x + item->max.x) / 2, (item->min.y + item->max.y) / 2};
    frames(1);
    io.MouseDown[0] = true;
    frames(1);
    io.MouseDown[0] = false;
    frames(1);
    io.MousePos = {-FLT_MAX, -FLT_MAX};
    EXPECT_EQ(panels.model.run.editing_layer(), 1);
    const core::Result<core::Session> block1 = model::layer_session(*panels.model.run.folder(),
                                                                    *panels.model.run.results()->run, 1);
    ASSERT_TRUE(block1);
    EXPECT_EQ(state.session(), *block1.value);
    const core::Result<core::CellRef> cell = core::parse_cell_ref("W_Q:1:0:0");
    ASSERT_TRUE(cell);
    ASSERT_TRUE(state.set_cell(*cell.value, 3.0));
    frames(2);  // the edit is seen, and run at the next frame (without one)
    panels.model.run.wait();
    frames(1);
    EXPECT_EQ(panels.model.run.results()->edited_layer, 1);
    ASSERT_NE(panels.model.run.results()->run->layers[1].edited, nullptr);
    EXPECT_EQ(*panels.model.run.results()->run->layers[1].edited, state.session());
    panels.maximized = -1;
    // Every panel of the model mode, each in turn.
    for (const char* title : {"Next token", "Model analysis"}) {
        ASSERT_TRUE(app::show_panel(panels, title));
        frames(2);
    }
    panels.model.run.wait();  // the logit lens, a job of its own after the run
    frames(1);
    for (int view : {app::ModelAnalysisPanel::lens, app::ModelAnalysisPanel::rollout, app::ModelAnalysisPanel::norms}) {
        panels.model_analysis.view = view;
        frames(1);
    }
    const auto value = [&](const std::string& name) {
        return std::any_of(report.values.begin(), report.values.end(),
                           [&](const app::DrawReport::Value& v) { return v.name == name; });
    };
    EXPECT_TRUE(value("next p 0"));
    EXPECT_TRUE(value("lens id 0 0"));
}

}  // namespace

// The Next token panel's change column: signed with four decimals, and a change that rounds to none
// is "0" (it read "+0.0000" or "-0.0000", a sign that meant nothing).
TEST(NextTokenChange, SignedFourDecimalsAndZeroForNone) {
    EXPECT_EQ(app::probability_change_text(0.0123), "+0.0123");
    EXPECT_EQ(app::probability_change_text(-0.2), "-0.2000");
    EXPECT_EQ(app::probability_change_text(0.00005), "+0.0001");
    EXPECT_EQ(app::probability_change_text(0.00004), "0");
    EXPECT_EQ(app::probability_change_text(-0.00004), "0");
    EXPECT_EQ(app::probability_change_text(0.0), "0");
    EXPECT_EQ(app::probability_change_text(-0.0), "0");
}
