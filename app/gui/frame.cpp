#include "frame.hpp"

#include <algorithm>

#include "widgets/heatmap.hpp"

namespace attnviz::app {

Layout default_layout(ImVec2 d, float menu_h, float status_h) {
    Layout l;
    const float top = menu_h, bottom = d.y - status_h;
    const float left_w = std::clamp(d.x * 0.21f, 270.0f, 420.0f);
    const float right_x = left_w;
    const float right_w = d.x - left_w;
    const float upper_h = std::round((bottom - top) * 0.47f);
    const float inputs_w = std::round(right_w * 0.46f);
    const float trace_w = std::round(right_w * 0.63f);
    const float dims_h = std::min(std::round((bottom - top) * 0.5f), 356.0f);
    l.dimensions = {{0, top}, {left_w, dims_h}};
    l.pipeline = {{0, top + dims_h}, {left_w, bottom - top - dims_h}};
    l.inputs = {{right_x, top}, {inputs_w, upper_h}};
    l.heads = {{right_x + inputs_w, top}, {right_w - inputs_w, upper_h}};
    l.trace = {{right_x, top + upper_h}, {trace_w, bottom - top - upper_h}};
    l.viewer = {{right_x + trace_w, top + upper_h}, {right_w - trace_w, bottom - top - upper_h}};
    l.status = {{0, bottom}, {d.x, status_h}};
    return l;
}

namespace {

bool begin_window(const char* title, const Rect& r, bool reset) {
    const ImGuiCond cond = reset ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(r.pos, cond);
    ImGui::SetNextWindowSize(r.size, cond);
    return ImGui::Begin(title);
}

// The lesson fills the window between the menu and the status bar.
void draw_teach_window(AppState& state, Panels& p, float menu_h, float status_h) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos({0, menu_h});
    ImGui::SetNextWindowSize({io.DisplaySize.x, io.DisplaySize.y - menu_h - status_h});
    if (ImGui::Begin("Teach: the worked example, step by step", nullptr,
                     ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings))
        draw_teach_panel(state, p.teach, io.DeltaTime);
    ImGui::End();
    state.update();
}

void draw_explorer_windows(AppState& state, Panels& p, const Layout& l, bool reset) {
    // Inputs first: their edits are in the trace before any view draws.
    if (begin_window("Dimensions", l.dimensions, reset)) draw_dimensions_panel(state, p.dimensions);
    ImGui::End();
    if (begin_window("Inputs: X and weights", l.inputs, reset)) draw_inputs_panel(state, p.inputs);
    ImGui::End();

    state.update();

    if (begin_window("Pipeline", l.pipeline, reset)) draw_pipeline_panel(state, p.pipeline);
    ImGui::End();
    if (begin_window("Attention per head", l.heads, reset)) draw_heads_panel(state, p.heads);
    ImGui::End();
    if (begin_window("Every intermediate", l.trace, reset)) draw_trace_panel(state, p.trace);
    ImGui::End();
    if (begin_window("Matrix viewer", l.viewer, reset)) draw_viewer_panel(state, p.viewer);
    ImGui::End();
}

}  // namespace

void enter_teach_mode(AppState& state, Panels& p, int step) {
    if (!p.teach.lesson) load_lesson(p.teach, p.teach.lesson_path);
    p.teach_mode = true;
    teach_go_to(state, p.teach, step);
}

void draw_frame(AppState& state, Panels& p, float frame_ms) {
    const ImGuiIO& io = ImGui::GetIO();
    draw_menu_bar(state, p.menu);
    if (p.menu.toggle_teach) {
        p.menu.toggle_teach = false;
        if (p.teach_mode)
            p.teach_mode = false;
        else
            enter_teach_mode(state, p, p.teach.step);
    }
    const float menu_h = ImGui::GetFrameHeight();
    const float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
    const Layout l = default_layout(io.DisplaySize, menu_h, status_h);
    const bool reset = p.menu.reset_layout;
    p.menu.reset_layout = false;

    if (p.teach_mode)
        draw_teach_window(state, p, menu_h, status_h);
    else
        draw_explorer_windows(state, p, l, reset);

    // The status bar is pinned to the bottom edge.
    ImGui::SetNextWindowPos(l.status.pos);
    ImGui::SetNextWindowSize(l.status.size);
    const ImGuiWindowFlags bar = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    if (ImGui::Begin("##status", nullptr, bar)) draw_status_bar(state, p.status, frame_ms);
    ImGui::End();
    heatmap_end_frame();
}

}  // namespace attnviz::app
