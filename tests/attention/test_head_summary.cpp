// Tests of core/attention/head_summary.hpp on hand-made weights.
#include "core/attention/head_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace attnviz::core {
namespace {

TEST(HeadSummary, ADiagonalHeadLooksAtItself) {
    const HeadSummary s = summarize_head(Matrix::Identity(4, 4));
    EXPECT_EQ(s.mean_entropy, 0);
    EXPECT_EQ(s.mean_distance, 0);
    EXPECT_EQ(s.diagonal_share, 1);
    EXPECT_EQ(s.first_share, 0.25);  // only query 0 looks at key 0
}

TEST(HeadSummary, AFirstTokenHeadAndAUniformOne) {
    Matrix first = Matrix::Zero(3, 3);
    first.col(0).setOnes();
    const HeadSummary f = summarize_head(first);
    EXPECT_EQ(f.first_share, 1);
    EXPECT_DOUBLE_EQ(f.mean_distance, (0 + 1 + 2) / 3.0);  // query i looks |i − 0| back
    EXPECT_DOUBLE_EQ(f.diagonal_share, 1 / 3.0);
    const HeadSummary u = summarize_head(Matrix::Constant(4, 4, 0.25));
    EXPECT_NEAR(u.mean_entropy, std::log(4.0), 1e-15);  // uniform: ln n
    // Σ_j |i − j| / 4 for i = 0..3: 6/4, 4/4, 4/4, 6/4 → mean 1.25.
    EXPECT_DOUBLE_EQ(u.mean_distance, 1.25);
    EXPECT_DOUBLE_EQ(u.diagonal_share, 0.25);
}

TEST(HeadSummary, ByHandOnTheWorkedExamplesWeights) {
    // weights⁽¹⁾ of seed 001 ≈ [[0.944, 0.0558], [1.22e-5, 1]].
    const Matrix w{{0.9442, 0.0558}, {0.0000122, 0.9999878}};
    const HeadSummary s = summarize_head(w);
    EXPECT_NEAR(s.diagonal_share, (0.9442 + 0.9999878) / 2, 1e-12);
    EXPECT_NEAR(s.mean_distance, (0.0558 + 0.0000122) / 2, 1e-12);
    EXPECT_NEAR(s.first_share, (0.9442 + 0.0000122) / 2, 1e-12);
    const double h0 = -(0.9442 * std::log(0.9442) + 0.0558 * std::log(0.0558));
    const double h1 = -(0.0000122 * std::log(0.0000122) + 0.9999878 * std::log(0.9999878));
    EXPECT_NEAR(s.mean_entropy, (h0 + h1) / 2, 1e-12);
    EXPECT_EQ(summarize_head(Matrix()).mean_entropy, 0);
}

}  // namespace
}  // namespace attnviz::core
