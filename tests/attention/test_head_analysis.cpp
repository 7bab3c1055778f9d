// The attention lab's analyses of a head (core/attention/head_analysis.hpp) against direct loops
// over the definitions and hand-made weights whose answer is known.
#include "core/attention/head_analysis.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <cmath>
#include <string>
#include <vector>

#include "core/attention/presets.hpp"

namespace attnviz::core {
namespace {

// Layers of every kind the analyses meet: biases, K/V groups, both RoPE styles (one partial),
// masks, cross-attention, no output projection.
std::vector<Config> configs() {
    std::vector<Config> out;
    Config c;
    c.n = 5, c.d_model = 6, c.heads = 3, c.d_k = 4, c.d_v = 2;
    out.push_back(c);
    c.biases = true, c.mask = Mask::causal;
    out.push_back(c);
    c.kv_heads = 1, c.rope.on = true;
    out.push_back(c);
    c.rope.style = Rope::Style::interleaved, c.rope.dims = 2, c.kv_heads = 0;
    out.push_back(c);
    c.rope = {}, c.output_projection = false, c.n_kv = 3, c.mask = Mask::none;
    out.push_back(c);
    return out;
}

std::string describe(const Config& c) {
    return "biases " + std::to_string(c.biases) + " kv " + std::to_string(c.kv_heads) + " rope " +
           std::to_string(c.rope.on) + " W_O " + std::to_string(c.output_projection) + " n_kv " +
           std::to_string(c.n_kv);
}

TEST(HeadAnalysis, NormWeightedIsEachWeightTimesItsValueOutputsNorm) {
    for (const Config& c : configs()) {
        SCOPED_TRACE(describe(c));
        const Session s = random_session(c, 7);
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h) {
            const HeadTrace& ht = t.heads[static_cast<size_t>(h)];
            const Matrix nw = norm_weighted(c, s.params, t, h);
            ASSERT_EQ(nw.rows(), c.n);
            ASSERT_EQ(nw.cols(), c.kv_len());
            for (int i = 0; i < c.n; ++i)
                for (int j = 0; j < c.kv_len(); ++j) {
                    double sq = 0;  // ‖V_j · W_O⁽ʰ⁾‖² by loops (or ‖V_j‖² without W_O)
                    for (int col = 0; col < c.output_width(); ++col) {
                        double f = 0;
                        if (c.output_projection)
                            for (int k = 0; k < c.d_v; ++k) f += ht.V(j, k) * s.params.W_O(h * c.d_v + k, col);
                        else
                            f = col < c.d_v ? ht.V(j, col) : 0;
                        sq += f * f;
                    }
                    EXPECT_NEAR(nw(i, j), ht.weights(i, j) * std::sqrt(sq), 1e-12) << h << " " << i << " " << j;
                    if (c.mask == Mask::causal && j > i) {
                        EXPECT_EQ(nw(i, j), 0);
                    }
                }
        }
    }
}

// The views' norm-weighted rows: each row of norm_weighted divided by its sum, so a distribution.
TEST(HeadAnalysis, NormWeightedRowsAreEachRowOverItsSum) {
    for (const Config& c : configs()) {
        SCOPED_TRACE(describe(c));
        const Session s = random_session(c, 11);
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h) {
            const Matrix nw = norm_weighted(c, s.params, t, h);
            const Matrix rows = norm_weighted_rows(nw);
            ASSERT_EQ(rows.rows(), nw.rows());
            ASSERT_EQ(rows.cols(), nw.cols());
            for (int i = 0; i < c.n; ++i) {
                double sum = 0;
                for (int j = 0; j < c.kv_len(); ++j) sum += nw(i, j);
                ASSERT_GT(sum, 0);
                for (int j = 0; j < c.kv_len(); ++j) EXPECT_NEAR(rows(i, j), nw(i, j) / sum, 1e-12);
                EXPECT_NEAR(rows.row(i).sum(), 1, 1e-12);
            }
        }
    }
}

