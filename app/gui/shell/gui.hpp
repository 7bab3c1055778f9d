// The explorer window: started by main when no command is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/config.hpp"

namespace attnviz::app {

struct GuiOptions {
    std::string session_path;        // empty: the worked example
    std::string screenshot_path;     // non-empty: render `frames` frames (3 if not given), write a PNG, exit
    int frames = 0;                  // > 0: exit after this many frames
    std::string size;                // "WxH"; empty: 1280x800
    int teach_step = 0;              // > 0: open the lesson at this step (1-based)
    std::string lesson;              // a lesson of the library by name ("causal-mask"): opened in teach mode
    bool column_vectors = false;     // start in the column-vector view (seed 004)
    std::string select;              // a cell to select at start, "weights:1:0:1" (see core::parse_cell_ref)
    int bench_frames = 0;            // > 0: draw this many frames with every panel open, print their times as JSON
    int bench_edits = 0;             // > 0: edit X[0][0] once a frame this many times, print the frame times as JSON
    std::vector<std::string> edits;  // "NAME:HEAD:ROW:COL=VALUE": applied at start as typed edits (demos, tests)
    // Autosave unsaved work this often (0: off); unset: every 5 s, but off for screenshots and
    // benchmarks, which show the app as it opens (no recovery offer either).
    std::optional<double> autosave_seconds;
    // A dialog shown at start, as its menu item opens it: "open", "save", "import", "beside",
    // "import-all", "model", "attentions", "export" or "sentence" (documentation screenshots, tests).
    std::string dialog;
    std::vector<std::string> panels;  // panels to show at start by title, e.g. "Head view" (their tab chosen)
    bool maximize = false;            // the last of `panels` fills the window at start
    std::string workspace;            // the workspace at start by name ("lab"); "" for the default
    std::string head_select;          // tokens selected in the head view at start: "0,2,k5" (queries, k: keys)
    std::vector<std::string> beside;  // sessions (or checkpoints: all their layers) shown beside in the model view
    std::string model;  // a folder of sessions (layer-00.json …) or a checkpoint: every layer in the model view;
                        // a Hugging Face model folder (config.json): its forward pass on model_text
    std::optional<std::string> model_text;  // --text: the sentence a model folder runs on
    int model_layer = 0;                    // --model-layer: the model folder's block edited at start (no session)
    std::string sort_heads;                 // the model view's order at start: entropy, distance, first or diagonal
    std::string lab_view;                   // the attention lab's view at start: norm-weighted, circuits, ablation, …
    // Any model's attention weights (.npz, .safetensors, .npy) shown in the head view and the model
    // view (the attentions mode), with their tokens from tokens_file ("": the file's own).
    std::string attentions, tokens_file;
    std::optional<int> layer;    // the head view's layer at start (attentions, a model's blocks)
    bool hide_special = false;   // the head view leaves special tokens out at start (rows renormalised)
    bool mean_heads = false;     // the head view draws the mean of the heads at start
    bool norm_weighted = false;  // the heads panel, the head view and the model view start norm-weighted
    std::string report_path;     // with --frames/--screenshot: where each window was, which numbers were drawn
    std::int64_t memory_budget = core::default_memory_budget;  // bytes a configuration may need (--memory-budget)
    // The look at start, over the one kept with the layout: --ui-scale (0.75 to 3), --theme (dark,
    // light, high-contrast), --colormap (viridis, cividis); --focus: the lesson alone, large.
    std::optional<float> ui_scale;
    std::string theme;
    std::string colormap;
    bool focus = false;
};

// Runs the window until it is closed (or the screenshot is written). Returns the exit code.
int run_gui(const GuiOptions& options);

}  // namespace attnviz::app
