// File > Import layer…: one attention layer of a checkpoint with the options of `attnviz import`
// (convention, layer, heads, K/V groups, X from a .npy, token labels), and the tensors the file
// holds listed so the user can see which layers and names it has. File > Import all layers… is the
// same dialog with `all_layers` set: the layers are a selection (all, 2-5, 0,2,4) and Import hands
// the request over (`requested`) to the model view instead of replacing the session.
#pragma once

#include <string>
#include <vector>

#include "../app_state.hpp"
#include "../ui_context.hpp"
#include "file_chooser.hpp"

namespace attnviz::app {

struct ImportDialog {
    bool open = false;  // set by Command::import_layer, consumed when the dialog opens
    std::string path, x_path, tokens;
    int convention = 0;                      // 0 auto, then torch, bert, gpt2, llama
    int layer = 0, heads = 0, kv_heads = 0;  // heads, kv_heads 0: from config.json or the file
    std::vector<std::string> listing;        // "name  dtype  [shape]" of the file last inspected
    std::string listed_path;
    FileChooser checkpoint_files, x_files;  // "Browse..." beside the two paths
    bool all_layers = false;                // Import all layers…: the layers below, beside the session
    std::string layers = "all";             // as `attnviz import --layer`: all, 2-5, 0,2,4
    bool requested = false;                 // all_layers: Import was pressed (path, options, layers set)
};

// The options as `attnviz import` takes them (a bad X file is reported in the returned problems).
core::Result<core::ImportOptions> import_options(const ImportDialog& dialog);
// The tensors of the dialog's file, listed in dialog.listing (or the reason it cannot be read).
void list_tensors(ImportDialog& dialog);

void draw_import_dialog(AppState& state, UiContext& ui, ImportDialog& dialog);

}  // namespace attnviz::app
