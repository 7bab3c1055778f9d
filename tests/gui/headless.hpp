// A bare ImGui context for driving the UI without a window or GL: fonts built, a display size set,
// and the OpenGL3 backend's large-mesh support declared. One per test (SetUp/TearDown). It draws
// whole frames of the app, and reads back the numbers a frame reported.
#pragma once

#include <cfloat>

#include <imgui.h>

#include <optional>
#include <string>

#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/app_state.hpp"
#include "ui/fonts.hpp"
#include "ui/ui_context.hpp"

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

    // Draws count whole frames of the app. With a report, each frame reports into it (the last
    // frame's is left there: a frame clears it first); without, into whatever ui.report already points at.
    void frames(app::AppState& state, app::Panels& panels, int count, app::DrawReport* report = nullptr) {
        app::DrawReport* const kept = ui.report;
        if (report) ui.report = report;
        for (int k = 0; k < count; ++k) {
            ImGui::NewFrame();
            app::draw_frame(state, ui, panels, 16.0f);
            ImGui::Render();
        }
        ui.report = kept;
    }

    // A click at the middle of `item` (as a frame's report drew it, and read before the first frame,
    // which clears that report): the pointer there for a frame, the button down for one and up for
    // one, then the pointer away.
    void click(app::AppState& state, app::Panels& panels, const app::DrawReport::Item& item,
               app::DrawReport* report = nullptr) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = {(item.min.x + item.max.x) / 2, (item.min.y + item.max.y) / 2};
        frames(state, panels, 1, report);
        io.MouseDown[0] = true;
        frames(state, panels, 1, report);
        io.MouseDown[0] = false;
        frames(state, panels, 1, report);
        io.MousePos = {-FLT_MAX, -FLT_MAX};
    }

    app::Fonts fonts;
    app::UiContext ui;  // the panels' shared context, with these fonts
};

// The number a frame reported under name, if it reported one.
inline std::optional<double> reported_value(const app::DrawReport& report, const std::string& name) {
    for (const app::DrawReport::Value& v : report.values)
        if (v.name == name) return v.value;
    return std::nullopt;
}

}  // namespace attnviz::test
