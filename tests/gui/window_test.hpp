// A test of the whole window drawn headless: frames of draw_frame with their draw report, the items
// and windows it names, and clicks on an item. Optionally one panel is shown in its place at SetUp.
#pragma once

#include <gtest/gtest.h>

#include <imgui.h>

#include <cfloat>
#include <string>

#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/app_state.hpp"

namespace attnviz::test {

class WindowTest : public ::testing::Test {
protected:
    // `shown`: the title of a panel to show in its place before the first frame ("": the default layout).
    explicit WindowTest(std::string shown = "") : shown_(std::move(shown)) {}

    void SetUp() override {
        imgui_.ui.report = &report;
        if (!shown_.empty()) {
            ASSERT_TRUE(app::show_panel(panels, shown_)) << shown_;
        }
    }
    // Frames of the whole window; the report holds the last one's.
    void frames(app::AppState& state, int count = 1) {
        for (int k = 0; k < count; ++k) {
            report.clear();
            ImGui::NewFrame();
            app::draw_frame(state, imgui_.ui, panels, 16.0f);
            ImGui::Render();
        }
    }
    const app::DrawReport::Item* item(const std::string& name) const {
        for (const auto& i : report.items)
            if (i.name == name) return &i;
        return nullptr;
    }
    bool window(const std::string& title) const {
        for (const auto& w : report.windows)
            if (w.title == title) return true;
        return false;
    }
    // A key pressed for a frame (with Ctrl held when `ctrl`), then released, then two frames.
    void press(app::AppState& state, int key, bool ctrl = false) {
        ImGuiIO& io = ImGui::GetIO();
        io.KeyCtrl = ctrl;
        io.KeysDown[key] = true;
        frames(state);
        io.KeysDown[key] = false;
        io.KeyCtrl = false;
        frames(state, 2);
    }
    // A click at the middle of the item named `name`: the pointer there for a frame, the button down
    // for one and up, then `after` frames; the pointer then leaves the window.
    void click(app::AppState& state, const std::string& name, int after = 1) {
        const app::DrawReport::Item* at = item(name);
        ASSERT_NE(at, nullptr) << name << " was not drawn";
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = {(at->min.x + at->max.x) / 2, (at->min.y + at->max.y) / 2};
        frames(state);
        io.MouseDown[0] = true;
        frames(state);
        io.MouseDown[0] = false;
        frames(state, after);
        io.MousePos = {-FLT_MAX, -FLT_MAX};
    }

    HeadlessImGui imgui_;
    app::Panels panels;
    app::DrawReport report;

private:
    std::string shown_;
};

}  // namespace attnviz::test
