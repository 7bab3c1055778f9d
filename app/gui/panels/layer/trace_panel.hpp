// Trace panel: every intermediate of every head at once —
// Q, K, V, scores_raw, scores, weights, Z per head, then concat and output.
#pragma once

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct TracePanel {
    float cell_limit = 64;  // largest cell side, pixels (four ems: comfortable, its numbers in the UI font)
};

void draw_trace_panel(AppState& state, UiContext& ui, TracePanel& panel);

}  // namespace attnviz::app
