// The numbers a user edits: the input X and every weight matrix.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

enum class MatrixId;  // registry.hpp

// Whether each matrix of `a` is the same (shape and values) as the one at its place in `b`.
template <std::size_t N>
bool same_matrices(const std::array<const Matrix*, N>& a, const std::array<const Matrix*, N>& b) {
    for (std::size_t k = 0; k < N; ++k)
        if (!same(*a[k], *b[k])) return false;
    return true;
}

struct HeadParams {
    Matrix W_Q;  // d_model×d_k
    Matrix W_K;  // d_model×d_k  } under grouped-query attention only the first head of each group
    Matrix W_V;  // d_model×d_v  } holds these four (the group's), the other heads hold none
    Matrix b_Q;  // 1×d_k   biases: held at these shapes (zeros by default) and applied while
    Matrix b_K;  // 1×d_k   config.biases is on
    Matrix b_V;  // 1×d_v
    // Every matrix above, in that order (what == compares, what a session patch copies).
    std::array<const Matrix*, 6> matrices() const { return {&W_Q, &W_K, &W_V, &b_Q, &b_K, &b_V}; }
    std::array<Matrix*, 6> matrices() { return {&W_Q, &W_K, &W_V, &b_Q, &b_K, &b_V}; }
    bool operator==(const HeadParams& o) const { return same_matrices(matrices(), o.matrices()); }
};

struct Params {
    Matrix X;                       // n×d_model, one token per row (the queries' input)
    Matrix Y;                       // n_kv×d_model under cross-attention (the keys' and values' input), else empty
    Matrix mask;                    // n×kv_len of 0/1 with a custom mask (1: query i may attend to key j), else empty
    std::vector<HeadParams> heads;  // h entries
    Matrix W_O;                     // (h·d_v)×d_model; kept in memory while output_projection is off
    Matrix b_O;                     // 1×d_model; applied with W_O while config.biases is on
    Matrix q_norm;                  // 1×h·d_k with config.qk_norm (the queries' norm weights), else empty
    Matrix k_norm;                  // 1×g·d_k with config.qk_norm (the keys' norm weights), else empty
    int kv_group_size = 1;          // query heads per K/V group (config.group_size())

    // The head whose W_K, W_V, b_K and b_V head `head` uses: the first of its group.
    int kv_owner(int head) const { return head - head % kv_group_size; }
    // The layer's own matrices (the heads' are theirs), in the order above.
    std::array<const Matrix*, 7> matrices() const { return {&X, &Y, &mask, &W_O, &b_O, &q_norm, &k_norm}; }
    std::array<Matrix*, 7> matrices() { return {&X, &Y, &mask, &W_O, &b_O, &q_norm, &k_norm}; }
    bool operator==(const Params& o) const {
        return same_matrices(matrices(), o.matrices()) && heads == o.heads && kv_group_size == o.kv_group_size;
    }
};

// What is wrong with a value for an input cell, or nullopt when it is fine: it must be finite and
// within ±Limits::max_abs_value, which keeps every intermediate finite (no overflow to ∞ in Q·Kᵀ).
std::optional<std::string> value_problem(double value);
// Whether value_problem finds nothing in any value of m.
bool values_allowed(const Matrix& m);

// The input matrix the params hold at this place: the layer's, or head `head`'s own, where a K/V
// group's W_K, W_V, b_K, b_V are held by its first head only (the other heads' are empty; see
// find_input in registry.hpp, which follows the group). nullptr for a computed matrix or a head
// out of range. What loops over every matrix the params hold (memory, union, size) uses this.
Matrix* held_input(Params& params, MatrixId id, int head);
const Matrix* held_input(const Params& params, MatrixId id, int head);

// Which weight matrix of a head; used by the fill rule and by explain().
enum class Weight { W_Q, W_K, W_V };

// Every shape mismatch and every non-finite value, with its field path:
// "heads[1].W_K: expected 4×2, got 4×3", "X[0][2]: NaN is not allowed".
// W_O is checked only when config.output_projection is on, Y under cross-attention, the mask with
// a custom mask (and mask_problems() then too).
Problems validate(const Config& config, const Params& params);

