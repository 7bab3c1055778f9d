// attnviz attribute: why a causal model predicts a token (core/model/attribution.hpp), by token and
// by component, as JSON.
#pragma once

#include "grad_command.hpp"

namespace attnviz::app {

struct AttributeOptions {
    GradOptions objective;  // the run, -o, --target (required) and --versus
    int steps = 64;         // --steps: integrated gradients' points
};

// Writes {"format": "attnviz-attribution", "model_type", "dtype", "token_ids", "tokens", "target",
// "versus" (null without), "objective", "steps", "grad_x_input": [n], "integrated_gradients": [n],
// "integrated_gradients_sum", "baseline_objective", "attention_x_gradient": [layer][head][query][key],
// "dla_heads": [layer][head], "dla_mlps": [layer], "dla_embeddings", "dla_bias", "dla_objective",
// "dla_sum", "dla_residual"}. Exit codes as grad's; the mean loss has no attribution (--target is
// required).
int attribute_command(const AttributeOptions& options);

}  // namespace attnviz::app
