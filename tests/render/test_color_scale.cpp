// Tests of core/render/color_scale.hpp: the statistics, the ranges of each scaling on known matrices, the
// defaults, and where values fall on the colormap.
#include "core/render/color_scale.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace attnviz::core {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

TEST(ColorScale, StatsSkipMaskedValues) {
    const Matrix m{{-3, 1, -inf}, {2, 0, 0.5}};
    const ValueStats s = value_stats(m, false);
    EXPECT_EQ(s.finite, 5);
    EXPECT_EQ(s.min, -3);
    EXPECT_EQ(s.max, 2);
    EXPECT_EQ(s.max_abs, 3);
    EXPECT_EQ(s.min_positive, 0.5);
    EXPECT_FALSE(s.has_percentiles);
}

TEST(ColorScale, AnEstimateReadsEvenlySpacedCells) {
    // 100×100 values k = 0 … 9999 (row-major storage: k = r·100 + c); 100 samples read every 100th.
    Matrix m(100, 100);
    for (int r = 0; r < 100; ++r)
        for (int c = 0; c < 100; ++c) m(r, c) = r * 100 + c;
    const ValueStats e = estimate_value_stats(m, false, 100);
    EXPECT_EQ(e.finite, 100);
    EXPECT_EQ(e.min, 0);
    EXPECT_EQ(e.max, 9900);  // within the true range [0, 9999]
    EXPECT_EQ(e.min_positive, 100);
    // A matrix no larger than the sample is read whole.
    const ValueStats whole = estimate_value_stats(m, true, 10000);
    EXPECT_EQ(whole.max, 9999);
    EXPECT_EQ(whole.finite, 10000);
    EXPECT_TRUE(whole.has_percentiles);
}

TEST(ColorScale, PercentilesByNearestRank) {
    Matrix m(1, 101);  // 0, 1, …, 100 in a shuffled order
    for (int k = 0; k <= 100; ++k) m(0, k) = (k * 37) % 101;
    const ValueStats s = value_stats(m, true);
    ASSERT_TRUE(s.has_percentiles);
    EXPECT_EQ(s.p_low, 1);
    EXPECT_EQ(s.p_high, 99);
    EXPECT_EQ(s.abs_p_high, 99);
    Matrix neg = -m;
    EXPECT_EQ(value_stats(neg, true).abs_p_high, 99);
    EXPECT_EQ(value_stats(neg, true).p_low, -99);
}

TEST(ColorScale, OneOutlierDoesNotWashOutTheDivergingPercentileRange) {
    Matrix m(40, 40);
    for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = (k % 2 ? 1.0 : -1.0) * (0.5 + 0.5 * (k % 5) / 4.0);
    m(7, 3) = 1e6;
    const ValueStats s = value_stats(m, true);
    const ColorRange automatic = color_range(ColorScale::diverging, Scaling::automatic, s);
    EXPECT_EQ(automatic.lo, -1e6);
    EXPECT_EQ(automatic.hi, 1e6);
    const ColorRange clipped = color_range(ColorScale::diverging, Scaling::percentile, s);
    EXPECT_EQ(clipped.lo, -1.0);
    EXPECT_EQ(clipped.hi, 1.0);
    // On the clipped range a value of 0.5 is a quarter of the way from the middle; the outlier is at the end.
    EXPECT_FLOAT_EQ(clipped.position(0.5), 0.75f);
    EXPECT_FLOAT_EQ(clipped.position(1e6), 1.0f);
    EXPECT_NEAR(automatic.position(0.5), 0.5, 1e-6);  // washed out: indistinguishable from 0
    // Percentile is the user's choice, never the default (see default_scaling).
    EXPECT_EQ(default_scaling(ColorScale::diverging, 40), Scaling::automatic);
}

