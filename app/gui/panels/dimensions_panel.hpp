// Dimensions panel: n, d_model, h, d_k, d_v, the switches, the scale, presets and the seed.
#pragma once

#include <cstdint>

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct DimensionsPanel {
    bool lock_per_head = true;  // d_k = d_v = d_model / h
    std::uint64_t seed = 1;
    // What the fields show while the user types; applied on Enter, on leaving the field or by ±.
    core::Config editing;
    bool editing_active = false;
};

// Applies a change of one dimension, honouring the lock. Refused (with a message) when the lock
// cannot be honoured: d_model not divisible by h.
bool apply_dimensions(AppState& state, const DimensionsPanel& panel, core::Config wanted, char changed);

void draw_dimensions_panel(AppState& state, UiContext& ui, DimensionsPanel& panel);

}  // namespace attnviz::app
