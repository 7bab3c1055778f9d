// The Teach menu: teach mode, and the lesson library (assets/lessons/), each lesson opened with the
// session it starts from.
#pragma once

#include "panels/teach/teach_panel.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// Appended to the main menu bar; requests ToggleTeach and OpenLesson.
void draw_teach_menu(TeachPanel& teach, bool teach_mode, UiContext& ui);

}  // namespace attnviz::app
