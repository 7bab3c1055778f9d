// Compare: a session as it is now (B) against the one pinned earlier (A), matrix by matrix.
//
// B − A of two matrices of one shape, with the cells that changed most. Masked scores are −∞ in A
// and B alike, and −∞ − (−∞) is NaN, not a change, so a cell that is not finite counts as masked
// and is never subtracted:
//   masked in both       no change; B − A = 0
//   masked in one only   a change of the mask, counted apart from the values' changes:
//                        B − A = +∞ (masked in A only: the key may be looked at now) or −∞ (in B only)
// Nothing is ever compared across different shapes: the caller checks them (same_shape()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/attention/registry.hpp"
#include "core/base/notation.hpp"

namespace attnviz::core {

struct Session;

// One cell of both matrices.
struct CellPair {
    int row = 0, col = 0;
    double a = 0, b = 0;
    double delta() const { return b - a; }
};

struct Comparison {
    Matrix difference;            // rows×cols: B − A; 0 where both are masked, ±∞ where only one is
    std::vector<CellPair> top;    // the largest |B − A| of the cells finite in both that changed,
                                  // largest first, ties in row-major order; at most top_k of them
    double max_abs = 0;           // the largest |B − A| of those cells (0: none changed)
    std::int64_t changed = 0;     // cells finite in both whose value changed (B ≠ A)
    std::int64_t masked_a = 0;    // cells masked in A only
    std::int64_t masked_b = 0;    // cells masked in B only
    std::vector<CellPair> masks;  // the first top_k cells masked in one only, row-major
    std::int64_t cells() const { return difference.size(); }
};

// B − A and its largest changes. Precondition: a and b have one shape.
Comparison compare(const Matrix& a, const Matrix& b, int top_k = 10);

// Whether matrix `id` exists under both configs with one shape (its head in range of both).
bool same_shape(const MatrixRef& ref, const Config& a, const Config& b);

// An input of the sessions that is not the same in both.
struct InputChange {
    enum class Kind { values, shape, only_a, only_b };
    MatrixRef ref;
    Kind kind = Kind::values;
};
// The input matrices of B that differ from A's (values or shape), and those of one of them only,
// in the registry's order, head by head. A K/V group's W_K, W_V, b_K and b_V count once (at the
// group's first head); heads that only one session has are left to config_changes() ("h 2 → 3").
std::vector<InputChange> changed_inputs(const Session& a, const Session& b);

// The settings that differ between A's config and B's, each as "n 4 → 6", "mask none → causal",
// "s √d_k → 2", in the order Config lists them.
std::vector<std::string> config_changes(const Config& a, const Config& b, Notation notation);

}  // namespace attnviz::core
