#include "shell/workspace_bar.hpp"

#include <string>

namespace attnviz::app {

namespace {

// Ctrl+1 … Ctrl+N: the workspaces in bar order; Ctrl+K: the palette. None while a dialog has the
// keyboard. ImGui 1.86 indexes keys by the platform's code: GLFW's digits and letters are ASCII.
void workspace_keys(const Panels& p, UiContext& ui) {
    const ImGuiIO& io = ImGui::GetIO();
    if (ui.dialog_open || !io.KeyCtrl) return;
    for (size_t k = 0; k < workspace_count; ++k)
        if (ImGui::IsKeyPressed('1' + static_cast<int>(k), false) && !p.attentions.on())
            ui.request(command::SwitchWorkspace{static_cast<Workspace>(k)});
    if (ImGui::IsKeyPressed('K', false)) ui.request(command::OpenPalette{});
}

}  // namespace

float draw_workspace_bar(const Panels& p, UiContext& ui, float top) {
    workspace_keys(p, ui);
    if (ui.report) ui.report->workspace = workspace_name(p.workspace);
    if (p.teach_mode) return 0;  // the lesson alone fills the window (F2 or Ctrl+1…5 leave it)
    const ImGuiStyle& style = ImGui::GetStyle();
    const float height = ImGui::GetFrameHeight() + style.WindowPadding.y;  // half the padding above, half below
    ImGui::SetNextWindowPos({0, top});
    ImGui::SetNextWindowSize({ImGui::GetIO().DisplaySize.x, height});
    ImGui::SetNextWindowBgAlpha(0);  // the colour behind the windows (theme.hpp)
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {style.WindowPadding.x, style.WindowPadding.y / 2});
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                   ImGuiWindowFlags_NoScrollWithMouse;
    if (ImGui::Begin("##workspaces", nullptr, flags)) {
        const bool attentions = p.attentions.on();
        for (size_t k = 0; k < workspace_count; ++k) {
            const auto w = static_cast<Workspace>(k);
            const bool current = w == p.workspace;
            if (k > 0) ImGui::SameLine();
            const std::string label = std::string(workspace_name(w)) + "##workspace";
            const ImVec2 size{ImGui::CalcTextSize(workspace_name(w)).x + 2 * style.FramePadding.x + 8,
                              ImGui::GetFrameHeight()};
            if (current) ImGui::PushStyleColor(ImGuiCol_Button, style.Colors[ImGuiCol_TabActive]);
            ImGui::BeginDisabled(attentions && !current);
            if (ImGui::Button(label.c_str(), size) && !current) ui.request(command::SwitchWorkspace{w});
            ImGui::EndDisabled();
            if (current) ImGui::PopStyleColor();
            if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                ImGui::SetTooltip("%s (Ctrl+%d): %s", workspace_name(w), static_cast<int>(k) + 1,
                                  attentions ? "File > Close attentions first" : workspace_summary(w));
            ui.report_item(std::string("workspace: ") + workspace_name(w) + (current ? " (current)" : ""));
        }
        // The palette's button at the right end, when there is room for it beside the tabs.
        const char* find = "Find anything  Ctrl+K";
        const float find_w = ImGui::CalcTextSize(find).x + 2 * style.FramePadding.x;
        const float right = ImGui::GetWindowContentRegionMax().x;
        ImGui::SameLine();
        if (ImGui::GetCursorPosX() + find_w + style.ItemSpacing.x <= right) {
            ImGui::SetCursorPosX(right - find_w);
            if (ImGui::Button(find)) ui.request(command::OpenPalette{});
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Any panel, workspace, lesson, export or action by name");
            ui.report_item("workspace: find");
        } else {
            ImGui::NewLine();
        }
    }
    ImGui::End();
    ImGui::PopStyleVar();
    return height;
}

}  // namespace attnviz::app