TEST(ColorScale, WeightsRangesOfEachScaling) {
    // Causal weights of 3 tokens: row 0 all on key 0.
    const Matrix w{{1, 0, 0}, {0.25, 0.75, 0}, {0.001, 0.009, 0.99}};
    const ValueStats s = value_stats(w, true);
    EXPECT_EQ(color_range(ColorScale::unit_interval, Scaling::fixed, s), (ColorRange{0, 1, false}));
    EXPECT_EQ(color_range(ColorScale::unit_interval, Scaling::automatic, s), (ColorRange{0, 1, false}));
    const ColorRange p = color_range(ColorScale::unit_interval, Scaling::percentile, s);
    EXPECT_EQ(p.lo, 0);  // nearest rank of 9 values: the 1st and 99th percentiles are the extremes
    EXPECT_EQ(p.hi, 1);
    const ColorRange log = color_range(ColorScale::unit_interval, Scaling::log, s);
    EXPECT_TRUE(log.log);
    EXPECT_EQ(log.lo, 0.001);  // the smallest positive weight, above 10⁻⁶ of the largest
    EXPECT_EQ(log.hi, 1);
    EXPECT_FLOAT_EQ(log.position(0.001), 0.0f);
    EXPECT_FLOAT_EQ(log.position(0.031622776601683794), 0.5f);  // 10^-1.5: halfway in log
    EXPECT_FLOAT_EQ(log.position(1), 1.0f);
    EXPECT_FLOAT_EQ(log.position(0), 0.0f);  // a weight of 0 sits at the bottom
    // A floor of 10⁻⁶ of the largest keeps one tiny weight from stretching the scale.
    const Matrix tiny{{1e-30, 0.5}, {0.2, 0.3}};
    EXPECT_DOUBLE_EQ(color_range(ColorScale::unit_interval, Scaling::log, value_stats(tiny, false)).lo, 0.5e-6);
}

TEST(ColorScale, LongUniformWeightsAreNotOneFlatColour) {
    // 512 keys, every weight near 1/512: on 0..1 they all sit in the bottom 0.2 % of the colormap.
    Matrix w(4, 512);
    for (Eigen::Index r = 0; r < 4; ++r)
        for (Eigen::Index c = 0; c < 512; ++c) w(r, c) = (1.0 + 0.5 * std::sin(0.1 * c + r)) / 512;
    const ValueStats s = value_stats(w, true);
    EXPECT_EQ(default_scaling(ColorScale::unit_interval, 512), Scaling::automatic);
    const ColorRange fixed = color_range(ColorScale::unit_interval, Scaling::fixed, s);
    const ColorRange automatic = color_range(ColorScale::unit_interval, Scaling::automatic, s);
    const ColorRange clipped = color_range(ColorScale::unit_interval, Scaling::percentile, s);
    EXPECT_LT(fixed.position(s.max) - fixed.position(s.min), 0.01f);
    EXPECT_FLOAT_EQ(automatic.position(s.min), 0.0f);
    EXPECT_FLOAT_EQ(automatic.position(s.max), 1.0f);
    EXPECT_GT(clipped.position(s.max) - clipped.position(s.min), 0.99f);
    // One weight far above the rest: min..max leaves every other weight in the first tenth of the
    // colormap; the percentile range still spreads them over most of it.
    w(0, 0) = 0.9;
    const ValueStats spiked = value_stats(w, true);
    const ColorRange a = color_range(ColorScale::unit_interval, Scaling::automatic, spiked);
    const ColorRange p = color_range(ColorScale::unit_interval, Scaling::percentile, spiked);
    EXPECT_LT(a.position(1.5 / 512), 0.01f);
    EXPECT_GT(p.position(1.4 / 512) - p.position(0.6 / 512), 0.7f);
}

TEST(ColorScale, DefaultsAndWhatEachMatrixOffers) {
    EXPECT_EQ(default_scaling(ColorScale::unit_interval, 8), Scaling::fixed);
    EXPECT_EQ(default_scaling(ColorScale::unit_interval, 15), Scaling::fixed);
    EXPECT_EQ(default_scaling(ColorScale::unit_interval, 16), Scaling::automatic);
    EXPECT_EQ(default_scaling(ColorScale::diverging, 2), Scaling::automatic);
    EXPECT_EQ(default_scaling(ColorScale::diverging, 4096), Scaling::automatic);
    for (Scaling s : all_scalings) EXPECT_TRUE(offers(ColorScale::unit_interval, s));
    EXPECT_FALSE(offers(ColorScale::diverging, Scaling::fixed));
    EXPECT_FALSE(offers(ColorScale::diverging, Scaling::log));
    // What is not offered falls back to automatic.
    const ValueStats s = value_stats(Matrix{{-2, 1}}, false);
    EXPECT_EQ(color_range(ColorScale::diverging, Scaling::log, s), (ColorRange{-2, 2, false}));
}

