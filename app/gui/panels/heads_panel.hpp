// Heads panel: the attention weights (or, toggled, the scores) of every head side by side,
// token labels on both axes: rows are queries, columns are keys.
#pragma once

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct HeadsPanel {
    bool show_scores = false;
    bool stretch = false;  // weights coloured 0..(largest weight) instead of 0..1, for long sequences
};

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel);

}  // namespace attnviz::app
