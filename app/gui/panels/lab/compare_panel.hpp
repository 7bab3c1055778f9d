// Compare: the session as it is now (B) against one pinned earlier (A). Pin the session, keep
// editing, and see B − A of any matrix as a diverging heatmap (blue–white–red, symmetric around 0),
// its largest changes listed, a line of what changed in the inputs and settings. The pin is kept
// inside the session (core::Session::pin), so it is saved and opened with it, and pinning and
// unpinning are undo steps.
//
// A's trace is computed from the pin's inputs once per pin: at once when it is small, on a worker
// thread when large — the way AppState computes B, so that the same inputs give the same bits and
// an unchanged cell is exactly 0. B − A is computed when the shown trace, the pin or the chosen
// matrix changes, never per frame. Nothing is compared across different shapes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/compare.hpp"
#include "core/render/color_scale.hpp"
#include "state/app_state.hpp"
#include "state/trace_worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// The largest changes listed.
inline constexpr int compare_top_k = 10;

struct ComparePanel {
    // A: the pin and its trace (null while computed, or when it could not be).
    std::shared_ptr<const core::Session> pin;
    std::shared_ptr<Snapshot> a;
    std::unique_ptr<TraceWorker> worker;  // started for the first pin too large to compute at once
    std::uint64_t requested = 0;          // the newest request made of the worker
    bool awaiting = false;                // A's trace is that request's, not taken yet
    std::string error;                    // why A has no trace (over the memory budget, out of memory)

    core::MatrixRef chosen{core::MatrixId::output, 0};  // the matrix compared

    // What is shown, and what it was computed from: B's generation, A's trace and the matrix.
    std::uint64_t of_generation = 0;
    const Snapshot* of_a = nullptr;
    core::MatrixRef of_ref;
    bool compared = false;  // comparison holds B − A of `of_ref` (A and B have it, in one shape)
    core::Comparison comparison;
    core::ValueStats stats;    // of comparison.difference's finite cells, with percentiles
    bool clip = false;         // colours on ±the 99th percentile of |B − A| instead of ±its largest
    std::uint64_t serial = 0;  // new with every comparison: keys the heatmap's texture
    // The inputs that differ (for B's generation and A's pin).
    std::vector<core::InputChange> inputs;
    int highlight_row = -1, highlight_col = -1;  // the cell of the table row under the pointer
};

// Brings A's trace (asked of the worker, or taken from it) and the difference up to date with the
// shown snapshot and its pin. Cheap when nothing changed. Called by the draw function every frame.
void update_compare(const AppState& state, ComparePanel& panel);
// Whether A's trace is being computed (the window keeps drawing until it arrives).
bool compare_busy(const ComparePanel& panel);
// Blocks until A's trace is computed (tests, screenshots); the next update_compare() takes it.
void wait_for_compare(const ComparePanel& panel);

// The heatmap's colour range: ±max |B − A| (±1 when nothing changed), or with `clip` ±the 99th
// percentile of |B − A| (±max when that is 0).
core::ColorRange compare_range(const ComparePanel& panel);

// Why the chosen matrix is not compared ("The shapes differ: X is 2×4 in A and 3×4 in B, …", "W_O exists
// in A only: …"), or "" when it is (or there is no pin, or A's trace is not there yet).
std::string compare_unavailable(const AppState& state, const ComparePanel& panel);

// What changed since A in the inputs, the settings and the token labels of the shown session:
// "X, W_Q⁽²⁾, b_Q, b_K, b_V (B only); n 2 → 3; token labels", or "" when nothing did.
std::string changes_text(const AppState& state, const ComparePanel& panel);

void draw_compare_panel(AppState& state, UiContext& ui, ComparePanel& panel);

}  // namespace attnviz::app
