// Ready-made sessions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/session.hpp"

namespace attnviz::core {

// Seed 001's example exactly (docs/math.md#seed-001): n = 2, d_model = 4, h = 2, d_k = d_v = 2,
//   X = [[1, 0, 1, 0], [0, 2, 0, 2]],
//   head 1: W_Q = W_K = W_V = [[1, 0], [0, 1], [1, 0], [0, 1]],
//   head 2: W_Q = W_K = W_V = [[0, 1], [1, 0], [0, 1], [1, 0]],
//   W_O = the 4×4 identity (the seed gives none), scale √d_k, no mask.
Session worked_example();

// Glorot-uniform weights, W ~ U(−a, a) with a = √(6 / (fan_in + fan_out)), and X ~ U(−1, 1),
// all drawn from one seeded generator in a fixed order (X, then per head W_Q, W_K, W_V, then W_O,
// then the biases, U(−0.1, 0.1) when config.biases is on, then Y ~ U(−1, 1) under cross-attention,
// then a custom mask allowing each key with probability 1/2 and key i mod kv_len always, then the
// q/k norms' weights 1 + U(−0.5, 0.5) when config.qk_norm is on), so a seed
// gives the same session on every machine. With K/V groups, each group keeps its first head's W_K, W_V.
// Precondition: validate(config) is empty.
Session random_session(const Config& config, std::uint64_t seed);

// A rows×cols matrix of U(−limit, limit) values from `seed`, with the same generator.
Matrix random_matrix(int rows, int cols, double limit, std::uint64_t seed);

// The Glorot-uniform limit √(6 / (fan_in + fan_out)) of a fan_in×fan_out weight matrix.
double glorot_limit(int fan_in, int fan_out);

}  // namespace attnviz::core
