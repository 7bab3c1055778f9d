// core/teach/exercise.hpp: right, wrong, tolerance, reveal, and answers kept across a changed session.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/teach/exercise.hpp"

using namespace attnviz::core;

TEST(Exercise, StartsEmpty) {
    const Exercise ex(Matrix{{1, 2}, {3, 4}});
    EXPECT_EQ(ex.rows(), 2);
    EXPECT_EQ(ex.cols(), 2);
    EXPECT_EQ(ex.count(CellMark::empty), 4);
    EXPECT_FALSE(ex.answered(0, 0));
    EXPECT_FALSE(ex.solved());
}

TEST(Exercise, ToleranceIsOneThousandthEitherSide) {
    Exercise ex(Matrix{{0.944193, -2.5}});
    ex.answer(0, 0, 0.944193 + 0.00099);
    EXPECT_EQ(ex.mark(0, 0), CellMark::right);
    ex.answer(0, 0, 0.944193 - 0.00099);
    EXPECT_EQ(ex.mark(0, 0), CellMark::right);
    ex.answer(0, 0, 0.944193 + 0.0011);
    EXPECT_EQ(ex.mark(0, 0), CellMark::wrong);
    ex.answer(0, 0, 0.944193 - 0.0011);
    EXPECT_EQ(ex.mark(0, 0), CellMark::wrong);
    ex.answer(0, 1, 2.5);  // the sign matters
    EXPECT_EQ(ex.mark(0, 1), CellMark::wrong);
    ex.answer(0, 1, -2.5);
    EXPECT_EQ(ex.mark(0, 1), CellMark::right);
    EXPECT_TRUE(ex.solved() == false);
    ex.answer(0, 0, 0.944);
    EXPECT_TRUE(ex.solved());
}

TEST(Exercise, MaskedCellsAreRightOnlyAsMinusInfinity) {
    const double inf = std::numeric_limits<double>::infinity();
    Exercise ex(Matrix{{1.0, -inf}});
    ex.answer(0, 1, -1e300);
    EXPECT_EQ(ex.mark(0, 1), CellMark::wrong);
    ex.answer(0, 1, -inf);
    EXPECT_EQ(ex.mark(0, 1), CellMark::right);
}

TEST(Exercise, RevealAndClear) {
    Exercise ex(Matrix{{1, 2}, {3, 4}});
    ex.answer(0, 0, 1.0);
    ex.reveal(0, 0);  // a revealed cell no longer counts as right
    EXPECT_EQ(ex.mark(0, 0), CellMark::revealed);
    EXPECT_EQ(ex.count(CellMark::right), 0);
    ex.clear(0, 0);
    EXPECT_EQ(ex.mark(0, 0), CellMark::empty);
    ex.reveal_all();
    EXPECT_EQ(ex.count(CellMark::revealed), 4);
    EXPECT_FALSE(ex.solved());
}

TEST(Exercise, RetargetKeepsAnswersThatStillFit) {
    Exercise ex(Matrix{{1, 2}, {3, 4}});
    ex.answer(0, 1, 2.0);
    ex.answer(1, 1, 4.0);
    ex.reveal(1, 0);
    ex.retarget(Matrix{{1, 5, 0}});  // one row, three columns
    EXPECT_EQ(ex.rows(), 1);
    EXPECT_EQ(ex.cols(), 3);
    EXPECT_DOUBLE_EQ(ex.answer_of(0, 1), 2.0);
    EXPECT_EQ(ex.mark(0, 1), CellMark::wrong);  // the expected value changed to 5
    EXPECT_EQ(ex.mark(0, 2), CellMark::empty);
}
