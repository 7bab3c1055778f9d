// What a head does with its attention, in four numbers (the model view sorts and compares heads by
// them): computed from its weights (n queries × n_keys keys, each row summing to 1).
#pragma once

#include "core/attention/matrix_types.hpp"

namespace attnviz::core {

struct HeadSummary {
    double mean_entropy = 0;    // mean over queries of −Σ_j w·ln w, in nats (0: each query on one key)
    double mean_distance = 0;   // mean over queries of Σ_j w·|i − j|: how far back or ahead it looks
    double first_share = 0;     // mean weight on key 0 (heads that park attention on the first token)
    double diagonal_share = 0;  // mean weight of query i on key i (heads that look at themselves)
};

// The summary of one head's weights; an empty matrix gives zeros.
HeadSummary summarize_head(const Matrix& weights);

}  // namespace attnviz::core
