// attnviz heads: the head detectors' scores of every head of a model (core/model/head_detectors.hpp)
// as JSON, with each score's ranking.
#pragma once

#include <cstdint>
#include <string>

namespace attnviz::app {

struct HeadsOptions {
    std::string model;  // a model folder
    std::uint64_t seed = 1;
    std::string out_path;  // -o
    std::int64_t memory_budget = 0;
};

// Writes {"format": "attnviz-heads", "model_type", "seed", "probe_token_ids", "probe_tokens",
// "scores": {"previous_token", "induction", "duplicate_token", "sink", "diagonal", "copying"}: each
// [layer][head], "ranked": {the same keys: [{"layer", "head", "score"}, …] highest first}}. Exit 2
// for a folder refused, 1 for a file that cannot be read or written.
int heads_command(const HeadsOptions& options);

}  // namespace attnviz::app
