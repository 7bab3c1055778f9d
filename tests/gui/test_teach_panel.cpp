// Teach mode driven headless: the lesson file, the steps' matrices, arrows, play and the exercise.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/attention/presets.hpp"
#include "core/base/text.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"

using namespace attnviz;
using app::AppState;
using core::MatrixId;

namespace {

constexpr int key_left = 263, key_right = 262;  // any free indices: the test maps them itself

class Teach : public ::testing::Test {
protected:
    void SetUp() override {
        ImGuiIO& io = ImGui::GetIO();
        io.KeyMap[ImGuiKey_LeftArrow] = key_left;
        io.KeyMap[ImGuiKey_RightArrow] = key_right;
        state.set_notation(imgui_.fonts.notation);
    }

    void frame(float dt = 1.0f / 60) {
        ImGui::GetIO().DeltaTime = dt;
        ImGui::NewFrame();
        app::draw_frame(state, imgui_.ui, panels, 16.0f);
        ImGui::Render();
    }
    void press(int key) {
        ImGui::GetIO().KeysDown[key] = true;
        frame();
        ImGui::GetIO().KeysDown[key] = false;
        frame();
    }

    test::HeadlessImGui imgui_;
    AppState state{core::worked_example()};
    app::Panels panels;
};

core::Matrix hand(std::initializer_list<std::initializer_list<double>> rows) { return core::Matrix(rows); }

}  // namespace

TEST_F(Teach, TheLessonLoadsAndEveryMatrixItNamesExistsInTheWorkedExample) {
    app::enter_teach_mode(state, panels, 0);
    ASSERT_TRUE(panels.teach.lesson) << panels.teach.error;
    const core::Lesson& lesson = *panels.teach.lesson;
    ASSERT_EQ(lesson.steps.size(), 10u);
    for (const core::LessonStep& step : lesson.steps) {
        EXPECT_FALSE(step.title.empty());
        EXPECT_FALSE(step.text.empty());
        for (const core::MatrixRef& m : step.show) {
            EXPECT_TRUE(core::exists(m, state.config())) << step.title << ": " << core::name(m.id);
            EXPECT_NE(state.matrix({m.id, m.head}), nullptr) << step.title << ": " << core::name(m.id);
        }
        if (step.has_result) {
            EXPECT_NE(state.matrix({step.result.id, step.result.head}), nullptr) << step.title;
        }
    }
    frame();
}

TEST_F(Teach, StepsShowTheSeedsNumbers) {
    app::enter_teach_mode(state, panels, 1);  // step 2: Q, K, V of head 1
    const core::Matrix* q = app::teach_result(state, panels.teach);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(*q, hand({{2, 0}, {0, 4}}));
    const char* expansions[2][2] = {{"(1+1)", "(0+0)"}, {"(0+0)", "(2+2)"}};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            EXPECT_EQ(core::cell_expansion(*state.explain({{MatrixId::Q, 0}, i, j}).value), expansions[i][j]);

    app::teach_go_to(state, panels.teach, 3);  // step 4: scores = scores_raw / √2
    const core::Matrix* scores = app::teach_result(state, panels.teach);
    ASSERT_NE(scores, nullptr);
    EXPECT_NEAR((*scores)(0, 0), 2 * std::sqrt(2.0), 1e-12);
    EXPECT_NEAR((*scores)(1, 1), 8 * std::sqrt(2.0), 1e-12);

    app::teach_go_to(state, panels.teach, 4);  // step 5: softmax
    const core::Matrix* weights = app::teach_result(state, panels.teach);
    const double e = std::exp(2 * std::sqrt(2.0));
    EXPECT_NEAR((*weights)(0, 0), e / (e + 1), 1e-12);
    EXPECT_NEAR((*weights)(0, 1), 1 / (e + 1), 1e-12);
    // The selected cell is the result's first, so its arithmetic is on screen.
    ASSERT_NE(state.selection(), nullptr);
    EXPECT_EQ(state.selection()->matrix, (app::MatrixRef{MatrixId::weights, 0}));
    frame();
}

