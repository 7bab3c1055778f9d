// Saturation lab: the divisor s of scores = QKᵀ / s as a slider, and what it does to every head —
// each head's mean row entropy and mean max weight against s (the current s and √d_k marked), a
// callout when most rows are nearly one-hot, and the √d_k experiment's numbers: how the variance
// of q·k grows with d_k and what dividing by √d_k does to it.
//
// The curves depend on scores_raw, the mask and d_k only, not on s: they are computed again when
// those change (each new trace's scores_raw is compared with the one the curves came from, by
// its profile below), not when the slider moves, and a block of rows at a time (at most
// `saturation_budget` evaluations per frame), so a session of n = 512, h = 12 never holds a frame
// up. The numbers at the current s come from the trace's own row statistics, exact and free.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/attention/saturation.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// Divisors a curve samples (odd: √d_k is one of them), row·key·divisor evaluations per frame
// (about 1.5 ns each: some 4.5 ms on the machine of docs/benchmarks.md), and the √d_k experiment's samples
// per d_k and seed.
inline constexpr int saturation_points = 49;
inline constexpr double saturation_budget = 3e6;
inline constexpr int variance_samples = 1000;
inline constexpr std::uint64_t variance_seed = 1;

// What the curves were computed from, in a few numbers per row of every head: d_k, the softmax and
// the shapes, the masked keys (−∞ scores) of each row, and each row of scores_raw's sum of |values| and
// its sum weighted by fixed factors w_j = 1 + frac(j·φ) ∈ [1, 2) (so that no edit cancels out in
// it but by chance). Two traces of the same inputs compare equal even when their products were
// computed on different threads (the last bit may differ); an edit that changes a row of
// scores_raw by more than 1e−11 of its magnitude does not. Vectorised: about 0.1 ms per head of
// n = 512 (the scores are read, not hashed cell by cell).
struct ScoresProfile {
    std::vector<std::int64_t> counts;    // d_k, heads, the softmax; per head: rows, columns
    std::vector<std::vector<int>> keys;  // [head][row]: the keys the row may look at (not −∞)
    // Per row: the weighted sum and the sum of |values|, each with the magnitude it is compared to.
    std::vector<std::array<double, 2>> sums;
    bool same_as(const ScoresProfile& other) const;
};
ScoresProfile scores_profile(const core::Trace& trace);

struct SaturationPanel {
    // The curves: every head's summary at each divisor, partial while being computed.
    std::uint64_t checked = 0;                                 // the generation whose scores were last compared
    ScoresProfile profile;                                     // of the scores the curves belong to
    std::vector<double> divisors;                              // core::divisor_grid(d_k, saturation_points)
    std::vector<std::vector<core::SaturationSummary>> curves;  // [head][divisor]
    int next_head = 0;                                         // the next block; == heads: done
    Eigen::Index next_row = 0;
    core::Matrix masked;    // next_head's scores_raw with its mask (−∞), while it is computed
    double compute_ms = 0;  // time spent on these curves so far, and in how many frames
    int compute_frames = 0;
    // The shown trace's divisor: every head's summary from the trace's own rows, and all of them.
    std::vector<core::SaturationSummary> current;
    core::SaturationSummary current_all;
    // The √d_k experiment by d_k (1, 2, 4, …, 1024 and the session's d_k), one more per frame.
    std::map<int, core::DotVariance> variance;
    int highlighted = -1;  // a head whose lines are drawn thicker (its legend entry or line hovered)
};

// Sets the session's divisor: scores = scores_raw / s (Scale::Kind::divisor). Consecutive calls
// undo as one step (a drag). Refused with a message when s is not a valid divisor.
bool apply_divisor(AppState& state, double s);
// Back to the seeds' scale, s = √d_k (Scale::Kind::sqrt_dk).
bool back_to_sqrt_dk(AppState& state);

// Brings the curves up to date with the shown trace, and the current divisor's summaries: a
// frame that finds new scores compares and summarizes them only; the next frames compute at most
// `budget` evaluations each (at least one block of rows). Returns whether the curves are complete.
bool advance_saturation(const AppState& state, SaturationPanel& panel, double budget = saturation_budget);
// Whether the panel still has work (curves or the √d_k experiment) for the frames to come.
bool saturation_busy(const SaturationPanel& panel);

// The callout for the rows at the current divisor, or "" when most rows are not nearly one-hot:
// "12 of 16 rows put ≥ 99% of their weight on one key: …".
std::string saturation_callout(const core::SaturationSummary& all, core::Notation notation);

void draw_saturation_panel(AppState& state, UiContext& ui, SaturationPanel& panel);

}  // namespace attnviz::app
