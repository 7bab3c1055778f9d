#pragma once
// Text cut to a width: a line that does not fit its room ends in "…" instead of running past the
// panel's edge (the full text goes into a tooltip).
#include <string>

namespace attnviz::app {

// `text` if it fits in `width` pixels of the current font, else its longest prefix (whole UTF-8
// characters) followed by "…" that does; "…" alone when not even one character fits.
std::string fitted_text(const std::string& text, float width);

// Draws `text` cut to the room left on the current line, with the whole text as a tooltip when cut.
void text_fitted(const std::string& text);

// Puts the next item on the current line when `width` pixels fit between the last item and the
// window's right edge, else on the next line: a row of controls wraps instead of being clipped.
void same_line_if_fits(float width);
// The width of a checkbox or radio button with this label.
float toggle_width(const char* label);
// A checkbox on the current line when it fits there, else on the next; true when clicked.
bool checkbox_on_line(const char* label, bool* value);

}  // namespace attnviz::app
