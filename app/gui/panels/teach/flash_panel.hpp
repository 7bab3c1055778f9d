// FlashAttention stepper: the online softmax on the session's own matrices (core/attention/
// online_softmax.hpp). The queries in tiles of B_r rows, the keys in tiles of B_c; at each step one
// row tile meets one key tile, and each of its rows updates its running max m, its running sum ℓ
// and its unnormalised output Õ, rescaling what it had by e^(m_old − m_new). After a row tile's
// last key tile, O = diag(ℓ)⁻¹·Õ is that tile's rows of Z: the difference is shown. Beside it, what
// standard attention reads and writes of n × n data and what the tiles read instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/online_softmax.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// The stepper follows sessions of up to this many score cells per head (n · n_kv): every step is
// kept, and each is a row of the table.
inline constexpr long max_flash_cells = 128 * 128;

struct FlashPanel {
    int head = 0;  // from 0
    int block_rows = 2, block_cols = 2;
    int step = 0;  // index into run->steps
    // The run shown, and what it was computed from.
    std::optional<core::OnlineSoftmaxRun> run;
    std::uint64_t run_generation = 0;
    int run_head = -1, run_rows = 0, run_cols = 0;
    std::string error;
};

// The run for the shown trace and the panel's head and tiles, computed again when one of them
// changed (the step is kept within the new run's steps).
void update_flash(const AppState& state, FlashPanel& panel);

void draw_flash_panel(AppState& state, UiContext& ui, FlashPanel& panel);

}  // namespace attnviz::app
