// Model view: several layers at once (a checkpoint's layers, or sessions opened side by side) as a
// grid, layers down and heads across. Each head is a small heatmap of its weights (a thumbnail of
// at most 64×64, each cell the mean weight of the block it covers: core/attention/pooling.hpp) with
// a number under it, and its four summary numbers (mean entropy, mean distance |i−j|, share on the
// first token and on the diagonal) in its tooltip. Heads can be sorted by a number (each layer by
// its own heads' numbers) and the first N of the whole model in that order outlined. Clicking a
// head makes its layer the session being edited (one undo step) and shows its weights in the
// matrix viewer.
//
// Colours: viridis; each head from 0 to the 99th percentile of its own thumbnail (so every head
// shows its pattern, whatever its largest weight), or, with "one scale", every head on 0..1 (to
// compare how sharp heads are). "norm-weighted" draws instead each head's ‖α_ij·f_h(x_j)‖ with each
// query row divided by its sum (core::norm_weighted_rows), where the layer has its V and W_O (not
// for weights alone, nor a model's blocks). A sink head (core::is_sink_head: at least half its
// queries put 0.3 of their weight on one key) is flagged by a marker under its thumbnail, its key in
// the tooltip. Thumbnails are drawn as textures from the heatmap cache, uploaded
// once per new summary, so a 12 × 12 grid at n = 512 costs 144 quads a frame.
#pragma once

#include <optional>
#include <string>

#include "core/attention/layer_summary.hpp"
#include "dialogs/attentions_mode.hpp"
#include "dialogs/file_chooser.hpp"
#include "dialogs/import_dialog.hpp"
#include "state/app_state.hpp"
#include "state/model_layers.hpp"
#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct ModelPanel {
    Layers layers;                             // row 0: this session; the others opened beside it
    core::HeadKey sort = core::HeadKey::none;  // the order of each layer's heads
    bool ascending = false;                    // smallest first (else largest first)
    int highlight = 3;                         // outline the first N heads of the model in that order (0: none)
    bool one_scale = false;                    // every head on 0..1 instead of each on its own range
    bool norm_weighted = false;                // thumbnails of the norm-weighted attention, rows normalised
    FileChooser beside_files;                  // File > Open beside…
    ImportDialog import_all;                   // File > Import all layers…
    FileChooser model_folder;                  // File > Open model…
    std::string sentence;                      // the sentence box's text (model mode)
    bool typing = false;                       // the sentence box was being typed in at the last frame
    ModelRun run;                              // model mode: a model folder and its run (declared last: its
                                               // worker ends before the rows it fills)
    ModelPanel() { import_all.all_layers = true; }
};

// The sort keys' names and values (core/attention/layer_summary.hpp).
using core::head_key_from_name;
using core::head_key_name;
using core::head_key_text;

// Every frame, whether the panel is shown or not: the layers' finished work (new rows, numbers,
// failures as messages), the model's run, and the sentence box's text: the model's, unless it is
// being typed in (a model opened with its own text shows it from the frame it opens in).
void update_model_panel(AppState& state, ModelPanel& panel);
// Every frame, after every window (a dialog opens whatever panel or tab is shown): the panel's
// dialogs (Open beside…, Import all layers…).
void draw_model_dialogs(AppState& state, UiContext& ui, ModelPanel& panel);
// Opens File > Open model…'s folder chooser.
void open_model_dialog(const AppState& state, ModelPanel& panel);
// Runs a model folder in the model view, on the sentence shown (or a short default one).
void open_model(const AppState& state, ModelPanel& panel, const std::string& folder);
// Opens File > Open beside…'s file chooser.
void open_beside_dialog(const AppState& state, ModelPanel& panel);

// The session's layers (with those opened beside it, or a model's blocks); with attentions open
// (attentions_mode.hpp), their layers instead: the same sorting and outlines, a click showing the
// head alone in the head view.
void draw_model_panel(AppState& state, UiContext& ui, ModelPanel& panel, const AttentionsMode* attentions = nullptr);

}  // namespace attnviz::app