TEST_F(Teach, ArrowKeysWalkEveryStep) {
    app::enter_teach_mode(state, panels, 0);
    frame();
    for (int k = 1; k < 10; ++k) {
        press(key_right);
        EXPECT_EQ(panels.teach.step, k);
    }
    press(key_right);  // past the last step stays on it
    EXPECT_EQ(panels.teach.step, 9);
    press(key_left);
    EXPECT_EQ(panels.teach.step, 8);
}

TEST_F(Teach, PlayRevealsTheResultCellByCell) {
    app::enter_teach_mode(state, panels, 5);  // step 6: Z⁽¹⁾, 4 cells
    frame();
    panels.teach.playing = true;
    panels.teach.play_time = 0;
    panels.teach.cells_per_second = 2;
    frame(0.1f);
    EXPECT_EQ(panels.teach.revealed, 1);
    frame(0.5f);  // 0.6 s at 2 cells/s: the second cell
    EXPECT_EQ(panels.teach.revealed, 2);
    EXPECT_EQ(state.selection()->row, 0);
    EXPECT_EQ(state.selection()->col, 1);
    frame(1.0f);
    EXPECT_EQ(panels.teach.revealed, 4);
    frame(1.0f);  // done: everything shown again
    EXPECT_FALSE(panels.teach.playing);
    EXPECT_EQ(panels.teach.revealed, -1);
}

TEST_F(Teach, TheSoftmaxExerciseMarksRightWrongAndRevealed) {
    app::enter_teach_mode(state, panels, 4);
    panels.teach.exercising = true;
    frame();
    const double e = std::exp(2 * std::sqrt(2.0));
    app::teach_answer(state, panels.teach, 0, 0, "0.9442");  // e/(e+1) = 0.944193, within 1e-3
    app::teach_answer(state, panels.teach, 0, 1, "0.06");    // 1/(e+1) = 0.0558, off by 4e-3
    EXPECT_EQ(panels.teach.exercise.mark(0, 0), core::CellMark::right);
    EXPECT_EQ(panels.teach.exercise.mark(0, 1), core::CellMark::wrong);
    EXPECT_EQ(panels.teach.exercise.mark(1, 0), core::CellMark::empty);
    app::teach_answer(state, panels.teach, 0, 1, std::to_string(1 / (e + 1)));
    EXPECT_EQ(panels.teach.exercise.mark(0, 1), core::CellMark::right);
    app::teach_answer(state, panels.teach, 1, 1, "one");  // not a number: no answer
    EXPECT_EQ(panels.teach.exercise.mark(1, 1), core::CellMark::empty);
    panels.teach.exercise.reveal(1, 0);
    EXPECT_EQ(panels.teach.exercise.mark(1, 0), core::CellMark::revealed);
    EXPECT_EQ(panels.teach.exercise.count(core::CellMark::right), 2);
    frame();
}

// The lesson's progress ("step 6 of 10") is written beside its bar, in the text's colour on the
// window's, not over the bar's yellow fill, where white text did not read.
TEST_F(Teach, TheProgressIsWrittenBesideItsBar) {
    app::DrawReport report;
    imgui_.ui.report = &report;
    app::enter_teach_mode(state, panels, 5);
    frame();
    const app::DrawReport::Item *bar = nullptr, *text = nullptr;
    for (const auto& item : report.items) {
        if (item.name == "teach: progress bar") bar = &item;
        if (item.name == "teach: progress") text = &item;
    }
    ASSERT_NE(bar, nullptr);
    ASSERT_NE(text, nullptr);
    EXPECT_GE(text->min.x, bar->max.x) << "the progress text lies over its bar";
    EXPECT_LT(text->min.y, bar->max.y);  // on the bar's line
    EXPECT_GT(bar->max.x - bar->min.x, 50.0f);
    imgui_.ui.report = nullptr;
}

