// What the menu, the shortcuts and the window ask the app to do. Panels request a command through
// UiContext::request(); run_commands() (frame.cpp) carries every one out in one place.
#pragma once

#include "core/attention/registry.hpp"

namespace attnviz::app {

// What an export is of: one matrix (numbers or heatmap), a view as a figure, the whole window as
// PNG, or the whole trace as JSON.
struct ExportTarget {
    enum class Kind { matrix, heads, pipeline, window, trace } kind = Kind::matrix;
    core::MatrixRef ref;  // for a matrix; the heads view shows ref.id of every head (weights)
};

enum class Command {
    open,               // ask for a session file to open
    new_sentence,       // the dialog that makes a session of a typed sentence
    import_layer,       // ask for a checkpoint and the options of its import
    open_beside,        // ask for a session to show beside this one in the model view
    import_all_layers,  // ask for a checkpoint whose layers open beside this session in the model view
    save,               // save to the session's file, or ask where when it has none
    save_as,            // ask where to save
    export_file,        // the export dialog, for UiContext::export_target
    quit,               // quit, asking first when there are unsaved changes
    undo,
    redo,
    toggle_teach,  // the lesson instead of the explorer, or back
    reset_layout,  // every window back to its default place and size
    show_panel,    // UiContext::panel_to_show, its tab chosen
    compare,       // B − A of UiContext::compare_ref in the Compare panel (pinning A first when there is no pin)
    count
};

}  // namespace attnviz::app
