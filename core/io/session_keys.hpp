// The keys of the session format that its reader and its writer share (docs/session-format.md).
#pragma once

#include "core/attention/registry.hpp"

namespace attnviz::core {

// A head's matrices, in the registry's order: W_Q, W_K, W_V, b_Q, b_K, b_V.
inline constexpr MatrixId head_ids[] = {MatrixId::W_Q, MatrixId::W_K, MatrixId::W_V,
                                        MatrixId::b_Q, MatrixId::b_K, MatrixId::b_V};
inline constexpr const char* head_keys[] = {"W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V"};

}  // namespace attnviz::core
