#include "explain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "format.hpp"

namespace attnviz::core {

namespace {

struct Symbols {
    const char* dot;    // multiplication
    const char* minus;  // subtraction in formulas
    const char* neg_inf;
    const char* sqrt;
    const char* sum;
    const char* transpose;
    const char* ellipsis;
};

const Symbols& symbols(Notation n) {
    static const Symbols unicode{"·", "−", "−∞", "√", "Σ", "ᵀ", "…"};
    static const Symbols ascii{"*", "-", "-inf", "sqrt", "sum", "^T", "..."};
    return n == Notation::unicode ? unicode : ascii;
}

std::string superscript_number(int v) {
    static const char* digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    std::string s;
    for (char c : std::to_string(v)) s += digits[c - '0'];
    return s;
}

std::string num(double v) { return format_number(v); }

// A number as a factor or a term: negative ones in parentheses, so "2·(-1)" and "3 + (-1)".
std::string operand(double v) {
    const std::string s = num(v);
    return v < 0 ? "(" + s + ")" : s;
}

std::string cell(const std::string& matrix, int row, int col) {
    return matrix + "[" + std::to_string(row) + "][" + std::to_string(col) + "]";
}

// Joins terms with `sep`, keeping only the first and last ones of a long list.
std::string join_capped(const std::vector<std::string>& terms, const std::string& sep, const Symbols& sym) {
    std::string out;
    const size_t count = terms.size();
    const bool cap = count > static_cast<size_t>(max_terms_shown);
    const size_t head = cap ? max_terms_shown - 4 : count;
    for (size_t k = 0; k < count; ++k) {
        if (cap && k == head) {
            out += sep + sym.ellipsis + " " + std::to_string(count - head - 3) + " more terms " + sym.ellipsis;
            k = count - 3;
        }
        if (!out.empty()) out += sep;
        out += terms[k];
    }
    return out;
}

void add_sum_lines(Explanation& e, const Symbols& sym) {
    std::vector<std::string> factors, values;
    for (const Product& p : e.products) {
        factors.push_back(operand(p.a) + sym.dot + operand(p.b));
        values.push_back(operand(p.a * p.b));
    }
    e.lines.push_back("= " + join_capped(factors, " + ", sym));
    if (e.products.size() > 1) e.lines.push_back("= " + join_capped(values, " + ", sym));
    e.lines.push_back("= " + num(e.value));
}

std::string scale_text(const Config& c, const Symbols& sym) {
    switch (c.scale.kind) {
        case Scale::Kind::sqrt_dk: return std::string("s = ") + sym.sqrt + "d_k = " + sym.sqrt + std::to_string(c.d_k);
        case Scale::Kind::none: return "s = 1, scaling is off";
        case Scale::Kind::divisor: return "s = " + num(c.scale.divisor) + ", a chosen temperature";
    }
    return "";
}

}  // namespace

const char* name(MatrixId id) {
    switch (id) {
        case MatrixId::X: return "X";
        case MatrixId::W_Q: return "W_Q";
        case MatrixId::W_K: return "W_K";
        case MatrixId::W_V: return "W_V";
        case MatrixId::W_O: return "W_O";
        case MatrixId::Q: return "Q";
        case MatrixId::K: return "K";
        case MatrixId::V: return "V";
        case MatrixId::scores_raw: return "scores_raw";
        case MatrixId::scores: return "scores";
        case MatrixId::weights: return "weights";
        case MatrixId::Z: return "Z";
        case MatrixId::concat: return "concat";
        case MatrixId::output: return "output";
    }
    return "?";
}

bool is_per_head(MatrixId id) {
    return id != MatrixId::X && id != MatrixId::W_O && id != MatrixId::concat && id != MatrixId::output;
}

bool is_input(MatrixId id) {
    return id == MatrixId::X || id == MatrixId::W_Q || id == MatrixId::W_K || id == MatrixId::W_V ||
           id == MatrixId::W_O;
}

std::optional<MatrixId> matrix_id_from_name(const std::string& text) {
    for (MatrixId id : all_matrix_ids)
        if (text == name(id)) return id;
    return std::nullopt;
}

const Matrix* find_matrix(const Params& params, const Trace& trace, MatrixId id, int head) {
    const bool head_ok = head >= 0 && head < static_cast<int>(trace.heads.size()) &&
                         head < static_cast<int>(params.heads.size());
    if (is_per_head(id) && !head_ok) return nullptr;
    switch (id) {
        case MatrixId::X: return &params.X;
        case MatrixId::W_Q: return &params.heads[head].W_Q;
        case MatrixId::W_K: return &params.heads[head].W_K;
        case MatrixId::W_V: return &params.heads[head].W_V;
        case MatrixId::W_O: return trace.config.output_projection ? &params.W_O : nullptr;
        case MatrixId::Q: return &trace.heads[head].Q;
        case MatrixId::K: return &trace.heads[head].K;
        case MatrixId::V: return &trace.heads[head].V;
        case MatrixId::scores_raw: return &trace.heads[head].scores_raw;
        case MatrixId::scores: return &trace.heads[head].scores;
        case MatrixId::weights: return &trace.heads[head].weights;
        case MatrixId::Z: return &trace.heads[head].Z;
        case MatrixId::concat: return &trace.concat;
        case MatrixId::output: return &trace.output;
    }
    return nullptr;
}

std::string label(MatrixId id, int head, Notation notation) {
    std::string s = name(id);
    if (!is_per_head(id)) return s;
    if (notation == Notation::unicode) return s + "⁽" + superscript_number(head + 1) + "⁾";
    return s + "(" + std::to_string(head + 1) + ")";
}

std::string Explanation::text() const {
    std::string out = title + "\n" + formula;
    for (const std::string& line : lines) out += "\n" + line;
    return out;
}

Result<Explanation> explain(const Params& params, const Trace& trace, MatrixId id, int head, int row, int col,
                            Notation notation) {
    const Matrix* m = find_matrix(params, trace, id, head);
    if (!m) {
        if (id == MatrixId::W_O) return Result<Explanation>::fail({{"W_O", "the output projection is off"}});
        return Result<Explanation>::fail(
            {{label(id, head, Notation::ascii), "there is no head " + std::to_string(head + 1)}});
    }
    // The params must be the ones the trace was computed from (same shapes), or the terms below
    // would be read out of range.
    const bool consistent = has_shapes(trace.config, params) &&
                            static_cast<int>(trace.heads.size()) == trace.config.heads;
    if (!consistent)
        return Result<Explanation>::fail({{"", "the trace was computed from inputs of other shapes; recompute it first"}});
    const std::string lbl = label(id, head, notation);
    if (row < 0 || col < 0 || row >= m->rows() || col >= m->cols())
        return Result<Explanation>::fail(
            {{cell(label(id, head, Notation::ascii), row, col),
              "outside the " + std::to_string(m->rows()) + "×" + std::to_string(m->cols()) + " matrix"}});

    const Symbols& sym = symbols(notation);
    const Config& c = trace.config;
    Explanation e;
    e.value = (*m)(row, col);
    e.title = cell(lbl, row, col) + " = " + num(e.value);
    const int i = row, j = col;

    auto projection = [&](MatrixId weight_id, const Matrix& W, const char* out) {
        e.kind = Explanation::Kind::sum_of_products;
        for (int k = 0; k < c.d_model; ++k) e.products.push_back({params.X(i, k), W(k, j)});
        e.formula = std::string(out) + "[i][j] = " + sym.sum + "_c X[i][c]" + sym.dot + name(weight_id) +
                    "[c][j]: row " + std::to_string(i) + " of X times column " + std::to_string(j) + " of " +
                    label(weight_id, head, notation);
        e.operands = {{MatrixId::X, 0, i, -1}, {weight_id, head, -1, j}};
        add_sum_lines(e, sym);
    };

    const HeadTrace* ht = is_per_head(id) && !is_input(id) ? &trace.heads[head] : nullptr;
    switch (id) {
        case MatrixId::X:
        case MatrixId::W_Q:
        case MatrixId::W_K:
        case MatrixId::W_V:
        case MatrixId::W_O:
            e.kind = Explanation::Kind::input;
            e.formula = std::string("an input: ") +
                        (id == MatrixId::X ? "feature " + std::to_string(j) + " of token " + std::to_string(i)
                                           : std::string("a weight")) +
                        ", edit it to see every result change";
            e.lines.push_back("= " + num(e.value));
            break;
        case MatrixId::Q: projection(MatrixId::W_Q, params.heads[head].W_Q, "Q"); break;
        case MatrixId::K: projection(MatrixId::W_K, params.heads[head].W_K, "K"); break;
        case MatrixId::V: projection(MatrixId::W_V, params.heads[head].W_V, "V"); break;
        case MatrixId::scores_raw:
            e.kind = Explanation::Kind::sum_of_products;
            for (int k = 0; k < c.d_k; ++k) e.products.push_back({ht->Q(i, k), ht->K(j, k)});
            e.formula = std::string("scores_raw[i][j] = (Q") + sym.dot + "K" + sym.transpose +
                        ")[i][j] = q_" + std::to_string(i) + sym.dot + "k_" + std::to_string(j) + " = " + sym.sum +
                        "_c Q[" + std::to_string(i) + "][c]" + sym.dot + "K[" + std::to_string(j) + "][c]";
            e.operands = {{MatrixId::Q, head, i, -1}, {MatrixId::K, head, j, -1}};
            add_sum_lines(e, sym);
            break;
        case MatrixId::scores:
            e.operands = {{MatrixId::scores_raw, head, i, j}};
            if (c.mask == Mask::causal && j > i) {
                e.kind = Explanation::Kind::masked;
                e.formula = "causal mask: key " + std::to_string(j) + " comes after query " + std::to_string(i);
                e.lines.push_back(std::string("= ") + sym.neg_inf + ", so its weight will be exp(" + sym.neg_inf +
                                  ") = 0");
                break;
            }
            e.kind = Explanation::Kind::division;
            e.numerator = ht->scores_raw(i, j);
            e.denominator = trace.scale;
            e.formula = "scores[i][j] = scores_raw[i][j] / s, " + scale_text(c, sym);
            e.lines.push_back("= " + num(e.numerator) + " / " + num(e.denominator));
            e.lines.push_back("= " + num(e.value));
            break;
        case MatrixId::weights: {
            e.kind = Explanation::Kind::softmax;
            e.column = j;
            const auto srow = ht->scores.row(i);
            e.row_max = srow.maxCoeff();
            std::vector<std::string> max_terms, exp_terms, exp_values;
            double sum = 0;
            for (int k = 0; k < c.n; ++k) {
                const double s = srow(k);
                const double x = std::exp(s - e.row_max);
                e.exps.push_back(x);
                sum += x;
                // −∞ is a masked score; num() prints any other value, +∞ included, as it is.
                const std::string score = s == -std::numeric_limits<double>::infinity() ? sym.neg_inf : num(s);
                max_terms.push_back(score);
                exp_terms.push_back("exp(" + score + " " + sym.minus +
                                    " " + operand(e.row_max) + ")");
                exp_values.push_back(num(x));
            }
            e.numerator = e.exps[j];
            e.denominator = sum;
            e.formula = std::string("weights[i][j] = exp(scores[i][j] ") + sym.minus + " m) / " + sym.sum +
                        "_k exp(scores[i][k] " + sym.minus + " m), m = the row's max (it cancels; it keeps exp finite)";
            e.lines.push_back("m = max(" + join_capped(max_terms, ", ", sym) + ") = " + num(e.row_max));
            e.lines.push_back("exp terms: " + join_capped(exp_terms, ", ", sym));
            e.lines.push_back("         = " + join_capped(exp_values, ", ", sym));
            e.lines.push_back("sum = " + join_capped(exp_values, " + ", sym) + " = " + num(sum));
            e.lines.push_back(cell("weights", i, j) + " = " + num(e.numerator) + " / " + num(sum) + " = " +
                              num(e.value));
            e.operands = {{MatrixId::scores, head, i, -1}};
            break;
        }
        case MatrixId::Z:
            e.kind = Explanation::Kind::sum_of_products;
            for (int k = 0; k < c.n; ++k) e.products.push_back({ht->weights(i, k), ht->V(k, j)});
            e.formula = std::string("Z[i][j] = ") + sym.sum + "_k weights[i][k]" + sym.dot +
                        "V[k][j]: the values of column " + std::to_string(j) + " of V averaged with row " +
                        std::to_string(i) + " of weights";
            e.operands = {{MatrixId::weights, head, i, -1}, {MatrixId::V, head, -1, j}};
            add_sum_lines(e, sym);
            break;
        case MatrixId::concat: {
            e.kind = Explanation::Kind::copy;
            const int from_head = j / c.d_v, from_col = j % c.d_v;
            e.numerator = trace.heads[from_head].Z(i, from_col);
            e.formula = "concat = [Z" + label(MatrixId::Z, 0, notation).substr(1) + " " + sym.ellipsis + " Z" +
                        label(MatrixId::Z, c.heads - 1, notation).substr(1) + "]: column " + std::to_string(j) +
                        " is column " + std::to_string(from_col) + " of head " + std::to_string(from_head + 1) +
                        "'s Z";
            e.lines.push_back("= " + cell(label(MatrixId::Z, from_head, notation), i, from_col) + " = " +
                              num(e.numerator));
            e.operands = {{MatrixId::Z, from_head, i, from_col}};
            break;
        }
        case MatrixId::output:
            if (!c.output_projection) {
                e.kind = Explanation::Kind::copy;
                e.numerator = trace.concat(i, j);
                e.formula = "output = concat (the output projection W_O is off)";
                e.lines.push_back("= " + cell("concat", i, j) + " = " + num(e.numerator));
                e.operands = {{MatrixId::concat, 0, i, j}};
                break;
            }
            e.kind = Explanation::Kind::sum_of_products;
            for (int k = 0; k < c.concat_width(); ++k) e.products.push_back({trace.concat(i, k), params.W_O(k, j)});
            e.formula = std::string("output[i][j] = ") + sym.sum + "_c concat[i][c]" + sym.dot +
                        "W_O[c][j]: row " + std::to_string(i) + " of concat times column " + std::to_string(j) +
                        " of W_O";
            e.operands = {{MatrixId::concat, 0, i, -1}, {MatrixId::W_O, 0, -1, j}};
            add_sum_lines(e, sym);
            break;
    }
    return Result<Explanation>::ok(std::move(e));
}

}  // namespace attnviz::core
