// libFuzzer target for the lesson as the window draws it: a lesson file and a token label of any
// length, drawn through every step of teach mode (and the explorer beside it) with the app's own
// panels on a headless ImGui context (tests/gui/headless.hpp: its fonts, no window, no GL).
//
// The input: its first line is a token label, the rest a lesson file (attnviz-lesson JSON). The
// session is the worked example with token 0 that label repeated to 20,000 bytes and token 1 the
// label itself, so every step's text and matrices draw a long label. A text item that draws more
// vertices than a draw list's 16-bit indices hold aborts in ImGui::Render: a crash for the fuzzer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/attention/presets.hpp"
#include "core/teach/lesson.hpp"
#include "fuzz_check.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/app_state.hpp"

namespace core = attnviz::core;
namespace app = attnviz::app;

namespace {

// The most steps drawn of one lesson (each takes a frame or two of the whole window).
constexpr int max_steps = 16;

void frame(attnviz::test::HeadlessImGui& imgui, app::AppState& state, app::Panels& panels) {
    ImGui::NewFrame();
    app::draw_frame(state, imgui.ui, panels, 16.0f);
    ImGui::Render();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static attnviz::test::HeadlessImGui imgui;  // one context and font atlas for every input
    const std::string_view input = attnviz::fuzz::as_text(data, size);
    const std::size_t newline = input.find('\n');
    if (newline == std::string_view::npos) return 0;
    const std::string label(input.substr(0, newline));
    core::Result<core::Lesson> lesson = core::parse_lesson(input.substr(newline + 1));
    if (!lesson) return 0;  // the reader itself is fuzz_lesson's

    core::Session session = core::worked_example();
    std::string long_label;
    while (!label.empty() && long_label.size() < 20000) long_label += label;
    session.tokens = {long_label, label};
    app::AppState state(session);
    state.set_notation(imgui.fonts.notation);
    app::Panels panels;
    const int steps = static_cast<int>(lesson.value->steps.size());
    panels.teach.lesson = std::move(*lesson.value);
    app::enter_teach_mode(state, panels, 0);
    for (int k = 0; k < steps && k < max_steps; ++k) {
        app::teach_go_to(state, panels.teach, k);
        frame(imgui, state, panels);
        panels.teach.exercising = true;  // the step again with its result hidden (the exercise's grid)
        frame(imgui, state, panels);
    }
    imgui.ui.request(app::command::ToggleTeach{});  // the explorer with the same labels
    frame(imgui, state, panels);
    frame(imgui, state, panels);
    attnviz::fuzz::check(!panels.teach_mode, "teach mode did not end");
    return 0;
}
