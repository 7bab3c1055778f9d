// Tests of core/attention/explain.hpp: for every cell of every matrix, the listed terms reproduce the value.
#include "core/attention/explain.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

bool all_ascii(const std::string& s) {
    for (unsigned char ch : s)
        if (ch >= 0x80) return false;
    return true;
}

std::string cell_text(MatrixId id, int head, int row, int col) {
    return std::string(name(id)) + (is_per_head(id) ? " head " + std::to_string(head) : std::string()) + " [" +
           std::to_string(row) + "][" + std::to_string(col) + "]";
}

// The matrix a per-head or global id refers to, looked up by hand (not through find_matrix).
const Matrix& matrix_of(const Params& p, const Trace& t, MatrixId id, int h) {
    switch (id) {
        case MatrixId::X: return p.X;
        case MatrixId::Y: return p.Y;
        case MatrixId::mask: return p.mask;
        case MatrixId::W_Q: return p.heads[h].W_Q;
        case MatrixId::W_K: return p.heads[p.kv_owner(h)].W_K;
        case MatrixId::W_V: return p.heads[p.kv_owner(h)].W_V;
        case MatrixId::b_Q: return p.heads[h].b_Q;
        case MatrixId::b_K: return p.heads[p.kv_owner(h)].b_K;
        case MatrixId::b_V: return p.heads[p.kv_owner(h)].b_V;
        case MatrixId::W_O: return p.W_O;
        case MatrixId::b_O: return p.b_O;
        case MatrixId::q_norm: return p.q_norm;
        case MatrixId::k_norm: return p.k_norm;
        case MatrixId::Q: return t.heads[h].Q;
        case MatrixId::K: return t.heads[h].K;
        case MatrixId::V: return t.heads[h].V;
        case MatrixId::Q_rot: return t.heads[h].Q_rot;
        case MatrixId::K_rot: return t.heads[h].K_rot;
        case MatrixId::scores_raw: return t.heads[h].scores_raw;
        case MatrixId::scores: return t.heads[h].scores;
        case MatrixId::scores_capped: return t.heads[h].scores_capped;
        case MatrixId::weights: return t.heads[h].weights;
        case MatrixId::Z: return t.heads[h].Z;
        case MatrixId::concat: return t.concat;
        case MatrixId::output: return t.output;
        case MatrixId::count: break;
    }
    throw std::logic_error("unknown id");
}

