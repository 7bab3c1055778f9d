// The matrix registry: one row of facts for every matrix of the session and the trace.
//
// Everything that names, finds, shapes, colours or explains a matrix reads it from this table —
// explain(), the session and trace files, the lesson, `--select`, the panels and exports — so a
// new matrix is one row here plus its math (forward() and one explain operation).
//
//   inputs (the session):  X (n×d_model); under cross-attention Y (n_kv×d_model), the keys' and
//                          values' input; with a custom mask, mask (n×kv_len, 0/1);
//                          per head W_Q, W_K (d_model×d_k), W_V (d_model×d_v);
//                          with biases b_Q, b_K (1×d_k), b_V (1×d_v); W_O ((h·d_v)×d_model, while
//                          the output projection is on) and b_O (1×d_model, with biases); with q/k
//                          norms q_norm (1×h·d_k) and k_norm (1×g·d_k, g the K/V groups)
//   computed (the trace):  per head Q (n×d_k), K (m×d_k), V (m×d_v), with RoPE Q_rot (n×d_k),
//                          K_rot (m×d_k), scores_raw, scores, with soft-capping scores_capped,
//                          weights (n×m), Z (n×d_v), where
//                          m = kv_len() is n, or n_kv under cross-attention; concat (n×h·d_v);
//                          output (n×d_model, or n×h·d_v without W_O)
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/attention/config.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/base/notation.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

struct Params;
template <class Scalar>
struct TraceT;
using Trace = TraceT<double>;

// Every matrix a user can look at, in pipeline order. `count` is the number of matrices.
enum class MatrixId {
    X,
    Y,
    mask,
    W_Q,
    W_K,
    W_V,
    b_Q,
    b_K,
    b_V,
    W_O,
    b_O,
    q_norm,
    k_norm,
    Q,
    K,
    V,
    Q_rot,
    K_rot,
    scores_raw,
    scores,
    scores_capped,
    weights,
    Z,
    concat,
    output,
    count
};

inline constexpr std::size_t matrix_count = static_cast<std::size_t>(MatrixId::count);

// A size of the config, the unit a matrix's shape is given in.
// n counts the queries (X's tokens), n_kv the keys and values (kv_len(): Y's tokens, or X's).
// q_width is every head's Q side by side (h·d_k), k_width every K/V group's K (g·d_k).
enum class Dim { one, n, n_kv, d_model, d_k, d_v, concat_width, output_width, q_width, k_width };
int extent(Dim dim, const Config& config);

// How a matrix is coloured by default: around 0 (blue–white–red, symmetric range from its largest
// magnitude), or from 0 to 1 (weights: probabilities).
enum class ColorScale { diverging, unit_interval };

// What produces a matrix; explain() has one function per operation.
enum class Operation {
    input,          // typed by the user
    product,        // A·B: row i of A times column j of B (Q, K, V; output with W_O)
    dot_products,   // Q·Kᵀ: query i with key j
    scale,          // scores_raw / s, −∞ where the causal mask or the sliding window hides the key
    softcap,        // c·tanh(scores / c)
    softmax,        // each row's softmax
    weighted_sum,   // weights·V
    concatenation,  // [Z⁽¹⁾ … Z⁽ʰ⁾]
    rotation,       // RoPE: each pair of columns of row p rotated by p·θ_i
    count
};
// (Q and K under q/k norms stay products: explain() adds the norm's step after the sum.)

// A text in both notations.
struct Text {
    const char* unicode;
    const char* ascii;
    const char* in(Notation n) const { return n == Notation::unicode ? unicode : ascii; }
};

// A text as the row-vector convention (seeds 000–003) and the column-vector one (seed 004) write
// it (docs/math.md#seed-004).
struct Oriented {
    Text rows;
    Text columns;
    const char* in(Notation n, bool column_vectors) const { return (column_vectors ? columns : rows).in(n); }
};

