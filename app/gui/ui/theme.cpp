#include "ui/theme.hpp"

#include <algorithm>
#include <cmath>

#include "ui/fonts.hpp"
#include "ui/palette.hpp"

namespace attnviz::app {

namespace {

// ImGui's light colours, with the disabled text dark enough to read (ImGui's 0.6 grey has a
// contrast of 2.5 on the window) and frames outlined (white fields on a light grey window).
void light_colors(ImGuiStyle& s) {
    ImGui::StyleColorsLight(&s);
    ImVec4* c = s.Colors;
    c[ImGuiCol_TextDisabled] = {0.36f, 0.36f, 0.36f, 1.00f};
    c[ImGuiCol_Border] = {0.00f, 0.00f, 0.00f, 0.45f};
    c[ImGuiCol_PlotHistogram] = {0.85f, 0.60f, 0.00f, 1.00f};
    s.FrameBorderSize = 1;
}

// White text on black; yellow marks; saturated blues under text; every frame, popup and tab bordered.
void high_contrast_colors(ImGuiStyle& s) {
    ImGui::StyleColorsDark(&s);
    ImVec4* c = s.Colors;
    const ImVec4 white{1, 1, 1, 1}, black{0, 0, 0, 1}, yellow{1, 1, 0, 1};
    const ImVec4 blue{0.00f, 0.22f, 0.50f, 1}, blue_hovered{0.00f, 0.32f, 0.70f, 1},
        blue_active{0.00f, 0.40f, 0.85f, 1};
    c[ImGuiCol_Text] = white;
    c[ImGuiCol_TextDisabled] = {0.78f, 0.78f, 0.78f, 1.00f};
    c[ImGuiCol_WindowBg] = black;
    c[ImGuiCol_ChildBg] = {0, 0, 0, 0};
    c[ImGuiCol_PopupBg] = {0.05f, 0.05f, 0.05f, 1.00f};
    c[ImGuiCol_Border] = {0.85f, 0.85f, 0.85f, 1.00f};
    c[ImGuiCol_BorderShadow] = {0, 0, 0, 0};
    c[ImGuiCol_FrameBg] = {0.10f, 0.10f, 0.10f, 1.00f};
    c[ImGuiCol_FrameBgHovered] = {0.20f, 0.20f, 0.26f, 1.00f};
    c[ImGuiCol_FrameBgActive] = {0.26f, 0.26f, 0.36f, 1.00f};
    c[ImGuiCol_TitleBg] = black;
    c[ImGuiCol_TitleBgActive] = blue;
    c[ImGuiCol_TitleBgCollapsed] = black;
    c[ImGuiCol_MenuBarBg] = {0.08f, 0.08f, 0.08f, 1.00f};
    c[ImGuiCol_ScrollbarBg] = {0.05f, 0.05f, 0.05f, 1.00f};
    c[ImGuiCol_ScrollbarGrab] = {0.60f, 0.60f, 0.60f, 1.00f};
    c[ImGuiCol_ScrollbarGrabHovered] = {0.78f, 0.78f, 0.78f, 1.00f};
    c[ImGuiCol_ScrollbarGrabActive] = white;
    c[ImGuiCol_CheckMark] = yellow;
    c[ImGuiCol_SliderGrab] = blue_active;  // the slider's value is written over it, in white
    c[ImGuiCol_SliderGrabActive] = {0.00f, 0.30f, 0.65f, 1.00f};
    c[ImGuiCol_Button] = blue;
    c[ImGuiCol_ButtonHovered] = blue_hovered;
    c[ImGuiCol_ButtonActive] = blue_active;
    c[ImGuiCol_Header] = blue;
    c[ImGuiCol_HeaderHovered] = blue_hovered;
    c[ImGuiCol_HeaderActive] = blue_active;
    c[ImGuiCol_Separator] = {0.75f, 0.75f, 0.75f, 1.00f};
    c[ImGuiCol_SeparatorHovered] = yellow;
    c[ImGuiCol_SeparatorActive] = yellow;
    c[ImGuiCol_ResizeGrip] = {0.75f, 0.75f, 0.75f, 1.00f};
    c[ImGuiCol_ResizeGripHovered] = yellow;
    c[ImGuiCol_ResizeGripActive] = yellow;
    c[ImGuiCol_Tab] = {0.00f, 0.14f, 0.32f, 1.00f};
    c[ImGuiCol_TabHovered] = blue_hovered;
    c[ImGuiCol_TabActive] = blue_active;
    c[ImGuiCol_TabUnfocused] = {0.00f, 0.14f, 0.32f, 1.00f};
    c[ImGuiCol_TabUnfocusedActive] = blue;
    c[ImGuiCol_PlotLines] = white;
    c[ImGuiCol_PlotLinesHovered] = yellow;
    c[ImGuiCol_PlotHistogram] = yellow;
    c[ImGuiCol_PlotHistogramHovered] = {1.00f, 0.80f, 0.00f, 1.00f};
    c[ImGuiCol_TableHeaderBg] = {0.12f, 0.12f, 0.16f, 1.00f};
    c[ImGuiCol_TableBorderStrong] = {0.75f, 0.75f, 0.75f, 1.00f};
    c[ImGuiCol_TableBorderLight] = {0.50f, 0.50f, 0.50f, 1.00f};
    c[ImGuiCol_TableRowBg] = {0, 0, 0, 0};
    c[ImGuiCol_TableRowBgAlt] = {1.00f, 1.00f, 1.00f, 0.07f};
    c[ImGuiCol_TextSelectedBg] = {0.00f, 0.45f, 1.00f, 0.60f};
    c[ImGuiCol_DragDropTarget] = yellow;
    c[ImGuiCol_NavHighlight] = yellow;
    c[ImGuiCol_NavWindowingHighlight] = yellow;
    c[ImGuiCol_NavWindowingDimBg] = {0.80f, 0.80f, 0.80f, 0.30f};
    c[ImGuiCol_ModalWindowDimBg] = {0.00f, 0.00f, 0.00f, 0.70f};
    s.FrameBorderSize = 1;
    s.PopupBorderSize = 1;
    s.TabBorderSize = 1;
}

}  // namespace

ImGuiStyle theme_style(Theme theme, float scale) {
    ImGuiStyle s;  // ImGui's sizes, unscaled
    switch (theme) {
        case Theme::light: light_colors(s); break;
        case Theme::high_contrast: high_contrast_colors(s); break;
        case Theme::dark: ImGui::StyleColorsDark(&s); break;
    }
    s.WindowRounding = 3;
    // Tooltips, menus and popups are opaque: the text behind them must not bleed through.
    s.Colors[ImGuiCol_PopupBg].w = 1.0f;
    s.ScaleAllSizes(scale);
    return s;
}

ImVec4 window_background_over(ImVec4 behind) {
    // As an 8-bit framebuffer blends: each colour and the alpha in 255ths, each product rounded.
    const auto byte = [](float v) { return std::round(std::clamp(v, 0.0f, 1.0f) * 255); };
    const ImVec4 own = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    const float alpha = byte(own.w);
    const auto over = [&](float top, float under) {
        return (std::round(byte(top) * alpha / 255) + std::round(byte(under) * (255 - alpha) / 255)) / 255;
    };
    return {over(own.x, behind.x), over(own.y, behind.y), over(own.z, behind.z), 1.0f};
}

bool apply_appearance(UiContext& ui, const Appearance& a) {
    ui.look = a;
    ui.palette = make_palette(a.theme);
    ImGui::GetStyle() = theme_style(a.theme, ui.scale());
    const float size = std::round(base_font_px * ui.scale());
    if (size == ui.fonts.size) return false;
    // Rasterised anew at the size (a scaled bitmap would blur): the atlas, then its pixels.
    ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
    atlas.Clear();
    ui.fonts = load_fonts(size);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    atlas.GetTexDataAsRGBA32(&pixels, &w, &h);
    return true;
}

}  // namespace attnviz::app