// Right and wrong are said beside each field with ✓ and ✗ (the app's font has them), not by the
// field's green or red alone, which a colour-blind learner cannot tell apart.
TEST_F(Teach, TheExerciseMarksRightAndWrongBySymbolNotColourAlone) {
    ASSERT_NE(ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(0x2713), nullptr) << "the font has no ✓";
    ASSERT_NE(ImGui::GetIO().Fonts->Fonts[0]->FindGlyphNoFallback(0x2717), nullptr) << "the font has no ✗";
    app::DrawReport report;
    imgui_.ui.report = &report;
    app::enter_teach_mode(state, panels, 4);  // the softmax: weights⁽¹⁾, 2×2
    panels.teach.exercising = true;
    frame();
    app::teach_answer(state, panels.teach, 0, 0, "0.9442");  // right
    app::teach_answer(state, panels.teach, 0, 1, "0.5");     // wrong
    panels.teach.exercise.reveal(1, 1);
    report.clear();
    frame();
    const auto drawn = [&](const std::string& name) {
        for (const auto& item : report.items)
            if (item.name == name) return true;
        return false;
    };
    EXPECT_TRUE(drawn("exercise [0][0]: ✓"));
    EXPECT_TRUE(drawn("exercise [0][1]: ✗"));
    EXPECT_TRUE(drawn("exercise [1][0]: "));  // nothing typed: no mark
    EXPECT_TRUE(drawn("exercise [1][1]: shown"));
    imgui_.ui.report = nullptr;
}

TEST_F(Teach, TheLessonFollowsAnEditedX) {
    app::enter_teach_mode(state, panels, 1);
    state.set_cell({{MatrixId::X, 0}, 0, 2}, 3.0);  // X[0] = [1, 0, 3, 0]
    frame();
    EXPECT_DOUBLE_EQ((*app::teach_result(state, panels.teach))(0, 0), 4.0);  // (1+3)
    EXPECT_EQ(core::cell_expansion(*state.explain({{MatrixId::Q, 0}, 0, 0}).value), "(1+3)");
    // "Reset to the worked example" brings the seed's numbers back.
    state.set_session(core::worked_example(), "reset");
    frame();
    EXPECT_DOUBLE_EQ((*app::teach_result(state, panels.teach))(0, 0), 2.0);
}

TEST_F(Teach, WithOneHeadTheLessonIsSingleHeadAttention) {
    core::Config c = state.config();
    c.heads = 1;
    c.d_k = c.d_v = 4;
    ASSERT_TRUE(state.set_config(c));
    app::enter_teach_mode(state, panels, 6);  // step 7: head 2 beside head 1
    frame();
    EXPECT_EQ(app::teach_result(state, panels.teach), nullptr);  // there is no Z⁽²⁾
    for (int k = 0; k < 10; ++k) {
        app::teach_go_to(state, panels.teach, k);
        frame();
    }
}

TEST_F(Teach, AMalformedLessonIsReportedAndTheAppKeepsRunning) {
    const auto path = std::filesystem::temp_directory_path() / "attnviz_bad_lesson.json";
    std::ofstream(path) << R"({"format": "attnviz-lesson", "version": 1, "title": "t",
        "steps": [{"title": "a", "text": "b", "show": [{"matrix": "QQ", "head": 1}]}]})";
    panels.teach.lesson_path = path.string();
    app::enter_teach_mode(state, panels, 0);
    EXPECT_FALSE(panels.teach.lesson);
    EXPECT_NE(panels.teach.error.find("steps[0].show[0].matrix"), std::string::npos) << panels.teach.error;
    frame();
    frame();
    EXPECT_EQ(state.session(), core::worked_example());
    std::filesystem::remove(path);
}

