#include "shell/frame_commands.hpp"

#include "shell/frame_exports.hpp"

#include <imgui_internal.h>

#include <string_view>
#include <vector>

namespace attnviz::app {

bool dialog_open(const Panels& p) {
    // The built-in dialogs are ImGui modals; a desktop file dialog is a process of its own, seen
    // through the top-level choosers (those inside a dialog are under its modal).
    return ImGui::GetTopMostPopupModal() != nullptr || p.menu.open_files.is_open() || p.menu.save_files.is_open() ||
           p.model.beside_files.is_open() || p.model.model_folder.is_open();
}

void close_on_escape(Panels& p) {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    if (!ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) return;
    if (g.OpenPopupStack.Size > 0) {
        ImGui::ClosePopupToLevel(g.OpenPopupStack.Size - 1, true);
        return;
    }
    if (p.teach_mode && p.teach.focus) {  // the way out of focus
        p.teach.focus = false;
        return;
    }
    const std::string_view focused = g.NavWindow ? g.NavWindow->RootWindow->Name : "";
    if (focused == message_log_title) p.status.show_log = false;
    if (focused == recovery_window_title) p.recovery.offers.clear();  // kept on disk, offered at the next start
}

void draw_dialogs(AppState& state, UiContext& ui, Panels& p) {
    draw_menu_dialogs(state, ui, p.menu, p.quit);
    draw_model_dialogs(state, ui, p.model);
    if (draw_attentions_dialog(state, ui, p.attentions)) attentions_opened(state, p);
    draw_export_dialog(
        state, ui, p.export_dialog, [&](ExportTarget::Kind kind) { return attention_export(state, p, kind); },
        p.attentions.on());
    draw_sentence_dialog(state, ui, p.sentence);
    draw_command_palette(p.palette, ui);
}

namespace {

// Whether a text field is being edited (a value typed into a cell, a dimension, a label).
bool editing_text() {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    return g.ActiveId != 0 && g.InputTextState.ID == g.ActiveId;
}

// Carries out one command (std::visit calls the overload of its type).
struct Dispatch {
    AppState& state;
    Panels& p;
    std::vector<Command>& later;  // for the next frame

    void operator()(command::Open) { open_session_dialog(state, p.menu); }
    void operator()(command::NewSentence) { open_sentence_dialog(p.sentence); }
    void operator()(command::ImportLayer) { open_import_dialog(p.menu.import); }
    void operator()(command::OpenBeside) {
        if (weights_only("Open beside")) return;
        open_beside_dialog(state, p.model);
        show_panel(p, PanelId::model);
    }
    void operator()(command::OpenModel) {
        open_model_dialog(state, p.model);
        show_panel(p, PanelId::model);
    }
    void operator()(const command::OpenModelFolder& c) {
        open_model(state, p.model, c.folder);
        show_panel(p, PanelId::model);
    }
    void operator()(command::ImportAllLayers) {
        if (weights_only("Import all layers")) return;
        open_import_dialog(p.model.import_all);
        show_panel(p, PanelId::model);
    }
    void operator()(command::OpenAttentions) { open_attentions_dialog(p.attentions); }
    void operator()(command::CloseAttentions) {
        close_attentions(p.attentions);
        state.set_message("Closed the attentions: the session and its panels are back", false);
    }
    void operator()(const command::ViewHead& c) {
        HeadViewPanel& view = p.head_view;
        view.layer = c.layer;
        view.hidden.clear();
        const int heads = p.attentions.on() ? p.attentions.weights->heads()
                                            : static_cast<int>(state.trace().heads.size());
        for (int h = 0; h < heads; ++h) set_head_shown(view, h, h == c.head);
        show_panel(p, PanelId::head_view);
    }
    void operator()(command::Save) {
        if (!weights_only("Save")) save_or_ask(state, p.menu);
    }
    void operator()(command::SaveAs) {
        if (!weights_only("Save as")) open_save_dialog(state, p.menu);
    }
    void operator()(const command::Export& c) { open_export_dialog(p.export_dialog, c.target); }
    void operator()(command::Quit) {
        if (!state.modified()) {
            p.quit = true;
            return;
        }
        if (ImGui::GetCurrentContext()->OpenPopupStack.Size > 0)
            ImGui::ClosePopupToLevel(0, false);  // any open dialog is cancelled
        open_quit_dialog();                      // the "Unsaved changes" dialog decides
    }
    // A value being typed is committed first: its field is let go, its panel applies it in the
    // next frame, and the undo runs after that. Undo then takes back what the field shows, never
    // an older step beside a field still showing the typed value.
    void operator()(command::Undo c) {
        if (!weights_only("Undo") && !let_go_of_text(c)) state.undo();
    }
    void operator()(command::Redo c) {
        if (!weights_only("Redo") && !let_go_of_text(c)) state.redo();
    }
    void operator()(command::ToggleTeach) {
        if (p.teach_mode)
            p.teach_mode = false;
        else
            enter_teach_mode(state, p, p.teach.step);
    }
    void operator()(const command::OpenLesson& c) {
        open_lesson(state, p.teach, c.path);
        if (p.teach.lesson) enter_teach_mode(state, p, 0);
    }
    void operator()(command::ResetLayout) {
        p.reset_layout = true;
        ImGui::MarkIniSettingsDirty();
    }
    void operator()(const command::ShowPanel& c) {
        show_panel(p, c.panel);
        p.maximized = -1;
    }
    void operator()(const command::Compare& c) {
        if (!state.session().pin) state.pin();
        p.compare.chosen = c.ref;
        show_panel(p, PanelId::compare);
        p.maximized = -1;
    }

