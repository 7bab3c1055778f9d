// The Attribution panel's activation patching (core/model/patching.hpp): a corrupted sentence of as
// many tokens as the model mode's, and for the panel's objective (diff = logit[target] −
// logit[versus], or the target's logit) which heads, heads' weights and positions of the stream
// restore the clean prediction when taken from the clean run: heatmaps of every head and of every
// block × position. The corrupted sentence is run and patched on the model's worker, with progress
// and Cancel, when Patch is pressed; a new run of the clean sentence leaves the heatmaps marked as
// of the run before.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/model/patching.hpp"
#include "state/model_run.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct PatchingSection {
    std::string corrupt;  // the corrupted sentence as typed
    std::shared_ptr<const model::Patching> shown;
    std::vector<std::string> corrupt_tokens;  // the shown patching's corrupted tokens (decoded)
    std::uint64_t shown_serial = 0;           // the clean run it was of
    std::string problem;
    Worker::Job<core::Result<std::pair<model::Patching, std::vector<std::string>>>> job;
    std::uint64_t job_serial = 0;
    std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> total = std::make_shared<std::atomic<int>>(0);
};

// Draws the section for the objective of `target` and `versus` (−1: none).
void draw_patching_section(UiContext& ui, PatchingSection& section, ModelRun& run, std::int32_t target,
                           std::int32_t versus);
// Starts patching `section.corrupt` against the run shown.
void start_patching(PatchingSection& section, ModelRun& run, std::int32_t target, std::int32_t versus);

}  // namespace attnviz::app
