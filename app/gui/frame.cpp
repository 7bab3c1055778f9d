#include "frame.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace attnviz::app {

Layout default_layout(ImVec2 d, float menu_h, float status_h) {
    Layout l;
    auto at = [&](Place p) -> Rect& { return l[static_cast<size_t>(p)]; };
    const float top = menu_h, bottom = d.y - status_h;
    const float left_w = std::clamp(d.x * 0.21f, 270.0f, 420.0f);
    const float right_x = left_w;
    const float right_w = d.x - left_w;
    const float upper_h = std::round((bottom - top) * 0.47f);
    const float upper_left_w = std::round(right_w * 0.46f);
    const float lower_left_w = std::round(right_w * 0.63f);
    const float left_top_h = std::min(std::round((bottom - top) * 0.5f), 356.0f);
    at(Place::left_top) = {{0, top}, {left_w, left_top_h}};
    at(Place::left_bottom) = {{0, top + left_top_h}, {left_w, bottom - top - left_top_h}};
    at(Place::upper_left) = {{right_x, top}, {upper_left_w, upper_h}};
    at(Place::upper_right) = {{right_x + upper_left_w, top}, {right_w - upper_left_w, upper_h}};
    at(Place::lower_left) = {{right_x, top + upper_h}, {lower_left_w, bottom - top - upper_h}};
    at(Place::lower_right) = {{right_x + lower_left_w, top + upper_h},
                              {right_w - lower_left_w, bottom - top - upper_h}};
    return l;
}

Rect status_rect(ImVec2 d, float status_h) { return {{0, d.y - status_h}, {d.x, status_h}}; }

namespace {

const PanelRow panel_table[] = {
    {"Dimensions", Place::left_top, Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_dimensions_panel(s, ui, p.dimensions); }},
    {"Inputs: X and weights", Place::upper_left, Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_inputs_panel(s, ui, p.inputs); }},
    {"Pipeline", Place::left_bottom, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_pipeline_panel(s, ui, p.pipeline); }},
    {"Attention per head", Place::upper_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_heads_panel(s, ui, p.heads); }},
    {"Every intermediate", Place::lower_left, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_trace_panel(s, ui, p.trace); }},
    {"Matrix viewer", Place::lower_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_viewer_panel(s, ui, p.viewer); }},
};

void record_window(UiContext& ui, const char* title) {
    if (ui.report) ui.report->windows.push_back({title, ImGui::GetWindowPos(), ImGui::GetWindowSize()});
}

void draw_panel(const PanelRow& row, AppState& state, UiContext& ui, Panels& p, const Layout& l, bool reset) {
    const Rect& r = l[static_cast<size_t>(row.place)];
    const ImGuiCond cond = reset ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(r.pos, cond);
    ImGui::SetNextWindowSize(r.size, cond);
    if (ImGui::Begin(row.title)) {
        record_window(ui, row.title);
        row.draw(state, ui, p);
    }
    ImGui::End();
}

// The lesson fills the window between the menu and the status bar.
void draw_teach_window(AppState& state, UiContext& ui, Panels& p, float menu_h, float status_h) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos({0, menu_h});
    ImGui::SetNextWindowSize({io.DisplaySize.x, io.DisplaySize.y - menu_h - status_h});
    const char* title = "Teach: the worked example, step by step";
    if (ImGui::Begin(title, nullptr,
                     ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings)) {
        record_window(ui, title);
        draw_teach_panel(state, ui, p.teach, io.DeltaTime);
    }
    ImGui::End();
    state.update();
}

void draw_explorer_windows(AppState& state, UiContext& ui, Panels& p, const Layout& l, bool reset) {
    for (Stage stage : {Stage::edits, Stage::views}) {
        for (const PanelRow& row : panel_table)
            if (row.stage == stage) draw_panel(row, state, ui, p, l, reset);
        if (stage == Stage::edits) state.update();  // edits are in the trace before any view draws
    }
}

}  // namespace

std::span<const PanelRow> explorer_panels() { return panel_table; }

bool animating(const Panels& p, const AppState& state) {
    return (p.teach_mode && p.teach.playing) || state.computing();
}

void enter_teach_mode(AppState& state, Panels& p, int step) {
    if (!p.teach.lesson) load_lesson(p.teach, p.teach.lesson_path);
    p.teach_mode = true;
    teach_go_to(state, p.teach, step);
}

std::string window_title(const AppState& state) {
    const std::string name = state.file_path().empty() ? std::string("unsaved session")
                                                       : std::filesystem::path(state.file_path()).filename().string();
    return name + (state.modified() ? "*" : "") + " — attnviz";
}

void run_commands(AppState& state, UiContext& ui, Panels& p) {
    for (const std::string& path : ui.dropped_files) state.open_file(path);  // like File > Open
    ui.dropped_files.clear();
    const std::vector<Command> commands = std::move(ui.commands);
    ui.commands.clear();
    for (Command c : commands) {
        switch (c) {
            case Command::open: p.menu.open_dialog = true; break;
            case Command::import_layer: p.menu.import.open = true; break;
            case Command::save: save_or_ask(state, p.menu); break;
            case Command::save_as: p.menu.save_dialog = true; break;
            case Command::quit:
                if (state.modified())
                    p.menu.ask_quit = true;  // the "Unsaved changes" dialog decides
                else
                    p.quit = true;
                break;
            case Command::undo: state.undo(); break;
            case Command::redo: state.redo(); break;
            case Command::toggle_teach:
                if (p.teach_mode)
                    p.teach_mode = false;
                else
                    enter_teach_mode(state, p, p.teach.step);
                break;
            case Command::reset_layout: p.reset_layout = true; break;
            case Command::count: break;
        }
    }
}

void draw_frame(AppState& state, UiContext& ui, Panels& p, float frame_ms) {
    const ImGuiIO& io = ImGui::GetIO();
    if (ui.report) ui.report->clear();
    draw_menu_bar(state, ui, p.menu, p.quit);
    const float menu_h = ImGui::GetFrameHeight();
    const float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
    const bool reset = p.reset_layout;
    p.reset_layout = false;

    if (p.teach_mode)
        draw_teach_window(state, ui, p, menu_h, status_h);
    else
        draw_explorer_windows(state, ui, p, default_layout(io.DisplaySize, menu_h, status_h), reset);

    // The status bar is pinned to the bottom edge.
    const Rect status = status_rect(io.DisplaySize, status_h);
    ImGui::SetNextWindowPos(status.pos);
    ImGui::SetNextWindowSize(status.size);
    const ImGuiWindowFlags bar = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    if (ImGui::Begin("##status", nullptr, bar)) draw_status_bar(state, ui, p.status, frame_ms);
    ImGui::End();
    draw_recovery_window(state, ui, p.recovery);

    ui.heatmaps.end_frame();
    run_commands(state, ui, p);
}

}  // namespace attnviz::app