TEST(ColorScale, DegenerateMatricesStillGetARange) {
    const ColorRange zeros = color_range(ColorScale::diverging, Scaling::automatic,
                                         value_stats(Matrix::Zero(3, 3), true));
    EXPECT_EQ(zeros, (ColorRange{-1, 1, false}));
    const Matrix uniform = Matrix::Constant(2, 4, 0.25);
    const ColorRange u = color_range(ColorScale::unit_interval, Scaling::automatic, value_stats(uniform, true));
    EXPECT_LT(u.lo, u.hi);
    EXPECT_EQ(u.hi, 0.25);
    const Matrix masked{{-inf, -inf}};
    EXPECT_EQ(color_range(ColorScale::unit_interval, Scaling::log, value_stats(masked, true)),
              (ColorRange{0, 1, false}));
}

TEST(ColorScale, LargeMatricesEstimatePercentilesFromASample) {
    Matrix m(1000, 1000);  // the values k / 10⁶, k = 0 … 999999
    for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<double>(k) / 1e6;
    const ValueStats s = value_stats(m, true);
    EXPECT_NEAR(s.p_low, 0.01, 1e-3);
    EXPECT_NEAR(s.p_high, 0.99, 1e-3);
    EXPECT_EQ(s.max, 0.999999);  // the extremes are exact
}

TEST(ColorScale, HeadsSideBySideShareOneRange) {
    const ValueStats a = value_stats(Matrix{{0.1, 0.9}}, true), b = value_stats(Matrix{{0.3, 0.7}, {0.05, 0.95}}, true);
    const ValueStats both = combine(a, b);
    EXPECT_EQ(both.finite, 6);
    EXPECT_EQ(both.min, 0.05);
    EXPECT_EQ(both.max, 0.95);
    EXPECT_EQ(both.min_positive, 0.05);
    EXPECT_TRUE(both.has_percentiles);
    EXPECT_EQ(combine(ValueStats{}, a).max, 0.9);
}

TEST(ColorScale, AnOutlyingLargestWeightLowersTheTopToThe99thPercentile) {
    // 100 weights of 0.005, 100 of 0.01 and one of 1: the 99th percentile (nearest rank, the 199th
    // of 201 values) is 0.01, under half of 1.
    Matrix w(201, 1);
    for (int k = 0; k < 201; ++k) w(k, 0) = k < 100 ? 0.005 : 0.01;
    w(200, 0) = 1;
    ValueStats st = value_stats(w, true);
    EXPECT_TRUE(max_is_outlier(st));
    EXPECT_EQ(auto_outlier_range(st), (ColorRange{0.005, 0.01, false}));
    // Four at the top (2%): the percentile reaches it, min..max.
    w(196, 0) = w(197, 0) = w(198, 0) = 1;
    st = value_stats(w, true);
    EXPECT_FALSE(max_is_outlier(st));
    EXPECT_EQ(auto_outlier_range(st), (ColorRange{0.005, 1, false}));
    // Without percentiles nothing is judged an outlier; nor when the percentile is the minimum
    // (one spike over uniform weights: clipping there would leave an empty range).
    EXPECT_FALSE(max_is_outlier(value_stats(w, false)));
    Matrix spike = Matrix::Constant(201, 1, 0.01);
    spike(0, 0) = 1;
    EXPECT_FALSE(max_is_outlier(value_stats(spike, true)));
}

TEST(ColorScale, OnlyWeightsOnTheirDefaultAutomaticScalingClipAnOutlier) {
    EXPECT_TRUE(clips_outliers(ColorScale::unit_interval, false, auto_weights_from_keys));
    EXPECT_FALSE(clips_outliers(ColorScale::unit_interval, false, auto_weights_from_keys - 1));  // fixed 0..1
    EXPECT_FALSE(clips_outliers(ColorScale::unit_interval, true, 512));  // a scaling chosen, "auto" included
    EXPECT_FALSE(clips_outliers(ColorScale::diverging, false, 512));
}

}  // namespace
}  // namespace attnviz::core
