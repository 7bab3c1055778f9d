// Tests of core/attention/compare.hpp: B − A of hand-made matrices with known largest changes, ties, masked
// cells; the inputs and settings that differ between two sessions.
#include "core/attention/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attention/presets.hpp"
#include "core/attention/session.hpp"

namespace attnviz::core {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

TEST(Compare, TheLargestChangesComeFirstAndTiesInRowMajorOrder) {
    const Matrix a{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    Matrix b = a;
    b(2, 1) += 0.5;   // |Δ| 0.5
    b(0, 2) -= 3;     // |Δ| 3: the largest
    b(1, 0) += 0.25;  // |Δ| 0.25
    b(0, 0) += 0.5;   // |Δ| 0.5, a tie with (2, 1), which it comes before
    const Comparison c = compare(a, b);
    EXPECT_EQ(c.changed, 4);
    EXPECT_EQ(c.max_abs, 3);
    EXPECT_EQ(c.cells(), 9);
    ASSERT_EQ(c.top.size(), 4u);
    const int expected[4][2] = {{0, 2}, {0, 0}, {2, 1}, {1, 0}};
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(c.top[k].row, expected[k][0]) << k;
        EXPECT_EQ(c.top[k].col, expected[k][1]) << k;
        EXPECT_EQ(c.top[k].a, a(expected[k][0], expected[k][1]));
        EXPECT_EQ(c.top[k].b, b(expected[k][0], expected[k][1]));
    }
    EXPECT_EQ(c.top[0].delta(), -3);
    // The difference is B − A in every cell, 0 where nothing changed.
    for (Eigen::Index i = 0; i < 3; ++i)
        for (Eigen::Index j = 0; j < 3; ++j) EXPECT_EQ(c.difference(i, j), b(i, j) - a(i, j));
    EXPECT_EQ(c.masked_a + c.masked_b, 0);
    EXPECT_TRUE(c.masks.empty());
}

TEST(Compare, KeepsAtMostTopKAndNothingWhenNothingChanged) {
    const Matrix a{{1, 2}, {3, 4}};
    const Matrix b{{2, 4}, {6, 8}};  // Δ = 1, 2, 3, 4
    const Comparison two = compare(a, b, 2);
    EXPECT_EQ(two.changed, 4);
    ASSERT_EQ(two.top.size(), 2u);
    EXPECT_EQ(two.top[0].delta(), 4);
    EXPECT_EQ(two.top[1].delta(), 3);
    EXPECT_TRUE(compare(a, b, 0).top.empty());
    EXPECT_EQ(compare(a, b, 0).changed, 4);
    const Comparison same = compare(a, a);
    EXPECT_EQ(same.changed, 0);
    EXPECT_EQ(same.max_abs, 0);
    EXPECT_TRUE(same.top.empty());
    EXPECT_TRUE(same.difference.isZero());
}

TEST(Compare, CellsMaskedInBothAreNoChangeAndOneSidedMasksAreCountedApart) {
    // Causal scores in A; in B the mask of (0, 1) is lifted and (1, 0) is masked; (0, 2) masked in both.
    const Matrix a{{1, -inf, -inf}, {2, 3, -inf}};
    const Matrix b{{1, 0.5, -inf}, {-inf, 3.5, -inf}};
    const Comparison c = compare(a, b);
    EXPECT_FALSE(c.difference.array().isNaN().any());  // −∞ − (−∞) is never computed
    EXPECT_EQ(c.difference(0, 2), 0);
    EXPECT_EQ(c.difference(1, 2), 0);
    EXPECT_EQ(c.difference(0, 1), inf);   // masked in A only: allowed now
    EXPECT_EQ(c.difference(1, 0), -inf);  // masked in B only
    EXPECT_EQ(c.difference(1, 1), 0.5);
    EXPECT_EQ(c.masked_a, 1);
    EXPECT_EQ(c.masked_b, 1);
    ASSERT_EQ(c.masks.size(), 2u);  // row-major
    EXPECT_EQ(c.masks[0].row, 0);
    EXPECT_EQ(c.masks[0].col, 1);
    EXPECT_EQ(c.masks[1].row, 1);
    EXPECT_EQ(c.masks[1].col, 0);
    // Only the finite change is a value change; the masks never take a place among them.
    EXPECT_EQ(c.changed, 1);
    EXPECT_EQ(c.max_abs, 0.5);
    ASSERT_EQ(c.top.size(), 1u);
    EXPECT_EQ(c.top[0].row, 1);
    EXPECT_EQ(c.top[0].col, 1);
    // A NaN counts as masked too: never a change when both are.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Comparison n = compare(Matrix{{nan, 1}}, Matrix{{nan, 1}});
    EXPECT_EQ(n.changed + n.masked_a + n.masked_b, 0);
    EXPECT_EQ(n.difference(0, 0), 0);
}

TEST(Compare, TheTopListIsTheFullSortsFirstCells) {
    // Many ties (values on a coarse grid) and a few cells unchanged: the heap keeps exactly what a
    // sort of every changed cell by (|Δ| desc, row, col) puts first.
    const Matrix a = random_matrix(23, 31, 1, 5);
    Matrix b = a;
    for (Eigen::Index i = 0; i < b.rows(); ++i)
        for (Eigen::Index j = 0; j < b.cols(); ++j)
            if ((i * 7 + j) % 5) b(i, j) += std::round(random_matrix(1, 1, 4, 100 + i * 31 + j)(0, 0));
    std::vector<CellPair> all;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            if (a(i, j) != b(i, j)) all.push_back({static_cast<int>(i), static_cast<int>(j), a(i, j), b(i, j)});
    std::stable_sort(all.begin(), all.end(), [](const CellPair& x, const CellPair& y) {
        return std::abs(x.delta()) > std::abs(y.delta());  // stable: row-major among ties
    });
    const Comparison c = compare(a, b, 15);
    EXPECT_EQ(c.changed, static_cast<std::int64_t>(all.size()));
    ASSERT_EQ(c.top.size(), 15u);
    for (size_t k = 0; k < 15; ++k) {
        EXPECT_EQ(c.top[k].row, all[k].row) << k;
        EXPECT_EQ(c.top[k].col, all[k].col) << k;
    }
    EXPECT_EQ(c.max_abs, std::abs(all[0].delta()));
}

TEST(Compare, SameShapeNeedsTheMatrixInBothWithOneShape) {
    Config a;  // seed 001's layer: n 2, d_model 4, h 2, d_k = d_v = 2
    Config b = a;
    b.n = 3;
    EXPECT_FALSE(same_shape({MatrixId::X, 0}, a, b));
    EXPECT_FALSE(same_shape({MatrixId::weights, 0}, a, b));
    EXPECT_TRUE(same_shape({MatrixId::W_Q, 1}, a, b));
    EXPECT_FALSE(same_shape({MatrixId::W_Q, 2}, a, b));  // no third head
    b = a;
    b.output_projection = false;
    EXPECT_FALSE(same_shape({MatrixId::W_O, 0}, a, b));
    EXPECT_TRUE(same_shape({MatrixId::concat, 0}, a, b));
    EXPECT_TRUE(same_shape({MatrixId::output, 0}, a, b));  // h·d_v = d_model = 4 here
}

TEST(Compare, ChangedInputsNamesEachMatrixThatDiffers) {
    const Session a = worked_example();
    EXPECT_TRUE(changed_inputs(a, a).empty());
    Session b = a;
    b.params.X(0, 0) = 5;
    b.params.heads[1].W_Q(3, 1) = -1;
    std::vector<InputChange> c = changed_inputs(a, b);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].ref.id, MatrixId::X);
    EXPECT_EQ(c[0].kind, InputChange::Kind::values);
    EXPECT_EQ(c[1].ref.id, MatrixId::W_Q);
    EXPECT_EQ(c[1].ref.head, 1);

    // A third token: X has another shape, the weights compare as before.
    b = resized(a, Config{3, 4, 2, 2, 2, true, Mask::none, {}, false, 0, {}});
    b.params.heads[0].W_V(0, 0) = 9;
    c = changed_inputs(a, b);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].ref.id, MatrixId::X);
    EXPECT_EQ(c[0].kind, InputChange::Kind::shape);
    EXPECT_EQ(c[1].ref.id, MatrixId::W_V);
    EXPECT_EQ(c[1].ref.head, 0);

    // Biases turned on in B: each bias of B only; the output projection off: W_O of A only.
    Config cfg = a.config;
    cfg.biases = true;
    cfg.output_projection = false;
    c = changed_inputs(a, resized(a, cfg));
    int only_b = 0, only_a = 0;
    for (const InputChange& x : c) {
        only_b += x.kind == InputChange::Kind::only_b;
        only_a += x.kind == InputChange::Kind::only_a;
        EXPECT_NE(x.kind, InputChange::Kind::values);
    }
    EXPECT_EQ(only_b, 6);  // b_Q, b_K, b_V of two heads (no b_O without W_O)
    EXPECT_EQ(only_a, 1);  // W_O
}

