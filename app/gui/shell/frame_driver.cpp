#include "shell/frame_driver.hpp"

#include <imgui_internal.h>

#include "shell/frame_commands.hpp"
#include "shell/teach_menu.hpp"
#include "shell/workspace_bar.hpp"

namespace attnviz::app {

void draw_frame(AppState& state, UiContext& ui, Panels& p, float frame_ms) {
    const ImGuiIO& io = ImGui::GetIO();
    if (ui.report) ui.report->clear();
    close_on_escape(p);
    ui.dialog_open = dialog_open(p);
    ui.desktop_dialog = false;  // until a file chooser waits for one
    draw_menu_bar(state, ui, p.menu, p.attentions);
    update_model_panel(state, p.model);    // its layers' results, shown or not
    end_attentions_if_replaced(state, p);  // another session or model opened since they were
    draw_view_menu(p, ui);
    draw_teach_menu(p.teach, p.teach_mode, ui);
    for (PanelId panel : p.show_at_start) show_panel(p, panel);
    p.show_at_start.clear();
    if (p.workspace_at_start) switch_workspace(p, *p.workspace_at_start);  // --workspace, over the model's
    p.workspace_at_start.reset();
    // Below the menu, the workspace bar; the windows below that.
    const float menu_h = ImGui::GetFrameHeight() + draw_workspace_bar(p, ui, ImGui::GetFrameHeight());
    // The status bar is a line, or two where the message does not fit beside the status line.
    const StatusLayout status_lines = status_bar_layout(state, frame_ms, attentions_summary(p.attentions));
    const float status_h = status_bar_height(status_lines);
    if (p.reset_layout) {  // every workspace's shares, at their defaults from their next frame
        for (WorkspaceLayout& layout : p.layouts) {
            layout.shares_set = false;
            layout.maximized = -1;
        }
        p.shares_set = false;
        p.reset_layout = false;
    }
    if (!p.shares_set) {
        p.shares = workspace_default_shares(p.workspace, io.DisplaySize);
        p.shares_set = true;
        p.maximized = -1;
    }
    if (p.maximize_at_start) p.maximized = static_cast<int>(*p.maximize_at_start);
    p.maximize_at_start.reset();

    if (p.teach_mode)
        draw_teach_window(state, ui, p, menu_h, status_h);
    else
        draw_explorer_windows(state, ui, p, menu_h, status_h);

    // The status bar is pinned to the bottom edge (drawing no background: theme.hpp).
    const Rect status = status_rect(io.DisplaySize, status_h);
    ImGui::SetNextWindowPos(status.pos);
    ImGui::SetNextWindowSize(status.size);
    const ImGuiWindowFlags bar = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    ImGui::SetNextWindowBgAlpha(0);
    if (ImGui::Begin("##status", nullptr, bar)) draw_status_bar(state, ui, p.status, status_lines);
    ImGui::End();
    draw_message_log(state, ui, p.status);
    draw_recovery_window(state, ui, p.recovery);
    draw_dialogs(state, ui, p);

    ui.heatmaps.end_frame();
    run_commands(state, ui, p);
}

bool imgui_settling(int& popups_seen) {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    const bool changed = g.OpenPopupStack.Size != popups_seen;
    popups_seen = g.OpenPopupStack.Size;
    return changed || (g.DimBgRatio > 0.0f && g.DimBgRatio < 1.0f);
}

}  // namespace attnviz::app