// Checks the explanation of one cell against the trace and params directly.
void check_cell(const Session& s, const Trace& t, MatrixId id, int h, int i, int j) {
    const Config& c = s.config;
    const Params& p = s.params;
    SCOPED_TRACE(cell_text(id, h, i, j));
    const Result<Explanation> r = explain(p, t, {{id, h}, i, j});
    ASSERT_TRUE(r) << (r.problems.empty() ? "" : r.problems[0].str());
    const Explanation& e = *r.value;
    const double value = matrix_of(p, t, id, h)(i, j);
    EXPECT_EQ(e.value, value);

    // The title names the cell with its label.
    const std::string lbl = label(CellRef{{id, h}, i, j});
    EXPECT_TRUE(contains(e.title, lbl)) << e.title << " lacks " << lbl;
    EXPECT_FALSE(e.formula.empty());
    EXPECT_FALSE(e.lines.empty());

    // The same cell in ascii notation: no byte ≥ 0x80 anywhere.
    const Result<Explanation> ra = explain(p, t, {{id, h}, i, j}, Notation::ascii);
    ASSERT_TRUE(ra);
    EXPECT_TRUE(all_ascii(ra.value->text())) << ra.value->text();
    const std::string ascii_lbl = label(CellRef{{id, h}, i, j}, Notation::ascii);
    EXPECT_TRUE(contains(ra.value->title, ascii_lbl)) << ra.value->title;
    EXPECT_EQ(ra.value->terms.index(), e.terms.index());
    EXPECT_EQ(ra.value->value, e.value);

    // The terms of the kind expected, or a failed test.
    const SumTerms* sum = e.as<SumTerms>();
    const std::vector<Product> none;
    const std::vector<Product>& products = sum ? sum->products : none;
    auto sum_products = [&]() {
        double total = 0;
        for (const Product& pr : products) total += pr.a * pr.b;
        return total;
    };

    switch (id) {
        case MatrixId::X:
        case MatrixId::Y:
        case MatrixId::mask:
        case MatrixId::W_Q:
        case MatrixId::W_K:
        case MatrixId::W_V:
        case MatrixId::b_Q:
        case MatrixId::b_K:
        case MatrixId::b_V:
        case MatrixId::W_O:
        case MatrixId::b_O:
        case MatrixId::q_norm:
        case MatrixId::k_norm:
            EXPECT_TRUE(e.as<InputTerms>());
            EXPECT_TRUE(is_input(id));
            EXPECT_EQ(e.value, value);
            break;
        case MatrixId::Q:
        case MatrixId::K:
        case MatrixId::V: {
            ASSERT_TRUE(sum);
            const MatrixId w = id == MatrixId::Q ? MatrixId::W_Q : id == MatrixId::K ? MatrixId::W_K : MatrixId::W_V;
            const Matrix& W = matrix_of(p, t, w, h);
            // K and V come from Y under cross-attention.
            const MatrixId input = id != MatrixId::Q && c.cross() ? MatrixId::Y : MatrixId::X;
            const Matrix& in = matrix_of(p, t, input, h);
            ASSERT_EQ(products.size(), static_cast<size_t>(c.d_model));
            for (int k = 0; k < c.d_model; ++k) {
                EXPECT_EQ(products[k].a, in(i, k));
                EXPECT_EQ(products[k].b, W(k, j));
            }
            // With biases the bias of column j is the last term.
            EXPECT_EQ(sum->has_bias, c.biases);
            if (c.biases) {
                const MatrixId b = id == MatrixId::Q   ? MatrixId::b_Q
                                   : id == MatrixId::K ? MatrixId::b_K
                                                       : MatrixId::b_V;
                EXPECT_EQ(sum->bias, matrix_of(p, t, b, h)(0, j));
                EXPECT_EQ(e.operands[2], (CellRef{{b, h}, 0, j}));
            }
            // Under q/k norms, Q and K are the sum divided by the row's RMS over every head (or K/V
            // group), times the norm's weight of the column: the last operand.
            const bool normed = c.qk_norm.on && id != MatrixId::V;
            ASSERT_EQ(e.operands.size(), 2u + (c.biases ? 1u : 0u) + (normed ? 1u : 0u));
            EXPECT_EQ(sum->normed, normed);
            if (normed) {
                const int column = (id == MatrixId::Q ? h : c.kv_group(h)) * c.d_k + j;
                const MatrixId weights = id == MatrixId::Q ? MatrixId::q_norm : MatrixId::k_norm;
                EXPECT_EQ(e.operands.back(), (CellRef{{weights, 0}, 0, column}));
                EXPECT_EQ(sum->weight, matrix_of(p, t, weights, h)(0, column));
                // The RMS by hand: every head's (or group's) projection of row i, squared and averaged.
                double squares = 0;
                const int parts = id == MatrixId::Q ? c.heads : c.kv_count();
                for (int g = 0; g < parts; ++g) {
                    const int owner = id == MatrixId::Q ? g : g * c.group_size();
                    const HeadParams& hp = p.heads[owner];
                    Eigen::RowVectorXd r = p.X.row(i) * (id == MatrixId::Q ? hp.W_Q : hp.W_K);
                    if (c.biases) r += id == MatrixId::Q ? hp.b_Q : hp.b_K;
                    squares += r.squaredNorm();
                }
                EXPECT_TRUE(near_rel(sum->rms, std::sqrt(squares / (parts * c.d_k) + c.qk_norm.eps), 1e-13));
                EXPECT_TRUE(near_rel((sum_products() + sum->bias) / sum->rms * sum->weight, value, 1e-12));
            } else {
                EXPECT_TRUE(near_rel(sum_products() + sum->bias, value, 1e-12));
            }
            EXPECT_EQ(e.operands[0], (CellRef{{input, 0}, i, -1}));
            EXPECT_EQ(e.operands[1], (CellRef{{w, h}, -1, j}));
            break;
        }
        case MatrixId::Q_rot:
        case MatrixId::K_rot: {
            // Checked against the rotation written out here: pairs (k, k + d/2) or (2k, 2k + 1).
            const Matrix& in = id == MatrixId::Q_rot ? t.heads[h].Q : t.heads[h].K;
            const int d = c.rope.rotated(c.d_k);
            if (j >= d) {
                ASSERT_TRUE(e.as<CopyTerms>());
                EXPECT_EQ(value, in(i, j));
                break;
            }
            const bool half = c.rope.style == Rope::Style::half;
            const int pair = half ? j % (d / 2) : j / 2;
            const bool first = half ? j < d / 2 : j % 2 == 0;
            const int partner = half ? (first ? j + d / 2 : j - d / 2) : (first ? j + 1 : j - 1);
            const double angle = i * std::pow(c.rope.base, -2.0 * pair / d);
            const double expected = in(i, j) * std::cos(angle) + (first ? -1 : 1) * in(i, partner) * std::sin(angle);
            EXPECT_TRUE(near_rel(expected, value, 1e-12)) << expected << " vs " << value;
            const RotationTerms* r = e.as<RotationTerms>();
            ASSERT_TRUE(r);
            EXPECT_EQ(r->pair, pair);
            EXPECT_EQ(r->partner, partner);
            EXPECT_EQ(r->x, in(i, j));
            EXPECT_EQ(r->partner_x, in(i, partner));
            EXPECT_DOUBLE_EQ(r->angle, angle);
            ASSERT_EQ(e.operands.size(), 2u);
            const MatrixId from = id == MatrixId::Q_rot ? MatrixId::Q : MatrixId::K;
            EXPECT_EQ(e.operands[1], (CellRef{{from, h}, i, partner}));
            break;
        }
        case MatrixId::scores_raw: {
            ASSERT_TRUE(sum);
            ASSERT_EQ(products.size(), static_cast<size_t>(c.d_k));
            const Matrix& Q = c.rope.on ? t.heads[h].Q_rot : t.heads[h].Q;
            const Matrix& K = c.rope.on ? t.heads[h].K_rot : t.heads[h].K;
            for (int k = 0; k < c.d_k; ++k) {
                EXPECT_EQ(products[k].a, Q(i, k));
                EXPECT_EQ(products[k].b, K(j, k));
            }
            EXPECT_TRUE(near_rel(sum_products(), value, 1e-12));
            ASSERT_EQ(e.operands.size(), 2u);
            EXPECT_EQ(e.operands[0], (CellRef{{c.rope.on ? MatrixId::Q_rot : MatrixId::Q, h}, i, -1}));
            EXPECT_EQ(e.operands[1], (CellRef{{c.rope.on ? MatrixId::K_rot : MatrixId::K, h}, j, -1}));
            break;
        }
        case MatrixId::scores_capped: {
            ASSERT_EQ(e.operands.size(), 1u);
            EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::scores, h}, i, j}));
            if (std::isinf(value)) {
                EXPECT_TRUE(e.as<MaskedTerms>());
                break;
            }
            const SoftcapTerms* cap = e.as<SoftcapTerms>();
            ASSERT_TRUE(cap);
            EXPECT_EQ(cap->score, t.heads[h].scores(i, j));
            EXPECT_EQ(cap->cap, c.softcap);
            EXPECT_TRUE(near_rel(cap->cap * std::tanh(cap->score / cap->cap), value, 1e-15));
            break;
        }
        case MatrixId::scores:
            if (c.mask == Mask::custom && p.mask(i, j) == 0) {
                // A key the custom mask forbids: −∞, with the mask's cell among the operands.
                EXPECT_TRUE(e.as<MaskedTerms>());
                EXPECT_EQ(value, -std::numeric_limits<double>::infinity());
                ASSERT_EQ(e.operands.size(), 2u);
                EXPECT_EQ(e.operands[1], (CellRef{{MatrixId::mask, 0}, i, j}));
                EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::scores_raw, h}, i, j}));
                break;
            }
            if (c.mask == Mask::causal && j > i) {
                EXPECT_TRUE(e.as<MaskedTerms>());
                EXPECT_EQ(e.value, -std::numeric_limits<double>::infinity());
                EXPECT_EQ(value, -std::numeric_limits<double>::infinity());
            } else {
                const DivisionTerms* d = e.as<DivisionTerms>();
                ASSERT_TRUE(d);
                EXPECT_EQ(d->numerator, t.heads[h].scores_raw(i, j));
                EXPECT_EQ(d->denominator, c.scale.value(c.d_k));
                EXPECT_TRUE(near_rel(d->numerator / d->denominator, value, 1e-12));
            }
            ASSERT_EQ(e.operands.size(), 1u);
            EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::scores_raw, h}, i, j}));
            break;
        case MatrixId::weights: {
            const SoftmaxTerms* sm = e.as<SoftmaxTerms>();
            ASSERT_TRUE(sm);
            EXPECT_EQ(sm->column, j);
            double mx = -std::numeric_limits<double>::infinity();
            for (int k = 0; k < c.kv_len(); ++k) mx = std::max(mx, t.heads[h].scores(i, k));
            EXPECT_EQ(sm->row_max, mx);
            ASSERT_EQ(sm->exps.size(), static_cast<size_t>(c.kv_len()));
            double total = 0;
            for (int k = 0; k < c.kv_len(); ++k) {
                EXPECT_TRUE(near_rel(sm->exps[k], std::exp(t.heads[h].scores(i, k) - mx), 1e-15)) << "k=" << k;
                if ((c.mask == Mask::causal && k > i) || (c.mask == Mask::custom && p.mask(i, k) == 0)) {
                    EXPECT_EQ(sm->exps[k], 0.0);
                }
                total += sm->exps[k];
            }
            EXPECT_TRUE(near_rel(sm->exps[j] / total, value, 1e-12));
            EXPECT_TRUE(near_rel(sm->sum, total, 1e-15));
            ASSERT_EQ(e.operands.size(), 1u);
            EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::scores, h}, i, -1}));
            break;
        }
        case MatrixId::Z:
            ASSERT_TRUE(sum);
            ASSERT_EQ(products.size(), static_cast<size_t>(c.kv_len()));
            for (int k = 0; k < c.kv_len(); ++k) {
                EXPECT_EQ(products[k].a, t.heads[h].weights(i, k));
                EXPECT_EQ(products[k].b, t.heads[h].V(k, j));
            }
            EXPECT_TRUE(near_rel(sum_products(), value, 1e-12));
            ASSERT_EQ(e.operands.size(), 2u);
            EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::weights, h}, i, -1}));
            EXPECT_EQ(e.operands[1], (CellRef{{MatrixId::V, h}, -1, j}));
            break;
        case MatrixId::concat: {
            const CopyTerms* copy = e.as<CopyTerms>();
            ASSERT_TRUE(copy);
            const int from_head = j / c.d_v, from_col = j % c.d_v;
            EXPECT_EQ(copy->source, value);
            EXPECT_EQ(copy->source, t.heads[from_head].Z(i, from_col));
            EXPECT_EQ(copy->from, (CellRef{{MatrixId::Z, from_head}, i, from_col}));
            ASSERT_EQ(e.operands.size(), 1u);
            EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::Z, from_head}, i, from_col}));
            break;
        }
        case MatrixId::output:
            if (c.output_projection) {
                ASSERT_TRUE(sum);
                ASSERT_EQ(products.size(), static_cast<size_t>(c.heads * c.d_v));
                for (int k = 0; k < c.heads * c.d_v; ++k) {
                    EXPECT_EQ(products[k].a, t.concat(i, k));
                    EXPECT_EQ(products[k].b, p.W_O(k, j));
                }
                EXPECT_EQ(sum->has_bias, c.biases);
                if (c.biases) {
                    EXPECT_EQ(sum->bias, p.b_O(0, j));
                }
                EXPECT_TRUE(near_rel(sum_products() + sum->bias, value, 1e-12));
                ASSERT_EQ(e.operands.size(), c.biases ? 3u : 2u);
                EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::concat, 0}, i, -1}));
                EXPECT_EQ(e.operands[1], (CellRef{{MatrixId::W_O, 0}, -1, j}));
            } else {
                const CopyTerms* copy = e.as<CopyTerms>();
                ASSERT_TRUE(copy);
                EXPECT_EQ(copy->source, value);
                EXPECT_EQ(copy->source, t.concat(i, j));
                ASSERT_EQ(e.operands.size(), 1u);
                EXPECT_EQ(e.operands[0], (CellRef{{MatrixId::concat, 0}, i, j}));
            }
            break;
        case MatrixId::count: FAIL() << "not a matrix";
    }
}

