// The frame driver: one frame of the whole window, in order — the menu bar and the View menu, the
// explorer's panels or the lesson (frame.hpp), the status bar, the message log and recovery
// windows, every dialog after every window, then the commands the frame asked for
// (frame_commands.hpp).
#pragma once

#include "shell/frame.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// Draws the whole UI between ImGui::NewFrame() and ImGui::Render(), then runs the commands.
void draw_frame(AppState& state, UiContext& ui, Panels& panels, float frame_ms);

// Whether ImGui is still bringing a change on screen after the frame drawn: a popup opened or closed
// (a new one is drawn, at its size, a frame later) or a modal's dimming fading in or out. The window
// draws on instead of sleeping until input with the dialog unseen or the dimming half done.
// `popups_seen`: the count of open popups after the frame before (updated).
bool imgui_settling(int& popups_seen);

}  // namespace attnviz::app
