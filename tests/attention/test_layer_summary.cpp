// Tests of core/attention/layer_summary.hpp on hand-made weights: thumbnails keep each block's mean weight
// (uniform heads look uniform, one-hot heads sharp, at every n), heads sort and the model's top
// heads are found by their summaries.
#include "core/attention/layer_summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention/presets.hpp"
#include "core/base/splitmix.hpp"
#include "core/render/color_scale.hpp"

namespace attnviz::core {
namespace {

TEST(LayerSummary, ASmallMatrixIsItsOwnThumbnail) {
    const Matrix w{{0.9, 0.1}, {0.3, 0.7}};
    const HeadThumbnail t = thumbnail(w);
    EXPECT_EQ(t.cells, w);
    EXPECT_EQ(t.n, 2);
    EXPECT_EQ(t.keys, 2);
    EXPECT_EQ(t.high, 1);  // at least min(1, 8 / 2 keys): 0..1, as the app colours weights of few keys
    EXPECT_EQ(thumbnail(Matrix::Constant(2, 10, 0.1)).high, 0.8);                // 8 / 10 keys
    EXPECT_EQ(thumbnail(Matrix{{0.9, 0.1, 0, 0, 0, 0, 0, 0, 0, 0}}).high, 0.9);  // 99th percentile of 10: the largest
}

TEST(LayerSummary, EachThumbnailCellIsTheMeanWeightOfItsBlock) {
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
            double sum = 0;  // by a direct loop over the block
            for (int i = 3 * r; i < 3 * r + 3; ++i)
                for (int j = 2 * c; j < 2 * c + 2; ++j) sum += w(i, j);
            EXPECT_NEAR(t.cells(r, c), sum / 6, 1e-15) << r << "," << c;
        }
    EXPECT_GT(t.cells(1, 0), t.cells(1, 1));  // the strong weight lifts its block above its neighbour

    // Uneven blocks: 5 rows into 2 take rows [0, 2) and [2, 5); one column stays one column.
    Matrix v = Matrix::Zero(5, 1);
    v(1, 0) = 0.4;
    v(4, 0) = 0.6;
    const HeadThumbnail u = thumbnail(v, 2);
    ASSERT_EQ(u.cells.rows(), 2);
    ASSERT_EQ(u.cells.cols(), 1);
    EXPECT_DOUBLE_EQ(u.cells(0, 0), 0.4 / 2);
    EXPECT_DOUBLE_EQ(u.cells(1, 0), 0.6 / 3);
}

TEST(LayerSummary, ALargeHeadShrinksToAtMostSixtyFourASide) {
    // 512 × 512 with weight 1 on the diagonal: every diagonal block of 8 × 8 holds eight 1s (its mean
    // is 1/8), the rest 0.
    const HeadThumbnail t = thumbnail(Matrix::Identity(512, 512));
    ASSERT_EQ(t.cells.rows(), thumbnail_side);
    ASSERT_EQ(t.cells.cols(), thumbnail_side);
    EXPECT_EQ(t.cells, Matrix::Identity(64, 64) / 8);
    // 64 cells of 4096 are 1/8: more than 1%, so the 99th percentile is 1/8.
    EXPECT_EQ(t.high, 0.125);
    // A causal-like head: one bright corner, everything else 0.1 (of 1000 keys): the range stops at
    // 0.1, not at the corner's block.
    Matrix corner = Matrix::Constant(100, 1000, 0.1);
    corner(0, 0) = 1;
    EXPECT_NEAR(thumbnail(corner, 10).high, 0.1, 1e-12);
    // Even attention over 100 keys: the range goes to 8 / 100, where 0.01 is an eighth of the way.
    EXPECT_EQ(thumbnail(Matrix::Constant(100, 100, 0.01), 10).high, 0.08);
    EXPECT_EQ(thumbnail(Matrix()).high, 0);
    // Cross-attention shapes: 3 queries × 200 keys → 3 × 64.
    const HeadThumbnail wide = thumbnail(Matrix::Constant(3, 200, 1 / 200.0));
    EXPECT_EQ(wide.cells.rows(), 3);
    EXPECT_EQ(wide.cells.cols(), 64);
    EXPECT_EQ(wide.keys, 200);
}

// Where each cell of a thumbnail falls on its colour range (0 to its high), as the model view draws it.
std::vector<double> positions(const HeadThumbnail& t) {
    const ColorRange range{0, t.high, false};
    std::vector<double> out;
    for (Eigen::Index k = 0; k < t.cells.size(); ++k) out.push_back(range.position(t.cells.data()[k]));
    std::sort(out.begin(), out.end());
    return out;
}

// A nearly uniform head (softmax of scores with a small spread: entropy within 0.25 nats of ln n,
// as the heads of a long sequence often are) looks uniform at every n: its cells take about one
// colour, low on the colormap. Each cell the largest weight of its block, against a top at the 99th
// percentile, read as mostly yellow at n = 512 (the largest of 64 weights near 1/n lies far above it).
TEST(LayerSummary, ANearlyUniformHeadLooksUniformAtEveryN) {
    for (const int n : {16, 40, 64, 100, 512, 1000}) {
        Matrix w(n, n);
        SplitMix64 draw(1);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) w(i, j) = std::exp(0.7 * draw.normal());
            w.row(i) /= w.row(i).sum();
        }
        const HeadSummary summary = summarize_head(w);
        ASSERT_GT(summary.mean_entropy, std::log(n) - 0.3) << n;  // nearly uniform indeed
        const std::vector<double> p = positions(thumbnail(w));
        const double p5 = p[p.size() * 5 / 100], p50 = p[p.size() / 2], p95 = p[p.size() * 95 / 100];
        EXPECT_LT(p95 - p5, 0.35) << "n = " << n << ": its cells spread over much of the colormap";
        EXPECT_LT(p50, 0.2) << "n = " << n << ": mostly high on the colormap (saturated)";
        if (n >= 8 * thumbnail_side) {
            EXPECT_LT(p95 - p5, 0.1) << "n = " << n << ": 8×8 blocks or more pooled, it is one colour";
        }
    }
    // Exactly uniform: every cell the same colour, an eighth of the way up, at any n.
    for (const int n : {10, 512, 1000}) {
        const std::vector<double> p = positions(thumbnail(Matrix::Constant(n, n, 1.0 / n)));
        EXPECT_NEAR(p.front(), 1 / even_headroom, 1e-9) << n;
        EXPECT_NEAR(p.back(), 1 / even_headroom, 1e-9) << n;
    }
}