TEST_F(Teach, UserTextIsNeverAnId) {
    // Step titles and token labels are the user's text: an empty one, or one holding ImGui's ID
    // markers ("##", "###"), must draw as text and never abort ImGui ("empty ID").
    const auto path = std::filesystem::temp_directory_path() / "attnviz_odd_titles.json";
    std::ofstream(path) << R"({"format": "attnviz-lesson", "version": 1, "title": "",
        "steps": [{"title": "", "text": "x"}, {"title": "##", "text": ""}, {"title": "###a", "text": "##"},
                  {"title": "", "text": "y", "show": [{"matrix": "X"}], "result": {"matrix": "Q", "head": 1}}]})";
    panels.teach.lesson_path = path.string();
    core::Session odd = core::worked_example();
    odd.tokens = {"", "##"};
    state.set_session(odd, "odd labels");
    app::enter_teach_mode(state, panels, 0);
    ASSERT_TRUE(panels.teach.lesson) << panels.teach.error;
    for (int k = 0; k < 4; ++k) {
        app::teach_go_to(state, panels.teach, k);
        frame();
        EXPECT_EQ(panels.teach.step, k);
    }
    imgui_.ui.request(app::command::ToggleTeach{});  // and the explorer with the same labels
    frame();
    frame();
    EXPECT_FALSE(panels.teach_mode);
    EXPECT_EQ(state.session().tokens[1], "##");
    std::filesystem::remove(path);
}

// A 20,000-character token label and a lesson text of 100,000 characters: ImGui draws every glyph
// of a wrapped text item into one draw list of 16-bit indices, so either aborted the app ("too many
// vertices in one draw list"). Each text item is now cut with "…", the whole text in its tooltip.
TEST_F(Teach, LongTokensAndLongLessonTextsAreDrawnCut) {
    const auto path = std::filesystem::temp_directory_path() / "attnviz_long_lesson.json";
    const std::string long_text(100000, 'w');
    std::ofstream(path) << R"({"format": "attnviz-lesson", "version": 1, "title": ")" << long_text << R"(",
        "steps": [{"title": ")"
                        << long_text << R"(", "formula": ")" << long_text << R"(",
                   "text": "Token {token:0} and then )"
                        << long_text << R"(", "show": [{"matrix": "X"}],
                   "result": {"matrix": "Q", "head": 1}},
                  {"title": "the lesson's own", "text": "{if !worked}Token {token:0} starts X.{end}",
                   "show": [{"matrix": "X"}]}]})";
    panels.teach.lesson_path = path.string();
    core::Session s = core::worked_example();
    s.tokens[0] = std::string(20000, 'a');
    state.set_session(s, "a long token");
    app::DrawReport report;
    imgui_.ui.report = &report;
    app::enter_teach_mode(state, panels, 0);
    ASSERT_TRUE(panels.teach.lesson) << panels.teach.error;
    for (int k = 0; k < 2; ++k) {
        app::teach_go_to(state, panels.teach, k);
        report.clear();
        frame();
        frame();
        // Hovering the text shows the whole of it in its tooltip (in pieces, each bounded).
        const app::DrawReport::Item* text = nullptr;
        for (const auto& item : report.items)
            if (item.name == "teach: text") text = &item;
        ASSERT_NE(text, nullptr);
        ImGui::GetIO().MousePos = {text->min.x + 5, text->min.y + 5};
        frame();
        frame();
        ImGui::GetIO().MousePos = {-FLT_MAX, -FLT_MAX};
    }
    // The token inside the lesson's sentence is cut to its first characters.
    const std::string filled = core::fill_template("{token:0}",
                                                   {&state.session(), &state.trace(), false, std::nullopt, false});
    EXPECT_EQ(filled, std::string(core::max_label_characters, 'a') + "…");
    imgui_.ui.request(app::command::ToggleTeach{});  // and the explorer with the same label
    frame();
    frame();
    imgui_.ui.report = nullptr;
    std::filesystem::remove(path);
}

