// Tests of core/attention/gradient.hpp: every entry of ∂output[row][col]/∂input against central finite
// differences of the forward pass, on random layers with and without W_O, with causal and custom
// masks, cross-attention, biases, RoPE (half and interleaved, partial) and K/V groups; against
// backpropagation written out as loops; and by hand on a one-token layer.
#include "core/attention/gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// Every input matrix of the params with a name, for perturbing; each only where the config uses it.
struct Slot {
    std::string name;
    Matrix* value;
    const Matrix* gradient;
};

std::vector<Slot> slots(const Config& c, Params& p, const Params& d) {
    std::vector<Slot> out{{"X", &p.X, &d.X}};
    if (c.cross()) out.push_back({"Y", &p.Y, &d.Y});
    if (c.output_projection) out.push_back({"W_O", &p.W_O, &d.W_O});
    if (c.output_projection && c.biases) out.push_back({"b_O", &p.b_O, &d.b_O});
    if (c.qk_norm.on) {
        out.push_back({"q_norm", &p.q_norm, &d.q_norm});
        out.push_back({"k_norm", &p.k_norm, &d.k_norm});
    }
    for (int h = 0; h < c.heads; ++h) {
        HeadParams& hp = p.heads[static_cast<size_t>(h)];
        const HeadParams& dh = d.heads[static_cast<size_t>(h)];
        const std::string at = "heads[" + std::to_string(h) + "].";
        out.push_back({at + "W_Q", &hp.W_Q, &dh.W_Q});
        if (c.biases) out.push_back({at + "b_Q", &hp.b_Q, &dh.b_Q});
        if (p.kv_owner(h) != h) continue;  // the group's first head holds its K/V
        out.push_back({at + "W_K", &hp.W_K, &dh.W_K});
        out.push_back({at + "W_V", &hp.W_V, &dh.W_V});
        if (c.biases) {
            out.push_back({at + "b_K", &hp.b_K, &dh.b_K});
            out.push_back({at + "b_V", &hp.b_V, &dh.b_V});
        }
    }
    return out;
}

// Checks the analytic gradient of output[row][col] against (f(x + ε) − f(x − ε)) / 2ε for every entry.
void check_against_finite_differences(const Config& c, std::uint64_t seed, int row, int col) {
    Session s = random_session(c, seed);
    const Trace t = forward<double>(c, s.params);
    const Result<Gradients> g = output_gradient(c, s.params, t, row, col);
    ASSERT_TRUE(g) << all_text(g.problems);
    const double eps = 1e-6;
    int checked = 0;
    for (const Slot& slot : slots(c, s.params, g.value->d)) {
        ASSERT_EQ(slot.gradient->rows(), slot.value->rows()) << slot.name;
        ASSERT_EQ(slot.gradient->cols(), slot.value->cols()) << slot.name;
        for (Eigen::Index i = 0; i < slot.value->rows(); ++i)
            for (Eigen::Index j = 0; j < slot.value->cols(); ++j) {
                const double keep = (*slot.value)(i, j);
                (*slot.value)(i, j) = keep + eps;
                const double up = forward<double>(c, s.params).output(row, col);
                (*slot.value)(i, j) = keep - eps;
                const double down = forward<double>(c, s.params).output(row, col);
                (*slot.value)(i, j) = keep;
                const double numeric = (up - down) / (2 * eps), analytic = (*slot.gradient)(i, j);
                // Relative 1e-6, with an absolute floor for entries near 0 (rounding of the differences).
                EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
                    << slot.name << "[" << i << "][" << j << "] of output[" << row << "][" << col << "]";
                ++checked;
            }
    }
    EXPECT_GT(checked, 50);
}

TEST(Gradient, MatchesFiniteDifferencesWithAndWithoutTheProjection) {
    check_against_finite_differences(make_config(4, 6, 2, 3, 2), 11, 1, 4);
    check_against_finite_differences(make_config(4, 6, 2, 3, 2, false), 12, 3, 2);
}

TEST(Gradient, MatchesFiniteDifferencesWithACausalMaskAndATemperature) {
    check_against_finite_differences(make_config(5, 4, 2, 2, 2, true, Mask::causal), 13, 2, 0);
    check_against_finite_differences(make_config(3, 4, 1, 4, 3, true, Mask::none, {Scale::Kind::divisor, 0.7}), 14, 0,
                                     3);
}

TEST(Gradient, MatchesFiniteDifferencesWithBiasesRopeAndKvGroups) {
    Config c = make_config(5, 8, 4, 4, 2);
    c.biases = true;
    c.kv_heads = 2;  // two heads share each group's K/V
    c.rope.on = true;
    check_against_finite_differences(c, 15, 4, 7);
    c.rope.style = Rope::Style::interleaved;
    c.rope.dims = 2;  // only the first pair turns
    c.kv_heads = 1;   // multi-query
    c.mask = Mask::causal;
    check_against_finite_differences(c, 16, 3, 1);
}

