// Next token: what a causal language model predicts after the sentence of the model mode
// (model_run.hpp): the k most likely tokens with p = softmax(logits / T) at a temperature T, and how
// each changed with the last edit (Δp against the run before it; a token new among the k marked).
// An encoder (BERT, RoBERTa) has no LM head: the panel says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/analysis.hpp"
#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct NextTokenPanel {
    float temperature = 1;  // T in softmax(logits / T)
    int k = 10;             // how many tokens are listed
    // The list as last computed, for the run, T and k it was computed for.
    struct Entry {
        model::TopToken top;
        double p_before = 0;     // its p in the run before the last edit, at the same T
        bool new_entry = false;  // not among the k most likely before the edit
    };
    std::vector<Entry> entries;
    std::uint64_t serial = 0;
    float computed_temperature = 0;
    int computed_k = 0;
    bool compared = false;  // entries have a before (the run is an edit's)
};

void draw_next_token_panel(AppState& state, UiContext& ui, NextTokenPanel& panel, const ModelRun& run);

// A change of probability as the table's "change" column shows it: signed, four decimals ("+0.0123",
// "-0.2000"), and "0" for a change that rounds to none (not "+0.0000" or "-0.0000").
std::string probability_change_text(double change);

}  // namespace attnviz::app
