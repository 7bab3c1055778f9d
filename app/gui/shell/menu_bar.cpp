#include "shell/menu_bar.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>

#include "core/base/format.hpp"

namespace attnviz::app {

namespace {

// File > Open cached model: the models of the local Hugging Face hub cache (listed when the menu
// opens), each with its type and size; where there are none, the folders looked in.
void draw_cached_models_menu(MenuBar& menu, UiContext& ui) {
    if (!ImGui::BeginMenu("Open cached model")) return;
    if (ImGui::IsWindowAppearing()) {
        const model::HubEnvironment env = model::HubEnvironment::from_process();
        menu.cached_models = model::list_cached_models(env);
        menu.cache_folders = model::hub_cache_folders(env);
    }
    if (menu.cached_models.empty()) {
        ImGui::TextDisabled("No model in the Hugging Face hub cache. Looked in:");
        for (const std::string& folder : menu.cache_folders) ImGui::TextDisabled("  %s", folder.c_str());
        ImGui::TextDisabled("huggingface-cli download NAME puts one there (attnviz downloads nothing).");
    }
    for (const model::CachedModel& m : menu.cached_models) {
        const std::string detail = (m.model_type.empty() ? std::string("no config.json") : m.model_type) + ", " +
                                   core::format_bytes(static_cast<long long>(m.bytes));
        if (ImGui::MenuItem(m.name.c_str(), detail.c_str())) ui.request(command::OpenModelFolder{m.folder});
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.folder.c_str());
    }
    ImGui::EndMenu();
}

// The dialog Quit opens when the session has unsaved changes.
constexpr const char* quit_title = "Unsaved changes";

// The shortcuts, as commands; none while a dialog is open (it has the keyboard). ImGui 1.86 indexes
// keys by the platform key code; GLFW codes letters by their ASCII capital.
// What File > Export… starts on: the matrix in the viewer, or with attentions open the head view.
ExportTarget export_target(const AppState& state, bool attentions) {
    return attentions ? ExportTarget{ExportTarget::Kind::head_view, {}}
                      : ExportTarget{ExportTarget::Kind::matrix, state.viewed()};
}

// With attentions open, the session's shortcuts (save, undo, redo) wait: the session is not shown.
void shortcuts(const AppState& state, UiContext& ui, bool attentions) {
    if (ui.dialog_open) return;
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyCtrl && ImGui::IsKeyPressed('O')) ui.request(command::Open{});
    if (io.KeyCtrl && ImGui::IsKeyPressed('E')) ui.request_export(export_target(state, attentions));
    if (attentions) return;
    if (io.KeyCtrl && ImGui::IsKeyPressed('S')) ui.request(command::Save{});
    // Undo/redo of the session; a text field being edited keeps Ctrl+Z for itself.
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Z'))
        ui.request(io.KeyShift ? Command{command::Redo{}} : Command{command::Undo{}});
    if (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('Y')) ui.request(command::Redo{});
    constexpr int key_f2 = 291;  // GLFW_KEY_F2
    if (ImGui::IsKeyPressed(key_f2)) ui.request(command::ToggleTeach{});
}

// A checkpoint opened without an X: its X is random, which its attention cannot show. Said in the
// window, with the import dialog one click away.
void draw_random_x_notice(MenuBar& menu, UiContext& ui) {
    const char* title = "X is random";
    if (!menu.random_x.empty() && !ImGui::IsPopupOpen(title)) ImGui::OpenPopup(title);
    if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        menu.random_x.clear();  // closed (Esc)
        return;
    }
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextWrapped(
        "%s holds the layer's weights but no X, the hidden states entering the layer: X is random, "
        "U(-1, 1). The attention shown is that of random inputs, not of the model's.",
        menu.random_x.c_str());
    ImGui::TextWrapped(
        "For real inputs, import the layer with X from a .npy (scripts/export-layer.py writes it) or with token "
        "ids (rows of the checkpoint's embedding table).");
    ImGui::PopTextWrapPos();
    const bool again = ImGui::Button("Import layer with X...");
    ui.report_item("random x: import");
    if (again) {
        menu.import.path = menu.random_x;
        list_tensors(menu.import);
        ui.request(command::ImportLayer{});  // once this notice has closed: one dialog at a time
    }
    ImGui::SameLine();
    if (again || ImGui::Button("Keep the random X")) {
        menu.random_x.clear();
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

}  // namespace

