// The arithmetic behind any cell of any matrix, with the real numbers.
//
// Tooltips, the lesson steps and exports all show this text, so it is written once, here. Which
// arithmetic a cell gets follows its matrix's operation in the registry (registry.hpp): one small
// function per operation in explain.cpp.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/params.hpp"
#include "core/attention/registry.hpp"

namespace attnviz::core {

struct Product {
    double a = 0, b = 0;  // the term a·b
};

// The terms of an explanation: one type per kind of arithmetic.
struct InputTerms {};  // a value the user typed
struct SumTerms {      // value = Σ products[k].a · products[k].b (+ bias)  (Q, K, V, scores_raw, Z, output)
    std::vector<Product> products;
    double bias = 0;        // added to the sum when the layer has biases (Q, K, V, output)
    bool has_bias = false;  // whether it does
    // Q and K under q/k norms: value = (Σ + bias) / rms · weight, rms the row's over every head
    // (trace q_rms or k_rms), weight the column's of q_norm or k_norm.
    bool normed = false;
    double rms = 1, weight = 1;
};
struct DivisionTerms {  // value = numerator / denominator  (scores)
    double numerator = 0;
    double denominator = 1;
};
struct MaskedTerms {};         // value = −∞: the mask or the sliding window hides the key
struct SoftmaxTerms {          // value = exps[column] / sum, exps[k] = exp(scores[i][k] − row_max)
    double row_max = 0;        // m: the row's max, under softmax₁ max(0, the row's max) (softmax_base)
    std::vector<double> exps;  // one per key, 0 for masked keys
    int column = 0;
    double constant = 0;  // softmax₁'s 1 as e^{−m}, a term of the sum; 0 for the standard softmax
    double sum = 0;       // constant + Σ_k exps[k]
    double row_sum = 0;   // Σ_k weights[i][k] = Σ_k exps[k] / sum: 1, below 1 under softmax₁
};
struct CopyTerms {  // value = source, copied from another matrix (concat; output without W_O)
    double source = 0;
    CellRef from;
};
struct RotationTerms {     // RoPE: value = x·cos(angle) + sign·partner·sin(angle)  (Q_rot, K_rot)
    int position = 0;      // the row: the token's position p
    int pair = 0;          // j: the pair of columns turned together
    int partner = 0;       // the other column of the pair
    double theta = 0;      // θ_j = base^(−2j/dims)
    double angle = 0;      // p·θ_j
    double x = 0;          // the unrotated value (Q or K at the same cell)
    double partner_x = 0;  // the unrotated value of the partner column
    double sign = 0;       // −1 for the pair's first column, +1 for its second
};
struct SoftcapTerms {  // value = cap·tanh(score / cap)  (scores_capped)
    double score = 0;  // scores[i][j]
    double cap = 0;    // c
};
using Terms = std::variant<InputTerms, SumTerms, DivisionTerms, MaskedTerms, SoftmaxTerms, CopyTerms, RotationTerms,
                           SoftcapTerms>;

struct Explanation {
    CellRef cell;                   // the cell explained
    double value = 0;               // its value as stored
    Terms terms;                    // the arithmetic as numbers
    std::vector<CellRef> operands;  // what produced it: rows, columns or cells to highlight

    std::string title;               // "weights⁽¹⁾[0][1] = 0.0559"
    std::string formula;             // the rule, symbolic
    std::vector<std::string> lines;  // the rule with this cell's numbers, ending in the value

    // The terms as one kind, or nullptr when they are another.
    template <class T>
    const T* as() const {
        return std::get_if<T>(&terms);
    }
    // title, formula and lines, one per line.
    std::string text() const;
};

// Long sums are shown with their first and last terms only; the terms themselves stay complete.
inline constexpr int max_terms_shown = 12;

// The arithmetic of one cell. Fails with a problem naming the cell when it does not exist, or when
// the params are not the ones the trace was computed from (other shapes).
Result<Explanation> explain(const Params& params, const Trace& trace, const CellRef& cell,
                            Notation notation = Notation::unicode);

}  // namespace attnviz::core
