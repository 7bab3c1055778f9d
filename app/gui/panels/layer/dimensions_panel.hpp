// Dimensions panel: n, d_model, h, d_k, d_v, the switches, the scale, presets and the seed.
#pragma once

#include <cstdint>

#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

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

// The value a dimension's − (direction −1) or + (+1) button steps to from `c`, `by` at least (1, or
// 8 with Ctrl): with the lock on, h steps to the next divisor of d_model and d_model to the next
// multiple of h (so d_k = d_v = d_model / h stays whole); the K/V groups ('g') to the next divisor
// of h; anything else by `by`. The value itself when no valid one lies that way (h = d_model).
// `key` names the field as apply_dimensions does: 'n', 'd', 'h', 'k', 'v', 'm' (n_kv), 'g'.
int stepped_dimension(const core::Config& c, bool lock, char key, int direction, int by = 1);

void draw_dimensions_panel(AppState& state, UiContext& ui, DimensionsPanel& panel);

}  // namespace attnviz::app