bool open_and_note(AppState& state, MenuBar& menu, const std::string& path) {
    if (!state.open_file(path)) return false;
    menu.recent.add(path);
    if (AppState::is_checkpoint(path) && checkpoint_x_is_random(path)) menu.random_x = path;
    return true;
}

bool save_or_ask(AppState& state, MenuBar& menu) {
    if (state.file_path().empty()) {
        open_save_dialog(state, menu);
        return false;
    }
    return state.save_file(state.file_path());
}

std::string session_title(const AppState& state, bool whole_path) {
    const std::string& path = state.file_path();
    const std::string name = path.empty() ? std::string("unsaved session")
                             : whole_path ? path
                                          : std::filesystem::path(path).filename().string();
    return name + (state.modified() ? "*" : "");
}

void draw_menu_bar(AppState& state, UiContext& ui, MenuBar& menu, const AttentionsMode& attentions) {
    const bool weights_only = attentions.on();
    // An item that needs a session, disabled while attentions are open, says why on hover.
    const auto needs_session = [weights_only] {
        if (weights_only && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("The attentions open are weights only: File > Close attentions goes back to the session");
    };
    if (ImGui::BeginMainMenuBar()) {
        if (ImGui::BeginMenu("File")) {
            if (ImGui::MenuItem("New from a sentence...")) ui.request(command::NewSentence{});
            if (ImGui::MenuItem("Open...", "Ctrl+O")) ui.request(command::Open{});
            if (ImGui::BeginMenu("Open Recent", !menu.recent.paths().empty())) {
                std::string chosen;
                for (const std::string& path : menu.recent.paths()) {
                    std::error_code ec;
                    const bool there = std::filesystem::is_regular_file(path, ec);
                    if (ImGui::MenuItem(path.c_str(), nullptr, false, there)) chosen = path;
                }
                ImGui::Separator();
                if (ImGui::MenuItem("Clear recent files")) menu.recent.clear();
                ImGui::EndMenu();
                if (!chosen.empty()) open_and_note(state, menu, chosen);
            }
            if (ImGui::MenuItem("Import layer...")) ui.request(command::ImportLayer{});
            if (ImGui::MenuItem("Open model...")) ui.request(command::OpenModel{});
            ui.report_item("file: open model");
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip(
                    "A Hugging Face model folder (GPT-2, BERT, Llama...): type a sentence, see every layer");
            draw_cached_models_menu(menu, ui);
            ui.report_item("file: open cached model");
            if (ImGui::MenuItem("Open attentions...")) ui.request(command::OpenAttentions{});
            ui.report_item("file: open attentions");
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip(
                    "Any model's attention weights (Hugging Face's outputs.attentions as .safetensors, .npz or "
                    ".npy, scripts/dump-attentions.py): the head view and the model view");
            if (weights_only && ImGui::MenuItem("Close attentions")) ui.request(command::CloseAttentions{});
            if (weights_only) ui.report_item("file: close attentions");
            if (weights_only && ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the session and its panels");
            if (ImGui::MenuItem("Open beside...", nullptr, false, !weights_only)) ui.request(command::OpenBeside{});
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("A session to show beside this one in the Model view");
            needs_session();
            if (ImGui::MenuItem("Import all layers...", nullptr, false, !weights_only))
                ui.request(command::ImportAllLayers{});
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Every layer of a checkpoint, beside this session in the Model view");
            needs_session();
            if (ImGui::MenuItem("Save", "Ctrl+S", false, !weights_only)) ui.request(command::Save{});
            needs_session();
            if (ImGui::MenuItem("Save as...", nullptr, false, !weights_only)) ui.request(command::SaveAs{});
            needs_session();
            ImGui::Separator();
            if (ImGui::MenuItem("Export...", "Ctrl+E")) ui.request_export(export_target(state, weights_only));
            ImGui::Separator();
            if (ImGui::MenuItem("Quit")) ui.request(command::Quit{});
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Edit")) {
            const std::string undo = "Undo " + state.undo_label(), redo = "Redo " + state.redo_label();
            if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, state.can_undo() && !weights_only))
                ui.request(command::Undo{});
            needs_session();
            if (ImGui::MenuItem(redo.c_str(), "Ctrl+Y", false, state.can_redo() && !weights_only))
                ui.request(command::Redo{});
            needs_session();
            ImGui::Separator();
            // Compare: the session as it is now becomes A; later edits are B, shown as B − A.
            if (ImGui::MenuItem("Pin as A for Compare", nullptr, false, !weights_only)) {
                state.pin();
                ui.request(command::ShowPanel{PanelId::compare});
            }
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Keep the session as it is now (saved with it); the Compare panel shows B - A");
            needs_session();
            if (ImGui::MenuItem("Unpin A", nullptr, false, state.session().pin != nullptr && !weights_only))
                state.unpin();
            needs_session();
            ImGui::EndMenu();
        }
        // The View menu is the frame's (frame.cpp): it knows the panels and teach mode.
        if (ImGui::BeginMenu("View")) ImGui::EndMenu();
        ui.report_item("menu: View");
        const std::string title = weights_only ? attentions.path + " (attentions)" : session_title(state, true);
        ImGui::TextDisabled("%s", title.c_str());
        ui.report_item("title: " + title);
        ImGui::EndMainMenuBar();
    }
    shortcuts(state, ui, weights_only);
}

