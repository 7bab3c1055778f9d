#include "menu_bar.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

namespace attnviz::app {

namespace {

// A small modal asking for a path; returns true when confirmed.
bool path_dialog(const char* title, const char* action, std::string& path, bool& open) {
    if (open) {
        ImGui::OpenPopup(title);
        open = false;
    }
    bool confirmed = false;
    if (ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("Session file (attnviz-session JSON):");
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
        if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
        const bool enter = ImGui::InputText("##path", &path, ImGuiInputTextFlags_EnterReturnsTrue);
        if ((ImGui::Button(action) || enter) && !path.empty()) {
            confirmed = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    return confirmed;
}

// Saves to the session's file, or asks for a path when it has none. Returns whether it saved.
bool save_or_ask(AppState& state, MenuBar& menu) {
    if (state.file_path().empty()) {
        menu.save_dialog = true;
        return false;
    }
    return state.save_file(state.file_path());
}

}  // namespace

void draw_menu_bar(AppState& state, MenuBar& menu) {
    if (ImGui::BeginMainMenuBar()) {
        if (ImGui::BeginMenu("File")) {
            if (ImGui::MenuItem("Open...", "Ctrl+O")) menu.open_dialog = true;
            if (ImGui::MenuItem("Save", "Ctrl+S")) save_or_ask(state, menu);
            if (ImGui::MenuItem("Save as...")) menu.save_dialog = true;
            ImGui::Separator();
            if (ImGui::MenuItem("Quit")) menu.quit_requested = true;
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Edit")) {
            const std::string undo = "Undo " + state.undo_label(), redo = "Redo " + state.redo_label();
            if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, state.can_undo())) state.undo();
            if (ImGui::MenuItem(redo.c_str(), "Ctrl+Y", false, state.can_redo())) state.redo();
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("View")) {
            if (ImGui::MenuItem("Teach mode: the worked example step by step", "F2")) menu.toggle_teach = true;
            if (ImGui::MenuItem("Reset layout")) menu.reset_layout = true;
            ImGui::EndMenu();
        }
        ImGui::TextDisabled("%s", state.file_path().empty() ? "unsaved session" : state.file_path().c_str());
        ImGui::EndMainMenuBar();
    }
    // ImGui 1.86 indexes keys by the platform key code; GLFW codes letters by their ASCII capital.
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyCtrl && ImGui::IsKeyPressed('O')) menu.open_dialog = true;
    if (io.KeyCtrl && ImGui::IsKeyPressed('S')) save_or_ask(state, menu);
    // Undo/redo of the session; a text field being edited keeps Ctrl+Z for itself.
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Z')) {
        if (io.KeyShift)
            state.redo();
        else
            state.undo();
    }
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Y')) state.redo();
    constexpr int key_f2 = 291;  // GLFW_KEY_F2
    if (ImGui::IsKeyPressed(key_f2)) menu.toggle_teach = true;
    if (menu.path.empty()) menu.path = state.file_path().empty() ? "session.json" : state.file_path();
    if (path_dialog("Open session", "Open", menu.path, menu.open_dialog)) state.open_file(menu.path);
    if (path_dialog("Save session", "Save", menu.path, menu.save_dialog)) state.save_file(menu.path);

    // Quitting with unsaved changes asks first: nothing is lost by a stray click.
    if (menu.quit_requested) {
        menu.quit_requested = false;
        if (state.modified())
            ImGui::OpenPopup("Unsaved changes");
        else
            menu.quit = true;
    }
    if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("The session has changes that are not saved.");
        if (ImGui::Button("Save and quit")) {
            // Without a file this asks where first; quitting then waits for another Quit.
            if (save_or_ask(state, menu)) menu.quit = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Quit without saving")) {
            menu.quit = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

}  // namespace attnviz::app
