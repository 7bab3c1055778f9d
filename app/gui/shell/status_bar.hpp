// Status bar: the dimensions, the last trace's compute time, the frame time (while frames are drawn one
// after another) and the last message.
#pragma once

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

#include <string>
#include <vector>

namespace attnviz::app {

struct StatusBar {
    bool show_log = false;  // the Messages window: every message in full (click the message to open it)
};

// The Messages window: the log, newest last, errors in red, wrapped; Copy all and Close.
inline constexpr const char* message_log_title = "Messages";
void draw_message_log(AppState& state, UiContext& ui, StatusBar& bar);

// An item of the status line and when it leaves a line too narrow for all: `drop` 0 never; else items
// leave largest `drop` first.
struct StatusItem {
    std::string text;
    int drop = 0;
};

// The status line's items (without the message), in the order shown. The order they leave in: the
// frame time, the trace's time, "tokens as rows", "W_O on", the scale, then "biases"; the dimensions,
// the mask and what else a real layer adds (K/V groups, RoPE, cross-attention) stay. `frame_ms` < 0:
// no frame time (the window was idle before this frame). `attentions`: what the attentions open are
// (attentions_summary), said in place of the session's dimensions; "" for the session's.
std::vector<StatusItem> status_items(const AppState& state, float frame_ms, const std::string& attentions = "");
// All of the status line's items, joined by " | ", also used by tests.
std::string status_text(const AppState& state, float frame_ms);

// What the status bar shows in `width` pixels of the current font: the status line with the fewest
// items left out (status_items) that leaves the message room beside it; where not even the items
// that stay and the message fit one line, the message goes on a second line of its own and the
// status line gets the whole first line. Only a line wider than the bar even so (a message is any
// text; the items that stay in a very narrow window) is cut with "…" (whole in its tooltip).
struct StatusLayout {
    std::string line, message;   // as shown
    std::string whole_line;      // every item, for the tooltip where some are left out or the line is cut
    bool line_cut = false;       // cut with "…" (items left out are not a cut)
    bool message_below = false;  // on a second line
    int lines = 1;
    bool computing = false;  // "computing…" first: a new trace is on its way (the session's, not attentions')
};
StatusLayout status_layout(const std::vector<StatusItem>& items, const std::string& message, float width);
// The status line's tooltip: the whole line where some of it is left out, and the kernel the matrix
// products run on (core/attention/gemm.hpp: chosen for this CPU, or by ATTNVIZ_KERNEL).
std::string status_tooltip(const StatusLayout& layout);

// The status bar's layout this frame (status_layout for the window's width) and its height.
StatusLayout status_bar_layout(const AppState& state, float frame_ms, const std::string& attentions = "");
float status_bar_height(const StatusLayout& layout);

void draw_status_bar(AppState& state, UiContext& ui, StatusBar& bar, const StatusLayout& layout);

}  // namespace attnviz::app
