// The numbers a user edits: the input X and every weight matrix.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "matrix.hpp"
#include "problem.hpp"

namespace attnviz::core {

struct HeadParams {
    Matrix W_Q;  // d_model×d_k
    Matrix W_K;  // d_model×d_k  } under grouped-query attention only the first head of each group
    Matrix W_V;  // d_model×d_v  } holds these four (the group's), the other heads hold none
    Matrix b_Q;  // 1×d_k   biases: held at these shapes (zeros by default) and applied while
    Matrix b_K;  // 1×d_k   config.biases is on
    Matrix b_V;  // 1×d_v
    bool operator==(const HeadParams& o) const {
        return same(W_Q, o.W_Q) && same(W_K, o.W_K) && same(W_V, o.W_V) && same(b_Q, o.b_Q) && same(b_K, o.b_K) &&
               same(b_V, o.b_V);
    }
};

struct Params {
    Matrix X;                       // n×d_model, one token per row
    std::vector<HeadParams> heads;  // h entries
    Matrix W_O;                     // (h·d_v)×d_model; kept in memory while output_projection is off
    Matrix b_O;                     // 1×d_model; applied with W_O while config.biases is on
    int kv_group_size = 1;          // query heads per K/V group (config.group_size())

    // The head whose W_K, W_V, b_K and b_V head `head` uses: the first of its group.
    int kv_owner(int head) const { return head - head % kv_group_size; }
    bool operator==(const Params& o) const {
        return same(X, o.X) && heads == o.heads && same(W_O, o.W_O) && same(b_O, o.b_O) &&
               kv_group_size == o.kv_group_size;
    }
};

// What is wrong with a value for an input cell, or nullopt when it is fine: it must be finite and
// within ±Limits::max_abs_value, which keeps every intermediate finite (no overflow to ∞ in Q·Kᵀ).
std::optional<std::string> value_problem(double value);

// Which weight matrix of a head; used by the fill rule and by explain().
enum class Weight { W_Q, W_K, W_V };

// Every shape mismatch and every non-finite value, with its field path:
// "heads[1].W_K: expected 4×2, got 4×3", "X[0][2]: NaN is not allowed".
// W_O is checked only when config.output_projection is on.
Problems validate(const Config& config, const Params& params);

// Whether every matrix has the shape the config asks for (validate() without the value checks).
bool has_shapes(const Config& config, const Params& params);

// The value the fill rule gives a cell that a resize creates (see resize()).
//   X:            0
//   W_Q/W_K/W_V of head i (0-based), r×c of a d_model×cols matrix:
//                 1 when (r + i) mod cols == c, else 0
//                 (the pattern of seed 001's worked example: head 1 [[1,0],[0,1],[1,0],[0,1]],
//                  head 2 [[0,1],[1,0],[0,1],[1,0]])
//   W_O:          1 when r == c, else 0 (the identity)
//   biases:       0
double fill_weight(int head, int r, int c, int cols);
double fill_output(int r, int c);

// Zero-filled params of the right shapes, then the fill rule everywhere.
Params filled(const Config& config);

// Params for `to`, keeping every value of `from` whose (head, row, column) still exists —
// the overlapping top-left block of each matrix and every head with index < min(h_from, h_to) —
// and giving each new cell the fill rule's value. W_O and the biases keep their blocks too.
// Changing n, d_model, h, d_k or d_v therefore never loses an edit that still fits.
// K/V groups: a head of `to` takes the K/V its group's first head used in `from` (so splitting
// groups copies the shared W_K, W_V into each head, and merging keeps each group's first head's).
Params resize(const Params& from, const Config& to);

}  // namespace attnviz::core
