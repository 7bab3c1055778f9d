#include "fitted_text.hpp"

#include <imgui.h>

namespace attnviz::app {

std::string fitted_text(const std::string& text, float width) {
    if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
    const char* ellipsis = "…";
    const float ellipsis_w = ImGui::CalcTextSize(ellipsis).x;
    // Grow the prefix one character at a time while it and the ellipsis fit.
    size_t end = 0;
    float used = 0;
    while (end < text.size()) {
        size_t next = end + 1;
        while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
        const float w = ImGui::CalcTextSize(text.data() + end, text.data() + next).x;
        if (used + w + ellipsis_w > width) break;
        used += w;
        end = next;
    }
    return text.substr(0, end) + ellipsis;
}

void text_fitted(const std::string& text) {
    const std::string shown = fitted_text(text, ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(shown.c_str());
    if (shown != text && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
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
