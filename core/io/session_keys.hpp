// The keys of the session format that its reader and its writer share (docs/session-format.md).
#pragma once

#include "core/attention/registry.hpp"

namespace attnviz::core {

// Whether a matrix is a field of each head in the file ("heads": [{"W_Q": …, "b_V": …}]): every
// per-head input of the registry, under its name, in the registry's order (W_Q, W_K, W_V, b_Q,
// b_K, b_V).
inline bool is_head_field(MatrixId id) { return is_input(id) && is_per_head(id); }

// Whether a matrix is a field of the file's root, the layer's ("X": …, "W_O": …): every input of
// the registry that is not per head, under its name (X, Y, mask, W_O, b_O).
inline bool is_layer_field(MatrixId id) { return is_input(id) && !is_per_head(id); }

}  // namespace attnviz::core
