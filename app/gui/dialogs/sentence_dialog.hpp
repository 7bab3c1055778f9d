// File > New from a sentence… and the Dimensions panel's "Sentence…": a sentence typed, embedding
// or one-hot rows chosen, its tokens previewed (each with its row of X in a tooltip), and Create
// replaces the session with the sentence's (core/teach/sentence.hpp: the dimensions and weights stay,
// n, the tokens and X change) as one undo step.
#pragma once

#include <string>

#include "core/teach/sentence.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct SentenceDialog {
    // The text field asks for the keyboard this many frames more (an auto-resizing popup is
    // hidden in its first frame, which drops a request).
    int focus_frames = 0;
    std::string text = "The cat sat on the mat.";  // selected when the dialog opens: typing replaces it
    int rows = 0;                                  // 0: embedding rows, 1: one-hot rows
    core::SentenceRows kind() const { return rows == 1 ? core::SentenceRows::one_hot : core::SentenceRows::embedding; }
};

// Replaces the session with the dialog's sentence's (state.set_session: undoable), saying so in the
// status bar. A sentence that cannot make one is refused with an error message and nothing
// changes. Returns whether the session was replaced.
bool create_from_sentence(AppState& state, const SentenceDialog& dialog);

// Opens the dialog (called outside every window, as run_commands is: where it is drawn).
void open_sentence_dialog(SentenceDialog& dialog);
void draw_sentence_dialog(AppState& state, UiContext& ui, SentenceDialog& dialog);

}  // namespace attnviz::app
