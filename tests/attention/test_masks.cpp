// Tests of core/attention/masks.hpp: each preset's pattern written out by hand, and its refusals.
#include "core/attention/masks.hpp"

#include <gtest/gtest.h>

#include "core/attention/params.hpp"

namespace attnviz::core {
namespace {

TEST(Masks, PaddingMasksTheLastKeysOfEveryQuery) {
    const Result<Matrix> m = padding_mask(2, 4, 1);
    ASSERT_TRUE(m);
    EXPECT_EQ(*m.value, (Matrix{{1, 1, 1, 0}, {1, 1, 1, 0}}));
    EXPECT_EQ(*padding_mask(3, 3, 0).value, Matrix::Ones(3, 3));
    const Result<Matrix> all = padding_mask(2, 4, 4);
    ASSERT_FALSE(all);
    EXPECT_EQ(all.problems[0].path, "padding");
    EXPECT_NE(all.problems[0].message.find("got 4"), std::string::npos);
    EXPECT_FALSE(padding_mask(2, 4, -1));
}

TEST(Masks, SlidingWindowBothWaysAndCausal) {
    // |i − j| < 2 on 4 tokens: a band of width 3.
    EXPECT_EQ(*sliding_window_mask(4, 4, 2, false).value,
              (Matrix{{1, 1, 0, 0}, {1, 1, 1, 0}, {0, 1, 1, 1}, {0, 0, 1, 1}}));
    // 0 ≤ i − j < 2: itself and the one before.
    EXPECT_EQ(*sliding_window_mask(4, 4, 2, true).value,
              (Matrix{{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}}));
    // A causal window as wide as the sequence is the causal mask.
    const Matrix causal = *sliding_window_mask(5, 5, 5, true).value;
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) EXPECT_EQ(causal(i, j), j <= i ? 1.0 : 0.0);
    EXPECT_FALSE(sliding_window_mask(3, 3, 0, false));
    // Three queries over one key: the causal window of width 1 leaves queries 1 and 2 with nothing.
    const Result<Matrix> empty = sliding_window_mask(3, 1, 1, true);
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.problems[0].message.find("query 1"), std::string::npos) << empty.problems[0].message;
}

TEST(Masks, BlocksKeepEachSegmentToItself) {
    const Result<Matrix> m = block_mask(5, 5, {2, 3});
    ASSERT_TRUE(m);
    EXPECT_EQ(*m.value, (Matrix{{1, 1, 0, 0, 0}, {1, 1, 0, 0, 0}, {0, 0, 1, 1, 1}, {0, 0, 1, 1, 1}, {0, 0, 1, 1, 1}}));
    EXPECT_FALSE(block_mask(5, 5, {2, 2}));  // adds up to 4
    EXPECT_FALSE(block_mask(5, 5, {5, 0}));
    EXPECT_FALSE(block_mask(4, 5, {2, 2}));  // not one sequence
    EXPECT_NE(block_mask(5, 5, {2, 2}).problems[0].message.find("add up to 4"), std::string::npos);
}

TEST(Masks, EveryPresetIsAValidMask) {
    for (const Result<Matrix>& m : {padding_mask(3, 6, 5), sliding_window_mask(6, 6, 1, false),
                                    sliding_window_mask(4, 7, 3, false), block_mask(4, 4, {1, 1, 1, 1})}) {
        ASSERT_TRUE(m);
        EXPECT_TRUE(mask_problems(*m.value).empty());
    }
}

TEST(Masks, LengthsAreParsed) {
    EXPECT_EQ(*parse_lengths("3,2,3").value, (std::vector<int>{3, 2, 3}));
    EXPECT_EQ(*parse_lengths(" 4 , 1").value, (std::vector<int>{4, 1}));
    for (const char* bad : {"", "3,,2", "3,x", "0", "-1,2", "2,"}) EXPECT_FALSE(parse_lengths(bad)) << bad;
}

TEST(Masks, MaskProblemsNameTheCellAndTheEmptyRow) {
    const Problems p = mask_problems(Matrix{{1, 0.5}, {0, 0}});
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].path, "mask[0][1]");
    EXPECT_NE(p[0].message.find("0 or 1"), std::string::npos);
    EXPECT_EQ(p[1].path, "mask[1]");
    EXPECT_NE(p[1].message.find("query 1"), std::string::npos);
    EXPECT_TRUE(mask_problems(Matrix{{0, 1}, {1, 0}}).empty());
}

}  // namespace
}  // namespace attnviz::core