// A key whose value vector is one-hot on a coordinate W_O⁽ʰ⁾ drops moves nothing: its column is 0,
// however much weight it has.
TEST(HeadAnalysis, AOneHotValueThatTheOutputDropsGivesAZeroColumn) {
    Config c;
    c.n = 3, c.d_model = 4, c.heads = 1, c.d_k = 4, c.d_v = 4;
    Session s = random_session(c, 3);
    s.params.heads[0].W_V = Matrix::Identity(4, 4);
    s.params.X.row(1) << 1, 0, 0, 0;  // V_1 = e_0
    s.params.W_O.row(0).setZero();    // W_O⁽¹⁾ drops coordinate 0
    const Trace t = forward<double>(c, s.params);
    const Matrix nw = norm_weighted(c, s.params, t, 0);
    EXPECT_EQ(nw.col(1).cwiseAbs().maxCoeff(), 0);
    EXPECT_GT(t.heads[0].weights.col(1).minCoeff(), 0);  // it did get weight
    EXPECT_GT(nw.col(0).minCoeff(), 0);
}

TEST(HeadAnalysis, CircuitsSingularValuesAndEigenvaluesAreThoseOfTheFullProducts) {
    for (const Config& c : configs()) {
        SCOPED_TRACE(describe(c));
        const Session s = random_session(c, 11);
        for (int h = 0; h < c.heads; ++h) {
            const Circuits k = circuits(c, s.params, h);
            const int owner = s.params.kv_owner(h);
            const Matrix W_QK = s.params.heads[static_cast<size_t>(h)].W_Q *
                                s.params.heads[static_cast<size_t>(owner)].W_K.transpose();
            EXPECT_LE((k.W_QK - W_QK).cwiseAbs().maxCoeff(), 1e-14);
            const Eigen::VectorXd full = Eigen::JacobiSVD<Eigen::MatrixXd>(W_QK).singularValues();
            ASSERT_EQ(k.qk_singular.size(), c.d_k);
            for (int i = 0; i < c.d_k; ++i) EXPECT_NEAR(k.qk_singular(i), i < full.size() ? full(i) : 0, 1e-12);
            if (!c.output_projection) {
                EXPECT_EQ(k.W_OV.size(), 0);
                continue;
            }
            const Matrix W_OV = s.params.heads[static_cast<size_t>(owner)].W_V *
                                s.params.W_O.middleRows(h * c.d_v, c.d_v);
            EXPECT_LE((k.W_OV - W_OV).cwiseAbs().maxCoeff(), 1e-14);
            const Eigen::VectorXd ov = Eigen::JacobiSVD<Eigen::MatrixXd>(W_OV).singularValues();
            ASSERT_EQ(k.ov_singular.size(), c.d_v);
            for (int i = 0; i < c.d_v; ++i) EXPECT_NEAR(k.ov_singular(i), ov(i), 1e-12);
            // W_OV's eigenvalues: d_v of them are k's, the rest 0.
            const Eigen::VectorXcd all = Eigen::EigenSolver<Eigen::MatrixXd>(W_OV, false).eigenvalues();
            ASSERT_EQ(k.ov_eigenvalues.size(), static_cast<size_t>(c.d_v));
            double trace = 0, magnitude = 0;
            for (const std::complex<double>& l : k.ov_eigenvalues) {
                double nearest = INFINITY;
                for (Eigen::Index i = 0; i < all.size(); ++i) nearest = std::min(nearest, std::abs(all(i) - l));
                EXPECT_LT(nearest, 1e-9) << l;
                trace += l.real(), magnitude += std::abs(l);
            }
            EXPECT_NEAR(trace, W_OV.trace(), 1e-12);
            EXPECT_NEAR(k.copying, W_OV.trace() / magnitude, 1e-12);
        }
    }
}

