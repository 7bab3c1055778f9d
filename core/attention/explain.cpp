#include "core/attention/explain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

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

std::string scale_text(const Config& c, const Symbols& sym) {
    switch (c.scale.kind) {
        case Scale::Kind::sqrt_dk: return std::string("s = ") + sym.sqrt + "d_k = " + sym.sqrt + std::to_string(c.d_k);
        case Scale::Kind::none: return "s = 1, scaling is off";
        case Scale::Kind::divisor: return "s = " + num(c.scale.divisor) + ", a chosen temperature";
    }
    return "";
}

// What every operation's function gets: the cell, its matrix's facts and the data.
struct Context {
    const Params& params;
    const Trace& trace;
    const Config& config;
    const MatrixInfo& matrix;
    int head, i, j;
    Notation notation;
    const Symbols& sym;

    // An operand of the matrix (0 or 1) as a reference: the same head when it is per head.
    MatrixRef operand_ref(int k) const {
        const MatrixId id = operand_of(matrix.id, k, config);
        return {id, is_per_head(id) ? head : 0};
    }
    const Matrix& operand(int k) const { return *find_matrix(params, trace, operand_ref(k)); }
    std::string label_of(const MatrixRef& ref) const { return label(ref, notation); }
};

// The sum's terms as factors, as values (when there are several), then the value; a bias is the
// last term.
void add_sum_lines(Explanation& e, const SumTerms& terms, const Symbols& sym) {
    std::vector<std::string> factors, values;
    for (const Product& p : terms.products) {
        factors.push_back(operand(p.a) + sym.dot + operand(p.b));
        values.push_back(operand(p.a * p.b));
    }
    const std::string bias = terms.has_bias ? " + " + operand(terms.bias) : "";
    e.lines.push_back("= " + join_capped(factors, " + ", sym) + bias);
    if (terms.products.size() > 1 || terms.has_bias) e.lines.push_back("= " + join_capped(values, " + ", sym) + bias);
    e.lines.push_back("= " + num(e.value));
}

// Q or K under q/k norms: the sum (the projection, as without them), then divided by the RMS of
// the token's row over every head (or K/V group) and times the norm's weight of the column.
void add_norm_lines(const Context& x, Explanation& e, SumTerms& terms) {
    const bool q = x.matrix.id == MatrixId::Q;
    const int column = (q ? x.head : x.config.kv_group(x.head)) * x.config.d_k + x.j;
    const MatrixId weights = q ? MatrixId::q_norm : MatrixId::k_norm;
    terms.normed = true;
    terms.rms = (q ? x.trace.q_rms : x.trace.k_rms)(x.i, 0);
    terms.weight = (q ? x.params.q_norm : x.params.k_norm)(0, column);
    double projected = terms.has_bias ? terms.bias : 0;
    for (const Product& p : terms.products) projected += p.a * p.b;
    const std::string w = std::string(name(weights)) + "[" + std::to_string(column) + "]";
    e.formula += std::string(", then normed over every ") + (q ? "head" : "K/V group") + ": " + x.sym.divide + " rms" +
                 x.sym.dot + w + " (rms: of row " + std::to_string(x.i) + " of every " +
                 (q ? "head's X" : "group's X") + x.sym.dot + (q ? "W_Q" : "W_K") + ", with eps " +
                 num(x.config.qk_norm.eps) + ")";
    e.operands.push_back({{weights, 0}, 0, column});
    std::vector<std::string> factors;
    for (const Product& p : terms.products) factors.push_back(operand(p.a) + x.sym.dot + operand(p.b));
    const std::string bias = terms.has_bias ? " + " + operand(terms.bias) : "";
    e.lines.push_back("= (" + join_capped(factors, " + ", x.sym) + bias + ") " + x.sym.divide + " rms" + x.sym.dot + w);
    e.lines.push_back("= " + operand(projected) + " " + x.sym.divide + " " + num(terms.rms) + x.sym.dot +
                      operand(terms.weight));
    e.lines.push_back("= " + num(e.value));
}

