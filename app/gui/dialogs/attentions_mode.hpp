// The attentions mode: any model's attention weights (core/io/attentions.hpp: Hugging Face's
// outputs.attentions saved as .npz, .safetensors or .npy, with their tokens) opened with
// `attnviz --attentions FILE [--tokens-file TOKENS.json]` or File > Open attentions…, and shown in
// the head view and the model view in place of the session's. Weights only: there is no X and no
// weight to edit, so while the mode is on the window shows those two views alone (the panels that
// need a session have nothing to show), and the session stays underneath as it was: File > Close
// attentions brings it back. Opening a session, a sentence, a layer or a model ends the mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/io/attentions.hpp"
#include "dialogs/file_chooser.hpp"
#include "state/app_state.hpp"
#include "state/model_layers.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct AttentionsMode {
    std::shared_ptr<const core::Attentions> weights;  // null: the mode is off
    std::string path;                                 // the file, absolute
    std::string tokens_path;        // the tokens file given, absolute; "" when the tokens came from the file
    std::vector<Layers::Row> rows;  // the model view's: one per layer, with its heads' numbers
    std::uint64_t serial = 0;       // new with every file opened (keys the views' caches)
    // What the mode began on: a change of the session (another opened, a sentence, an import) or
    // another model opened ends it.
    std::uint64_t revision = 0;
    const void* model = nullptr;

    // File > Open attentions…: the paths as typed or browsed, and why the last Open was refused.
    std::string dialog_path, dialog_tokens, error;
    FileChooser files, token_files;

    bool on() const { return weights != nullptr; }
};

// The file types of attentions, and of their tokens.
std::vector<FileFilter> attentions_filters();

// Opens a file of attentions (tokens_path "": the file's own, or 1, 2, 3 …): the mode is on with
// them, replacing any open before, and the message says what they are. A refused file (no
// layout the reader knows, a row that is no distribution: the file, layer, head and row named)
// leaves everything as it was, with the reader's message in the app's. Returns whether they opened.
bool open_attentions(AppState& state, AttentionsMode& mode, const std::string& path, const std::string& tokens_path);
// The mode off (the session underneath shows again).
void close_attentions(AttentionsMode& mode);
// "bert.npz: 12 layers × 12 heads, 9 queries × 9 keys": what is open, for the views' notes.
std::string attentions_summary(const AttentionsMode& mode);

// File > Open attentions…: a dialog with the file and an optional tokens file, each with Browse…
// (the file chooser). Returns true in the frame its Open opened them (the dialog closes then; a
// refused file keeps it open with the reason in it).
void open_attentions_dialog(AttentionsMode& mode);
bool draw_attentions_dialog(AppState& state, UiContext& ui, AttentionsMode& mode);

}  // namespace attnviz::app
