// FlashAttention's online softmax, step by step, on a head's own matrices: Z = softmax(scores)·V
// computed tile by tile without ever holding a row of weights, as FlashAttention does in on-chip
// memory. The queries are cut into tiles of B_r rows and the keys into tiles of B_c; for each row
// tile, over its key tiles in order, each row i keeps
//   m_i   the running max of its scores seen so far (−∞ before any unmasked key; see below for softmax₁)
//   ℓ_i   the running sum Σ_j e^{S_ij − m_i} over the keys seen
//   Õ_i   the running unnormalised output Σ_j e^{S_ij − m_i}·V_j (1 × d_v)
// and a new tile of scores S (B_r × B_c) updates them with m_new = max(m, rowmax S):
//   ℓ ← e^{m − m_new}·ℓ + rowsum(e^{S − m_new}),   Õ ← diag(e^{m − m_new})·Õ + e^{S − m_new}·V_tile
// After the last key tile O = diag(ℓ)⁻¹·Õ, which is Z (softmax's max-subtraction done one tile at a
// time: e^{m_old − m_new} rescales what was summed against an older max). Under softmax₁ each row
// starts at m = 0, ℓ = 1 instead (softmax_start: the constant 1 is a key of score 0 and value zero,
// seen before the first tile), so ℓ carries the 1 rescaled and Õ nothing of it.
//
// The memory traffic it saves (in values of the head's matrices, a simple model): standard
// attention writes the n × n_kv scores, reads them for the softmax, writes the weights and reads
// them for weights·V (4·n·n_kv); the tiled form writes none of them and instead reads K and V once
// per row tile (⌈n / B_r⌉ · n_kv · (d_k + d_v)) where standard attention reads them once.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// What a step (one row tile against one key tile) leaves in the tile's rows.
struct OnlineSoftmaxStep {
    int row_begin = 0, row_end = 0;  // queries [row_begin, row_end)
    int col_begin = 0, col_end = 0;  // keys [col_begin, col_end)
    std::vector<double> m;           // per row of the tile: the running max after this step (−∞: none yet)
    std::vector<double> l;           // per row: the running sum after this step
};

struct OnlineSoftmaxRun {
    std::vector<OnlineSoftmaxStep> steps;   // row tiles in order, each over its key tiles in order
    Matrix O;                               // n × d_v: diag(ℓ)⁻¹·Õ
    double max_difference = 0;              // max |O − Z| over the head's Z
    std::int64_t standard_nn_accesses = 0;  // 4·n·n_kv
    std::int64_t tiled_kv_reads = 0;        // ⌈n / B_r⌉ · n_kv · (d_k + d_v)
    std::int64_t standard_kv_reads = 0;     // n_kv · (d_k + d_v)
};

// The tiles can be at most this many rows or keys (a larger one is the whole matrix).
inline constexpr int max_block = 1 << 16;

// Head `head` (from 0) of the trace, in tiles of block_rows × block_cols (each 1 to max_block; a
// tile larger than the matrix is the whole of it, and the last tile of a side that does not divide
// by it is smaller). Refused: a head out of range, a block size out of range.
Result<OnlineSoftmaxRun> online_softmax(const Trace& trace, int head, int block_rows, int block_cols);

}  // namespace attnviz::core