// What of the config a matrix can need to exist in a layer; each has a reason for its absence
// ("the output projection is off", see absence()).
enum Need : unsigned {
    needs_biases = 1,        // config.biases
    needs_W_O = 2,           // config.output_projection
    needs_rope = 4,          // config.rope.on
    needs_cross = 8,         // cross-attention (config.n_kv > 0)
    needs_custom_mask = 16,  // config.mask == Mask::custom
    needs_softcap = 32,      // config.softcap > 0
    needs_qk_norm = 64       // config.qk_norm.on
};

struct MatrixInfo {
    MatrixId id;
    const char* name;      // as in files, `--select` and lessons: "scores_raw"
    bool per_head;         // one per head (shown as Q⁽¹⁾), or one for the layer
    bool kv_shared;        // one per K/V group under grouped-query attention (W_K, W_V, b_K, b_V)
    bool input;            // edited by the user (in the session), or computed (in the trace)
    Dim rows, cols;        // shape in terms of the config
    MatrixId operands[2];  // what it is computed from (MatrixId::count: none)
    MatrixId bias;         // the bias added to it while the config has biases (count: none)
    Operation operation;
    ColorScale colors;
    Oriented formula;  // how it is computed: "X·W_Q" / "W_Qᵀ·X"
    Oriented heading;  // a short column heading: "Q = X·W_Q", "÷ s", "softmax →"
    unsigned needs;    // what of the config it needs to exist (Need flags, every one; 0: every layer has it)
};

// The table, one row per MatrixId in enum order (checked at compile time in registry.cpp).
const MatrixInfo& info(MatrixId id);

// Every id, in pipeline order.
inline constexpr MatrixId all_matrix_ids[] = {MatrixId::X,          MatrixId::Y,      MatrixId::mask,
                                              MatrixId::W_Q,        MatrixId::W_K,    MatrixId::W_V,
                                              MatrixId::b_Q,        MatrixId::b_K,    MatrixId::b_V,
                                              MatrixId::W_O,        MatrixId::b_O,    MatrixId::q_norm,
                                              MatrixId::k_norm,     MatrixId::Q,      MatrixId::K,
                                              MatrixId::V,          MatrixId::Q_rot,  MatrixId::K_rot,
                                              MatrixId::scores_raw, MatrixId::scores, MatrixId::scores_capped,
                                              MatrixId::weights,    MatrixId::Z,      MatrixId::concat,
                                              MatrixId::output};
static_assert(std::size(all_matrix_ids) == matrix_count, "all_matrix_ids lists every MatrixId once");

inline const char* name(MatrixId id) { return info(id).name; }
inline bool is_per_head(MatrixId id) { return info(id).per_head; }
inline bool is_input(MatrixId id) { return info(id).input; }
inline bool is_kv_shared(MatrixId id) { return info(id).kv_shared; }
std::optional<MatrixId> matrix_id_from_name(const std::string& name);
// "X, W_Q, W_K, …, output": every name, for messages.
std::string matrix_names();

// Whether the matrix exists in a layer of this config: whether the config has everything its row
// needs (W_O only while the projection is on, the biases only with biases (b_O with both), Q_rot
// and K_rot only with RoPE, Y under cross-attention, mask with a custom mask).
bool exists(MatrixId id, const Config& config);
// Why it does not ("RoPE is off"), or nullptr when it exists.
const char* absence(MatrixId id, const Config& config);
// The first of its needs the config does not meet (in the order absence() names them), or 0.
unsigned missing_need(MatrixId id, const Config& config);
// Operand k (0 or 1) of a matrix under this config: scores_raw is Q_rot·K_rotᵀ with RoPE; K and V
// are Y·W_K and Y·W_V under cross-attention; weights are the softmax of scores_capped with
// soft-capping.
MatrixId operand_of(MatrixId id, int k, const Config& config);
// Its shape under a config: extent(rows) × extent(cols).
int rows_of(MatrixId id, const Config& config);
int cols_of(MatrixId id, const Config& config);
// Whether its rows (columns) are tokens: the queries' (Dim::n, labelled with the session's tokens)
// or the keys' (Dim::n_kv, labelled with core::key_tokens(session)).
inline bool is_tokens(Dim d) { return d == Dim::n || d == Dim::n_kv; }
inline bool rows_are_tokens(MatrixId id) { return is_tokens(info(id).rows); }
inline bool cols_are_tokens(MatrixId id) { return is_tokens(info(id).cols); }

