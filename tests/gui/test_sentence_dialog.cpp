// The "New from a sentence" dialog, headless: opened from the Dimensions panel's button or the
// command the File menu sends, a sentence typed and Create pressed gives the session
// core::sentence_session makes, as one undo step.
#include <gtest/gtest.h>

#include <imgui.h>

#include "core/attention/presets.hpp"
#include "core/teach/sentence.hpp"
#include "dialogs/sentence_dialog.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;

namespace {

class SentenceDialogs : public test::WindowTest {};

core::Session eight_wide() {
    return core::random_session({3, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 11);
}

}  // namespace

TEST_F(SentenceDialogs, TypingASentenceAndPressingCreateMakesItsSession) {
    const core::Session before = eight_wide();
    AppState state(before);
    frames(state, 2);
    click(state, "dimensions: sentence", 2);  // opens the dialog, its sentence selected
    frames(state, 2);
    ASSERT_NE(item("sentence: text"), nullptr) << "the dialog is open";
    ImGui::GetIO().AddInputCharactersUTF8("A dog saw the old cat!");  // replaces the selected example
    frames(state, 2);
    EXPECT_EQ(panels.sentence.text, "A dog saw the old cat!");
    click(state, "sentence: create", 2);

    const core::Result<core::Session> want = core::sentence_session("A dog saw the old cat!", before,
                                                                    core::SentenceRows::embedding);
    ASSERT_TRUE(want);
    EXPECT_EQ(state.session().tokens, (std::vector<std::string>{"A", "dog", "saw", "the", "old", "cat", "!"}));
    EXPECT_EQ(state.session().params.X, want.value->params.X);
    EXPECT_EQ(state.session().params.X.row(3), core::word_embedding("the", 8));
    EXPECT_EQ(state.session().params.heads, before.params.heads);  // the weights stay
    EXPECT_EQ(state.trace().heads[0].weights.rows(), 7);
    EXPECT_EQ(state.message().text.rfind("New session from a sentence: 7 tokens (A dog saw the ...)", 0), 0u)
        << state.message().text;
    EXPECT_EQ(item("sentence: text"), nullptr) << "the dialog closed";
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), before);
}

TEST_F(SentenceDialogs, TheFileMenusCommandOpensItAndEnterCreatesOneHotRows) {
    const core::Session before = eight_wide();
    AppState state(before);
    imgui_.ui.request(app::command::NewSentence{});  // what File > New from a sentence... asks
    frames(state, 4);
    ASSERT_NE(item("sentence: text"), nullptr);
    panels.sentence.rows = 1;  // one-hot
    ImGuiIO& io = ImGui::GetIO();
    io.KeyMap[ImGuiKey_Enter] = 1;
    io.AddInputCharactersUTF8("the cat and the hat");
    frames(state, 1);
    io.KeysDown[1] = true;
    frames(state, 1);
    io.KeysDown[1] = false;
    frames(state, 2);
    const core::Matrix& x = state.session().params.X;
    ASSERT_EQ(x.rows(), 5);
    EXPECT_EQ(x.row(0), x.row(3));  // "the" twice: one row
    for (int i : {0, 1, 2, 4}) EXPECT_EQ(x.row(i).sum(), 1.0);
    EXPECT_EQ(x(4, 3), 1.0);  // "hat", the fourth distinct word
}

TEST_F(SentenceDialogs, ARefusedSentenceChangesNothing) {
    const core::Session before = core::random_session({3, 3, 1, 3, 3, true, core::Mask::none, {}, false, 0, {}}, 2);
    AppState state(before);
    app::SentenceDialog d;
    d.text = "one two three four";
    d.rows = 1;  // one-hot with d_model = 3 < 4 words
    EXPECT_FALSE(app::create_from_sentence(state, d));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("d_model ≥ 4"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), before);
    EXPECT_FALSE(state.can_undo());
    // In the dialog the same sentence leaves Create disabled: pressing it does nothing.
    panels.sentence = d;
    imgui_.ui.request(app::command::NewSentence{});  // as File > New from a sentence... asks
    frames(state, 2);
    click(state, "sentence: create", 2);
    EXPECT_EQ(state.session(), before);
    d.text = "";
    d.rows = 0;
    EXPECT_FALSE(app::create_from_sentence(state, d));
    EXPECT_EQ(state.session(), before);
}
