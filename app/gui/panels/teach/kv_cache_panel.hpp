// KV-cache stepper: how a decoder generates, on the session's own layer (core/attention/
// kv_cache.hpp). The first p tokens are prefilled; then each step decodes one token t: its query row,
// the cache's K and V grown by its row, its weights against the t + 1 cached keys only, and its
// output row beside row t of the whole layer computed at once under a causal mask (the difference
// shown). Below, the bytes the cache holds: this layer after the step, and a model of this layer's
// shape at a chosen number of layers, tokens and bytes per value, with and without K/V groups.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/kv_cache.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// The stepper follows sessions of up to this many tokens (each step keeps its rows of every head).
inline constexpr int max_kv_cache_tokens = 128;

struct KvCachePanel {
    int head = 0;     // from 0
    int prefill = 1;  // tokens run at once before the first decoding step
    int step = 0;     // index into run->steps
    // A model of this layer's shape, for the cache's size.
    int layers = 32;
    int tokens = 4096;
    int bytes_per_value = 2;
    // The run shown, and what it was computed from.
    std::optional<core::KvCacheRun> run;
    std::uint64_t run_generation = 0;
    int run_prefill = -1;
    std::string error;
};

// The run for the shown session and the panel's prefill, decoded again when either changed.
void update_kv_cache(const AppState& state, KvCachePanel& panel);

void draw_kv_cache_panel(AppState& state, UiContext& ui, KvCachePanel& panel);

}  // namespace attnviz::app
