// Seed 004's constraint on the projections (docs/math.md#seed-004): W_Q, W_K, W_V with orthonormal
// columns (WᵀW = I, a point of the Stiefel manifold). attnviz shows how far the current weights are
// from it and can move them to the nearest such matrix.
#pragma once

#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// ‖WᵀW − I‖_F: 0 exactly when the columns of W are orthonormal.
double stiefel_distance(const Matrix& w);

// The matrix with orthonormal columns nearest to W in the Frobenius norm: the orthogonal factor of
// W's polar decomposition, U·Vᵀ from W = U·Σ·Vᵀ (thin SVD). Refused when W has more columns than
// rows (no rows×cols matrix has that many orthonormal columns) or is empty.
Result<Matrix> nearest_orthonormal(const Matrix& w);

}  // namespace attnviz::core
