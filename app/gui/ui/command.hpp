// What the menu, the shortcuts and the window ask the app to do, each command with what it is about
// (the export's target, the panel, the matrix to compare), so two requests in one frame never share
// a payload. Panels request a command through UiContext::request(); run_commands()
// (frame_commands.cpp) carries every one out in one place, in order.
#pragma once

#include <string>
#include <variant>

#include "core/attention/registry.hpp"
#include "ui/appearance.hpp"

namespace attnviz::app {

// The explorer's panels, in the order of the panel table (shell/frame.cpp), which gives each its
// title (the window's, for ImGui and the layout file; --panel names panels by it); the workspaces
// (shell/workspaces.cpp) give each its places.
enum class PanelId {
    dimensions,
    inputs,
    mask,
    pipeline,
    heads,
    head_view,
    model,
    trace,
    saturation,
    compare,
    viewer,
    gradients,
    next_token,
    model_analysis,
    kv_cache,
    flash,
    lab,
    lesson,
    attribution,
    count
};

// The workspaces (workspaces.hpp), in the order of the bar and of Ctrl+1, Ctrl+2, …
enum class Workspace { layer, model, lab, teach, attribution, count };

// What an export is of: one matrix (numbers or heatmap), a view as a figure, the whole window as
// PNG, or the whole trace as JSON.
// The head view, the model view and the interactive page (html) are of the weights shown: the
// session's layer, a model run's blocks or the opened attentions.
struct ExportTarget {
    enum class Kind { matrix, heads, pipeline, window, trace, head_view, model_view, page } kind = Kind::matrix;
    core::MatrixRef ref;  // for a matrix; the heads view shows ref.id of every head (weights)
};

// The commands. `opens_dialog`: the command opens a dialog (or may: Save without a file); one
// dialog is open at a time, so such a command is dropped while another is open. Quit is not one: it
// closes what is open and asks, so the window's close button always answers.
namespace command {

struct Open {  // ask for a session file to open
    static constexpr bool opens_dialog = true;
};
struct NewSentence {  // the dialog that makes a session of a typed sentence
    static constexpr bool opens_dialog = true;
};
struct ImportLayer {  // ask for a checkpoint and the options of its import
    static constexpr bool opens_dialog = true;
};
struct OpenBeside {  // ask for a session to show beside this one in the model view
    static constexpr bool opens_dialog = true;
};
struct OpenModel {  // ask for a model folder (config.json, weights, tokenizer) to run in the model view
    static constexpr bool opens_dialog = true;
};
struct OpenModelFolder {  // a model folder chosen without a dialog (File > Open cached model): run in the model view
    std::string folder;
    static constexpr bool opens_dialog = false;
};
struct ImportAllLayers {  // ask for a checkpoint whose layers open beside this session in the model view
    static constexpr bool opens_dialog = true;
};
struct OpenAttentions {  // ask for a file of attention weights (and its tokens): the attentions mode
    static constexpr bool opens_dialog = true;
};
struct CloseAttentions {  // the attentions mode off: the session shows again
    static constexpr bool opens_dialog = false;
};
struct Save {  // save to the session's file, or ask where when it has none
    static constexpr bool opens_dialog = true;
};
struct SaveAs {  // ask where to save
    static constexpr bool opens_dialog = true;
};
struct Export {  // the export dialog, on a target
    ExportTarget target;
    static constexpr bool opens_dialog = true;
};
struct Quit {  // quit, asking first when there are unsaved changes
    static constexpr bool opens_dialog = false;
};
struct Undo {
    static constexpr bool opens_dialog = false;
};
struct Redo {
    static constexpr bool opens_dialog = false;
};
struct ToggleTeach {  // the lesson instead of the explorer, or back
    static constexpr bool opens_dialog = false;
};
struct OpenLesson {  // a lesson of the library, at its first step, with the session it starts from
    std::string path;
    static constexpr bool opens_dialog = false;
};
struct ResetLayout {  // every window back to its default place and size
    static constexpr bool opens_dialog = false;
};
struct ShowPanel {  // a panel of the explorer: its tab chosen, its place shown, the layout restored
    PanelId panel;
    static constexpr bool opens_dialog = false;
};
struct Compare {  // B − A of a matrix in the Compare panel (pinning A first when there is no pin)
    core::MatrixRef ref;
    static constexpr bool opens_dialog = false;
};
struct ViewHead {  // one head of a layer alone in the head view (a click in the model view of attentions)
    int layer = 0, head = 0;
    static constexpr bool opens_dialog = false;
};
struct SetAppearance {  // a theme, text size or weights' colormap (made between this frame and the next)
    Appearance appearance;
    static constexpr bool opens_dialog = false;
};
struct ToggleFullScreen {  // the window over the whole monitor, or back to its size and place
    static constexpr bool opens_dialog = false;
};
struct ToggleFocus {  // teach mode with only the step's text and matrices, large, or back
    static constexpr bool opens_dialog = false;
};
struct SwitchWorkspace {  // another workspace, with the layout it had
    Workspace workspace;
    static constexpr bool opens_dialog = false;
};
struct OpenPalette {  // the command palette (Ctrl+K): any panel, workspace, lesson, export or action by name
    static constexpr bool opens_dialog = true;
};

}  // namespace command

using Command =
    std::variant<command::Open, command::NewSentence, command::ImportLayer, command::OpenBeside, command::OpenModel,
                 command::OpenModelFolder, command::ImportAllLayers, command::OpenAttentions, command::CloseAttentions,
                 command::Save, command::SaveAs, command::Export, command::Quit, command::Undo, command::Redo,
                 command::ToggleTeach, command::OpenLesson, command::ResetLayout, command::ShowPanel, command::Compare,
                 command::ViewHead, command::SetAppearance, command::ToggleFullScreen, command::ToggleFocus,
                 command::SwitchWorkspace, command::OpenPalette>;

// Whether a command opens a dialog (its type's opens_dialog).
inline bool opens_dialog(const Command& c) {
    return std::visit([](const auto& each) { return each.opens_dialog; }, c);
}

}  // namespace attnviz::app
