// Tests of core/attention/presets.hpp: the worked example is seed 001's, random_session is seeded and Glorot.
#include "core/attention/presets.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

TEST(Presets, WorkedExampleIsSeed001) {
    const Session s = worked_example();
    EXPECT_EQ(s.config.n, 2);
    EXPECT_EQ(s.config.d_model, 4);
    EXPECT_EQ(s.config.heads, 2);
    EXPECT_EQ(s.config.d_k, 2);
    EXPECT_EQ(s.config.d_v, 2);
    EXPECT_TRUE(s.config.output_projection);
    EXPECT_EQ(s.config.mask, Mask::none);
    EXPECT_EQ(s.config.scale.kind, Scale::Kind::sqrt_dk);
    EXPECT_EQ(s.tokens, (std::vector<std::string>{"x1", "x2"}));
    EXPECT_EQ(s.params.X, (Matrix{{1, 0, 1, 0}, {0, 2, 0, 2}}));
    ASSERT_EQ(s.params.heads.size(), 2u);
    const Matrix h1{{1, 0}, {0, 1}, {1, 0}, {0, 1}};
    const Matrix h2{{0, 1}, {1, 0}, {0, 1}, {1, 0}};
    EXPECT_EQ(s.params.heads[0], (HeadParams{h1, h1, h1, Matrix::Zero(1, 2), Matrix::Zero(1, 2), Matrix::Zero(1, 2)}));
    EXPECT_EQ(s.params.heads[1], (HeadParams{h2, h2, h2, Matrix::Zero(1, 2), Matrix::Zero(1, 2), Matrix::Zero(1, 2)}));
    EXPECT_EQ(s.params.W_O, (Matrix{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}));
    EXPECT_TRUE(validate(s).empty());
}

TEST(Presets, RandomIsValidAndDeterministic) {
    for (const Config& c :
         {make_config(3, 4, 2, 2, 2), make_config(5, 7, 3, 2, 4), make_config(1, 1, 1, 1, 1, false)}) {
        const Session a = random_session(c, 42), b = random_session(c, 42), other = random_session(c, 43);
        EXPECT_TRUE(validate(a).empty());
        EXPECT_EQ(a, b);
        EXPECT_NE(a.params.X, other.params.X);
        EXPECT_EQ(a.config, c);
        EXPECT_EQ(a.tokens, default_tokens(c.n));
        // W_O is drawn even while the projection is off.
        EXPECT_EQ(a.params.W_O.rows(), c.heads * c.d_v);
        EXPECT_EQ(a.params.W_O.cols(), c.d_model);
        EXPECT_FALSE(a.params.W_O.isZero(0));
    }
}

TEST(Presets, RandomDrawOrderIsXThenHeads) {
    // X is drawn first, so it does not depend on the head count; head 0 is drawn before head 1,
    // so the first head is the same with one or with three heads.
    const Session one = random_session(make_config(4, 6, 1, 3, 2), 7);
    const Session three = random_session(make_config(4, 6, 3, 3, 2), 7);
    EXPECT_EQ(one.params.X, three.params.X);
    EXPECT_EQ(one.params.heads[0], three.params.heads[0]);
    EXPECT_NE(three.params.heads[0].W_Q, three.params.heads[1].W_Q);
}

TEST(Presets, RandomRangesAreGlorot) {
    const Config c = make_config(64, 64, 2, 16, 8);
    const Session s = random_session(c, 3);
    auto check = [](const Matrix& m, double a, const char* what) {
        double lo = 1e9, hi = -1e9, sum = 0;
        for (Eigen::Index i = 0; i < m.size(); ++i) {
            const double v = m.data()[i];
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            sum += v;
        }
        EXPECT_GE(lo, -a) << what;
        EXPECT_LT(hi, a) << what;
        // With ≥ 1000 uniform draws the extremes come close to ±a and the mean close to 0.
        EXPECT_LT(lo, -0.95 * a) << what;
        EXPECT_GT(hi, 0.95 * a) << what;
        EXPECT_LT(std::abs(sum / m.size()), 0.1 * a) << what;
    };
    check(s.params.X, 1.0, "X");
    const double a_qk = std::sqrt(6.0 / (64 + 16)), a_v = std::sqrt(6.0 / (64 + 8)), a_o = std::sqrt(6.0 / (16 + 64));
    for (const HeadParams& h : s.params.heads) {
        check(h.W_Q, a_qk, "W_Q");
        check(h.W_K, a_qk, "W_K");
        check(h.W_V, a_v, "W_V");
    }
    check(s.params.W_O, a_o, "W_O");
}

TEST(Presets, GlorotLimit) {
    EXPECT_DOUBLE_EQ(glorot_limit(64, 16), std::sqrt(6.0 / 80.0));
    EXPECT_DOUBLE_EQ(glorot_limit(1, 2), std::sqrt(2.0));
    EXPECT_DOUBLE_EQ(glorot_limit(4, 2), 1.0);
}

TEST(Presets, RandomMatrix) {
    const Matrix a = random_matrix(3, 5, 0.5, 17), b = random_matrix(3, 5, 0.5, 17);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.rows(), 3);
    EXPECT_EQ(a.cols(), 5);
    EXPECT_NE(a, random_matrix(3, 5, 0.5, 18));
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        EXPECT_GE(a.data()[i], -0.5);
        EXPECT_LT(a.data()[i], 0.5);
    }
    // The limit only scales the draws.
    const Matrix c = random_matrix(3, 5, 2.0, 17);
    for (Eigen::Index i = 0; i < a.size(); ++i) EXPECT_EQ(c.data()[i], 4 * a.data()[i]);
    // "The same generator": a session's X is the first matrix drawn, with limit 1.
    const Config cfg = make_config(3, 5, 2, 2, 2);
    EXPECT_EQ(random_matrix(3, 5, 1.0, 17), random_session(cfg, 17).params.X);
}

}  // namespace
}  // namespace attnviz::core
