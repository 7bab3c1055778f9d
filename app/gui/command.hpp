// What the menu, the shortcuts and the window ask the app to do. Panels request a command through
// UiContext::request(); run_commands() (frame.cpp) carries every one out in one place.
#pragma once

namespace attnviz::app {

enum class Command {
    open,          // ask for a session file to open
    import_layer,  // ask for a checkpoint and the options of its import
    save,          // save to the session's file, or ask where when it has none
    save_as,       // ask where to save
    quit,          // quit, asking first when there are unsaved changes
    undo,
    redo,
    toggle_teach,  // the lesson instead of the explorer, or back
    reset_layout,  // every window back to its default place and size
    count
};

}  // namespace attnviz::app
