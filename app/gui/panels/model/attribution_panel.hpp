// Attribution: why the model of the model mode predicts what it does after its sentence
// (core/model/attribution.hpp). A target (the top prediction until one is chosen) and a "versus"
// token (none: the target's logit alone) make the objective; the panel shows the tokens shaded by
// grad × input and by integrated gradients (with their completeness line), and every head's and
// MLP's direct logit attribution, the embeddings' and the final norm's bias beside them with the sum;
// then activation patching against a corrupted sentence (patching_section.hpp). Computed on the
// model's worker behind its run (ModelRun::on_results), with progress and Cancel; a new run (a
// sentence, an edit) computes it again. An encoder has no next token: the panel says so.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/model/attribution.hpp"
#include "panels/model/patching_section.hpp"
#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct AttributionPanel {
    std::int32_t target = -1;  // a vocabulary id; -1: the run's top prediction
    std::int32_t versus = -1;  // -1: none
    int steps = 32;            // integrated gradients' points
    // What an attribution is of: the run, the objective's tokens (the target resolved) and the steps.
    struct Key {
        std::uint64_t serial = 0;
        std::int32_t target = -1, versus = -1;
        int steps = 0;
        bool operator==(const Key&) const = default;
    };
    std::shared_ptr<const model::Attribution> shown;  // the attribution shown, of shown_key
    Key shown_key;
    std::string problem;  // why the last one failed ("" when it did not)
    Worker::Job<core::Result<model::Attribution>> job;
    Key job_key;
    std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> total = std::make_shared<std::atomic<int>>(0);
    bool cancelled = false;  // the user stopped the job for the key it had: not started again for it
    PatchingSection patching;
};

void draw_attribution_panel(AppState& state, UiContext& ui, AttributionPanel& panel, ModelRun& run);

// The job running (screenshots and tests wait for it).
bool attribution_busy(const AttributionPanel& panel);
void wait_for_attribution(const AttributionPanel& panel);

}  // namespace attnviz::app
