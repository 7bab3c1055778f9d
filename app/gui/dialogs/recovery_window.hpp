// "Recover unsaved work": shown at start when an earlier instance ended without saving (a crash,
// a kill, a power cut) and left an autosave. Each is listed with what it holds, when it was
// written and which file it came from, to restore or discard; "Decide later" keeps them for the
// next start. A session opened from the command line stays open underneath.
#pragma once

#include <vector>

#include "core/io/autosave_store.hpp"
#include "state/app_state.hpp"
#include "state/autosave.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

inline constexpr const char* recovery_window_title = "Recover unsaved work";

struct RecoveryWindow {
    std::vector<core::AutosaveInfo> offers;  // empty: nothing to show
    AutosaveWriter* store = nullptr;         // this instance's, written once work is restored
    bool focused = false;                    // brought to the front once, when it first appears
};

// Restores an autosave into the state (unsaved, with its file), writes it as this instance's
// autosave at once, then removes the old one. Returns whether it restored.
bool restore_offer(AppState& state, RecoveryWindow& window, size_t index);
// Removes the autosave for good.
void discard_offer(RecoveryWindow& window, size_t index);

void draw_recovery_window(AppState& state, UiContext& ui, RecoveryWindow& window);

}  // namespace attnviz::app
