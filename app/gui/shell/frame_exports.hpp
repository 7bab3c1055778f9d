// What File > Export… of the head view, the model view or the interactive page is made of: every
// layer of the weights shown (the opened attentions, a model's run with the block being edited as
// the session has it, or the session's one layer) with a title and notes, and the views' choices
// as the panels hold them (the head view's layer, selection, hidden heads, mean and special
// tokens; the model view's order and outlines).
#pragma once

#include "dialogs/export_dialog.hpp"
#include "shell/frame.hpp"

namespace attnviz::app {

// Refused: a model whose run is not finished.
core::Result<AttentionExport> attention_export(const AppState& state, const Panels& panels, ExportTarget::Kind kind);

}  // namespace attnviz::app
