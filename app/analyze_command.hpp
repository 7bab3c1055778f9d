// attnviz analyze SESSION [-o OUT.json]: the attention lab's analyses of every head of a session
// (core/attention/head_analysis.hpp) as one JSON object.
#pragma once

#include <cstdint>
#include <string>

namespace attnviz::app {

// Writes {"format": "attnviz-analysis", "heads": [per head: "norm_weighted" (n × m), "qk_singular"
// (d_k values, descending), with the output projection "ov_singular" (d_v), "ov_eigenvalues"
// ([[re, im], …], by descending magnitude) and "copying", "ablation_zero" and "ablation_mean"
// (‖Δoutput‖_F), "sink_key", "sink_share", with RoPE "rope_pairs" (n × m each, in pair order) and
// "rope_rest" (n × m)]} to out_path, or stdout for "" or "-". Exit codes as `compute`'s.
int analyze_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget);

}  // namespace attnviz::app