void explain_input(const Context& x, Explanation& e) {
    e.terms = InputTerms{};
    const std::string i = std::to_string(x.i), j = std::to_string(x.j);
    switch (x.matrix.id) {
        case MatrixId::X: e.formula = "an input: feature " + j + " of token " + i; break;
        case MatrixId::Y:
            e.formula = "an input: feature " + j + " of key/value token " + i + " (cross-attention)";
            break;
        case MatrixId::mask:
            e.formula = std::string("the mask: ") + (e.value == 1 ? "query " + i + " may attend to key " + j
                                                                  : "query " + i + " may not attend to key " + j);
            break;
        default: e.formula = "an input: a weight"; break;
    }
    e.formula += ", edit it to see every result change";
    e.lines.push_back("= " + num(e.value));
}

// A copy of a cell of another matrix.
void copy_of(const Context& x, Explanation& e, const CellRef& from, const std::string& formula) {
    const double source = (*find_matrix(x.params, x.trace, from.matrix))(from.row, from.col);
    e.terms = CopyTerms{source, from};
    e.formula = formula;
    e.lines.push_back("= " + cell(x.label_of(from.matrix), from.row, from.col) + " = " + num(source));
    e.operands = {from};
}

// A·B: row i of A times column j of B, plus the bias of column j when the layer has biases.
// Without its right operand (W_O while the projection is off) the matrix is its left operand, copied.
void explain_product(const Context& x, Explanation& e) {
    const MatrixRef a = x.operand_ref(0), b = x.operand_ref(1);
    if (!exists(b.id, x.config)) {
        copy_of(x, e, {a, x.i, x.j},
                std::string(x.matrix.name) + " = " + name(a.id) + " (the output projection " + name(b.id) + " is off)");
        return;
    }
    const Matrix &A = x.operand(0), &B = x.operand(1);
    SumTerms terms;
    for (Eigen::Index k = 0; k < A.cols(); ++k) terms.products.push_back({A(x.i, k), B(k, x.j)});
    const bool biased = x.matrix.bias != MatrixId::count && exists(x.matrix.bias, x.config);
    const MatrixRef bias{x.matrix.bias, is_per_head(x.matrix.id) ? x.head : 0};
    e.formula = std::string(x.matrix.name) + "[i][j] = " + x.sym.sum + "_c " + name(a.id) + "[i][c]" + x.sym.dot +
                name(b.id) + "[c][j]" + (biased ? std::string(" + ") + name(bias.id) + "[j]" : std::string()) +
                ": row " + std::to_string(x.i) + " of " + x.label_of(a) + " times column " + std::to_string(x.j) +
                " of " + x.label_of(b) + (biased ? ", plus " + x.label_of(bias) + "[" + std::to_string(x.j) + "]" : "");
    e.operands = {{a, x.i, -1}, {b, -1, x.j}};
    if (biased) {
        terms.has_bias = true;
        terms.bias = (*find_matrix(x.params, x.trace, bias))(0, x.j);
        e.operands.push_back({bias, 0, x.j});
    }
    if ((x.matrix.id == MatrixId::Q || x.matrix.id == MatrixId::K) && x.config.qk_norm.on) {
        add_norm_lines(x, e, terms);
    } else {
        add_sum_lines(e, terms, x.sym);
    }
    e.terms = std::move(terms);
}

// Q·Kᵀ: query i with key j.
void explain_dot_products(const Context& x, Explanation& e) {
    const Matrix &Q = x.operand(0), &K = x.operand(1);
    SumTerms terms;
    for (Eigen::Index k = 0; k < Q.cols(); ++k) terms.products.push_back({Q(x.i, k), K(x.j, k)});
    const std::string i = std::to_string(x.i), j = std::to_string(x.j);
    e.formula = std::string("scores_raw[i][j] = (Q") + x.sym.dot + "K" + x.sym.transpose + ")[i][j] = q_" + i +
                x.sym.dot + "k_" + j + " = " + x.sym.sum + "_c Q[" + i + "][c]" + x.sym.dot + "K[" + j + "][c]";
    e.operands = {{x.operand_ref(0), x.i, -1}, {x.operand_ref(1), x.j, -1}};
    add_sum_lines(e, terms, x.sym);
    e.terms = std::move(terms);
}