    void operator()(const command::SetAppearance& c) {
        p.appearance = c.appearance;
        ImGui::MarkIniSettingsDirty();  // kept with the layout
    }
    void operator()(command::ToggleFullScreen) { p.full_screen = !p.full_screen; }
    void operator()(const command::SwitchWorkspace& c) {
        switch_workspace(p, c.workspace);
        ImGui::MarkIniSettingsDirty();
    }
    void operator()(command::OpenPalette) {
        std::vector<PalettePanel> titled;
        for (const PanelRow& row : explorer_panels()) titled.push_back({row.id, row.title});
        open_command_palette(p.palette, palette_entries(titled, core::list_lessons(lesson_folders()), p.appearance));
    }
    // Focus shows the step's result whole (no play, no exercise): it starts at the step as it is.
    void operator()(command::ToggleFocus) {
        p.teach.focus = !(p.teach_mode && p.teach.focus);
        if (p.teach.focus) enter_teach_mode(state, p, p.teach.step);
    }

    // Whether attentions are open (weights only), so that a command of the session's waits: said.
    bool weights_only(const char* what) {
        if (!p.attentions.on()) return false;
        state.set_message(
            std::string(what) +
                ": the attentions open are weights only; File > Close attentions goes back to the session",
            false);
        return true;
    }

    // Whether a text field was being edited: it is let go, and the command waits for the next frame.
    bool let_go_of_text(Command c) {
        if (!editing_text()) return false;
        ImGui::ClearActiveID();
        later.push_back(c);
        return true;
    }
};

}  // namespace

void run_commands(AppState& state, UiContext& ui, Panels& p) {
    for (const std::string& path : ui.dropped_files) open_and_note(state, p.menu, path);  // like File > Open
    ui.dropped_files.clear();
    const std::vector<Command> commands = std::move(ui.commands);
    ui.commands.clear();
    bool dialog = dialog_open(p);
    std::vector<Command> later;
    for (const Command& c : commands) {
        // One dialog at a time: a command for another is dropped (the user asks again once it is closed).
        if (opens_dialog(c)) {
            if (dialog) continue;
            dialog = !std::holds_alternative<command::Save>(c) || state.file_path().empty();
        }
        std::visit(Dispatch{state, p, later}, c);
    }
    for (Command& c : later) ui.request(std::move(c));
}

}  // namespace attnviz::app