// One-hot heads stay sharp at every n: the cells holding the attention take the top colour and all
// others the bottom one, on the diagonal (each token on itself) and on the first token.
TEST(LayerSummary, AOneHotHeadLooksSharpAtEveryN) {
    for (const int n : {16, 100, 512, 1000}) {
        const int side = std::min(n, thumbnail_side);
        const auto block = [&](int k) { return static_cast<int>(static_cast<long>(k) * side / n); };
        Matrix diagonal = Matrix::Identity(n, n), first = Matrix::Zero(n, n);
        first.col(0).setOnes();
        for (const bool on_first : {false, true}) {
            const HeadThumbnail t = thumbnail(on_first ? first : diagonal);
            const ColorRange range{0, t.high, false};
            for (int r = 0; r < side; ++r)
                for (int c = 0; c < side; ++c) {
                    // A block holds attention when some query of it attends to a key of it.
                    bool holds = false;
                    for (int i = 0; i < n && !holds; ++i) holds = block(i) == r && block(on_first ? 0 : i) == c;
                    const float at = range.position(t.cells(r, c));
                    if (holds)
                        EXPECT_GT(at, 0.45f)
                            << "n " << n << (on_first ? " first" : " diagonal") << " " << r << "," << c;
                    else
                        EXPECT_EQ(at, 0.0f) << "n " << n << (on_first ? " first" : " diagonal") << " " << r << "," << c;
                }
        }
    }
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
        EXPECT_EQ(l.sinks[h].key, sink(t, static_cast<int>(h)).key);
        EXPECT_EQ(l.sinks[h].share, sink(t, static_cast<int>(h)).share);
        EXPECT_EQ(l.norm_thumbnails[h].cells,
                  norm_weighted_rows(norm_weighted(s.config, s.params, t, static_cast<int>(h))));
    }
    // Weights alone have sinks but nothing to weigh them by.
    const LayerSummary alone = summarize_layer(t);
    EXPECT_EQ(alone.sinks.size(), 2u);
    EXPECT_TRUE(alone.norm_thumbnails.empty());
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
