// The View menu's presentation items and their shortcuts: focus, full screen (F11), the text size
// (Ctrl+= larger, Ctrl+− smaller, Ctrl+0 back to 100 %), the theme and the weights' colormap. Each
// requests a command (command.hpp); the window makes the change between two frames.
#pragma once

#include "ui/appearance.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// What the items show checked: the look asked for, full screen, and focus (in teach mode).
struct PresentationChecks {
    Appearance appearance;
    bool full_screen = false;
    bool focus = false;
};

// The items, inside the open View menu.
void draw_presentation_items(UiContext& ui, const PresentationChecks& checks);

// The shortcuts, unless a dialog has the keyboard. ImGui 1.86 indexes keys by GLFW's codes.
void presentation_shortcuts(UiContext& ui, const Appearance& appearance);

}  // namespace attnviz::app
