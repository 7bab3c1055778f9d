#pragma once
// Text cut to a width or to a length: a line that does not fit its room ends in "…" instead of
// running past the panel's edge, and no text item draws more than max_drawn_characters characters
// (the full text goes into a tooltip, in pieces of that size).
//
// Why the length: ImGui 1.86 draws every glyph of a wrapped text item, even the lines scrolled below
// the window, into one draw list whose vertices Debian's ImGui indexes in 16 bits (65,536, four a
// glyph): a 20,000-character token label in a lesson's text aborted the app. Every text that comes
// from a file (token labels, a lesson's texts, layer names and notes) is drawn through these.
#include <cstddef>
#include <string>
#include <string_view>

#include <imgui.h>

#include "core/base/text.hpp"

namespace attnviz::app {

// The most characters one text item draws (16,000 vertices).
inline constexpr std::size_t max_drawn_characters = 4000;
// `text` cut after `max` characters, ending in "…" when cut (core::bounded_text).
inline std::string bounded_text(std::string_view text, std::size_t max = max_drawn_characters) {
    return core::bounded_text(text, max);
}

// A token label as a line of text quotes it: "\"the\"", cut to core::max_label_characters.
std::string quoted_label(std::string_view label);

// `text` if it fits in `width` pixels of the current font, else its longest prefix (whole UTF-8
// characters) followed by "…" that does; "…" alone when not even one character fits. Measures only
// as much of the text as the width holds, so a label of any length costs the same.
std::string fitted_text(const std::string& text, float width);

// The width of `text` in the current font, or `limit` when it is wider: measures only what the
// limit holds (a label of any length costs the same).
float text_width_up_to(const std::string& text, float limit);

// Draws `text` cut to the room left on the current line, with the whole text as a tooltip when cut.
void text_fitted(const std::string& text);

// Draws `text` (wrapped where a wrap position is pushed) cut to max_drawn_characters, in `color`
// when given (w > 0), with the whole text as a tooltip when cut.
void text_bounded(const std::string& text, ImVec4 color = {0, 0, 0, 0});
// text_bounded wrapped at the window's right edge: a panel's message in place of what it shows.
void text_wrapped_bounded(const std::string& text, ImVec4 color = {0, 0, 0, 0});
// A tooltip holding the whole of `text`, wrapped, in pieces of at most max_drawn_characters (each
// its own item, so ImGui leaves out the pieces below the screen).
void tooltip_text(const std::string& text);

// Puts the next item on the current line when `width` pixels fit between the last item and the
// window's right edge, else on the next line: a row of controls wraps instead of being clipped.
void same_line_if_fits(float width);
// The width of a checkbox or radio button with this label.
float toggle_width(const char* label);
// A checkbox on the current line when it fits there, else on the next; true when clicked.
bool checkbox_on_line(const char* label, bool* value);
// A checkbox whose label wraps to the window's width (a long label in a narrow panel); clicking the
// label toggles it too. True when clicked. `id` names it (its label is shown as it is, any text).
bool checkbox_wrapped(const char* id, const std::string& label, bool* value);

}  // namespace attnviz::app