// What is wrong with a custom mask's values: each must be 0 or 1 ("mask[1][2]: …"), and each row
// must allow at least one key ("mask[3]: query 3 may attend to no key …"), or its softmax has
// nothing to share out.
Problems mask_problems(const Matrix& mask);

// Whether every matrix has the shape the config asks for (validate() without the value checks).
bool has_shapes(const Config& config, const Params& params);

// The value the fill rule gives a cell that a resize creates (see resize()), so that growing n or
// h shows something (a new token is not a zero row with uniform attention, a new head is not a
// copy of another):
//   X:            fill_random(0, 0, r, c): uniform in [−1, 1], rounded to 2 decimals (readable)
//   Y:            fill_random(4, 0, r, c) (cross-attention's keys and values: not a copy of X)
//   mask:         1 (a new query or key may attend and be attended to)
//   W_Q/W_K/W_V of heads 0 and 1 (0-based), r×c of a d_model×cols matrix:
//                 1 when (r + head) mod cols == c, else 0 — seed 001's pattern (head 1
//                 [[1,0],[0,1],[1,0],[0,1]], head 2 [[0,1],[1,0],[0,1],[1,0]]), so its worked
//                 example is what the rule gives and its numbers never change
//   W_Q/W_K/W_V of head ≥ 2: fill_random(1 + weight, head, r, c) (weight: 0 W_Q, 1 W_K, 2 W_V)
//   W_O:          1 when r == c, else 0 (the identity)
//   biases:       0
//   q_norm, k_norm: 1
// The random values depend only on the cell's place, never on the session or the order of the
// changes: the same cell always gets the same value.
double fill_weight(Weight weight, int head, int r, int c, int cols);
double fill_input(int r, int c);
double fill_output(int r, int c);
// The generator behind the rule: splitmix64 of (stream, head, r, c), uniform in [−1, 1], rounded to
// 2 decimals.
double fill_random(int stream, int head, int r, int c);

// Zero-filled params of the right shapes, then the fill rule everywhere.
Params filled(const Config& config);

// Params for `to`, keeping every value of `from` whose (head, row, column) still exists —
// the overlapping top-left block of each matrix and every head with index < min(h_from, h_to) —
// and giving each new cell the fill rule's value. W_O and the biases keep their blocks too.
// Changing n, d_model, h, d_k or d_v therefore never loses an edit that still fits.
// K/V groups: a head of `to` takes the K/V its group's first head used in `from` (so splitting
// groups copies the shared W_K, W_V into each head, and merging keeps each group's first head's).
Params resize(const Params& from, const Config& to);

// resize() that remembers: a new cell takes `memory`'s value at its place (same head, row and
// column) when memory holds a finite one there, else the fill rule's. So shrinking n, d_model, h,
// d_k or d_v and growing back restores the values the session had (see remembered()).
Params resize(const Params& from, const Config& to, const Params& memory);

// Everything `memory` and `current` know, for resize(): each matrix as large as the larger of the
// two, `current`'s values where it has cells, else `memory`'s, else NaN (nothing known).
Params remembered(const Params& memory, const Params& current);

// A layer's projections as checkpoints hold them, one matrix each, as x·W with the heads side by
// side in columns: W_Q d_model × h·d_k, W_K d_model × kv·d_k and W_V d_model × kv·d_v (kv the K/V
// groups), W_O h·d_v × d_model; the biases as one row each, or empty where the layer has none.
struct LayerProjections {
    Matrix W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O;
    bool has_biases() const { return b_Q.size() || b_K.size() || b_V.size() || b_O.size(); }
};

// Sets every head's W_Q, b_Q and each K/V group's W_K, W_V, b_K, b_V (in the group's first head)
// from the projections' columns, and W_O, b_O; a missing bias is zeros. `params` holds config.heads
// heads (at `config`'s shapes from resize(), or empty) and the projections' shapes fit the config
// (checked by the caller).
void set_projections(Params& params, const Config& config, const LayerProjections& p);

}  // namespace attnviz::core