// A matrix: X, W_O, concat and output ignore the head.
struct MatrixRef {
    MatrixId id = MatrixId::weights;
    int head = 0;  // 0-based; shown 1-based, as the seeds count heads
    bool operator==(const MatrixRef& o) const { return id == o.id && (!is_per_head(id) || head == o.head); }
};

// A cell of a matrix, or a whole row (col < 0) or column (row < 0) of it: what a selection, an
// explanation's operands, a lesson, `--select` and an export refer to.
struct CellRef {
    MatrixRef matrix;
    int row = -1;
    int col = -1;
    bool operator==(const CellRef&) const = default;
    // Whether this region covers cell (row, col) of `m` (row/col < 0: any row/column of it).
    bool covers(const MatrixRef& m, int r = -1, int c = -1) const {
        return matrix == m && (row < 0 || r < 0 || row == r) && (col < 0 || c < 0 || col == c);
    }
};

// Whether a matrix of a session of this config exists: its head in range, and exists(id, config).
bool exists(const MatrixRef& ref, const Config& config);

// "Q⁽¹⁾" (unicode) or "Q(1)" (ascii) for per-head matrices, the name for the others.
std::string label(const MatrixRef& ref, Notation notation = Notation::unicode);
// "Q⁽¹⁾[0][1]", "Q(1)[0][1]".
std::string label(const CellRef& cell, Notation notation = Notation::unicode);

// Where the matrices live. The table knows neither Params nor Trace: these are defined beside them
// (find_input in params.cpp, find_computed and find_matrix in forward.cpp), so the dependencies
// run one way, from params and forward to the registry.
//
// The matrix itself: from params for inputs, from the trace otherwise; nullptr when the head is
// out of range, or for W_O while the trace's config has the projection off.
const Matrix* find_matrix(const Params& params, const Trace& trace, const MatrixRef& ref);
// An input matrix, to read or to edit; nullptr for computed matrices or a head out of range. A K/V
// group's W_K, W_V, b_K, b_V are its first head's (under grouped-query attention).
Matrix* find_input(Params& params, const MatrixRef& ref);
const Matrix* find_input(const Params& params, const MatrixRef& ref);
// A computed matrix of the trace (empty where the config has none, Q_rot without RoPE); nullptr
// for inputs or a head out of range.
const Matrix* find_computed(const Trace& trace, const MatrixRef& ref);
// What a matrix is computed as, for this config, notation and orientation: "X·W_Q", "÷ √d_k, mask",
// "concat (no W_O)", "the input".
std::string operation_text(MatrixId id, const Config& config, Notation notation, bool column_vectors);

// The short column heading of a matrix for this config: info(id).heading, except K and V under
// cross-attention ("K = Y·W_K").
std::string heading_text(MatrixId id, const Config& config, Notation notation, bool column_vectors);

// A part of a matrix or cell reference without the spaces and tabs around it. One rule for every
// reference (--select, --set, --grad, --matrix, the lesson's): spaces around a part are allowed and
// ignored ("output: 1:2 " is "output:1:2"), spaces inside one are not.
std::string ref_part(const std::string& text);

// "weights:1:0:1" (NAME:HEAD:ROW:COL, the head counted from 1 as the seeds do) or "output:0:2"
// (NAME:ROW:COL for matrices of the layer) → the cell. Whether it exists in a session is not checked.
Result<CellRef> parse_cell_ref(const std::string& text);

}  // namespace attnviz::core
