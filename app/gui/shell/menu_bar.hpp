// The main menu and the keyboard shortcuts: each item requests a Command (command.hpp), which
// run_commands() carries out; plus the dialogs the commands open (a path to open or save, and
// "Unsaved changes" before quitting), each opened by its open_… function and drawn after every
// window of the frame (draw_menu_dialogs).
#pragma once

#include <string>

#include "core/model/hub_cache.hpp"
#include "dialogs/attentions_mode.hpp"
#include "dialogs/file_chooser.hpp"
#include "dialogs/import_dialog.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct MenuBar {
    FileChooser open_files, save_files;
    RecentFiles recent;   // File > Open Recent
    ImportDialog import;  // File > Import layer…
    // File > Open cached model: the hub cache's models and the folders looked in, as listed when the
    // menu last opened.
    std::vector<model::CachedModel> cached_models;
    std::vector<std::string> cache_folders;
    // A checkpoint just opened without an X (File > Open, a dropped file, the command line): the
    // window says plainly that X is random, with a way to import it with one.
    std::string random_x;
    // "Save and quit" of a session without a file asked where to save it: the window quits once it
    // is saved there (a cancelled or failed save keeps it open).
    bool quit_when_saved = false;
};

// Opens a file as File > Open does, and notes it in the recent files when it opened (and, for a
// checkpoint that holds no X, that its X is random).
bool open_and_note(AppState& state, MenuBar& menu, const std::string& path);

// Saves to the session's file, or opens the save dialog when it has none. Returns whether it saved.
bool save_or_ask(AppState& state, MenuBar& menu);

// The session's name as the menu bar and the window's title show it: its file (the whole path, or
// only the file's name), or "unsaved session", with "*" when it has unsaved changes.
std::string session_title(const AppState& state, bool whole_path);

// The menu's dialogs, opened (drawn from the next draw_menu_dialogs): File > Open…, File > Save
// as…, and "Unsaved changes" (Quit with unsaved changes; called outside every window, as
// run_commands is).
void open_session_dialog(const AppState& state, MenuBar& menu);
void open_save_dialog(const AppState& state, MenuBar& menu);
void open_quit_dialog();

// Draws the menu bar (its File and Edit menus) and takes the shortcuts, unless a dialog is open.
// With attentions open (weights only) what needs a session is disabled: Save, the layers beside it,
// undo, the pin; File > Close attentions goes back to it.
void draw_menu_bar(AppState& state, UiContext& ui, MenuBar& menu, const AttentionsMode& attentions);
// Draws the menu's dialogs; sets `quit` when the user confirmed quitting.
void draw_menu_dialogs(AppState& state, UiContext& ui, MenuBar& menu, bool& quit);

}  // namespace attnviz::app
