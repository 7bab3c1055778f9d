// attnviz analyze SESSION [-o OUT.json]: the attention lab's analyses of every head of a session
// (core/attention/head_analysis.hpp) as one JSON object.
#pragma once

#include <cstdint>
#include <string>

#include "forward_command.hpp"

namespace attnviz::app {

// Writes {"format": "attnviz-analysis", "heads": [per head: "norm_weighted" (n × m), "qk_singular"
// (d_k values, descending), with the output projection "ov_singular" (d_v), "ov_eigenvalues"
// ([[re, im], …], by descending magnitude) and "copying", "ablation_zero" and "ablation_mean"
// (‖Δoutput‖_F), "sink_key", "sink_share", with RoPE "rope_pairs" (n × m each, in pair order) and
// "rope_rest" (n × m)]} to out_path, or stdout for "" or "-". Exit codes as `compute`'s.
int analyze_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget);

// attnviz analyze MODEL (--text T | --token-ids 1,2,3) [-o OUT.json]: the same for every layer of
// the model's forward pass (run in double), {"format": "attnviz-analysis", "model_type", "tokens",
// "layers": [{"heads": [...]}, …]}; for a causal LM also "top" (the 5 most likely next tokens) and
// per head "ablation_next_token": {"kl": KL(p ‖ p'), "top": [...]}, p' the next-token distribution
// with that head zero-ablated (its rows of W_O zeroed, the later layers recomputed). Exit codes
// as `forward`'s.
int analyze_model_command(const ForwardOptions& options, const std::string& out_path);

}  // namespace attnviz::app