// OLMo 2's q/k norms couple the heads: a head's W_Q moves every other head's queries through the
// shared RMS, and the gradient reaches q_norm and k_norm.
TEST(Gradient, MatchesFiniteDifferencesWithQkNorms) {
    Config c = make_config(5, 8, 4, 2, 2, true, Mask::causal);
    c.qk_norm = {true, 1e-6};
    check_against_finite_differences(c, 17, 4, 5);
    c.biases = true;
    c.kv_heads = 2;
    c.rope.on = true;
    c.qk_norm.eps = 0.3;
    check_against_finite_differences(c, 18, 2, 0);
    c.kv_heads = 1;
    c.softcap = 0.8;
    check_against_finite_differences(c, 19, 3, 7);
}

TEST(Gradient, MatchesFiniteDifferencesWithACustomMask) {
    check_against_finite_differences(make_config(5, 4, 2, 2, 3, true, Mask::custom), 17, 3, 1);
    check_against_finite_differences(make_config(4, 6, 3, 2, 2, false, Mask::custom), 18, 0, 5);
}

TEST(Gradient, MatchesFiniteDifferencesWithCrossAttention) {
    Config c = make_config(3, 5, 2, 3, 2);
    c.n_kv = 6;  // more keys than queries
    check_against_finite_differences(c, 19, 2, 4);
    c.output_projection = false;
    c.n_kv = 2;  // fewer
    check_against_finite_differences(c, 20, 1, 3);
    // With a custom mask, biases, RoPE and K/V groups all at once.
    c = make_config(4, 8, 4, 4, 2, true, Mask::custom);
    c.n_kv = 5;
    c.biases = true;
    c.kv_heads = 2;
    c.rope.on = true;
    check_against_finite_differences(c, 21, 3, 6);
}

TEST(Gradient, MatchesFiniteDifferencesUnderTheSoftmaxPlusOne) {
    // softmax₁'s Jacobian is softmax's, diag(w) − w·wᵀ (its 1 is a constant): the same backward.
    Config c = make_config(4, 6, 2, 3, 2, true, Mask::causal);
    c.softmax = Softmax::plus_one;
    check_against_finite_differences(c, 22, 3, 4);
    c = make_config(3, 5, 2, 3, 2, false, Mask::none, {Scale::Kind::divisor, 0.5});
    c.softmax = Softmax::plus_one;
    c.biases = true;
    c.rope.on = true;
    check_against_finite_differences(c, 23, 2, 1);
}

// Backpropagation written out with loops, straight from the chain rule, for a layer of the seeds
// (any mask, cross-attention or not, with W_O): the analytic gradient must equal it.
Params loop_gradient(const Config& c, const Params& p, const Trace& t, int row, int col) {
    const int n = c.n, m = c.kv_len(), d = c.d_model;
    const Matrix& kv_in = c.cross() ? p.Y : p.X;
    Params g;
    g.X = Matrix::Zero(n, d);
    if (c.cross()) g.Y = Matrix::Zero(m, d);
    g.W_O = Matrix::Zero(c.concat_width(), d);
    for (int k = 0; k < c.concat_width(); ++k) g.W_O(k, col) = t.concat(row, k);
    g.heads.resize(static_cast<size_t>(c.heads));
    for (int h = 0; h < c.heads; ++h) {
        const HeadTrace& ht = t.heads[static_cast<size_t>(h)];
        HeadParams& gh = g.heads[static_cast<size_t>(h)];
        // Only query `row` reaches output[row][col]: dZ[row][j] = W_O[h·d_v + j][col].
        std::vector<double> dZ(static_cast<size_t>(c.d_v)), dA(static_cast<size_t>(m)), dS(static_cast<size_t>(m));
        for (int j = 0; j < c.d_v; ++j) dZ[j] = p.W_O(h * c.d_v + j, col);
        for (int k = 0; k < m; ++k) {
            dA[k] = 0;
            for (int j = 0; j < c.d_v; ++j) dA[k] += dZ[j] * ht.V(k, j);
        }
        double dot = 0;
        for (int k = 0; k < m; ++k) dot += ht.weights(row, k) * dA[k];
        for (int k = 0; k < m; ++k) dS[k] = ht.weights(row, k) * (dA[k] - dot) / t.scale;
        gh.W_Q = Matrix::Zero(d, c.d_k);
        gh.W_K = Matrix::Zero(d, c.d_k);
        gh.W_V = Matrix::Zero(d, c.d_v);
        const HeadParams& w = p.heads[static_cast<size_t>(h)];
        for (int a = 0; a < d; ++a)
            for (int j = 0; j < c.d_k; ++j)
                for (int k = 0; k < m; ++k) {
                    // scores_raw[row][k] = Σ_j Q[row][j]·K[k][j], Q = X·W_Q, K = Y·W_K.
                    gh.W_Q(a, j) += dS[k] * ht.K(k, j) * p.X(row, a);
                    gh.W_K(a, j) += dS[k] * ht.Q(row, j) * kv_in(k, a);
                    g.X(row, a) += dS[k] * ht.K(k, j) * w.W_Q(a, j);
                    (c.cross() ? g.Y : g.X)(k, a) += dS[k] * ht.Q(row, j) * w.W_K(a, j);
                }
        for (int a = 0; a < d; ++a)
            for (int j = 0; j < c.d_v; ++j)
                for (int k = 0; k < m; ++k) {
                    // Z[row][j] = Σ_k A[row][k]·V[k][j], V = Y·W_V.
                    gh.W_V(a, j) += ht.weights(row, k) * dZ[j] * kv_in(k, a);
                    (c.cross() ? g.Y : g.X)(k, a) += ht.weights(row, k) * dZ[j] * w.W_V(a, j);
                }
    }
    return g;
}