TEST(HeadAnalysis, AHeadThatCopiesScoresOneAndOneThatNegatesScoresMinusOne) {
    Config c;
    c.n = 2, c.d_model = 3, c.heads = 1, c.d_k = 3, c.d_v = 3;
    Session s = random_session(c, 5);
    s.params.heads[0].W_V = Matrix::Identity(3, 3);
    s.params.W_O = Matrix::Identity(3, 3);
    EXPECT_NEAR(circuits(c, s.params, 0).copying, 1, 1e-15);
    s.params.W_O = -Matrix::Identity(3, 3);
    EXPECT_NEAR(circuits(c, s.params, 0).copying, -1, 1e-15);
    s.params.W_O.setZero();
    EXPECT_EQ(circuits(c, s.params, 0).copying, 0);
}

// The output recomputed by loops with head h's Z replaced, minus the output.
Matrix recomputed_delta(const Config& c, const Params& p, const Trace& t, int head, const Matrix& Z) {
    Matrix concat = t.concat;
    concat.middleCols(head * c.d_v, c.d_v) = Z;
    Matrix out = c.output_projection ? Matrix(concat * p.W_O) : concat;
    if (c.output_projection && c.biases) out.rowwise() += p.b_O.row(0);
    return out - t.output;
}

TEST(HeadAnalysis, AblationAndPatchingChangeTheOutputAsARecomputationDoes) {
    for (const Config& c : configs()) {
        SCOPED_TRACE(describe(c));
        const Session s = random_session(c, 13), other = random_session(c, 14);
        const Trace t = forward<double>(c, s.params), source = forward<double>(c, other.params);
        Matrix all_zero = Matrix::Zero(c.n, c.output_width());
        for (int h = 0; h < c.heads; ++h) {
            const Matrix& Z = t.heads[static_cast<size_t>(h)].Z;
            const Matrix zero = ablation_delta(c, s.params, t, h, Ablation::zero);
            EXPECT_LE(
                (zero - recomputed_delta(c, s.params, t, h, Matrix::Zero(Z.rows(), Z.cols()))).cwiseAbs().maxCoeff(),
                1e-12);
            const Matrix mean_Z = Z.colwise().mean().replicate(Z.rows(), 1);
            EXPECT_LE((ablation_delta(c, s.params, t, h, Ablation::mean) - recomputed_delta(c, s.params, t, h, mean_Z))
                          .cwiseAbs()
                          .maxCoeff(),
                      1e-12);
            const Matrix& source_Z = source.heads[static_cast<size_t>(h)].Z;
            EXPECT_LE((patching_delta(c, s.params, t, source, h) - recomputed_delta(c, s.params, t, h, source_Z))
                          .cwiseAbs()
                          .maxCoeff(),
                      1e-12);
            EXPECT_EQ(patching_delta(c, s.params, t, t, h).cwiseAbs().maxCoeff(), 0);
            all_zero += zero;
        }
        // Every head zero-ablated leaves b_O (or nothing): the deltas add up to −(output − b_O).
        Matrix rest = Matrix::Zero(c.n, c.output_width());
        if (c.output_projection && c.biases) rest.rowwise() += s.params.b_O.row(0);
        EXPECT_LE((all_zero + t.output - rest).cwiseAbs().maxCoeff(), 1e-12);
    }
}

