// Mask panel: without a custom mask, the layer's rule (causal or none, with its sliding window) in
// words and as a grid, and the window's field. With one: the custom mask as a grid of queries (rows) × keys (columns),
// 1 where the query may attend. Click a cell to toggle it, drag to paint (the value the first cell took goes to every
// cell dragged over; applied as one edit on release), or start from a preset: all, causal, padding (the last k keys), a
// sliding window (|i − j| < w, or causal) and block-diagonal segments.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct MaskPanel {
    // A drag in progress: the mask as painted so far, and the value being painted.
    std::optional<core::Matrix> painting;
    double paint_value = 0;
    // The presets' settings.
    int padded = 1;
    int window = 2;
    bool causal_window = true;
    std::string segments = "2,2";
    // The sliding window's field (the layer's window while it is not being typed in).
    int layer_window = 0;
    bool window_editing = false;
    // The rule's grid and what it was made for: n, keys, mask, window.
    core::Matrix rule;
    std::array<int, 4> rule_key{-1, -1, -1, -1};
    std::uint64_t rule_generation = 0;  // for the heatmap's texture
};

// The presets, applied to the editable session's mask (one undoable edit each; refused with a
// message when the preset leaves a query without keys or does not fit the shape).
bool apply_mask_preset(AppState& state, const core::Result<core::Matrix>& preset, const std::string& what);

void draw_mask_panel(AppState& state, UiContext& ui, MaskPanel& panel);

}  // namespace attnviz::app