// Every cell of every matrix of a session.
void check_every_cell(const Session& s) {
    const Trace t = forward<double>(s.config, s.params);
    int cells = 0;
    for (MatrixId id : all_matrix_ids) {
        if (!exists(id, s.config)) continue;
        const int heads = is_per_head(id) ? s.config.heads : 1;
        for (int h = 0; h < heads; ++h) {
            const Matrix& m = matrix_of(s.params, t, id, h);
            ASSERT_GT(m.size(), 0);
            for (int i = 0; i < m.rows(); ++i)
                for (int j = 0; j < m.cols(); ++j) {
                    check_cell(s, t, id, h, i, j);
                    ++cells;
                }
        }
    }
    EXPECT_GT(cells, 0);
}

TEST(Explain, EveryCellOfWorkedExample) { check_every_cell(worked_example()); }

TEST(Explain, EveryCellOfRandomCausalSession) {
    const Config c = make_config(5, 6, 3, 2, 3, true, Mask::causal);
    check_every_cell(random_session(c, 31));
}

// Biases, K/V groups and RoPE in each style, partial RoPE included.
TEST(Explain, EveryCellOfLayersWithBiasesGroupsAndRope) {
    for (const auto style : {Rope::Style::half, Rope::Style::interleaved})
        for (const int dims : {0, 2}) {
            Config c = make_config(5, 6, 4, 4, 3, true, Mask::causal);
            c.biases = true;
            c.kv_heads = 2;
            c.rope = {true, 500.0, style, dims};
            SCOPED_TRACE(std::string(to_string(style)) + " dims " + std::to_string(dims));
            ASSERT_TRUE(validate(c).empty());
            check_every_cell(random_session(c, 37));
        }
}

