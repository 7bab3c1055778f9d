// Pipeline panel: seed 002's flow as clickable nodes with their shapes —
// X → Q, K, V → QKᵀ → ÷s → (mask) → softmax → ·V → concat → W_O → output.
// Clicking a node opens that matrix in the matrix viewer.
#pragma once

#include <optional>

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct PipelinePanel {
    int head = 0;  // whose per-head nodes are shown
    // The selection last followed: a newly selected cell of a head's matrix shows that head.
    std::optional<CellRef> followed;
};

void draw_pipeline_panel(AppState& state, UiContext& ui, PipelinePanel& panel);

}  // namespace attnviz::app
