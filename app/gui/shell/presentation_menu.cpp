#include "shell/presentation_menu.hpp"

#include <imgui.h>

#include <cmath>
#include <string>

namespace attnviz::app {

namespace {

// GLFW's key codes (ImGui 1.86's GLFW backend indexes io.KeysDown by them).
constexpr int key_0 = 48, key_minus = 45, key_equal = 61, key_f11 = 300;
constexpr int key_keypad_0 = 320, key_keypad_minus = 333, key_keypad_plus = 334;

// The look with the text size stepped (1 larger, -1 smaller, 0 back to 100 %).
Appearance with_scale(const Appearance& a, int direction) {
    Appearance b = a;
    b.scale = stepped_ui_scale(a.scale, direction);
    return b;
}

// One radio item of the look: checked when `value` is the current one.
template <typename T>
void look_item(UiContext& ui, const char* label, const Appearance& a, T Appearance::*field, T value) {
    const bool on = a.*field == value;
    if (ImGui::MenuItem(label, nullptr, on)) {
        Appearance b = a;
        b.*field = value;
        ui.request(command::SetAppearance{b});
    }
    ui.report_item(std::string("view: ") + label + (on ? " (checked)" : ""));
}

}  // namespace

void draw_presentation_items(UiContext& ui, const PresentationChecks& c) {
    const Appearance& a = c.appearance;
    if (ImGui::MenuItem("Focus: the lesson's text and matrices, large", nullptr, c.focus))
        ui.request(command::ToggleFocus{});
    ui.report_item(c.focus ? "view: focus (checked)" : "view: focus");
    if (ImGui::MenuItem("Full screen", "F11", c.full_screen)) ui.request(command::ToggleFullScreen{});
    ui.report_item(c.full_screen ? "view: full screen (checked)" : "view: full screen");
    ImGui::Separator();
    const std::string size = "Text size: " + std::to_string(static_cast<int>(std::lround(a.scale * 100))) + " %";
    ImGui::TextDisabled("%s", size.c_str());
    if (ImGui::MenuItem("Larger text", "Ctrl+=", false, a.scale < max_ui_scale))
        ui.request(command::SetAppearance{with_scale(a, 1)});
    ui.report_item("view: larger text");
    if (ImGui::MenuItem("Smaller text", "Ctrl+-", false, a.scale > min_ui_scale))
        ui.request(command::SetAppearance{with_scale(a, -1)});
    ui.report_item("view: smaller text");
    if (ImGui::MenuItem("Reset text size", "Ctrl+0", false, a.scale != 1.0f))
        ui.request(command::SetAppearance{with_scale(a, 0)});
    if (ImGui::BeginMenu("Theme")) {
        look_item(ui, "Dark", a, &Appearance::theme, Theme::dark);
        look_item(ui, "Light (for projectors)", a, &Appearance::theme, Theme::light);
        look_item(ui, "High contrast", a, &Appearance::theme, Theme::high_contrast);
        ImGui::EndMenu();
    }
    ui.report_item("view: theme");
    if (ImGui::BeginMenu("Weights' colormap")) {
        look_item(ui, "viridis", a, &Appearance::weights, core::Colormap::sequential);
        look_item(ui, "cividis (colour-blind safe)", a, &Appearance::weights, core::Colormap::cividis);
        ImGui::EndMenu();
    }
    ui.report_item("view: colormap");
}

void presentation_shortcuts(UiContext& ui, const Appearance& a) {
    // The size the text is drawn at, for the draw report (tests of a change made while running).
    ui.report_value("view: font px", ImGui::GetFontSize());
    if (ui.dialog_open) return;
    const ImGuiIO& io = ImGui::GetIO();
    const auto pressed = [](int key, int keypad) { return ImGui::IsKeyPressed(key) || ImGui::IsKeyPressed(keypad); };
    if (io.KeyCtrl && pressed(key_equal, key_keypad_plus) && a.scale < max_ui_scale)
        ui.request(command::SetAppearance{with_scale(a, 1)});
    if (io.KeyCtrl && pressed(key_minus, key_keypad_minus) && a.scale > min_ui_scale)
        ui.request(command::SetAppearance{with_scale(a, -1)});
    if (io.KeyCtrl && pressed(key_0, key_keypad_0) && a.scale != 1.0f)
        ui.request(command::SetAppearance{with_scale(a, 0)});
    if (ImGui::IsKeyPressed(key_f11, false)) ui.request(command::ToggleFullScreen{});
}

}  // namespace attnviz::app
