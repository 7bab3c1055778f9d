// Heads panel: the attention weights (or, toggled, the scores) of every head side by side,
// token labels on both axes: rows are queries, columns are keys.
#pragma once

#include <optional>

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct HeadsPanel {
    bool show_scores = false;
    // Weights coloured 0..(largest weight of all heads) instead of 0..1; unset: on from
    // auto_weights_from_keys tokens, where 1/n on 0..1 would be one flat colour.
    std::optional<bool> stretch;
};

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel);

}  // namespace attnviz::app
