// Status bar: the dimensions, the last trace's compute time, the frame time (while frames are drawn one
// after another) and the last message.
#pragma once

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct StatusBar {
    bool show_log = false;  // the Messages window: every message in full (click the message to open it)
};

// The Messages window: the log, newest last, errors in red, wrapped; Copy all and Close.
inline constexpr const char* message_log_title = "Messages";
void draw_message_log(AppState& state, UiContext& ui, StatusBar& bar);

// The status line's text (without the message), also used by tests. `frame_ms` < 0: no frame time
// (the window was idle before this frame).
std::string status_text(const AppState& state, float frame_ms);

// `attentions`: what the attentions open are (attentions_summary), said in place of the session's
// dimensions, which are not shown then; "" for the session's.
void draw_status_bar(AppState& state, UiContext& ui, StatusBar& bar, float frame_ms,
                     const std::string& attentions = "");

}  // namespace attnviz::app