// Cross-attention (keys and values from Y, more keys than queries), with and without a custom
// mask, biases, groups and RoPE.
TEST(Explain, EveryCellOfCrossAttentionAndCustomMasks) {
    Config c = make_config(3, 6, 2, 4, 3, true, Mask::custom);
    c.n_kv = 5;
    ASSERT_TRUE(validate(c).empty());
    const Session cross_masked = random_session(c, 41);
    ASSERT_TRUE(validate(cross_masked).empty());
    ASSERT_LT(cross_masked.params.mask.sum(), 15.0);  // some keys are masked, so the masked branch is checked
    check_every_cell(cross_masked);
    c.mask = Mask::none;
    c.biases = true;
    c.kv_heads = 1;
    c.rope.on = true;
    check_every_cell(random_session(c, 42));
    // A custom mask on self-attention.
    Config self = make_config(4, 4, 2, 2, 2, true, Mask::custom);
    check_every_cell(random_session(self, 43));
}

TEST(Explain, EveryCellUnderQkNorms) {
    Config c = make_config(3, 4, 4, 2, 2, true, Mask::causal);
    c.qk_norm = {true, 1e-6};
    check_every_cell(random_session(c, 44));
    c.kv_heads = 2;
    c.biases = true;
    c.rope.on = true;
    c.qk_norm.eps = 0.25;
    check_every_cell(random_session(c, 45));
}

