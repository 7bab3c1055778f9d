// attnviz patch: activation patching of a causal model (core/model/patching.hpp) between a clean
// and a corrupted sentence, as JSON.
#pragma once

#include <optional>
#include <string>

#include "grad_command.hpp"

namespace attnviz::app {

struct PatchOptions {
    GradOptions objective;               // the clean run (--clean / --clean-token-ids), -o, --target, --versus
    std::optional<std::string> corrupt;  // --corrupt TEXT
    std::string corrupt_token_ids;       // --corrupt-token-ids 1,2,3
};

// Writes {"format": "attnviz-patching", "model_type", "dtype", "clean_token_ids", "clean_tokens",
// "corrupt_token_ids", "corrupt_tokens", "target": {"id", "token"}, "versus": {"id", "token"},
// "clean_diff", "corrupt_diff", "heads": [layer][head], "residual": [layer][position],
// "attention": [layer][head]}. Exit codes as grad's; refused also: sentences of different token
// counts (naming both), equal diffs.
int patch_command(const PatchOptions& options);

}  // namespace attnviz::app
