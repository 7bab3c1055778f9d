// Tests of core/attention/saturation.hpp: rows by hand and by a direct loop, against the trace's own row
// statistics, and the √d_k experiment against what the theory says of its spread.
#include "core/attention/saturation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/attention/presets.hpp"

namespace attnviz::core {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The softmax of one row of scores_raw / s by the definition, with its entropy from the weights
// (−Σ w·ln w, a log per weight): the reference the closed forms are checked against.
RowSaturation by_definition(const std::vector<double>& raw, double s) {
    double m = -inf;
    for (double x : raw) m = std::max(m, x / s);
    std::vector<double> w;
    double sum = 0;
    for (double x : raw) {
        w.push_back(std::isfinite(x) ? std::exp(x / s - m) : 0.0);
        sum += w.back();
    }
    RowSaturation r;
    for (double& v : w) {
        v /= sum;
        if (v > 0) r.entropy -= v * std::log(v);
        r.max = std::max(r.max, v);
    }
    return r;
}

Matrix row_matrix(const std::vector<double>& raw) {
    Matrix m(1, static_cast<Eigen::Index>(raw.size()));
    for (size_t j = 0; j < raw.size(); ++j) m(0, static_cast<Eigen::Index>(j)) = raw[j];
    return m;
}

TEST(Saturation, AUniformRowHasEntropyLnKeys) {
    const Matrix scores_raw = Matrix::Constant(3, 5, 2.5);
    std::vector<RowSaturation> rows;
    for (double s : {0.01, 1.0, 37.0}) {
        saturate_rows(scores_raw, s, rows);
        ASSERT_EQ(rows.size(), 3u);
        for (const RowSaturation& r : rows) {
            EXPECT_NEAR(r.entropy, std::log(5.0), 1e-15) << "s = " << s;
            EXPECT_NEAR(r.max, 0.2, 1e-16);
            EXPECT_EQ(r.keys, 5);
        }
    }
}

TEST(Saturation, OneHugeScoreGoesOneHotAsTheDivisorShrinks) {
    const std::vector<double> raw{0, 0, 0, 50};
    std::vector<RowSaturation> rows;
    double last_entropy = std::log(4.0), last_max = 0.25;
    for (double s : {1e4, 100.0, 10.0, 3.0, 1.0, 0.1, 1e-3}) {
        saturate_rows(row_matrix(raw), s, rows);
        const RowSaturation want = by_definition(raw, s);
        EXPECT_NEAR(rows[0].entropy, want.entropy, 1e-13) << "s = " << s;
        EXPECT_NEAR(rows[0].max, want.max, 1e-15) << "s = " << s;
        // The max weight is 1 / (1 + 3·e^(−50/s)) exactly.
        EXPECT_NEAR(rows[0].max, 1 / (1 + 3 * std::exp(-50 / s)), 1e-15);
        // Sharper at each step, until the max weight rounds to 1 (from s = 1 on, 1 − 6·10⁻²²).
        EXPECT_LE(rows[0].entropy, last_entropy);
        EXPECT_GE(rows[0].max, last_max);
        if (s > 1) {
            EXPECT_LT(rows[0].entropy, last_entropy);
            EXPECT_GT(rows[0].max, last_max);
        }
        last_entropy = rows[0].entropy;
        last_max = rows[0].max;
    }
    EXPECT_EQ(rows[0].max, 1.0);  // e^(−50000) underflows: one-hot to the last digit
    EXPECT_EQ(rows[0].entropy, 0.0);
    // Nearly uniform at a large divisor.
    saturate_rows(row_matrix(raw), 1e6, rows);
    EXPECT_NEAR(rows[0].entropy, std::log(4.0), 1e-8);
}

TEST(Saturation, AMaskedKeyGetsNoWeight) {
    // Key 1 masked: the row is the softmax of the other two, equal, so each gets 1/2.
    Matrix scores_raw{{1, -inf, 1}, {5, -inf, -inf}, {-inf, 3, -1}};
    std::vector<RowSaturation> rows;
    saturate_rows(scores_raw, 0.5, rows);
    EXPECT_NEAR(rows[0].entropy, std::log(2.0), 1e-15);
    EXPECT_EQ(rows[0].max, 0.5);
    EXPECT_EQ(rows[0].keys, 2);
    // One allowed key: all its weight there, whatever the divisor.
    EXPECT_EQ(rows[1].max, 1.0);
    EXPECT_EQ(rows[1].entropy, 0.0);
    EXPECT_EQ(rows[1].keys, 1);
    // The same as the row without the masked key, to the last bit.
    std::vector<RowSaturation> without;
    saturate_rows(Matrix{{3, -1}}, 0.5, without);
    EXPECT_EQ(rows[2].entropy, without[0].entropy);
    EXPECT_EQ(rows[2].max, without[0].max);
    const RowSaturation want = by_definition({-inf, 3, -1}, 0.5);
    EXPECT_NEAR(rows[2].entropy, want.entropy, 1e-15);
    EXPECT_NEAR(rows[2].max, want.max, 1e-15);
}

TEST(Saturation, MatchesTheTracesOwnRowsUnderTheSoftmaxPlusOne) {
    // softmax₁'s rows: the max weight e^{max y − m} / Σ and the entropy of weights summing to below 1.
    for (const Mask mask : {Mask::none, Mask::causal}) {
        Config c{9, 12, 3, 4, 5, true, mask, Scale{Scale::Kind::divisor, 0.3}, false, 0, {}};
        c.softmax = Softmax::plus_one;
        const Session session = random_session(c, 18);
        const Trace trace = forward<double>(c, session.params);
        for (int h = 0; h < c.heads; ++h) {
            const HeadTrace& head = trace.heads[static_cast<size_t>(h)];
            std::vector<RowSaturation> rows;
            saturate_rows(masked_scores_raw(head), trace.scale, rows, Softmax::plus_one);
            for (int i = 0; i < c.n; ++i) {
                const RowStats& want = trace.rows[static_cast<size_t>(h)][static_cast<size_t>(i)];
                EXPECT_NEAR(rows[static_cast<size_t>(i)].entropy, want.entropy, 1e-13) << h << " " << i;
                EXPECT_NEAR(rows[static_cast<size_t>(i)].max, head.weights.row(i).maxCoeff(), 1e-15) << h << " " << i;
            }
            const std::vector<double> grid = divisor_grid(c.d_k, 9, trace.scale);
            const auto at = std::find(grid.begin(), grid.end(), trace.scale) - grid.begin();
            const SaturationCurves curves = saturation_curves(masked_scores_raw(head), grid, Softmax::plus_one);
            for (int i = 0; i < c.n; ++i) {
                EXPECT_EQ(curves.entropy(i, at), rows[static_cast<size_t>(i)].entropy);
                EXPECT_EQ(curves.max(i, at), rows[static_cast<size_t>(i)].max);
            }
        }
    }
}

TEST(Saturation, MatchesTheTracesOwnRowsAtItsDivisor) {
    for (const Scale scale : {Scale{}, Scale{Scale::Kind::divisor, 0.3}, Scale{Scale::Kind::none, 1}}) {
        for (const Mask mask : {Mask::none, Mask::causal}) {
            Config c{9, 12, 3, 4, 5, true, mask, scale, false, 0, {}};
            const Session session = random_session(c, 17);
            const Trace trace = forward<double>(c, session.params);
            for (int h = 0; h < c.heads; ++h) {
                const HeadTrace& head = trace.heads[static_cast<size_t>(h)];
                std::vector<RowSaturation> rows;
                saturate_rows(masked_scores_raw(head), trace.scale, rows);
                ASSERT_EQ(rows.size(), 9u);
                for (int i = 0; i < c.n; ++i) {
                    const RowStats& want = trace.rows[static_cast<size_t>(h)][static_cast<size_t>(i)];
                    EXPECT_NEAR(rows[static_cast<size_t>(i)].entropy, want.entropy, 1e-13) << h << " " << i;
                    EXPECT_NEAR(rows[static_cast<size_t>(i)].max, want.max, 1e-15);
                    EXPECT_NEAR(rows[static_cast<size_t>(i)].max, head.weights.row(i).maxCoeff(), 1e-15);
                    EXPECT_EQ(rows[static_cast<size_t>(i)].keys, mask == Mask::causal ? i + 1 : c.n);
                }
                // The summary from the trace's rows counts the same rows.
                const SaturationSummary mine = summarize(rows), theirs = summarize(head, trace.rows[h]);
                EXPECT_NEAR(mine.mean_entropy, theirs.mean_entropy, 1e-13);
                EXPECT_NEAR(mine.mean_max, theirs.mean_max, 1e-15);
                EXPECT_EQ(mine.one_hot, theirs.one_hot);
                EXPECT_EQ(mine.choosing, mask == Mask::causal ? c.n - 1 : c.n);
                EXPECT_EQ(theirs.choosing, mine.choosing);
                // And the curves, through the current divisor, give it in its column.
                const std::vector<double> grid = divisor_grid(c.d_k, 9, trace.scale);
                const auto at = std::find(grid.begin(), grid.end(), trace.scale) - grid.begin();
                const SaturationCurves curves = saturation_curves(masked_scores_raw(head), grid);
                for (int i = 0; i < c.n; ++i) {
                    EXPECT_EQ(curves.entropy(i, at), rows[static_cast<size_t>(i)].entropy);
                    EXPECT_EQ(curves.max(i, at), rows[static_cast<size_t>(i)].max);
                }
            }
        }
    }
}

TEST(Saturation, CurvesAreEachDivisorsRows) {
    const Session session = random_session({6, 8, 2, 4, 4, true, Mask::causal, {}, false, 0, {}}, 3);
    const Trace trace = forward<double>(session.config, session.params);
    const Matrix raw = masked_scores_raw(trace.heads[1]);
    const std::vector<double> grid = divisor_grid(4, 7);
    const SaturationCurves curves = saturation_curves(raw, grid);
    ASSERT_EQ(curves.entropy.cols(), 7);
    ASSERT_EQ(curves.summaries.size(), 7u);
    for (size_t p = 0; p < grid.size(); ++p) {
        std::vector<RowSaturation> rows;
        saturate_rows(raw, grid[p], rows);
        for (size_t i = 0; i < rows.size(); ++i) {
            EXPECT_EQ(curves.entropy(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(p)), rows[i].entropy);
            EXPECT_EQ(curves.max(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(p)), rows[i].max);
        }
        const SaturationSummary s = summarize(rows);
        EXPECT_EQ(curves.summaries[p].mean_entropy, s.mean_entropy);
        EXPECT_EQ(curves.summaries[p].one_hot, s.one_hot);
    }
    // Smaller divisors, sharper rows: the mean entropy falls and the mean max rises along the grid
    // (read from large s to small).
    for (size_t p = 1; p < grid.size(); ++p) {
        EXPECT_GT(curves.summaries[p].mean_entropy, curves.summaries[p - 1].mean_entropy);
        EXPECT_LT(curves.summaries[p].mean_max, curves.summaries[p - 1].mean_max);
    }
}

TEST(Saturation, BlocksOfRowsAddUpToTheWholeHead) {
    const Session session = random_session({10, 8, 1, 4, 4, true, Mask::causal, {}, false, 0, {}}, 9);
    const Trace trace = forward<double>(session.config, session.params);
    const Matrix raw = masked_scores_raw(trace.heads[0]);
    const std::vector<double> grid = divisor_grid(4, 5);
    const SaturationCurves whole = saturation_curves(raw, grid);
    std::vector<SaturationSummary> sums(grid.size());
    for (Eigen::Index first = 0; first < raw.rows(); first += 3) {  // blocks of 3, 3, 3 and 1 rows
        const SaturationCurves block = saturation_curves(raw.middleRows(first, std::min<Eigen::Index>(3, 10 - first)),
                                                         grid);
        for (size_t p = 0; p < grid.size(); ++p) sums[p] += block.summaries[p];
    }
    for (size_t p = 0; p < grid.size(); ++p) {
        EXPECT_EQ(sums[p].rows, 10);
        EXPECT_EQ(sums[p].choosing, 9);  // row 0 has one key
        EXPECT_EQ(sums[p].one_hot, whole.summaries[p].one_hot);
        EXPECT_NEAR(sums[p].mean_entropy, whole.summaries[p].mean_entropy, 1e-15);
        EXPECT_NEAR(sums[p].mean_max, whole.summaries[p].mean_max, 1e-15);
    }
}

TEST(Saturation, SummaryCountsNearlyOneHotRowsThatChoose) {
    const std::vector<RowSaturation> rows{
        {0.01, 0.995, 4},  // nearly one-hot
        {0.0, 0.99, 3},    // exactly at the threshold: counted
        {0.5, 0.98, 3},    // not
        {0.0, 1.0, 1},     // one allowed key: not counted either way
    };
    const SaturationSummary s = summarize(rows);
    EXPECT_EQ(s.rows, 4);
    EXPECT_EQ(s.choosing, 3);
    EXPECT_EQ(s.one_hot, 2);
    EXPECT_DOUBLE_EQ(s.one_hot_share(), 2.0 / 3);
    EXPECT_TRUE(s.saturated());  // 2 of 3
    EXPECT_DOUBLE_EQ(s.mean_entropy, 0.51 / 4);
    EXPECT_DOUBLE_EQ(s.mean_max, (0.995 + 0.99 + 0.98 + 1.0) / 4);
    EXPECT_DOUBLE_EQ(s.mean_uniform_entropy, (std::log(4.0) + 2 * std::log(3.0) + 0) / 4);
    // Half is not a majority.
    EXPECT_FALSE(summarize(std::vector<RowSaturation>{{0, 1, 2}, {0.6, 0.6, 2}}).saturated());
    // Two heads' summaries add up.
    SaturationSummary both = s;
    both += summarize(std::vector<RowSaturation>{{1.0, 0.5, 2}, {1.0, 0.5, 2}});
    EXPECT_EQ(both.rows, 6);
    EXPECT_EQ(both.choosing, 5);
    EXPECT_EQ(both.one_hot, 2);
    EXPECT_FALSE(both.saturated());
    EXPECT_DOUBLE_EQ(both.mean_entropy, (0.51 + 2.0) / 6);
    EXPECT_DOUBLE_EQ(both.mean_uniform_entropy, (std::log(4.0) + 2 * std::log(3.0) + 2 * std::log(2.0)) / 6);
    EXPECT_EQ(summarize(std::vector<RowSaturation>{}).rows, 0);
}

TEST(Saturation, DivisorGridIsLogSpacedAroundTheRootOfDk) {
    const std::vector<double> g = divisor_grid(16, 5);
    ASSERT_EQ(g.size(), 5u);
    EXPECT_NEAR(g.front(), 0.05 * 4, 1e-15);
    EXPECT_NEAR(g.back(), 20 * 4, 1e-13);
    EXPECT_EQ(g[2], 4.0);                                                                        // √16, exactly
    for (size_t k = 1; k < g.size(); ++k) EXPECT_NEAR(g[k] / g[k - 1], std::sqrt(20.0), 1e-13);  // 400^(1/4)
    // The current divisor is inserted in order, once.
    const std::vector<double> with = divisor_grid(16, 5, 1.0);
    ASSERT_EQ(with.size(), 6u);
    EXPECT_TRUE(std::is_sorted(with.begin(), with.end()));
    EXPECT_EQ(std::count(with.begin(), with.end(), 1.0), 1);
    EXPECT_EQ(divisor_grid(16, 5, 4.0).size(), 5u);  // already there
    EXPECT_EQ(divisor_grid(16, 5, 1e6).back(), 1e6);
}

TEST(Saturation, SplitMix64IsTheReferenceGenerator) {
    // The first outputs of splitmix64 from seed 0, as its authors' reference code prints them.
    SplitMix64 g(0);
    EXPECT_EQ(g.next(), 0xe220a8397b1dcdafULL);
    EXPECT_EQ(g.next(), 0x6e789e6aa1b965f4ULL);
    EXPECT_EQ(g.next(), 0x06c45d188009454fULL);
    // Its normals have mean 0 and variance 1 (within 5 standard errors of 200 000 draws).
    SplitMix64 n(42);
    const int N = 200000;
    double sum = 0, sq = 0;
    for (int k = 0; k < N; ++k) {
        const double x = n.normal();
        sum += x;
        sq += x * x;
    }
    EXPECT_NEAR(sum / N, 0, 5 / std::sqrt(N));
    EXPECT_NEAR(sq / N, 1, 5 * std::sqrt(2.0 / N));
}

TEST(Saturation, TheVarianceOfQDotKGrowsWithDk) {
    const int N = 2000;
    const std::vector<int> dims = power_of_two_dims(1024);
    ASSERT_EQ(dims.size(), 11u);
    EXPECT_EQ(dims.back(), 1024);
    const std::vector<DotVariance> rows = dot_product_variance(dims, N, 7);
    ASSERT_EQ(rows.size(), dims.size());
    for (const DotVariance& r : rows) {
        // q·k is a sum of d_k products of kurtosis 9, so its kurtosis is 3 + 6/d_k and the sample
        // variance has relative standard deviation sqrt((2 + 6/d_k) / N): 5 of them.
        const double tolerance = 5 * std::sqrt((2 + 6.0 / r.d_k) / N);
        EXPECT_EQ(r.samples, N);
        EXPECT_LT(std::abs(r.var_dot / r.d_k - 1), tolerance) << "d_k = " << r.d_k << ": " << r.var_dot;
        EXPECT_LT(std::abs(r.var_scaled - 1), tolerance) << "d_k = " << r.d_k;
        EXPECT_NEAR(r.var_scaled, r.var_dot / r.d_k, 1e-12 * r.var_scaled);  // the same samples, scaled
        EXPECT_NEAR(r.two_keys_scaled, 1 / (1 + std::exp(-1.0)), 0.05);      // 0.73 whatever d_k
    }
    EXPECT_GT(rows.back().two_keys_raw, 1 - 1e-12);  // σ ≈ 32: one key takes everything
    // Reproducible: the same seed draws the same numbers; a row does not depend on the others.
    const DotVariance again = dot_product_variance(64, N, 7);
    EXPECT_EQ(again.var_dot, rows[6].var_dot);
    EXPECT_EQ(again.var_scaled, rows[6].var_scaled);
    EXPECT_NE(dot_product_variance(64, N, 8).var_dot, again.var_dot);
    EXPECT_EQ(dot_product_variance(0, N, 7).var_dot, 0);  // nothing to sample
    EXPECT_EQ(dot_product_variance(4, 1, 7).var_dot, 0);
}

}  // namespace
}  // namespace attnviz::core