TEST(Gradient, EqualsBackpropagationWrittenAsLoops) {
    Config cross = make_config(3, 4, 2, 3, 2, true, Mask::custom);
    cross.n_kv = 4;
    for (const Config& c : {make_config(4, 5, 2, 3, 2, true, Mask::causal), make_config(3, 4, 3, 2, 3), cross}) {
        const Session s = random_session(c, 22);
        const Trace t = forward<double>(c, s.params);
        for (int row = 0; row < c.n; ++row) {
            const int col = (row * 3) % c.d_model;
            const Result<Gradients> g = output_gradient(c, s.params, t, row, col);
            ASSERT_TRUE(g);
            const Params want = loop_gradient(c, s.params, t, row, col);
            const auto near = [](const Matrix& a, const Matrix& b) {
                return a.rows() == b.rows() && a.cols() == b.cols() && (a - b).cwiseAbs().maxCoeff() < 1e-12;
            };
            EXPECT_TRUE(near(g.value->d.X, want.X)) << g.value->d.X << "\nvs\n" << want.X;
            EXPECT_TRUE(near(g.value->d.W_O, want.W_O));
            if (c.cross()) {
                EXPECT_TRUE(near(g.value->d.Y, want.Y)) << g.value->d.Y << "\nvs\n" << want.Y;
            }
            for (int h = 0; h < c.heads; ++h) {
                EXPECT_TRUE(near(g.value->d.heads[h].W_Q, want.heads[h].W_Q)) << "head " << h;
                EXPECT_TRUE(near(g.value->d.heads[h].W_K, want.heads[h].W_K)) << "head " << h;
                EXPECT_TRUE(near(g.value->d.heads[h].W_V, want.heads[h].W_V)) << "head " << h;
            }
        }
    }
}

TEST(Gradient, ByHandOnOneToken) {
    // One token: the softmax is 1 whatever the scores, so nothing flows through Q and K, and
    // output = (x·W_V)·W_O: ∂output[0][j]/∂W_V[a][b] = x[a]·W_O[b][j], ∂/∂W_O[b][j] = v[b].
    const Config c = make_config(1, 2, 1, 1, 2);
    Params p = filled(c);
    p.X = Matrix{{2, 3}};
    p.heads[0].W_V = Matrix{{1, -1}, {0.5, 2}};
    p.W_O = Matrix{{1, 4}, {-2, 0.5}};
    const Trace t = forward<double>(c, p);
    const Result<Gradients> g = output_gradient(c, p, t, 0, 1);
    ASSERT_TRUE(g);
    const Params& d = g.value->d;
    EXPECT_TRUE(d.heads[0].W_Q.isZero(0));
    EXPECT_TRUE(d.heads[0].W_K.isZero(0));
    // v = x·W_V = (2·1 + 3·0.5, 2·(−1) + 3·2) = (3.5, 4).
    EXPECT_EQ(d.W_O, (Matrix{{0, 3.5}, {0, 4}}));
    EXPECT_EQ(d.heads[0].W_V, (Matrix{{2 * 4, 2 * 0.5}, {3 * 4, 3 * 0.5}}));
    // ∂output[0][1]/∂x = W_V·W_O[:,1] = (1·4 + (−1)·0.5, 0.5·4 + 2·0.5) = (3.5, 3).
    EXPECT_EQ(d.X, (Matrix{{3.5, 3}}));
}

TEST(Gradient, RefusesACellOutsideTheOutput) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    const Result<Gradients> g = output_gradient(s.config, s.params, t, 2, 0);
    ASSERT_FALSE(g);
    EXPECT_NE(g.problems[0].message.find("output[2][0]"), std::string::npos);
    EXPECT_NE(g.problems[0].message.find("2×4"), std::string::npos);
}

}  // namespace
}  // namespace attnviz::core
