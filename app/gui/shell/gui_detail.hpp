// Internal to the window (gui*.cpp): the start options (gui_start.cpp) and the report and the
// benchmarks' frame times (gui_bench.cpp), which run_gui and its frame loop (gui.cpp) use.
#pragma once

#include <chrono>
#include <cstdint>
#include <imgui.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shell/frame.hpp"
#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct GuiOptions;  // shell/gui.hpp

namespace gui_detail {

// The start options (gui_start.cpp).

// --size: "WxH" into w and h ("" leaves them); false when it is not a size from 320x240 to 16384x16384.
bool parse_size(const std::string& text, int& w, int& h);

// The worked example, or the session file given on the command line; `opened` is false when that
// file could not be opened (the state then holds the example and says why, as File > Open does).
AppState initial_state(const GuiOptions& o, bool& opened);

// --set edits and --select, checked before any window opens: 0, or 2 with the problem on stderr.
int read_cells(const GuiOptions& o, std::vector<std::pair<CellRef, double>>& edits, std::optional<CellRef>& selected);

// --attentions, --tokens-file, --layer, --hide-special and --mean-heads that do not fit together,
// checked before any window opens: 0, or 2 with the problem on stderr.
int check_attention_options(const GuiOptions& o);

// What the command line asks of the window at start: panels, the head view's tokens, the model
// view, the attentions, a dialog, edits, the lesson and the selected cell.
void apply_start_options(const GuiOptions& o, const std::vector<std::pair<CellRef, double>>& edits,
                         const std::optional<CellRef>& selected, bool opened, int frames, AppState& state,
                         UiContext& ui, Panels& panels);

// The report and the benchmarks (gui_bench.cpp).

// The draw report as JSON: the display size, each window's rectangle, each printed number, each
// editor field, each label (and whether it was cut).
bool write_report(const DrawReport& r, ImVec2 display, const std::string& path);

// The frame times of --bench-frames / --bench-edits.
struct FrameTimes {
    std::vector<double> ms;
    int drawn = 0;      // of those frames, the ones drawn (the others were the frame on screen already)
    double base_x = 0;  // X[0][0] before the edits
    std::chrono::steady_clock::time_point last_edit;
    double last_edit_to_trace_ms = -1;
    std::vector<double> trace_ms;  // the compute time of each trace shown while editing
    bool model = false;            // the session edited is a model's block
    std::vector<double> model_ms;  // the compute time of each of the model's reruns shown while editing
};

// One JSON object on stdout: median_ms, p95_ms, max_ms, frames, frames_drawn (and for edits last_edit_to_trace_ms,
// traces_shown, trace_median_ms; for a model's block model_runs_shown, model_run_median_ms).
void print_frame_times(FrameTimes t, bool edits);

// --bench-edits: one edit of X[0][0] in measured frame `measured` (of `edits`), as a drag would make
// (of a model's block: its attention's input, each edit run through the model from that block on).
void bench_edit(int edits, int measured, AppState& state, const ModelRun& model, FrameTimes& bench,
                std::uint64_t& model_serial);

}  // namespace gui_detail

}  // namespace attnviz::app
