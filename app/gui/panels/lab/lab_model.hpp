// The attention lab's Ablation view in model mode (attnviz --model: the session is the block being
// edited): what ablating the chosen head does through the later blocks (core/model/head_effect.hpp)
// — KL(p_before ‖ p_after) of the next-token distribution, the five most likely tokens before and
// after, and per block from the edited one on ‖Δ residual‖_F as bars — and, on demand (one rerun
// per head), every head of the block with its KL, sorted. Computed on the model's worker
// (ModelRun::on_results) for the run shown, never on the UI thread; a new run or edit supersedes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/head_effect.hpp"
#include "state/model_run.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// What an effect was computed for: the run shown (its serial), the block, the head (-1: every head)
// and the ablation.
struct AblationKey {
    std::uint64_t serial = 0;
    int layer = -1;
    int head = -1;
    core::Ablation how = core::Ablation::zero;
    bool operator==(const AblationKey&) const = default;
};

struct ModelAblation {
    core::Ablation how = core::Ablation::zero;
    bool in_block = false;  // the block's own ‖Δoutput‖ table (as for any session) instead
    // The chosen head's effect, or why there is none.
    std::optional<model::HeadEffect> effect;
    std::string problem;
    AblationKey key;  // of effect / problem
    Worker::Job<core::Result<model::HeadEffect>> job;
    AblationKey job_key;
    // Every head of the block (the table), in head order, once asked for.
    std::vector<model::HeadEffect> table;
    std::string table_problem;
    AblationKey table_key;
    Worker::Job<core::Result<std::vector<model::HeadEffect>>> table_job;
    AblationKey table_job_key;
    std::shared_ptr<std::atomic<int>> table_done = std::make_shared<std::atomic<int>>(0);  // heads run so far
};

// A finished job's result, or what the job threw as a problem.
template <class T>
std::optional<core::Result<T>> take_model_result(Worker::Job<core::Result<T>>& job) {
    try {
        return job.take();
    } catch (const std::exception& e) {
        return core::Result<T>::fail({{"", e.what()}});
    }
}

// Whether the lab works through the model: a model is open and the session is its block being edited.
bool lab_in_model(const ModelRun* run, int heads);

// Takes what the worker finished, and starts the chosen head's effect when the run, block, head or
// ablation changed.
void update_model_ablation(ModelAblation& m, ModelRun& run, int head);
// Starts every head's effect for the run shown (the table).
void start_ablation_table(ModelAblation& m, ModelRun& run, int heads);
bool model_ablation_busy(const ModelAblation& m);
// Blocks until the jobs asked for have finished (screenshots, tests).
void wait_for_model_ablation(const ModelAblation& m);

// Draws the effects; a click on a row of the table sets `head`.
void draw_model_ablation(UiContext& ui, ModelAblation& m, ModelRun& run, int& head);

}  // namespace attnviz::app