// scores_raw / s, or −∞ where the causal mask, the sliding window or the custom mask hides the key.
void explain_scale(const Context& x, Explanation& e) {
    e.operands = {{x.operand_ref(0), x.i, x.j}};
    const bool causal = x.config.mask == Mask::causal && x.j > x.i;
    const bool outside_window = !causal && x.config.hides(x.i, x.j);
    if (causal || outside_window || (x.config.mask == Mask::custom && x.params.mask(x.i, x.j) == 0)) {
        e.terms = MaskedTerms{};
        const std::string i = std::to_string(x.i), j = std::to_string(x.j);
        e.formula = causal           ? "causal mask: key " + j + " comes after query " + i
                    : outside_window ? "sliding window of " + std::to_string(x.config.window) + ": key " + j + " is " +
                                           std::to_string(x.i - x.j) + " positions before query " + i + ", outside it"
                                     : "mask[" + i + "][" + j + "] = 0: query " + i + " may not attend to key " + j;
        e.lines.push_back(std::string("= ") + x.sym.neg_inf + ", so its weight will be exp(" + x.sym.neg_inf + ") = 0");
        if (!causal && !outside_window) e.operands.push_back({{MatrixId::mask, 0}, x.i, x.j});
        return;
    }
    const DivisionTerms terms{x.operand(0)(x.i, x.j), x.trace.scale};
    e.formula = "scores[i][j] = scores_raw[i][j] / s, " + scale_text(x.config, x.sym);
    e.lines.push_back("= " + num(terms.numerator) + " / " + num(terms.denominator));
    e.lines.push_back("= " + num(e.value));
    e.terms = terms;
}

// c·tanh(scores / c): every score pressed into (−c, c), small ones nearly unchanged; a masked score
// stays −∞.
void explain_softcap(const Context& x, Explanation& e) {
    e.operands = {{x.operand_ref(0), x.i, x.j}};
    const double score = x.operand(0)(x.i, x.j), c = x.config.softcap;
    if (score == -std::numeric_limits<double>::infinity()) {
        e.terms = MaskedTerms{};
        e.formula = "scores[i][j] is masked: it stays " + std::string(x.sym.neg_inf);
        e.lines.push_back(std::string("= ") + x.sym.neg_inf);
        return;
    }
    e.formula = "scores_capped[i][j] = c" + std::string(x.sym.dot) + "tanh(scores[i][j] / c), c = " + num(c) +
                ": soft-capping keeps every score between " + x.sym.minus + num(c) + " and " + num(c);
    e.lines.push_back("= " + num(c) + x.sym.dot + "tanh(" + operand(score) + " / " + num(c) + ")");
    e.lines.push_back("= " + num(c) + x.sym.dot + operand(std::tanh(score / c)));
    e.lines.push_back("= " + num(e.value));
    e.terms = SoftcapTerms{score, c};
}

// The softmax of row i of scores (softmax₁: the 1 in the denominator, and the row's sum below 1).
void explain_softmax(const Context& x, Explanation& e) {
    const Symbols& sym = x.sym;
    const auto srow = x.operand(0).row(x.i);
    const bool plus_one = x.config.softmax == Softmax::plus_one;
    SoftmaxTerms terms;
    terms.column = x.j;
    const SoftmaxBase<double> base = softmax_base(x.config.softmax, srow.maxCoeff());
    terms.row_max = base.m;
    terms.constant = base.constant;
    terms.sum = base.constant;
    std::vector<std::string> max_terms, exp_terms, exp_values;
    if (plus_one) max_terms.push_back("0");
    for (Eigen::Index k = 0; k < srow.size(); ++k) {
        const double s = srow(k);
        const double v = std::exp(s - terms.row_max);
        terms.exps.push_back(v);
        terms.sum += v;
        // −∞ is a masked score; num() prints any other value, +∞ included, as it is.
        const std::string score = s == -std::numeric_limits<double>::infinity() ? sym.neg_inf : num(s);
        max_terms.push_back(score);
        exp_terms.push_back("exp(" + score + " " + sym.minus + " " + operand(terms.row_max) + ")");
        exp_values.push_back(num(v));
    }
    for (const double v : terms.exps) terms.row_sum += v / terms.sum;
    const std::string exps_sum = sym.sum + std::string("_k exp(scores[i][k] ") + sym.minus + " m)";
    if (plus_one) {
        e.formula = std::string("weights[i][j] = exp(scores[i][j] ") + sym.minus + " m) / (exp(" + sym.minus + "m) + " +
                    exps_sum + "), m = max(0, the row's max): the softmax plus one, e^s / (1 + " + sym.sum +
                    " e^s), its 1 scaled by exp(" + sym.minus + "m) like every term";
        exp_terms.insert(exp_terms.begin(), std::string("exp(") + sym.minus + operand(terms.row_max) + ") for the 1");
        exp_values.insert(exp_values.begin(), num(terms.constant));
    } else {
        e.formula = std::string("weights[i][j] = exp(scores[i][j] ") + sym.minus + " m) / " + exps_sum +
                    ", m = the row's max (it cancels; it keeps exp finite)";
    }
    e.lines.push_back("m = max(" + join_capped(max_terms, ", ", sym) + ") = " + num(terms.row_max));
    e.lines.push_back("exp terms: " + join_capped(exp_terms, ", ", sym));
    e.lines.push_back("         = " + join_capped(exp_values, ", ", sym));
    e.lines.push_back("sum = " + join_capped(exp_values, " + ", sym) + " = " + num(terms.sum));
    e.lines.push_back(cell("weights", x.i, x.j) + " = " + num(terms.exps[x.j]) + " / " + num(terms.sum) + " = " +
                      num(e.value));
    if (plus_one)
        e.lines.push_back("row " + std::to_string(x.i) + "'s weights sum to " + num(terms.row_sum) + " = 1 " +
                          sym.minus + " " + num(terms.constant) + " / " + num(terms.sum) + ": the rest goes to the 1");
    e.operands = {{x.operand_ref(0), x.i, -1}};
    e.terms = std::move(terms);
}