TEST_F(Teach, AnswersStayAtTheirCellsWhenTheSessionGrows) {
    app::enter_teach_mode(state, panels, 4);     // softmax: weights⁽¹⁾, 2×2
    EXPECT_EQ(panels.teach.exercise.rows(), 0);  // nothing is allocated before the learner starts
    app::teach_answer(state, panels.teach, 0, 1, "0.0558");
    app::teach_answer(state, panels.teach, 1, 0, "7");
    core::Config c = state.config();
    c.n = 3;  // weights become 3×3
    ASSERT_TRUE(state.set_config(c));
    app::teach_answer(state, panels.teach, 2, 2, "0.5");
    ASSERT_EQ(panels.teach.exercise.cols(), 3);
    EXPECT_DOUBLE_EQ(panels.teach.exercise.answer_of(0, 1), 0.0558);
    EXPECT_DOUBLE_EQ(panels.teach.exercise.answer_of(1, 0), 7.0);
    EXPECT_EQ(panels.teach.typed[0 * 3 + 1], "0.0558");  // the text typed moves with its answer
    EXPECT_EQ(panels.teach.typed[1 * 3 + 0], "7");
    EXPECT_EQ(panels.teach.typed[2 * 3 + 2], "0.5");
    frame();
}

TEST_F(Teach, LargeResultsOfferNoExercise) {
    core::Config c = state.config();
    c.n = 9;  // weights 9×9 = 81 cells, over the limit
    ASSERT_TRUE(state.set_config(c));
    app::enter_teach_mode(state, panels, 4);
    ASSERT_GT(app::teach_result(state, panels.teach)->size(), app::max_exercise_cells);
    frame();
    EXPECT_FALSE(panels.teach.exercising);
    EXPECT_EQ(panels.teach.exercise.rows(), 0);
}

// Teach > Lessons: a lesson of the library opens at its first step with the session it starts
// from, replacing the user's as a preset does; Edit > Undo brings the user's back.
TEST_F(Teach, ALessonOfTheLibraryOpensWithItsSessionAndUndoBringsYoursBack) {
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 5.0);
    state.wait_for_trace();
    std::string problem;
    const std::optional<core::LessonEntry> lesson = app::find_lesson("kv-cache", problem);
    ASSERT_TRUE(lesson) << problem;
    imgui_.ui.request(app::command::OpenLesson{lesson->path});
    frame();
    state.wait_for_trace();
    frame();
    ASSERT_TRUE(panels.teach.lesson) << panels.teach.error;
    EXPECT_TRUE(panels.teach_mode);
    EXPECT_EQ(panels.teach.step, 0);
    EXPECT_EQ(panels.teach.lesson->title, "Grouped-query attention and the KV cache");
    EXPECT_EQ(state.config().heads, 4);
    EXPECT_EQ(state.config().kv_heads, 2);
    EXPECT_EQ(state.config().mask, core::Mask::causal);
    state.undo();
    state.wait_for_trace();
    EXPECT_EQ(state.config(), core::worked_example().config);
    EXPECT_EQ(state.session().params.X(0, 0), 5.0);
    EXPECT_FALSE(app::find_lesson("no-such-lesson", problem));
    EXPECT_NE(problem.find("causal-mask"), std::string::npos) << problem;
}

// A lesson whose session file cannot be read opens on the session on screen, and says why.
TEST_F(Teach, ALessonWhoseSessionIsMissingKeepsTheSessionOnScreen) {
    const auto path = std::filesystem::temp_directory_path() / "attnviz_lesson_without_session.json";
    std::ofstream(path) << R"({"format": "attnviz-lesson", "version": 1, "title": "t", "session": "missing.json",
                               "steps": [{"title": "a", "text": "n = {n}"}]})";
    EXPECT_FALSE(app::open_lesson(state, panels.teach, path.string()));
    ASSERT_TRUE(panels.teach.lesson) << panels.teach.error;
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("missing.json"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.config(), core::worked_example().config);
    std::filesystem::remove(path);
}
