// The arithmetic behind any cell of any matrix, with the real numbers.
//
// Tooltips, the lesson steps and exports all show this text, so it is written once, here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "forward.hpp"
#include "params.hpp"

namespace attnviz::core {

// Every matrix a user can look at. Per-head ones take a head index.
enum class MatrixId { X, W_Q, W_K, W_V, W_O, Q, K, V, scores_raw, scores, weights, Z, concat, output };

inline constexpr MatrixId all_matrix_ids[] = {
    MatrixId::X,          MatrixId::W_Q,    MatrixId::W_K,     MatrixId::W_V, MatrixId::W_O,
    MatrixId::Q,          MatrixId::K,      MatrixId::V,       MatrixId::scores_raw,
    MatrixId::scores,     MatrixId::weights, MatrixId::Z,      MatrixId::concat, MatrixId::output};

const char* name(MatrixId id);         // "scores_raw", "W_Q", ...
bool is_per_head(MatrixId id);         // W_Q … Z
bool is_input(MatrixId id);            // X, W_Q, W_K, W_V, W_O: edited by the user
std::optional<MatrixId> matrix_id_from_name(const std::string& name);

// The matrix itself: from params for inputs, from the trace otherwise.
// nullptr when the head is out of range, or for W_O while output_projection is off.
const Matrix* find_matrix(const Params& params, const Trace& trace, MatrixId id, int head);

enum class Notation { unicode, ascii };

// "Q⁽¹⁾" (unicode) or "Q(1)" (ascii) for per-head matrices; head is 0-based, shown 1-based.
std::string label(MatrixId id, int head, Notation notation = Notation::unicode);

// A region of an operand that produced a cell: a whole row (col < 0), a whole column (row < 0)
// or one cell. The GUI highlights these.
struct OperandRef {
    MatrixId matrix;
    int head = 0;
    int row = -1;
    int col = -1;
    bool operator==(const OperandRef&) const = default;
};

struct Product {
    double a = 0, b = 0;  // the term a·b
};

struct Explanation {
    enum class Kind {
        input,            // a value the user typed
        sum_of_products,  // value = Σ products[k].a · products[k].b  (Q, K, V, scores_raw, Z, output)
        division,         // value = numerator / denominator           (scores)
        masked,           // value = −∞, the key comes after the query (causal scores)
        softmax,          // value = exps[column] / Σ exps, exps[k] = exp(scores[i][k] − row_max)
        copy,             // value = numerator, copied from another matrix (concat; output without W_O)
    };
    Kind kind = Kind::input;
    double value = 0;                  // the cell's value as stored
    std::vector<Product> products;     // sum_of_products
    double numerator = 0;              // division, copy
    double denominator = 1;            // division
    double row_max = 0;                // softmax
    std::vector<double> exps;          // softmax: one per key, 0 for masked keys
    int column = 0;                    // softmax: which exp is the numerator
    std::vector<OperandRef> operands;  // what to highlight

    std::string title;               // "weights⁽¹⁾[0][1]"
    std::string formula;             // the rule, symbolic
    std::vector<std::string> lines;  // the rule with this cell's numbers, ending in the value

    // title, formula and lines, one per line.
    std::string text() const;
};

// Long sums are shown with their first and last terms only; `products`/`exps` stay complete.
inline constexpr int max_terms_shown = 12;

// The arithmetic of cell (row, col) of matrix `id` (of head `head` for per-head matrices).
// Fails with a problem naming the cell when it does not exist.
Result<Explanation> explain(const Params& params, const Trace& trace, MatrixId id, int head, int row, int col,
                            Notation notation = Notation::unicode);

}  // namespace attnviz::core