// weights·V: the values averaged with row i of the weights.
void explain_weighted_sum(const Context& x, Explanation& e) {
    const Matrix &W = x.operand(0), &V = x.operand(1);
    SumTerms terms;
    for (Eigen::Index k = 0; k < W.cols(); ++k) terms.products.push_back({W(x.i, k), V(k, x.j)});
    e.formula = std::string("Z[i][j] = ") + x.sym.sum + "_k weights[i][k]" + x.sym.dot +
                "V[k][j]: the values of column " + std::to_string(x.j) + " of V averaged with row " +
                std::to_string(x.i) + " of weights";
    e.operands = {{x.operand_ref(0), x.i, -1}, {x.operand_ref(1), -1, x.j}};
    add_sum_lines(e, terms, x.sym);
    e.terms = std::move(terms);
}

// [Z⁽¹⁾ … Z⁽ʰ⁾]: column j comes from one head's Z.
void explain_concatenation(const Context& x, Explanation& e) {
    const MatrixId z = operand_of(x.matrix.id, 0, x.config);
    const int d_v = x.config.d_v, from_head = x.j / d_v, from_col = x.j % d_v;
    const std::string first = head_mark(1, x.notation), last = head_mark(x.config.heads, x.notation);
    copy_of(x, e, {{z, from_head}, x.i, from_col},
            std::string("concat = [") + name(z) + first + " " + x.sym.ellipsis + " " + name(z) + last + "]: column " +
                std::to_string(x.j) + " is column " + std::to_string(from_col) + " of head " +
                std::to_string(from_head + 1) + "'s " + name(z));
}