TEST(Explain, ARotatedCellNamesItsAngleAndPair) {
    Config c = make_config(3, 4, 1, 4, 4, false, Mask::none);
    c.rope.on = true;
    const Session s = random_session(c, 2);
    const Trace t = forward<double>(s.config, s.params);
    const Result<Explanation> e = explain(s.params, t, {{MatrixId::Q_rot, 0}, 2, 1});
    ASSERT_TRUE(e);
    // Column 1 of d = 4 in half style pairs with column 3; θ_1 = 10000^(−2/4) = 0.01, angle 0.02.
    EXPECT_TRUE(contains(e.value->formula, "columns 1 and 3")) << e.value->text();
    EXPECT_TRUE(contains(e.value->text(), "0.01")) << e.value->text();
    EXPECT_TRUE(contains(e.value->text(), "0.02 rad")) << e.value->text();
    EXPECT_FALSE(explain(s.params, t, {{MatrixId::b_Q, 0}, 0, 0}));  // no biases here
}

TEST(Explain, EveryCellWithoutProjectionAndDivisor) {
    Config c = make_config(4, 3, 2, 3, 2, false, Mask::none, {Scale::Kind::divisor, 0.7});
    check_every_cell(random_session(c, 32));
    c.scale = {Scale::Kind::none, 1.0};
    c.mask = Mask::causal;
    check_every_cell(random_session(c, 33));
}

