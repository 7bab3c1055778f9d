// Tests of core/layer_summary.hpp on hand-made weights: thumbnails keep each block's largest
// weight, heads sort and the model's top heads are found by their summaries.
#include "core/layer_summary.hpp"

#include <gtest/gtest.h>

#include "core/presets.hpp"

namespace attnviz::core {
namespace {

TEST(LayerSummary, ASmallMatrixIsItsOwnThumbnail) {
    const Matrix w{{0.9, 0.1}, {0.3, 0.7}};
    const HeadThumbnail t = thumbnail(w);
    EXPECT_EQ(t.cells, w);
    EXPECT_EQ(t.n, 2);
    EXPECT_EQ(t.keys, 2);
    EXPECT_EQ(t.high, 1);  // at least min(1, 4 / 2 keys): 0..1, as the app colours weights of few keys
    EXPECT_EQ(thumbnail(Matrix::Constant(2, 10, 0.1)).high, 0.4);                // 4 / 10 keys
    EXPECT_EQ(thumbnail(Matrix{{0.9, 0.1, 0, 0, 0, 0, 0, 0, 0, 0}}).high, 0.9);  // 99th percentile of 10: the largest
}

TEST(LayerSummary, EachThumbnailCellIsTheLargestWeightOfItsBlock) {
    // 6 queries × 4 keys into 2 × 2: blocks of 3 rows × 2 columns.
    Matrix w(6, 4);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 4; ++j) w(i, j) = 0.01 * (10 * i + j);  // increases along rows and columns
    w(3, 0) = 0.9;                                                  // one strong weight in block (1, 0)
    const HeadThumbnail t = thumbnail(w, 2);
    ASSERT_EQ(t.cells.rows(), 2);
    ASSERT_EQ(t.cells.cols(), 2);
    EXPECT_EQ(t.n, 6);
    EXPECT_EQ(t.keys, 4);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
            double largest = 0;  // by a direct loop over the block
            for (int i = 3 * r; i < 3 * r + 3; ++i)
                for (int j = 2 * c; j < 2 * c + 2; ++j) largest = std::max(largest, w(i, j));
            EXPECT_EQ(t.cells(r, c), largest) << r << "," << c;
        }
    EXPECT_EQ(t.cells(1, 0), 0.9);  // kept, not averaged away

    // Uneven blocks: 5 rows into 2 take rows [0, 2) and [2, 5); one column stays one column.
    Matrix v = Matrix::Zero(5, 1);
    v(1, 0) = 0.4;
    v(4, 0) = 0.6;
    const HeadThumbnail u = thumbnail(v, 2);
    ASSERT_EQ(u.cells.rows(), 2);
    ASSERT_EQ(u.cells.cols(), 1);
    EXPECT_EQ(u.cells(0, 0), 0.4);
    EXPECT_EQ(u.cells(1, 0), 0.6);
}

TEST(LayerSummary, ALargeHeadShrinksToAtMostSixtyFourASide) {
    // 512 × 512 with weight 1 on the diagonal: every diagonal block of 8 × 8 holds a 1, the rest 0.
    const HeadThumbnail t = thumbnail(Matrix::Identity(512, 512));
    ASSERT_EQ(t.cells.rows(), thumbnail_side);
    ASSERT_EQ(t.cells.cols(), thumbnail_side);
    EXPECT_EQ(t.cells, Matrix::Identity(64, 64));
    // 64 cells of 4096 are 1: more than 1%, so the 99th percentile is 1.
    EXPECT_EQ(t.high, 1);
    // A causal-like head: one bright corner, everything else 0.1 (of 1000 keys): the range stops at
    // 0.1, not at the corner's 1.
    Matrix corner = Matrix::Constant(100, 1000, 0.1);
    corner(0, 0) = 1;
    EXPECT_EQ(thumbnail(corner, 10).high, 0.1);
    // Even attention over 100 keys: the range goes to 4 / 100, where 0.01 is a quarter of the way.
    EXPECT_EQ(thumbnail(Matrix::Constant(100, 100, 0.01), 10).high, 0.04);
    EXPECT_EQ(thumbnail(Matrix()).high, 0);
    // Cross-attention shapes: 3 queries × 200 keys → 3 × 64.
    const HeadThumbnail wide = thumbnail(Matrix::Constant(3, 200, 1 / 200.0));
    EXPECT_EQ(wide.cells.rows(), 3);
    EXPECT_EQ(wide.cells.cols(), 64);
    EXPECT_EQ(wide.keys, 200);
}

TEST(LayerSummary, ALayersSummaryIsItsHeadsSummaries) {
    const Session s = worked_example();
    const LayerSummary l = summarize_session(s);
    const Trace t = forward<double>(s.config, s.params);
    ASSERT_EQ(l.heads.size(), 2u);
    ASSERT_EQ(l.thumbnails.size(), 2u);
    for (size_t h = 0; h < 2; ++h) {
        EXPECT_EQ(l.heads[h].mean_entropy, summarize_head(t.heads[h].weights).mean_entropy);
        EXPECT_EQ(l.heads[h].diagonal_share, summarize_head(t.heads[h].weights).diagonal_share);
        EXPECT_EQ(l.thumbnails[h].cells, t.heads[h].weights);  // 2 × 2 is kept as it is
    }
}

TEST(LayerSummary, HeadsSortByTheirSummaries) {
    std::vector<HeadSummary> heads(4);
    heads[0].diagonal_share = 0.2;
    heads[1].diagonal_share = 0.9;
    heads[2].diagonal_share = 0.2;  // a tie with head 0: their own order is kept
    heads[3].diagonal_share = 0.5;
    heads[0].mean_entropy = 3;
    heads[1].mean_entropy = 1;
    heads[2].mean_entropy = 2;
    heads[3].mean_entropy = 0.5;
    EXPECT_EQ(head_order(heads, HeadKey::none), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(head_order(heads, HeadKey::diagonal_share), (std::vector<int>{1, 3, 0, 2}));
    EXPECT_EQ(head_order(heads, HeadKey::diagonal_share, true), (std::vector<int>{0, 2, 3, 1}));
    EXPECT_EQ(head_order(heads, HeadKey::entropy, true), (std::vector<int>{3, 1, 2, 0}));
    EXPECT_EQ(key_value(heads[3], HeadKey::entropy), 0.5);
    EXPECT_EQ(key_value(heads[3], HeadKey::diagonal_share), 0.5);
}

TEST(LayerSummary, TheModelsTopHeadsAcrossLayers) {
    LayerSummary a, b;
    a.heads.resize(3);
    b.heads.resize(2);
    a.heads[0].first_share = 0.1;
    a.heads[1].first_share = 0.8;
    a.heads[2].first_share = 0.3;
    b.heads[0].first_share = 0.9;
    b.heads[1].first_share = 0.2;
    // A layer still being computed (nullptr) is skipped.
    const std::vector<const LayerSummary*> layers = {&a, nullptr, &b};
    EXPECT_EQ(top_heads(layers, HeadKey::first_share, 2), (std::vector<HeadRef>{{2, 0}, {0, 1}}));
    EXPECT_EQ(top_heads(layers, HeadKey::first_share, 1, true), (std::vector<HeadRef>{{0, 0}}));
    EXPECT_EQ(top_heads(layers, HeadKey::first_share, 10).size(), 5u);
    EXPECT_TRUE(top_heads(layers, HeadKey::none, 3).empty());
    EXPECT_TRUE(top_heads(layers, HeadKey::first_share, 0).empty());
}

}  // namespace
}  // namespace attnviz::core
