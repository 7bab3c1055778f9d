#include "colormap.hpp"

#include <algorithm>
#include <cmath>

#include "core/base/format.hpp"
#include "fitted_text.hpp"

namespace attnviz::app {

void colormap_legend(Colormap map, const core::ColorRange& range, float width, const char* note) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float font = ImGui::GetFontSize();
    const float bar_h = ImGui::GetTextLineHeight() * 0.7f;
    const double lo = range.lo, hi = range.hi;
    const double middle = range.log ? std::sqrt(lo * hi) : (lo + hi) / 2;
    const std::string left = core::format_number(lo, 3), right = core::format_number(hi, 3),
                      mid = core::format_number(middle, 3);
    const float left_w = ImGui::CalcTextSize(left.c_str()).x, right_w = ImGui::CalcTextSize(right.c_str()).x,
                mid_w = ImGui::CalcTextSize(mid.c_str()).x, gap = font * 0.5f;
    // The bar: wide enough for the two ends' labels (the middle one only where it clears both), at
    // least six ems. The note (the scaling) goes right of it, inside `width`: cut to the room the
    // bar leaves, the whole note in the legend's tooltip.
    const float min_bar = std::max(font * 6, left_w + gap + right_w);
    const std::string full = note ? note : (range.log ? "log" : "");
    const std::string text = full.empty() ? full : fitted_text(full, std::max(width - min_bar - gap, font * 2));
    const float note_w = text.empty() ? 0 : ImGui::CalcTextSize(text.c_str()).x + gap;
    const float bar_w = std::max(min_bar, width - note_w);
    const int steps = 64;
    for (int k = 0; k < steps; ++k) {
        const float x0 = p.x + bar_w * k / steps, x1 = p.x + bar_w * (k + 1) / steps;
        draw->AddRectFilled({x0, p.y}, {x1 + 0.5f, p.y + bar_h}, colormap_color(map, (k + 0.5f) / steps));
    }
    const float y = p.y + bar_h + 1;
    const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
    draw->AddText({p.x, y}, col, left.c_str());
    const float mid_x = (bar_w - mid_w) / 2;
    if (mid_x >= left_w + gap && mid_x + mid_w + gap <= bar_w - right_w)
        draw->AddText({p.x + mid_x, y}, col, mid.c_str());
    draw->AddText({p.x + bar_w - right_w, y}, col, right.c_str());
    if (!text.empty())
        draw->AddText({p.x + bar_w + font * 0.5f, p.y + (bar_h + 1) / 2 - ImGui::GetTextLineHeight() / 4},
                      ImGui::GetColorU32(ImGuiCol_TextDisabled), text.c_str());
    ImGui::Dummy({bar_w + note_w, bar_h + 1 + ImGui::GetTextLineHeight()});
    if (text != full && ImGui::IsItemHovered()) tooltip_text(full);
}

}  // namespace attnviz::app
