#include "colormap.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/format.hpp"

namespace attnviz::app {

namespace {

struct Stop {
    float t, r, g, b;
};

using Table = std::array<ImU32, 256>;

template <size_t N>
Table build(const Stop (&stops)[N]) {
    Table table{};
    for (int k = 0; k < 256; ++k) {
        const float t = k / 255.0f;
        size_t s = 0;
        while (s + 2 < N && t > stops[s + 1].t) ++s;
        const Stop& a = stops[s];
        const Stop& b = stops[s + 1];
        const float u = (t - a.t) / (b.t - a.t);
        table[k] = IM_COL32(static_cast<int>(a.r + (b.r - a.r) * u), static_cast<int>(a.g + (b.g - a.g) * u),
                            static_cast<int>(a.b + (b.b - a.b) * u), 255);
    }
    return table;
}

const Table& table(Colormap map) {
    // Viridis, sampled at five points: perceptually ordered, readable in greyscale.
    static const Stop viridis[] = {
        {0.00f, 68, 1, 84}, {0.25f, 59, 82, 139}, {0.50f, 33, 145, 140}, {0.75f, 94, 201, 98}, {1.00f, 253, 231, 37}};
    // Blue, near-white at 0, red.
    static const Stop coolwarm[] = {{0.00f, 59, 76, 192}, {0.50f, 242, 242, 242}, {1.00f, 180, 4, 38}};
    static const Table sequential = build(viridis);
    static const Table diverging = build(coolwarm);
    return map == Colormap::sequential ? sequential : diverging;
}

}  // namespace

ImU32 colormap_color(Colormap map, float t) {
    if (!(t >= 0)) t = 0;  // also NaN
    if (t > 1) t = 1;
    return table(map)[static_cast<int>(t * 255.0f + 0.5f)];
}

ImU32 text_color_on(ImU32 background) {
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(background);
    auto linear = [](float v) { return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f); };
    const float luminance = 0.2126f * linear(c.x) + 0.7152f * linear(c.y) + 0.0722f * linear(c.z);
    return luminance > 0.18f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

void colormap_legend(Colormap map, const core::ColorRange& range, float width, const char* note) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float font = ImGui::GetFontSize();
    const float bar_h = ImGui::GetTextLineHeight() * 0.7f;
    // The note (the scaling) goes right of the bar, inside `width`.
    const std::string text = note ? note : (range.log ? "log" : "");
    const float note_w = text.empty() ? 0 : ImGui::CalcTextSize(text.c_str()).x + font * 0.5f;
    const double lo = range.lo, hi = range.hi;
    const double middle = range.log ? std::sqrt(lo * hi) : (lo + hi) / 2;
    const std::string left = core::format_number(lo, 3), right = core::format_number(hi, 3),
                      mid = core::format_number(middle, 3);
    const float left_w = ImGui::CalcTextSize(left.c_str()).x, right_w = ImGui::CalcTextSize(right.c_str()).x,
                mid_w = ImGui::CalcTextSize(mid.c_str()).x, gap = font * 0.5f;
    // Wide enough for the two ends' labels; the middle one only where it clears both.
    const float bar_w = std::max({font * 6, width - note_w, left_w + gap + right_w});
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
}

}  // namespace attnviz::app
