// Attention lab: what a head really does, beyond its weights (core/attention/head_analysis.hpp),
// in five views of one head at a time:
//   Norm-weighted  ‖α_ij·f_h(x_j)‖ beside the weights α_ij: how far key j moves query i's output;
//                  hover a cell for ‖f_h(x_j)‖, α_ij and their product
//   Circuits       W_QK = W_Q·W_Kᵀ and W_OV = W_V·W_O⁽ʰ⁾ as heatmaps, their singular values as bars,
//                  W_OV's eigenvalues in the complex plane and its copying score; in model mode
//                  also in token space (lab_tokens.hpp)
//   Ablation       every head's ‖Δoutput‖_F when its Z is zeroed or replaced by its mean row,
//                  sorted; Δoutput of the chosen head; with a pinned session (Compare), the
//                  effect of patching each head's Z from it. In model mode (the session is the
//                  block being edited) also through the model: the next-token distribution's KL and
//                  top 5 before/after and each later block's change (lab_model.hpp)
//   RoPE           each rotated pair's n×m part of the raw scores (a slider over the pairs), each
//                  pair's mean |contribution| against its frequency θ_p, and its mean contribution by
//                  relative position; in model mode, for block 0 of a model with learned positions
//                  (no RoPE), its scores split into content and position parts (lab_tokens.hpp)
//   Sinks          per head the key with the largest mean weight and the share of queries putting
//                  at least 0.3 of their weight on it
// Everything is computed once per trace snapshot and head (on the worker for large sessions),
// never per frame.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/head_analysis.hpp"
#include "panels/lab/lab_model.hpp"
#include "panels/lab/lab_tokens.hpp"
#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// The lab's numbers of one snapshot: the chosen head's, and every head's ablation and sink.
struct LabResult {
    std::shared_ptr<const Snapshot> snapshot;  // what it was computed from (its generation), drawn with it
    int head = 0;
    core::Matrix norm_weighted;         // n×m
    Eigen::VectorXd value_norms;        // ‖f_h(x_j)‖ per key
    core::Circuits circuits;            // of the head
    core::Matrix ablation_zero_delta;   // Δoutput of zeroing the head's Z
    std::vector<double> ablation_zero;  // per head ‖Δoutput‖_F
    std::vector<double> ablation_mean;  // per head
    std::vector<double> patching;       // per head, from the pinned session; empty without one
    std::vector<core::Sink> sinks;      // per head
    core::RopeSplit rope;               // of the head; empty without RoPE
    std::vector<core::RopePairProfile> rope_profiles;
    core::RopePairProfile rope_rest;  // the unrotated columns' part (partial rotary)
    std::vector<double> rope_thetas;  // θ_p per pair, for the plot's x
};

// Computes the lab's numbers of `snapshot` for `head`; `pinned` (Compare's A, or null) is patched
// from when it has the same shape.
LabResult compute_lab(std::shared_ptr<const Snapshot> snapshot, int head, const Snapshot* pinned);

struct LabPanel {
    int head = 0;  // from 0
    int pair = 0;  // the RoPE pair shown
    // A view to bring forward in the next frame (its tab chosen): 0 norm-weighted, 1 circuits,
    // 2 ablation, 3 RoPE, 4 sinks.
    std::optional<int> show_view;
    std::optional<LabResult> result;
    std::uint64_t pinned_generation = 0;  // of the pinned trace the result's patching is from (0: none)
    Worker::Job<LabResult> job;
    std::uint64_t job_generation = 0;
    int job_head = -1;
    ModelAblation model;   // the Ablation view through the model (model mode), on the model's worker
    LabTokens tokens;      // the token circuits and layer 0's position split (model mode), on it too
    Worker worker{"lab"};  // last: joined before the members above go
};

// Brings the panel's result up to the shown snapshot and head: at once for a small session, else
// on the worker (the previous result stays on screen meanwhile).
void update_lab(const AppState& state, LabPanel& panel, const Snapshot* pinned);
bool lab_busy(const LabPanel& panel);

// `model_run`: the model mode's run (null or no model open: the session alone).
void draw_lab_panel(AppState& state, UiContext& ui, LabPanel& panel, const Snapshot* pinned,
                    ModelRun* model_run = nullptr);

}  // namespace attnviz::app
