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
        ImGui::TextUnformatted("Session file (attnviz-session JSON), or a checkpoint to import:");
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

// The shortcuts, as commands. ImGui 1.86 indexes keys by the platform key code; GLFW codes letters
// by their ASCII capital.
void shortcuts(UiContext& ui) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyCtrl && ImGui::IsKeyPressed('O')) ui.request(Command::open);
    if (io.KeyCtrl && ImGui::IsKeyPressed('S')) ui.request(Command::save);
    // Undo/redo of the session; a text field being edited keeps Ctrl+Z for itself.
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Z'))
        ui.request(io.KeyShift ? Command::redo : Command::undo);
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Y')) ui.request(Command::redo);
    constexpr int key_f2 = 291;  // GLFW_KEY_F2
    if (ImGui::IsKeyPressed(key_f2)) ui.request(Command::toggle_teach);
}

}  // namespace

bool save_or_ask(AppState& state, MenuBar& menu) {
    if (state.file_path().empty()) {
        menu.save_dialog = true;
        return false;
    }
    return state.save_file(state.file_path());
}

void draw_menu_bar(AppState& state, UiContext& ui, MenuBar& menu, bool& quit) {
    if (ImGui::BeginMainMenuBar()) {
        if (ImGui::BeginMenu("File")) {
            if (ImGui::MenuItem("Open...", "Ctrl+O")) ui.request(Command::open);
            if (ImGui::MenuItem("Import layer...")) ui.request(Command::import_layer);
            if (ImGui::MenuItem("Save", "Ctrl+S")) ui.request(Command::save);
            if (ImGui::MenuItem("Save as...")) ui.request(Command::save_as);
            ImGui::Separator();
            if (ImGui::MenuItem("Quit")) ui.request(Command::quit);
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Edit")) {
            const std::string undo = "Undo " + state.undo_label(), redo = "Redo " + state.redo_label();
            if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, state.can_undo())) ui.request(Command::undo);
            if (ImGui::MenuItem(redo.c_str(), "Ctrl+Y", false, state.can_redo())) ui.request(Command::redo);
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("View")) {
            if (ImGui::MenuItem("Teach mode: the worked example step by step", "F2")) ui.request(Command::toggle_teach);
            if (ImGui::MenuItem("Reset layout")) ui.request(Command::reset_layout);
            ImGui::EndMenu();
        }
        ImGui::TextDisabled("%s", state.file_path().empty() ? "unsaved session" : state.file_path().c_str());
        ImGui::EndMainMenuBar();
    }
    shortcuts(ui);
    if (menu.path.empty()) menu.path = state.file_path().empty() ? "session.json" : state.file_path();
    if (path_dialog("Open session", "Open", menu.path, menu.open_dialog)) state.open_file(menu.path);
    if (path_dialog("Save session", "Save", menu.path, menu.save_dialog)) state.save_file(menu.path);
    draw_import_dialog(state, ui, menu.import);

    // Quitting with unsaved changes asks first: nothing is lost by a stray click.
    if (menu.ask_quit) {
        menu.ask_quit = false;
        ImGui::OpenPopup("Unsaved changes");
    }
    if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("The session has changes that are not saved.");
        if (ImGui::Button("Save and quit")) {
            // Without a file this asks where first; quitting then waits for another Quit.
            if (save_or_ask(state, menu)) quit = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Quit without saving")) {
            quit = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

}  // namespace attnviz::app
