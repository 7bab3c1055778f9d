// The attention lab's views of a model's tokens (model mode, attnviz --model: the session is the
// block being edited), from core/model/circuits.hpp:
//   Circuits  "in token space": the chosen head's x_a·W_QK·x_bᵀ over the sentence's distinct tokens
//             (k×k), its top token pairs, and for a chosen token its top keys over the vocabulary and
//             the top tokens its OV circuit raises through W_U; with the block's weights as edited
//   RoPE      for block 0 of a model with learned positions (GPT-2, BERT, RoBERTa), which has no
//             RoPE: the chosen head's scores_raw split into content·content, content·position,
//             position·content, position·position and bias, each part's share, and a check that
//             the parts add up to the run's scores_raw
// Both are computed on the model's worker (ModelRun::on_results) for the run shown, every head at
// once (the head is picked when drawing), never on the UI thread; a new run or edit supersedes them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/circuits.hpp"
#include "state/model_run.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// How many of each ranking the token view shows: pairs, keys, output tokens (as attnviz analyze).
inline constexpr int lab_token_top = 5;

// What the token circuits were computed for: the run shown (its serial) and the block.
struct TokensKey {
    std::uint64_t serial = 0;
    int layer = -1;
    bool operator==(const TokensKey&) const = default;
};

// The position split of the run shown, every head, with what the view says of it.
struct LabSplit {
    std::vector<model::PositionSplit> heads;
    // Per head: each part's mean |part| over the entries the mask allows, as a share of their sum
    // (content·content, content·position, position·content, position·position, bias).
    std::vector<std::array<double, 5>> shares;
    std::vector<double> difference;        // per head: max |Σ parts − the run's scores_raw| over every entry
    std::vector<double> scores_max;        // per head: max |scores_raw|, the scale of the difference
    std::vector<core::Matrix> scores_raw;  // per head: the run's (n×n; empty when its heads differ)
    core::Matrix allowed;                  // n×n: 1 where the mask lets query i see key j
    bool edited = false;                   // the block's edited weights were used
    std::string stored_because;            // why edited weights were not used
};

struct LabTokens {
    bool as_matrices = false;           // the Circuits tab in model mode shows the d_model matrices instead
    std::optional<std::int32_t> token;  // the chosen token's id (unset: the sentence's last)
    std::optional<model::TokenCircuits> circuits;
    std::string circuits_problem;
    TokensKey circuits_key;  // of circuits / circuits_problem
    Worker::Job<core::Result<model::TokenCircuits>> circuits_job;
    TokensKey circuits_job_key;
    std::optional<LabSplit> split;
    std::string split_problem;
    std::uint64_t split_serial = 0;  // of split / split_problem
    Worker::Job<core::Result<LabSplit>> split_job;
    std::uint64_t split_job_serial = 0;
};

// Takes what the worker finished, and starts the token circuits of the block being edited when the
// run or the block changed.
void update_token_circuits(LabTokens& t, ModelRun& run);
// The same for the position split (block 0 of a model with learned positions).
void update_position_split(LabTokens& t, ModelRun& run);
bool lab_tokens_busy(const LabTokens& t);
// Blocks until the jobs started have finished (screenshots, tests).
void wait_for_lab_tokens(const LabTokens& t);

// Whether the position split applies: block 0 of a model with learned positions is being edited.
bool position_split_applies(const ModelRun& run);
// What the RoPE tab says of the split where it does not apply (`run`: the model whose block the
// session is, or null).
std::string position_split_note(const ModelRun* run);

// The Circuits tab in model mode: "in token space" or "as d_model matrices"; true when the token
// view was drawn (else the caller draws the matrices).
bool draw_token_circuits(UiContext& ui, LabTokens& t, ModelRun& run, int head);
// The RoPE tab's position split of head `head` (position_split_applies); a click on a row of its
// table of every head sets `head`.
void draw_position_split(UiContext& ui, LabTokens& t, ModelRun& run, int& head);

}  // namespace attnviz::app