TEST(Explain, LongSumsKeepEveryTerm) {
    // d_model = 20 > max_terms_shown: the text is shortened, the products are not.
    const Config c = make_config(3, 20, 1, 4, 4);
    const Session s = random_session(c, 34);
    const Trace t = forward<double>(c, s.params);
    const Result<Explanation> r = explain(s.params, t, {{MatrixId::Q, 0}, 2, 3});
    ASSERT_TRUE(r);
    ASSERT_TRUE(r.value->as<SumTerms>());
    EXPECT_EQ(r.value->as<SumTerms>()->products.size(), 20u);
    double sum = 0;
    for (const Product& p : r.value->as<SumTerms>()->products) sum += p.a * p.b;
    EXPECT_TRUE(near_rel(sum, t.heads[0].Q(2, 3), 1e-12));
    const Result<Explanation> ra = explain(s.params, t, {{MatrixId::Q, 0}, 2, 3}, Notation::ascii);
    ASSERT_TRUE(ra);
    EXPECT_TRUE(contains(ra.value->text(), "more terms")) << ra.value->text();
    EXPECT_TRUE(all_ascii(ra.value->text()));
}

TEST(Explain, WorkedExampleNumbersInText) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    // scores⁽¹⁾[0][0] = 4 / √2 = 2.82843.
    const Result<Explanation> r = explain(s.params, t, {{MatrixId::scores, 0}, 0, 0});
    ASSERT_TRUE(r);
    const DivisionTerms* d = r.value->as<DivisionTerms>();
    ASSERT_TRUE(d);
    EXPECT_EQ(d->numerator, 4.0);
    EXPECT_NEAR(d->denominator, std::sqrt(2.0), 1e-15);
    EXPECT_TRUE(contains(r.value->text(), "2.82843")) << r.value->text();
    EXPECT_TRUE(contains(r.value->title, "scores⁽¹⁾[0][0]")) << r.value->title;
    // Q⁽²⁾[1][0] = 0·0 + 2·1 + 0·0 + 2·1 = 4.
    const Result<Explanation> q = explain(s.params, t, {{MatrixId::Q, 1}, 1, 0});
    ASSERT_TRUE(q);
    ASSERT_TRUE(q.value->as<SumTerms>());
    const std::vector<Product>& qp = q.value->as<SumTerms>()->products;
    ASSERT_EQ(qp.size(), 4u);
    // Row 1 of X is [0, 2, 0, 2]; column 0 of head 2's W_Q is [0, 1, 0, 1].
    const double a[] = {0, 2, 0, 2};
    const double b_head2[] = {0, 1, 0, 1};
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(qp[k].a, a[k]);
        EXPECT_EQ(qp[k].b, b_head2[k]);
    }
    EXPECT_EQ(q.value->value, 4.0);
    EXPECT_TRUE(contains(q.value->title, "Q⁽²⁾[1][0]"));
}

TEST(Explain, FindMatrix) {
    Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::X, 0}), &s.params.X);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::W_K, 1}), &s.params.heads[1].W_K);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::Z, 1}), &t.heads[1].Z);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::Z, 2}), nullptr);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::Q, -1}), nullptr);
    EXPECT_EQ(find_matrix(s.params, t, {MatrixId::W_O, 0}), &s.params.W_O);
    s.config.output_projection = false;
    const Trace off = forward<double>(s.config, s.params);
    EXPECT_EQ(find_matrix(s.params, off, {MatrixId::W_O, 0}), nullptr);
}

TEST(Explain, OutOfRangeCellsFail) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    struct Case {
        MatrixId id;
        int head, row, col;
        const char* path_part;
    };
    const Case cases[] = {
        {MatrixId::X, 0, 2, 0, "X[2][0]"},
        {MatrixId::X, 0, 0, 4, "X[0][4]"},
        {MatrixId::X, 0, -1, 0, "X[-1][0]"},
        {MatrixId::Q, 0, 0, 2, "Q(1)[0][2]"},
        {MatrixId::weights, 1, 2, 0, "weights(2)"},
        {MatrixId::weights, 2, 0, 0, "weights(3)"},
        {MatrixId::W_Q, -1, 0, 0, "W_Q(0)"},
        {MatrixId::output, 0, 0, 4, "output[0][4]"},
        {MatrixId::concat, 0, 0, -1, "concat[0][-1]"},
        {MatrixId::W_O, 0, 4, 0, "W_O[4][0]"},
    };
    for (const Case& k : cases) {
        const Result<Explanation> r = explain(s.params, t, {{k.id, k.head}, k.row, k.col});
        EXPECT_FALSE(r) << k.path_part;
        ASSERT_FALSE(r.problems.empty()) << k.path_part;
        EXPECT_TRUE(contains(r.problems[0].path, k.path_part)) << r.problems[0].str() << " vs " << k.path_part;
        EXPECT_FALSE(r.problems[0].message.empty());
    }
    // W_O while the projection is off.
    Session off = s;
    off.config.output_projection = false;
    const Trace t_off = forward<double>(off.config, off.params);
    const Result<Explanation> r = explain(off.params, t_off, {{MatrixId::W_O, 0}, 0, 0});
    EXPECT_FALSE(r);
    ASSERT_FALSE(r.problems.empty());
    EXPECT_EQ(r.problems[0].path, "W_O");
}

