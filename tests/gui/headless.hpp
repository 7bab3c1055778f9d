// A bare ImGui context for driving the UI without a window or GL: fonts built, a display size set,
// and the OpenGL3 backend's large-mesh support declared. One per test (SetUp/TearDown).
#pragma once

#include <imgui.h>

#include "fonts.hpp"
#include "ui_context.hpp"

namespace attnviz::test {

class HeadlessImGui {
public:
    // With dejavu: the app's own fonts (as the real window loads them); else ImGui's default font.
    explicit HeadlessImGui(ImVec2 display = {1280, 800}, bool dejavu = true) {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = display;
        io.DeltaTime = 1.0f / 60;
        io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // draw lists may pass 65536 vertices
        if (dejavu)
            fonts = app::load_fonts(16.0f);
        else
            io.Fonts->AddFontDefault();
        unsigned char* pixels = nullptr;
        int w = 0, h = 0;
        io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
        ui.fonts = fonts;
    }
    ~HeadlessImGui() {
        ui.heatmaps.set_texture_functions(nullptr, nullptr);
        ImGui::DestroyContext();
    }
    HeadlessImGui(const HeadlessImGui&) = delete;
    HeadlessImGui& operator=(const HeadlessImGui&) = delete;

    app::Fonts fonts;
    app::UiContext ui;  // the panels' shared context, with these fonts
};

}  // namespace attnviz::test
