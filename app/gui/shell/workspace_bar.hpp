// The workspace bar under the menu: a tab for each workspace (Ctrl+1, Ctrl+2, …) and, at its right
// end, the command palette's button (Ctrl+K). The keys work wherever the bar is drawn.
#pragma once

#include "shell/frame.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// Draws the bar below the menu bar (at `top`) and handles its keys; returns its height (0 when it
// is not shown: in teach mode the lesson has the window to itself). Switching is a command (run with the frame's
// others).
float draw_workspace_bar(const Panels& panels, UiContext& ui, float top);

}  // namespace attnviz::app