TEST(Explain, MaskedTextSaysMinusInfinity) {
    Config c;
    c.n = 3;
    c.mask = Mask::causal;
    const Session s = random_session(c, 35);
    const Trace t = forward<double>(c, s.params);
    const Result<Explanation> r = explain(s.params, t, {{MatrixId::scores, 1}, 0, 2}, Notation::ascii);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.value->as<MaskedTerms>());
    EXPECT_TRUE(contains(r.value->text(), "-inf")) << r.value->text();
    // A masked key's weight is explained as exp(−∞) = 0 in the softmax too.
    const Result<Explanation> w = explain(s.params, t, {{MatrixId::weights, 1}, 0, 2});
    ASSERT_TRUE(w);
    EXPECT_EQ(w.value->value, 0.0);
    ASSERT_TRUE(w.value->as<SoftmaxTerms>());
    EXPECT_EQ(w.value->as<SoftmaxTerms>()->exps[2], 0.0);
    EXPECT_EQ(w.value->as<SoftmaxTerms>()->exps[0], 1.0);  // the only visible key is the row max
}

TEST(Explain, TheSoftmaxPlusOneShowsItsOneAndTheRowsSum) {
    Config c = make_config(4, 6, 2, 3, 2, true, Mask::causal);
    c.softmax = Softmax::plus_one;
    bool above = false, below = false;  // rows whose max score is above 0 (m = it) and below (m = 0)
    for (const std::uint64_t seed : {36u, 37u, 38u}) {
        Session s = random_session(c, seed);
        s.params.X *= 4;
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h)
            for (int i = 0; i < c.n; ++i)
                for (int j = 0; j <= i; ++j) {
                    const Result<Explanation> r = explain(s.params, t, {{MatrixId::weights, h}, i, j}, Notation::ascii);
                    ASSERT_TRUE(r);
                    const SoftmaxTerms* sm = r.value->as<SoftmaxTerms>();
                    ASSERT_TRUE(sm);
                    const auto scores = t.heads[h].scores.row(i);
                    const double m = std::max(0.0, scores.maxCoeff());
                    (scores.maxCoeff() > 0 ? above : below) = true;
                    EXPECT_EQ(sm->row_max, m);
                    EXPECT_EQ(sm->constant, std::exp(-m));
                    double sum = std::exp(-m);
                    for (int k = 0; k < c.n; ++k) sum += std::exp(scores(k) - m);
                    EXPECT_TRUE(near_rel(sm->sum, sum, 1e-15));
                    EXPECT_TRUE(near_rel(sm->exps[j] / sm->sum, t.heads[h].weights(i, j), 1e-15));
                    EXPECT_TRUE(near_rel(sm->row_sum, t.rows[h][i].sum, 1e-14));
                    EXPECT_LT(sm->row_sum, 1.0);
                    const std::string text = r.value->text();
                    EXPECT_TRUE(contains(text, "/ (exp(-m) + sum_k exp(")) << text;
                    EXPECT_TRUE(contains(text, "for the 1")) << text;
                    EXPECT_TRUE(contains(text, "weights sum to " + format_number(sm->row_sum))) << text;
                }
    }
    EXPECT_TRUE(above && below);
}

TEST(Explain, RefusesParamsOfOtherShapesThanTheTrace) {
    // A trace computed from one session must not be explained with the params of another: the
    // terms would be read out of range.
    const Session small = worked_example();
    const Session big = random_session(make_config(3, 8, 2, 4, 4), 1);
    const Trace t_big = forward<double>(big.config, big.params);
    const Result<Explanation> e = explain(small.params, t_big, {{MatrixId::Q, 0}, 0, 0});
    EXPECT_FALSE(e);
    ASSERT_FALSE(e.problems.empty());
    EXPECT_NE(e.problems[0].message.find("other shapes"), std::string::npos);
    EXPECT_TRUE(explain(big.params, t_big, {{MatrixId::Q, 0}, 0, 0}));
}

}  // namespace
}  // namespace attnviz::core