TEST(HeadAnalysis, TheSinkIsTheKeyWithTheMostMeanWeight) {
    Trace t;
    t.heads.resize(2);
    t.heads[0].weights = Matrix::Zero(4, 4);
    t.heads[0].weights.col(0).setOnes();  // every query on token 0
    const Sink all = sink(t, 0);
    EXPECT_EQ(all.key, 0);
    EXPECT_EQ(all.share, 1);
    EXPECT_EQ(all.mean, 1);
    t.heads[1].weights = Matrix{{0.2, 0.8, 0.0}, {0.5, 0.3, 0.2}, {0.1, 0.29, 0.61}, {0.1, 0.35, 0.55}};
    const Sink some = sink(t, 1);
    EXPECT_EQ(some.key, 1);                                 // means 0.225, 0.435, 0.34
    EXPECT_DOUBLE_EQ(some.mean, 1.74 / 4);                  // (0.8 + 0.3 + 0.29 + 0.35) / 4
    EXPECT_DOUBLE_EQ(some.share, 3.0 / 4);                  // 0.8, 0.3 and 0.35 reach 0.3; 0.29 does not
    EXPECT_EQ(sink(t.heads[1].weights).share, some.share);  // of the weights alone, the same
    EXPECT_TRUE(is_sink_head(all));
    EXPECT_TRUE(is_sink_head(some));
    t.heads[1].weights(3, 1) = 0.29;  // now 2 of 4 queries: still a sink head at a share of 0.5
    EXPECT_TRUE(is_sink_head(sink(t, 1)));
    t.heads[1].weights(1, 1) = 0.29;  // 1 of 4
    EXPECT_FALSE(is_sink_head(sink(t, 1)));
}

TEST(HeadAnalysis, RopePairsAndTheRestAddUpToTheRawScores) {
    for (const Config& c : configs()) {
        SCOPED_TRACE(describe(c));
        const Session s = random_session(c, 17);
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h) {
            const RopeSplit split = rope_split(c, t, h);
            if (!c.rope.on) {
                EXPECT_TRUE(split.pairs.empty());
                continue;
            }
            ASSERT_EQ(split.pairs.size(), static_cast<size_t>(c.rope.rotated(c.d_k) / 2));
            Matrix sum = split.rest;
            for (const Matrix& pair : split.pairs) sum += pair;
            EXPECT_LE((sum - t.heads[static_cast<size_t>(h)].scores_raw).cwiseAbs().maxCoeff(), 1e-12);
            if (c.rope.rotated(c.d_k) == c.d_k)
                EXPECT_EQ(split.rest.cwiseAbs().maxCoeff(), 0);
            else
                EXPECT_GT(split.rest.cwiseAbs().maxCoeff(), 0);
        }
    }
}

// A head whose every query and key is (1, 0) before RoPE: pair 0 (θ_0 = 1) turns the query at i by
// i radians and the key at k by k, so its contribution is cos(k − i), the same along each diagonal.
// Pair 1 of a four-column head with base 100 turns by 100^(−1/2) = 0.1 radian a token.
TEST(HeadAnalysis, EachRopePairsProfileIsItsFrequencyAndItsStructureByDistance) {
    Config c;
    c.n = 4, c.d_model = 4, c.heads = 1, c.d_k = 4, c.d_v = 4;
    c.rope.on = true;
    c.rope.base = 100;
    Session s = random_session(c, 3);
    s.params.X = Matrix::Zero(4, 4);
    s.params.X.col(0).setOnes();  // every token (1, 0, 0, 0)
    s.params.heads[0].W_Q = Matrix::Identity(4, 4);
    s.params.heads[0].W_K = Matrix::Identity(4, 4);
    const Trace t = forward<double>(c, s.params);
    const std::vector<RopePairProfile> profiles = rope_pair_profiles(c, rope_split(c, t, 0));
    ASSERT_EQ(profiles.size(), 2u);
    EXPECT_DOUBLE_EQ(profiles[0].theta, 1.0);
    EXPECT_NEAR(profiles[1].theta, 0.1, 1e-15);
    ASSERT_EQ(profiles[0].by_offset.size(), 7u);  // offsets −3 … 3
    double mean_abs = 0;
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k) mean_abs += std::abs(std::cos(k - i)) / 16;
    EXPECT_NEAR(profiles[0].mean_abs, mean_abs, 1e-12);
    for (int offset = -3; offset <= 3; ++offset)
        EXPECT_NEAR(profiles[0].by_offset[static_cast<size_t>(offset + 3)], std::cos(offset), 1e-12) << offset;
    // Pair 1 (columns 1 and 3) sees only zeros here.
    EXPECT_EQ(profiles[1].mean_abs, 0);
}

}  // namespace
}  // namespace attnviz::core
