// Command dispatch and the rules of the dialogs: the commands requested in a frame (menus,
// shortcuts, buttons, dropped files) are carried out at its end, in order, each opening its dialog
// through the dialog's own open function; one dialog is open at a time (a command that would open
// another is dropped); every dialog is drawn after every window of the frame; Esc closes the
// topmost popup.
#pragma once

#include "shell/frame.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// Whether a dialog is open (a modal, or a desktop file dialog of the menu's): the shortcuts wait, and
// a command that would open another dialog is dropped.
bool dialog_open(const Panels& panels);

// Esc closes the topmost popup (a dialog, as its Cancel does; a menu; a combo's list), one a press;
// without a popup, it leaves the lesson's focus, or closes the Messages or recovery window it is
// typed in (the recovery as "Decide later").
void close_on_escape(Panels& panels);

// Every dialog, after every window of the frame: a window that appears in the frame a dialog opens
// (a tab chosen by the command, the lesson) is then never begun above the dialog's modal, which
// ImGui 1.86 cannot order (an assertion).
void draw_dialogs(AppState& state, UiContext& ui, Panels& panels);

// Carries out the commands requested so far (menus, shortcuts, dropped files), in order. Called
// outside every window (the dialogs' popups open where draw_dialogs draws them).
void run_commands(AppState& state, UiContext& ui, Panels& panels);

}  // namespace attnviz::app
