#include "fitted_text.hpp"

#include <algorithm>
#include <cfloat>

namespace attnviz::app {

namespace {

bool continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

}  // namespace

std::string quoted_label(std::string_view label) {
    return "\"" + core::bounded_text(label, core::max_label_characters) + "\"";
}

float text_width_up_to(const std::string& text, float limit) {
    const char* end = text.data() + text.size();
    const char* measured = end;
    const float w = ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize(), limit, 0, text.data(), end, &measured).x;
    return measured == end ? w : limit;
}

std::string fitted_text(const std::string& text, float width) {
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    const char* begin = text.data();
    const char* end = begin + text.size();
    // Measured a little past the width (ImGui stops before a character that reaches its limit):
    // the text itself when all of it fits.
    const char* measured = end;
    const float w = font->CalcTextSizeA(size, std::max(width, 0.0f) + 0.5f, 0, begin, end, &measured).x;
    if (measured == end && w <= width) return text;
    const char* ellipsis = "…";
    const float room = width - font->CalcTextSizeA(size, FLT_MAX, 0, ellipsis).x;
    const char* cut = begin;
    if (room > 0) font->CalcTextSizeA(size, room, 0, begin, end, &cut);
    while (cut > begin && cut < end && continuation(*cut)) --cut;  // whole characters only
    return std::string(begin, cut) + ellipsis;
}

void text_fitted(const std::string& text) {
    const std::string shown = fitted_text(bounded_text(text), ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(shown.c_str());
    if (shown != text && ImGui::IsItemHovered()) tooltip_text(text);
}

void text_bounded(const std::string& text, ImVec4 color) {
    const std::string shown = bounded_text(text);
    if (color.w > 0) ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextUnformatted(shown.data(), shown.data() + shown.size());
    if (color.w > 0) ImGui::PopStyleColor();
    if (shown.size() != text.size() && ImGui::IsItemHovered()) tooltip_text(text);
}

void text_wrapped_bounded(const std::string& text, ImVec4 color) {
    ImGui::PushTextWrapPos(0);
    text_bounded(text, color);
    ImGui::PopTextWrapPos();
}

void tooltip_text(const std::string& text) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 42);
    const std::string_view all = text;
    for (std::size_t at = 0; at < all.size();) {
        const std::size_t end = at + core::characters_end(all.substr(at), max_drawn_characters);
        ImGui::TextUnformatted(all.data() + at, all.data() + end);
        at = end;
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

void same_line_if_fits(float width) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + style.ItemSpacing.x + width <= right) ImGui::SameLine();
}

float toggle_width(const char* label) {
    // The label as the checkbox shows it: without what follows "##".
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

bool checkbox_on_line(const char* label, bool* value) {
    same_line_if_fits(toggle_width(label));
    return ImGui::Checkbox(label, value);
}

}  // namespace attnviz::app

namespace attnviz::app {

bool checkbox_wrapped(const char* id, const std::string& label, bool* value) {
    ImGui::PushID(id);
    ImGui::BeginGroup();
    bool clicked = ImGui::Checkbox("##box", value);
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(label.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::IsItemClicked()) {
        *value = !*value;
        clicked = true;
    }
    ImGui::EndGroup();
    ImGui::PopID();
    return clicked;
}

}  // namespace attnviz::app