TEST(Compare, ASharedKeyValueGroupCountsOnce) {
    Config cfg{4, 8, 4, 2, 2, true, Mask::none, {}, false, 2, {}};  // two groups of two heads
    const Session a = random_session(cfg, 3);
    Session b = a;
    b.params.heads[2].W_K(0, 0) += 1;  // group 2's W_K, held by its first head (2)
    const std::vector<InputChange> c = changed_inputs(a, b);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].ref.id, MatrixId::W_K);
    EXPECT_EQ(c[0].ref.head, 2);
}

TEST(Compare, ConfigChangesSayWhatMovedFromWhatToWhat) {
    Config a;
    EXPECT_TRUE(config_changes(a, a, Notation::ascii).empty());
    Config b = a;
    b.n = 5;
    b.mask = Mask::causal;
    b.scale = {Scale::Kind::divisor, 2.5};
    const std::vector<std::string> c = config_changes(a, b, Notation::ascii);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[0], "n 2 -> 5");
    EXPECT_EQ(c[1], "mask none -> causal");
    EXPECT_EQ(c[2], "s sqrt(d_k) -> 2.5");
    b = a;
    b.n_kv = 3;
    b.heads = 4;
    const std::vector<std::string> u = config_changes(a, b, Notation::unicode);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_EQ(u[0], "h 2 → 4");
    EXPECT_EQ(u[1], "n_kv none → 3");
    b = a;
    b.softmax = Softmax::plus_one;
    EXPECT_EQ(config_changes(a, b, Notation::ascii), std::vector<std::string>{"softmax standard -> plus one"});
}

}  // namespace
}  // namespace attnviz::core