void open_session_dialog(const AppState& state, MenuBar& menu) {
    menu.open_files.open(FileChooser::Mode::open, "Open a session, or a checkpoint to import", session_filters(),
                         state.file_path());
}

void open_save_dialog(const AppState& state, MenuBar& menu) {
    menu.save_files.open(FileChooser::Mode::save, "Save the session", {{"Sessions (*.json)", {".json"}}},
                         state.file_path().empty() ? "session.json" : state.file_path());
}

void open_quit_dialog() { ImGui::OpenPopup(quit_title); }

void draw_menu_dialogs(AppState& state, UiContext& ui, MenuBar& menu, bool& quit) {
    if (const std::optional<std::string> path = menu.open_files.draw(ui)) open_and_note(state, menu, *path);
    if (const std::optional<std::string> path = menu.save_files.draw(ui))
        if (state.save_file(*path)) {
            menu.recent.add(*path);
            quit = quit || menu.quit_when_saved;
        }
    if (!menu.save_files.is_open()) menu.quit_when_saved = false;
    draw_import_dialog(state, ui, menu.import);

    draw_random_x_notice(menu, ui);

    // Quitting with unsaved changes asks first: nothing is lost by a stray click.
    if (ImGui::BeginPopupModal(quit_title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::TextUnformatted("The session has changes that are not saved.");
        if (ImGui::Button("Save and quit")) {
            // Without a file this asks where first, and quits once saved there.
            if (save_or_ask(state, menu))
                quit = true;
            else
                menu.quit_when_saved = menu.save_files.is_open();
            ImGui::CloseCurrentPopup();
        }
        ui.report_item("quit: save");
        ImGui::SameLine();
        if (ImGui::Button("Quit without saving")) {
            quit = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
        ui.report_item("quit: cancel");
        ImGui::EndPopup();
    }
}

}  // namespace attnviz::app