// RoPE: the cell's column turned together with its partner by the angle p·θ_j.
void explain_rotation(const Context& x, Explanation& e) {
    const MatrixRef from = x.operand_ref(0);
    const Rope& rope = x.config.rope;
    const int d_k = x.config.d_k, dims = rope.rotated(d_k);
    const auto pair = rope_pair_of_column(rope, d_k, x.j);
    const std::string src = x.label_of(from);
    if (!pair) {
        copy_of(x, e, {from, x.i, x.j},
                std::string(x.matrix.name) + " = " + name(from.id) + " in column " + std::to_string(x.j) +
                    ": RoPE turns only the first " + std::to_string(dims) + " columns");
        return;
    }
    const auto [j, first] = *pair;
    const RopePair cols = rope_pair(rope, d_k, j);
    const Matrix& in = x.operand(0);
    RotationTerms t;
    t.position = x.i;
    t.pair = j;
    t.partner = first ? cols.second : cols.first;
    const int positions = std::max(x.config.n, x.config.kv_len());
    t.theta = rope_frequency(rope, d_k, j, positions);
    t.angle = rope_angle(rope, d_k, x.i, j, positions);
    t.x = in(x.i, x.j);
    t.partner_x = in(x.i, t.partner);
    t.sign = first ? -1 : 1;
    const std::string p = std::to_string(x.i), jj = std::to_string(j), c = std::to_string(x.j),
                      q = std::to_string(t.partner);
    const std::string& theta = x.notation == Notation::unicode ? "θ" : "theta";
    e.formula = std::string("RoPE (") + to_string(rope.style) + " pairs): columns " + std::to_string(cols.first) +
                " and " + std::to_string(cols.second) + " of row " + p + " turn together by the angle p" + x.sym.dot +
                theta + "_" + jj + ", " + theta + "_" + jj + " = " + num(rope.base) + "^(" + x.sym.minus + "2" +
                x.sym.dot + jj + "/" + std::to_string(dims) + ")" +
                (rope.scaling.kind == RopeScaling::Kind::none
                     ? std::string()
                     : std::string(" stretched by ") + to_string(rope.scaling.kind) + " scaling") +
                " = " + num(t.theta);
    e.lines.push_back("angle = " + p + x.sym.dot + num(t.theta) + " = " + num(t.angle) +
                      " rad; cos = " + num(std::cos(t.angle)) + ", sin = " + num(std::sin(t.angle)));
    e.lines.push_back("= " + cell(src, x.i, x.j) + x.sym.dot + "cos " + (first ? x.sym.minus : std::string("+")) + " " +
                      cell(src, x.i, t.partner) + x.sym.dot + "sin");
    e.lines.push_back("= " + operand(t.x) + x.sym.dot + operand(std::cos(t.angle)) + " " +
                      (first ? x.sym.minus : std::string("+")) + " " + operand(t.partner_x) + x.sym.dot +
                      operand(std::sin(t.angle)));
    e.lines.push_back("= " + num(e.value));
    e.operands = {{from, x.i, x.j}, {from, x.i, t.partner}};
    e.terms = t;
}

using Explainer = void (*)(const Context&, Explanation&);

// One function per operation, in Operation order.
constexpr Explainer explainers[] = {
    explain_input,   explain_product,      explain_dot_products,  explain_scale,    explain_softcap,
    explain_softmax, explain_weighted_sum, explain_concatenation, explain_rotation,
};
static_assert(std::size(explainers) == static_cast<size_t>(Operation::count), "one explainer per operation");

}  // namespace

std::string Explanation::text() const {
    std::string out = title + "\n" + formula;
    for (const std::string& line : lines) out += "\n" + line;
    return out;
}

Result<Explanation> explain(const Params& params, const Trace& trace, const CellRef& at, Notation notation) {
    const MatrixRef& ref = at.matrix;
    const Matrix* m = find_matrix(params, trace, ref);
    if (!m) {
        if (const char* why = absence(ref.id, trace.config)) return Result<Explanation>::fail({{name(ref.id), why}});
        return Result<Explanation>::fail(
            {{label(ref, Notation::ascii), "there is no head " + std::to_string(ref.head + 1)}});
    }
    // The params must be the ones the trace was computed from (same shapes), or the terms would be
    // read out of range.
    const bool consistent = has_shapes(trace.config, params) &&
                            static_cast<int>(trace.heads.size()) == trace.config.heads;
    if (!consistent)
        return Result<Explanation>::fail(
            {{"", "the trace was computed from inputs of other shapes; recompute it first"}});
    if (at.row < 0 || at.col < 0 || at.row >= m->rows() || at.col >= m->cols())
        return Result<Explanation>::fail(
            {{label(at, Notation::ascii), "outside the " + format_shape(m->rows(), m->cols()) + " matrix"}});
    const MatrixInfo& mi = info(ref.id);
    const Context x{params, trace,    trace.config,     mi, is_per_head(ref.id) ? ref.head : 0, at.row,
                    at.col, notation, symbols(notation)};
    Explanation e;
    e.cell = at;
    e.value = (*m)(at.row, at.col);
    e.title = label(at, notation) + " = " + num(e.value);
    explainers[static_cast<size_t>(mi.operation)](x, e);
    return Result<Explanation>::ok(std::move(e));
}

}  // namespace attnviz::core
