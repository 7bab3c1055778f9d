// Text wrapped at spaces only. ImGui 1.86 also breaks a wrapped line after '.' and ',', which splits
// a number across lines ("0.\n0460817"): formulas and their numbers are wrapped with these instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace attnviz::app {

// `text` broken into lines at spaces, each as wide as `width` pixels of the current font at most
// (a word wider than that on a line of its own); the spaces at a break are left out, the first
// line keeps those it starts with; a '\n' always ends a line. Views into `text`.
std::vector<std::string_view> lines_at_spaces(std::string_view text, float width);

// Draws `text` (cut to max_drawn_characters) wrapped where a wrap position is pushed
// (ImGui::PushTextWrapPos), its lines broken only at spaces; in `color` when given (w > 0).
void text_wrapped_at_spaces(const std::string& text, ImVec4 color = {0, 0, 0, 0});

}  // namespace attnviz::app
