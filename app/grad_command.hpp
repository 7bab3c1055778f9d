// attnviz grad: the gradient of one objective of a causal model's logits (core/model/backward.hpp)
// with respect to every weight of its folder, written as a safetensors file.
#pragma once

#include <string>

#include "core/model/backward.hpp"
#include "forward_command.hpp"

namespace attnviz::app {

struct GradOptions {
    ForwardOptions run;  // the model, --text or --token-ids, --dtype, the memory budget, -o
    std::string target;  // --target ID|TOKEN: the logit at the last position ("": the mean next-token loss)
    std::string versus;  // --versus ID|TOKEN: minus this logit (with --target)
};

// Writes one tensor per weight of the folder, under the weight's own name and of its stored shape,
// in the run's dtype (F32 or F64), with the metadata "objective" (its value), "objective_kind"
// (logit, difference or mean_loss), "target", "versus", "token_ids" and "dtype". Exit 2 with
// "error: …" for what forward refuses, a target or versus that is no single token, --versus
// without --target, an encoder; 1 for a file that cannot be read or written. Nothing is written then.
int grad_command(const GradOptions& options);

// The objective of --target and --versus (attribute and grad): a logit difference, a logit, or
// without a target the mean next-token loss; tokens as model::find_token takes them.
core::Result<model::Objective> objective_of(const std::string& target, const std::string& versus,
                                            const model::Tokenizer* tokenizer);

// Each problem as "error: problem" on stderr; exit_invalid.
int refuse(const core::Problems& problems);

}  // namespace attnviz::app
