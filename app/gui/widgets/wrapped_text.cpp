#include "wrapped_text.hpp"

#include <algorithm>
#include <cfloat>

#include <imgui_internal.h>

#include "fitted_text.hpp"

namespace attnviz::app {

namespace {

// lines_at_spaces of one paragraph (no '\n'), appended to lines.
void paragraph_lines(std::string_view text, float width, std::vector<std::string_view>& lines) {
    const std::size_t n = text.size();
    // The end of the word at `from` (after any spaces before it).
    const auto word_end = [&](std::size_t from) {
        while (from < n && text[from] == ' ') ++from;
        return std::min(text.find(' ', from), n);
    };
    const auto width_of = [&](std::size_t a, std::size_t b) {
        return ImGui::CalcTextSize(text.data() + a, text.data() + b).x;
    };
    if (n == 0) lines.push_back(text);  // an empty paragraph is an empty line
    std::size_t begin = 0;              // the current line's first character
    while (begin < n) {
        // The first word, then whole words with the spaces before them while they fit (ImGui 1.86 has
        // no kerning: a line is as wide as its pieces).
        std::size_t end = word_end(begin);
        float line_w = width_of(begin, end);
        while (end < n) {
            const std::size_t next = word_end(end);
            const float w = line_w + width_of(end, next);
            if (w > width) break;
            line_w = w;
            end = next;
        }
        lines.push_back(text.substr(begin, end - begin));
        begin = end;
        while (begin < n && text[begin] == ' ') ++begin;  // the spaces at a break are not drawn
    }
}

}  // namespace

std::vector<std::string_view> lines_at_spaces(std::string_view text, float width) {
    std::vector<std::string_view> lines;
    for (std::size_t begin = 0; begin < text.size();) {  // each '\n' ends a line of its own
        const std::size_t end = std::min(text.find('\n', begin), text.size());
        paragraph_lines(text.substr(begin, end - begin), width, lines);
        begin = end + 1;
    }
    return lines;
}

void text_wrapped_at_spaces(const std::string& text, ImVec4 color) {
    const std::string shown = bounded_text(text);
    const ImGuiWindow* window = ImGui::GetCurrentWindow();
    const float wrap_pos = window->DC.TextWrapPos;  // < 0: no wrapping; 0: the window's edge
    // A pixel of slack: each line is drawn with the wrap position still pushed, and must not wrap again.
    const float width = wrap_pos < 0 ? FLT_MAX : ImGui::CalcWrapWidthForPos(window->DC.CursorPos, wrap_pos) - 1;
    if (color.w > 0) ImGui::PushStyleColor(ImGuiCol_Text, color);
    const std::vector<std::string_view> lines = lines_at_spaces(shown, width);
    for (const std::string_view line : lines) ImGui::TextUnformatted(line.data(), line.data() + line.size());
    if (lines.empty()) ImGui::TextUnformatted("");
    if (color.w > 0) ImGui::PopStyleColor();
    if (shown.size() != text.size() && ImGui::IsItemHovered()) tooltip_text(text);
}

}  // namespace attnviz::app
