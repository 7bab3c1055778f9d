#include "dialogs/recovery_window.hpp"

#include <imgui.h>

#include "core/base/format.hpp"

namespace attnviz::app {

bool restore_offer(AppState& state, RecoveryWindow& w, size_t index) {
    if (index >= w.offers.size()) return false;
    const core::AutosaveInfo info = w.offers[index];
    core::Result<core::Session> session = core::AutosaveStore::load(info);
    if (!session) {
        state.set_message("Could not restore the unsaved work: " + session.problems.front().str(), true);
        return false;
    }
    const std::string from = info.file.empty() ? "a new session" : info.file;
    if (!state.restore_unsaved(std::move(*session.value), info.file,
                               "Restored unsaved work (" + from + ", " + core::local_time_text(info.saved_at) +
                                   "); save it to keep it"))
        return false;
    // The work is this instance's to keep safe now: written under its own id before the old
    // autosave goes, so no moment exists where a crash would lose it.
    if (w.store && w.store->enabled() && !w.store->save(state.session(), state.file_path()).empty()) return true;
    core::AutosaveStore::discard(info);
    w.offers.erase(w.offers.begin() + static_cast<std::ptrdiff_t>(index));
    return true;
}

void discard_offer(RecoveryWindow& w, size_t index) {
    if (index >= w.offers.size()) return;
    core::AutosaveStore::discard(w.offers[index]);
    w.offers.erase(w.offers.begin() + static_cast<std::ptrdiff_t>(index));
}

void draw_recovery_window(AppState& state, UiContext& ui, RecoveryWindow& w) {
    if (w.offers.empty()) return;
    const ImGuiIO& io = ImGui::GetIO();
    const float font = ImGui::GetFontSize();
    ImGui::SetNextWindowPos({io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.3f}, ImGuiCond_Appearing, {0.5f, 0.5f});
    ImGui::SetNextWindowSizeConstraints({font * 28, 0}, {io.DisplaySize.x * 0.9f, io.DisplaySize.y * 0.8f});
    if (!w.focused) ImGui::SetNextWindowFocus();
    w.focused = true;
    const char* title = recovery_window_title;
    bool open = true;
    if (ImGui::Begin(title, &open,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings)) {
        if (ui.report) ui.report->windows.push_back({title, ImGui::GetWindowPos(), ImGui::GetWindowSize()});
        ImGui::PushTextWrapPos(font * 34);
        ImGui::TextUnformatted("attnviz did not close normally last time, and this work was not saved:");
        ImGui::PopTextWrapPos();
        ImGui::Separator();
        for (size_t k = 0; k < w.offers.size(); ++k) {
            const core::AutosaveInfo& o = w.offers[k];
            ImGui::PushID(static_cast<int>(k));
            // The record's texts are a file's: shown escaped.
            ImGui::TextUnformatted(core::printable(o.what).c_str());
            ImGui::TextDisabled("from %s, autosaved %s",
                                o.file.empty() ? "a new session" : core::printable(o.file).c_str(),
                                core::local_time_text(o.saved_at).c_str());
            if (ImGui::Button("Restore")) {
                restore_offer(state, w, k);
                ImGui::PopID();
                break;  // the list changed
            }
            ui.report_item("recovery: restore " + std::to_string(k));
            ImGui::SameLine();
            if (ImGui::Button("Discard")) {
                discard_offer(w, k);
                ImGui::PopID();
                break;
            }
            ui.report_item("recovery: discard " + std::to_string(k));
            ImGui::Separator();
            ImGui::PopID();
        }
        if (ImGui::Button("Decide later")) open = false;
        ui.report_item("recovery: later");
    }
    ImGui::End();
    if (!open) w.offers.clear();  // kept on disk: offered again at the next start
}

}  // namespace attnviz::app
