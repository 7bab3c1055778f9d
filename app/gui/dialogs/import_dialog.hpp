// File > Import layer…: one attention layer of a checkpoint with the options of `attnviz import`
// (convention, layer, heads, K/V groups, RoPE base, X from a .npy or from token ids, token labels),
// the tensors the file holds listed so the user can see which layers and names it has, and what
// the import will make (core::preview_import: the convention, the layers, the heads and K/V groups,
// where X comes from) shown before importing. A refused import keeps the dialog open with the
// reason in it. File > Import all layers… is the same dialog with `all_layers` set: the layers are
// a selection (all, 2-5, 0,2,4) and Import hands the request over (`requested`) to the model view
// instead of replacing the session.
#pragma once

#include <string>
#include <vector>

#include "core/io/import.hpp"
#include "dialogs/file_chooser.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct ImportDialog {
    std::string path, x_path, token_ids, tokens;
    int convention = 0;                      // 0 auto, then torch, bert, gpt2, llama
    int layer = 0, heads = 0, kv_heads = 0;  // heads, kv_heads 0: from config.json or the file
    double rope_base = 0;                    // 0: config.json's rope_theta, else 10000 (llama)
    std::vector<std::string> listing;        // "name  dtype  [shape]" of the file last inspected
    std::string listed_path;
    FileChooser checkpoint_files, x_files;  // "Browse..." beside the two paths
    bool all_layers = false;                // Import all layers…: the layers below, beside the session
    std::string layers = "all";             // as `attnviz import --layer`: all, 2-5, 0,2,4
    bool requested = false;                 // all_layers: Import was pressed (path, options, layers set)
    std::string error;                      // why the last Import was refused, shown in the dialog
    // What the import will make, for the options it was made with (`preview_of`).
    core::Result<core::ImportPreview> preview = core::Result<core::ImportPreview>::fail({});
    std::string preview_of;
};

// The options as `attnviz import` takes them (a bad X file, token ids that are not ids, X and token
// ids both given are reported in the returned problems), config.json beside the checkpoint included.
core::Result<core::ImportOptions> import_options(const ImportDialog& dialog);
// The tensors of the dialog's file, listed in dialog.listing (or the reason it cannot be read).
void list_tensors(ImportDialog& dialog);
// What the dialog's import will make, brought up to date with its path and options.
void update_preview(ImportDialog& dialog);
// Whether opening this checkpoint as it is (no options) gives a random X: the file holds none.
bool checkpoint_x_is_random(const std::string& path);

// Opens the dialog (called outside every window, as run_commands is: where it is drawn).
void open_import_dialog(ImportDialog& dialog);
void draw_import_dialog(AppState& state, UiContext& ui, ImportDialog& dialog);

}  // namespace attnviz::app
