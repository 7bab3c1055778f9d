// Status bar: the dimensions, the last trace's compute time, the frame time and the last message.
#pragma once

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct StatusBar {};

// The status line's text (without the message), also used by tests.
std::string status_text(const AppState& state, float frame_ms);

void draw_status_bar(AppState& state, UiContext& ui, StatusBar& bar, float frame_ms);

}  // namespace attnviz::app
