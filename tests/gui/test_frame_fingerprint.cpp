// A frame that draws what the window shows already is not drawn again (frame_fingerprint.hpp): the
// same frame has the same fingerprint, and any change the renderer would show (a number, a
// colour, the framebuffer's size, a texture's pixels) gives another.
#include "shell/frame_fingerprint.hpp"

#include <gtest/gtest.h>

#include <string>

#include "headless.hpp"

using namespace attnviz;

namespace {

class FrameFingerprint : public ::testing::Test {
protected:
    // One frame: a window with a text and a filled rectangle of `colour`; its draw data's fingerprint.
    std::uint64_t frame(const std::string& text, ImU32 colour = IM_COL32(200, 40, 40, 255),
                        app::FrameInputs inputs = {1280, 800, {0, 0, 0, 1}, 0}) {
        ImGui::NewFrame();
        ImGui::SetNextWindowPos({10, 10});
        ImGui::SetNextWindowSize({300, 200});
        ImGui::Begin("fingerprint");
        ImGui::TextUnformatted(text.c_str());
        const ImVec2 at = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(at, {at.x + 40, at.y + 20}, colour);
        ImGui::End();
        ImGui::Render();
        return app::frame_fingerprint(*ImGui::GetDrawData(), inputs);
    }
    test::HeadlessImGui imgui_{{1280, 800}, false};
};

TEST_F(FrameFingerprint, TheSameFrameHasTheSameFingerprint) {
    frame("x = 0.25");  // ImGui settles the window's size and position in the first frames
    frame("x = 0.25");
    EXPECT_EQ(frame("x = 0.25"), frame("x = 0.25"));
}

TEST_F(FrameFingerprint, WhatTheRendererWouldShowOtherwiseChangesIt) {
    frame("x = 0.25");
    const std::uint64_t base = frame("x = 0.25");
    EXPECT_NE(frame("x = 0.26"), base);                                                               // a number
    EXPECT_NE(frame("x = 0.25", IM_COL32(200, 40, 41, 255)), base);                                   // a colour
    EXPECT_NE(frame("x = 0.25", IM_COL32(200, 40, 40, 255), {1280, 801, {0, 0, 0, 1}, 0}), base);     // a size
    EXPECT_NE(frame("x = 0.25", IM_COL32(200, 40, 40, 255), {1280, 800, {0, 0, 0.5f, 1}, 0}), base);  // background
    EXPECT_NE(frame("x = 0.25", IM_COL32(200, 40, 40, 255), {1280, 800, {0, 0, 0, 1}, 1}), base);     // a texture
    EXPECT_EQ(frame("x = 0.25"), base);
}

// A frame is drawn when it differs from the one drawn last, or when asked (the window's pixels
// were lost), and the first always.
TEST_F(FrameFingerprint, TheSkipperDrawsOnlyAChangedOrDamagedFrame) {
    app::FrameSkipper skipper;
    const app::FrameInputs inputs{1280, 800, {0, 0, 0, 1}, 0};
    const auto must_draw = [&](const std::string& text, bool damaged = false) {
        frame(text);
        return skipper.must_draw(*ImGui::GetDrawData(), inputs, damaged);
    };
    frame("a");
    frame("a");
    EXPECT_TRUE(must_draw("a"));
    EXPECT_FALSE(must_draw("a"));
    EXPECT_TRUE(must_draw("b"));
    EXPECT_FALSE(must_draw("b"));
    EXPECT_TRUE(must_draw("b", true));
    EXPECT_TRUE(must_draw("a"));
}

}  // namespace
