// Tests of core/attention/head_view.hpp on hand-made weights whose answers are worked out in the comments,
// and against a direct enumeration of every line on random weights.
#include "core/attention/head_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

namespace attnviz::core {
namespace {

// Rows sum to 1. Strongest first: 0.6 (1,1); 0.5 (0,0), (2,2); 0.3 (0,1), (1,2); 0.25 (2,0), (2,1);
// 0.2 (0,2); 0.1 (1,0).
const Matrix w1{{0.5, 0.3, 0.2}, {0.1, 0.6, 0.3}, {0.25, 0.25, 0.5}};
// A causal head.
const Matrix w2{{1, 0, 0}, {0.5, 0.5, 0}, {0.2, 0.3, 0.5}};
// Cross-attention's shape: 3 queries × 5 keys.
const Matrix rect{{0.1, 0.2, 0.3, 0.4, 0.0}, {0.5, 0, 0, 0, 0.5}, {0.2, 0.2, 0.2, 0.2, 0.2}};

std::vector<std::tuple<int, int, int>> cells(const HeadLines& l) {
    std::vector<std::tuple<int, int, int>> c;
    for (const HeadLine& line : l.lines) c.emplace_back(line.head, line.query, line.key);
    return c;
}

void expect_accounted(const HeadLines& l) {
    EXPECT_EQ(l.considered, l.lines.size() + l.below_min + l.beyond_top_k + l.over_bound);
}

TEST(HeadLines, EveryCellIsALineWithItsWeightWeakestFirst) {
    const Matrix* heads[] = {&w1};
    const HeadLines l = head_lines(heads, {});
    ASSERT_EQ(l.lines.size(), 9u);
    EXPECT_EQ(l.considered, 9u);
    EXPECT_EQ(l.lines.front(), (HeadLine{0, 1, 0, 0.1}));
    EXPECT_EQ(l.lines.back(), (HeadLine{0, 1, 1, 0.6}));
    for (const HeadLine& line : l.lines) EXPECT_EQ(line.weight, w1(line.query, line.key));
    for (size_t k = 1; k < l.lines.size(); ++k) EXPECT_LE(l.lines[k - 1].weight, l.lines[k].weight);
    expect_accounted(l);
}

TEST(HeadLines, TheThresholdKeepsWeightsAtLeastIt) {
    const Matrix* heads[] = {&w1};
    LineOptions o;
    o.min_weight = 0.25;  // 0.25 stays (≥), 0.2 and 0.1 go
    const HeadLines l = head_lines(heads, o);
    EXPECT_EQ(l.lines.size(), 7u);
    EXPECT_EQ(l.below_min, 2u);
    for (const HeadLine& line : l.lines) EXPECT_GE(line.weight, 0.25);
    expect_accounted(l);
}

TEST(HeadLines, TopKKeepsEachQuerysStrongestKeys) {
    const Matrix* heads[] = {&w1};
    LineOptions o;
    o.top_k = 1;
    HeadLines l = head_lines(heads, o);
    // The diagonal is each row's largest; of the two 0.5, (0, 0) is the stronger (lower query).
    using C = std::vector<std::tuple<int, int, int>>;
    EXPECT_EQ(cells(l), (C{{0, 2, 2}, {0, 0, 0}, {0, 1, 1}}));
    EXPECT_EQ(l.beyond_top_k, 6u);
    expect_accounted(l);
    // Row 2 ties 0.25 and 0.25 for its second place: the lower key wins.
    o.top_k = 2;
    l = head_lines(heads, o);
    EXPECT_EQ(l.lines.size(), 6u);
    EXPECT_NE(std::find(l.lines.begin(), l.lines.end(), HeadLine{0, 2, 0, 0.25}), l.lines.end());
    EXPECT_EQ(std::find(l.lines.begin(), l.lines.end(), HeadLine{0, 2, 1, 0.25}), l.lines.end());
    // With a threshold first: row 0 keeps 0.5 only (0.3 and 0.2 are below 0.4), so top-2 drops nothing
    // there; row 1 keeps 0.6; row 2 keeps 0.5.
    o.min_weight = 0.4;
    l = head_lines(heads, o);
    EXPECT_EQ(cells(l), (C{{0, 2, 2}, {0, 0, 0}, {0, 1, 1}}));
    EXPECT_EQ(l.below_min, 6u);
    EXPECT_EQ(l.beyond_top_k, 0u);
    expect_accounted(l);
    // k at least the number of keys: every line.
    o = {};
    o.top_k = 3;
    EXPECT_EQ(head_lines(heads, o).lines.size(), 9u);
}

TEST(HeadLines, TheBoundKeepsTheStrongestLines) {
    const Matrix* heads[] = {&w1};
    LineOptions o;
    o.max_lines = 3;  // 0.6, then the two 0.5
    HeadLines l = head_lines(heads, o);
    using C = std::vector<std::tuple<int, int, int>>;
    EXPECT_EQ(cells(l), (C{{0, 2, 2}, {0, 0, 0}, {0, 1, 1}}));  // of equal weights the lower query is stronger
    EXPECT_EQ(l.over_bound, 6u);
    expect_accounted(l);
    o.max_lines = 2;  // 0.6 and (0, 0): the tie goes to the lower query
    EXPECT_EQ(cells(head_lines(heads, o)), (C{{0, 0, 0}, {0, 1, 1}}));
    o.max_lines = 0;
    l = head_lines(heads, o);
    EXPECT_TRUE(l.lines.empty());
    EXPECT_EQ(l.over_bound, 9u);
}

// The lines of `heads` for `o` by enumerating every cell: isolation, then at least min_weight, then
// fewer than top_k stronger keys in its row at least min_weight (equal weights: the lower key is
// stronger), then the strongest max_lines (equal weights: the lower head, query, key).
HeadLines enumerated(const std::vector<const Matrix*>& heads, const LineOptions& o) {
    HeadLines l;
    const bool isolate = !o.queries.empty() || !o.keys.empty();
    const auto has = [](const std::vector<int>& v, int t) { return std::find(v.begin(), v.end(), t) != v.end(); };
    for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
        if (!heads[h]) continue;
        const Matrix& w = *heads[h];
        for (int i = 0; i < w.rows(); ++i)
            for (int j = 0; j < w.cols(); ++j) {
                if (isolate && !has(o.queries, i) && !has(o.keys, j)) continue;
                ++l.considered;
                const double x = w(i, j);
                if (x < o.min_weight) {
                    ++l.below_min;
                    continue;
                }
                int ahead = 0;
                for (int k = 0; k < w.cols(); ++k)
                    ahead += w(i, k) >= o.min_weight && (w(i, k) > x || (w(i, k) == x && k < j));
                if (o.top_k > 0 && ahead >= o.top_k)
                    ++l.beyond_top_k;
                else
                    l.lines.push_back({h, i, j, x});
            }
    }
    std::sort(l.lines.begin(), l.lines.end(), [](const HeadLine& a, const HeadLine& b) {
        return a.weight != b.weight ? a.weight > b.weight
                                    : std::tie(a.head, a.query, a.key) < std::tie(b.head, b.query, b.key);
    });
    if (l.lines.size() > o.max_lines) {
        l.over_bound = l.lines.size() - o.max_lines;
        l.lines.resize(o.max_lines);
    }
    std::reverse(l.lines.begin(), l.lines.end());  // weakest first
    return l;
}

TEST(HeadLines, OnRandomWeightsTheyAreTheStrongestOfAnEnumeration) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Matrix> w(4, Matrix(40, 60));
    for (size_t h = 0; h < w.size(); ++h) {
        Matrix& m = w[h];
        for (Eigen::Index i = 0; i < m.rows(); ++i)
            for (Eigen::Index j = 0; j < m.cols(); ++j)
                // Head 3 in few levels: many equal weights in a row, and across rows and heads.
                m(i, j) = h == 3 ? std::round(u(rng) * 4) : u(rng) * u(rng) * u(rng);
        for (Eigen::Index i = 0; i < m.rows(); ++i) m.row(i) /= m.row(i).sum();
    }
    const std::vector<const Matrix*> heads = {&w[0], nullptr, &w[2], &w[3]};  // head 1 left out
    struct Case {
        double min_weight;
        int top_k;
        size_t max_lines;
        std::vector<int> queries, keys;
    };
    const Case cases[] = {
        {0.01, 12, 500, {}, {}},
        {0, 0, 300, {}, {}},  // every line: more than the lines kept at once before the bar rises
        {0, 0, 0, {}, {}},
        {0.005, 5, 40, {5}, {3, 17}},  // isolated keys are ranked within their rows
        {0.01, 12, 100000, {}, {}},
        {0.02, 1, 7, {}, {59}},
    };
    for (const Case& c : cases) {
        LineOptions o;
        o.min_weight = c.min_weight;
        o.top_k = c.top_k;
        o.max_lines = c.max_lines;
        o.queries = c.queries;
        o.keys = c.keys;
        const HeadLines expected = enumerated(heads, o);
        const HeadLines l = head_lines(heads, o);
        const std::string what = "min " + std::to_string(c.min_weight) + ", top " + std::to_string(c.top_k) +
                                 ", bound " + std::to_string(c.max_lines);
        EXPECT_EQ(l.considered, expected.considered) << what;
        EXPECT_EQ(l.below_min, expected.below_min) << what;
        EXPECT_EQ(l.beyond_top_k, expected.beyond_top_k) << what;
        EXPECT_EQ(l.over_bound, expected.over_bound) << what;
        EXPECT_EQ(l.lines, expected.lines) << what;
        expect_accounted(l);
    }
    // The cases test what they mean to: the bound drops lines where it is small.
    LineOptions every;
    every.max_lines = 300;
    EXPECT_EQ(head_lines(heads, every).over_bound, 3u * 40 * 60 - 300);
}

TEST(HeadLines, IsolationKeepsTheLinesOfTheChosenTokens) {
    const Matrix* heads[] = {&w1, &w2};
    LineOptions o;
    o.queries = {1};
    HeadLines l = head_lines(heads, o);
    EXPECT_EQ(l.considered, 6u);  // row 1 of each head
    for (const HeadLine& line : l.lines) EXPECT_EQ(line.query, 1);
    EXPECT_EQ(l.lines.size(), 6u);
    // Query 1 or key 0: row 1 (3 lines) and key 0 of rows 0 and 2 (2 lines) per head.
    o.keys = {0};
    l = head_lines(heads, o);
    EXPECT_EQ(l.considered, 10u);
    for (const HeadLine& line : l.lines) EXPECT_TRUE(line.query == 1 || line.key == 0);
    expect_accounted(l);
    // Top-k still ranks a key within its whole row: key 2 is the strongest of row 2 only (w1).
    o = {};
    o.keys = {2};
    o.top_k = 1;
    const Matrix* first[] = {&w1};
    l = head_lines(first, o);
    using C = std::vector<std::tuple<int, int, int>>;
    EXPECT_EQ(cells(l), (C{{0, 2, 2}}));
    EXPECT_EQ(l.beyond_top_k, 2u);
    expect_accounted(l);
}

TEST(HeadLines, TokensOutOfRangeHaveNoLines) {
    const Matrix* heads[] = {&w1};
    LineOptions o;
    o.queries = {7};
    o.keys = {-1};
    HeadLines l = head_lines(heads, o);  // isolated to tokens that do not exist: nothing
    EXPECT_TRUE(l.lines.empty());
    EXPECT_EQ(l.considered, 0u);
    o.queries = {7, 2};  // the one that exists keeps its lines
    l = head_lines(heads, o);
    EXPECT_EQ(l.lines.size(), 3u);
}

TEST(HeadLines, RectangularWeightsAndHeadsLeftOut) {
    const Matrix* heads[] = {nullptr, &rect};
    HeadLines l = head_lines(heads, {});
    EXPECT_EQ(l.considered, 15u);
    for (const HeadLine& line : l.lines) {
        EXPECT_EQ(line.head, 1);
        EXPECT_EQ(line.weight, rect(line.query, line.key));
    }
    LineOptions o;
    o.keys = {4};  // a key beyond the number of queries
    o.min_weight = 0.1;
    l = head_lines(heads, o);
    using C = std::vector<std::tuple<int, int, int>>;
    EXPECT_EQ(cells(l), (C{{1, 2, 4}, {1, 1, 4}}));  // 0.2 then 0.5; (0, 4) is 0
    EXPECT_EQ(l.below_min, 1u);
    // Row 2's five equal weights: top-2 keeps keys 0 and 1.
    o = {};
    o.queries = {2};
    o.top_k = 2;
    l = head_lines(heads, o);
    EXPECT_EQ(cells(l), (C{{1, 2, 1}, {1, 2, 0}}));
    const Matrix* none[] = {nullptr, nullptr};
    EXPECT_TRUE(head_lines(none, {}).lines.empty());
}

TEST(Selection, SummedAttentionOfTwoQueriesIsTheSumOfTheirRows) {
    const int two[] = {0, 2};
    const Result<Eigen::VectorXd> sum = attention_of_queries(w1, two, Aggregate::sum);
    ASSERT_TRUE(sum) << sum.problems[0].str();
    ASSERT_EQ(sum.value->size(), 3);
    // [0.5 + 0.25, 0.3 + 0.25, 0.2 + 0.5]
    EXPECT_DOUBLE_EQ((*sum.value)(0), 0.75);
    EXPECT_DOUBLE_EQ((*sum.value)(1), 0.55);
    EXPECT_DOUBLE_EQ((*sum.value)(2), 0.7);
    EXPECT_NEAR(sum.value->sum(), 2, 1e-15);  // two rows of 1
    const Result<Eigen::VectorXd> mean = attention_of_queries(w1, two, Aggregate::mean);
    ASSERT_TRUE(mean);
    for (int j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ((*mean.value)(j), (*sum.value)(j) / 2);
    // One query: its row.
    const int one[] = {1};
    EXPECT_EQ(*attention_of_queries(w1, one, Aggregate::sum).value, Eigen::VectorXd(w1.row(1).transpose()));
}

TEST(Selection, KeysGiveTheShareOfEachQuerysAttention) {
    const int two[] = {1, 2};
    const Result<Eigen::VectorXd> sum = attention_to_keys(w1, two, Aggregate::sum);
    ASSERT_TRUE(sum);
    // Rows' weights on keys 1 and 2: [0.3 + 0.2, 0.6 + 0.3, 0.25 + 0.5]
    EXPECT_DOUBLE_EQ((*sum.value)(0), 0.5);
    EXPECT_DOUBLE_EQ((*sum.value)(1), 0.9);
    EXPECT_DOUBLE_EQ((*sum.value)(2), 0.75);
    const Result<Eigen::VectorXd> mean = attention_to_keys(w1, two, Aggregate::mean);
    for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ((*mean.value)(i), (*sum.value)(i) / 2);
}

TEST(Selection, OverHeadsTheMeanOfTheHeadsGiven) {
    const int two[] = {0, 2};
    const Matrix* heads[] = {&w1, nullptr, &w2};
    const Result<Eigen::VectorXd> sum = attention_of_queries(heads, two, Aggregate::sum);
    ASSERT_TRUE(sum);
    // w1: [0.75, 0.55, 0.7]; w2: [1.2, 0.3, 0.5]; their mean:
    EXPECT_DOUBLE_EQ((*sum.value)(0), 0.975);
    EXPECT_DOUBLE_EQ((*sum.value)(1), 0.425);
    EXPECT_DOUBLE_EQ((*sum.value)(2), 0.6);
    const Result<Eigen::VectorXd> mean = attention_of_queries(heads, two, Aggregate::mean);
    for (int j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ((*mean.value)(j), (*sum.value)(j) / 2);
    const int key[] = {0};
    // Key 0's column: w1 [0.5, 0.1, 0.25], w2 [1, 0.5, 0.2].
    const Result<Eigen::VectorXd> to = attention_to_keys(heads, key, Aggregate::sum);
    ASSERT_TRUE(to);
    EXPECT_DOUBLE_EQ((*to.value)(0), 0.75);
    EXPECT_DOUBLE_EQ((*to.value)(1), 0.3);
    EXPECT_DOUBLE_EQ((*to.value)(2), 0.225);
    const Matrix* none[] = {nullptr};
    EXPECT_FALSE(attention_of_queries(none, two, Aggregate::sum));
    const Matrix* mixed[] = {&w1, &rect};
    const Result<Eigen::VectorXd> refused = attention_of_queries(mixed, two, Aggregate::sum);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.problems[0].path, "heads[1]");
}

TEST(Selection, RectangularWeights) {
    const int queries[] = {0, 1};
    const Result<Eigen::VectorXd> over_keys = attention_of_queries(rect, queries, Aggregate::sum);
    ASSERT_TRUE(over_keys);
    ASSERT_EQ(over_keys.value->size(), 5);  // one value per key
    const double expected[] = {0.6, 0.2, 0.3, 0.4, 0.5};
    for (int j = 0; j < 5; ++j) EXPECT_DOUBLE_EQ((*over_keys.value)(j), expected[j]);
    const int keys[] = {4, 3};
    const Result<Eigen::VectorXd> to = attention_to_keys(rect, keys, Aggregate::sum);
    ASSERT_TRUE(to);
    ASSERT_EQ(to.value->size(), 3);  // one value per query
    EXPECT_DOUBLE_EQ((*to.value)(0), 0.4);
    EXPECT_DOUBLE_EQ((*to.value)(1), 0.5);
    EXPECT_DOUBLE_EQ((*to.value)(2), 0.4);
}

TEST(Selection, EmptySelectionIsZero) {
    const std::span<const int> none;
    for (Aggregate how : {Aggregate::sum, Aggregate::mean}) {
        const Result<Eigen::VectorXd> q = attention_of_queries(rect, none, how);
        ASSERT_TRUE(q);
        EXPECT_EQ(*q.value, Eigen::VectorXd::Zero(5));
        const Result<Eigen::VectorXd> k = attention_to_keys(rect, none, how);
        ASSERT_TRUE(k);
        EXPECT_EQ(*k.value, Eigen::VectorXd::Zero(3));
    }
}

TEST(Selection, TokensOutOfRangeOrTwiceAreRefused) {
    const int beyond[] = {0, 3};  // 3 queries: 0..2
    Result<Eigen::VectorXd> r = attention_of_queries(rect, beyond, Aggregate::sum);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.problems[0].str(), "query: 3 is out of range: there are 3");
    const int negative[] = {-1};
    EXPECT_FALSE(attention_of_queries(rect, negative, Aggregate::mean));
    const int key4[] = {4};  // a key that exists (5 keys) though no such query does
    EXPECT_TRUE(attention_to_keys(rect, key4, Aggregate::sum));
    EXPECT_FALSE(attention_of_queries(rect, key4, Aggregate::sum));
    const int key5[] = {5};
    EXPECT_EQ(attention_to_keys(rect, key5, Aggregate::sum).problems[0].str(), "key: 5 is out of range: there are 5");
    const int twice[] = {1, 1};
    r = attention_of_queries(rect, twice, Aggregate::sum);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.problems[0].str(), "query: 1 is selected twice");
}

TEST(Ranking, TopKeysAndQueries) {
    using R = std::vector<Ranked>;
    EXPECT_EQ(top_keys(w1, 0, 2), (R{{0, 0.5}, {1, 0.3}}));
    EXPECT_EQ(top_keys(w1, 2, 2), (R{{2, 0.5}, {0, 0.25}}));           // the tie: the lower key
    EXPECT_EQ(top_keys(w1, 1, 0), (R{{1, 0.6}, {2, 0.3}, {0, 0.1}}));  // k ≤ 0: all, sorted
    EXPECT_EQ(top_keys(w1, 1, 10), (R{{1, 0.6}, {2, 0.3}, {0, 0.1}}));
    EXPECT_EQ(top_queries(w1, 0, 2), (R{{0, 0.5}, {2, 0.25}}));  // column 0: 0.5, 0.1, 0.25
    EXPECT_EQ(top_keys(rect, 1, 2), (R{{0, 0.5}, {4, 0.5}}));
    EXPECT_TRUE(top_keys(w1, 3, 2).empty());
    EXPECT_TRUE(top_queries(rect, 5, 2).empty());
    EXPECT_EQ(top_queries(rect, 4, 1), (R{{1, 0.5}}));
    const double with_nan[] = {0.1, std::nan(""), 0.3};
    EXPECT_EQ(strongest(with_nan, 2), (R{{2, 0.3}, {0, 0.1}}));  // NaN last
}

TEST(MeanOfHeads, CellByCellOverTheHeadsGiven) {
    const Matrix* heads[] = {&w1, nullptr, &w2};
    const Result<Matrix> mean = mean_of_heads(heads);
    ASSERT_TRUE(mean);
    EXPECT_DOUBLE_EQ((*mean.value)(0, 0), 0.75);   // (0.5 + 1) / 2: the hidden head counts for nothing
    EXPECT_DOUBLE_EQ((*mean.value)(1, 2), 0.15);   // (0.3 + 0) / 2
    EXPECT_DOUBLE_EQ((*mean.value)(2, 1), 0.275);  // (0.25 + 0.3) / 2
    EXPECT_NEAR(mean.value->row(1).sum(), 1, 1e-15);
    const Matrix* none[] = {nullptr};
    EXPECT_FALSE(mean_of_heads(none));
    const Matrix* shapes[] = {&w1, &rect};
    EXPECT_FALSE(mean_of_heads(shapes));
}

TEST(SpecialTokens, TheTokenizersMarkersAndNotWords) {
    for (const char* t : {"[CLS]", "[SEP]", "[PAD]", "[MASK]", "<s>", "</s>", "<pad>", "<unk>", "<mask>", " [SEP] ",
                          "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>"})
        EXPECT_TRUE(is_special_token(t)) << t;
    for (const char* t :
         {"the", "", " ", "[cls]", "[UNK", "s", "<", "<||>", "<| end |>", "Ġ<|endoftext|>", "##s", "<s>x", "x1"})
        EXPECT_FALSE(is_special_token(t)) << t;
}

TEST(SpecialTokens, KeptTokensLeaveThemOutOnEachSide) {
    const std::vector<std::string> queries{"[CLS]", "a", "b", "[SEP]"}, keys{"<s>", "x", "</s>", "y"};
    EXPECT_EQ(kept_tokens(queries, keys, true), (KeptTokens{{1, 2}, {1, 3}}));
    EXPECT_EQ(kept_tokens(queries, keys, false), (KeptTokens{{0, 1, 2, 3}, {0, 1, 2, 3}}));
    EXPECT_EQ(kept_tokens({"[CLS]"}, {"a"}, true), (KeptTokens{{}, {0}}));
}

TEST(SpecialTokens, RowsAreRenormalisedOverTheKeysLeft) {
    // w1 without token 0 on both sides: row 1 keeps 0.6, 0.3 (sum 0.9) → 2/3, 1/3; row 2 keeps
    // 0.25, 0.5 (sum 0.75) → 1/3, 2/3.
    const Matrix r = renormalised_weights(w1, {{1, 2}, {1, 2}});
    ASSERT_EQ(r.rows(), 2);
    ASSERT_EQ(r.cols(), 2);
    EXPECT_DOUBLE_EQ(r(0, 0), 2.0 / 3);
    EXPECT_DOUBLE_EQ(r(0, 1), 1.0 / 3);
    EXPECT_DOUBLE_EQ(r(1, 0), 1.0 / 3);
    EXPECT_DOUBLE_EQ(r(1, 1), 2.0 / 3);
    // The causal head's first query put all its weight on key 0: with key 0 gone it has none left.
    const Matrix c = renormalised_weights(w2, {{0, 1, 2}, {1, 2}});
    EXPECT_EQ(c(0, 0), 0);
    EXPECT_EQ(c(0, 1), 0);
    EXPECT_DOUBLE_EQ(c(1, 0), 1);      // 0.5 alone
    EXPECT_DOUBLE_EQ(c(2, 1), 0.625);  // 0.5 / 0.8
    // Rectangular: 3 queries over keys 1, 3, 4 of 5; row 0 keeps 0.2, 0.4, 0 → 1/3, 2/3, 0.
    const Matrix k = renormalised_weights(rect, {{0}, {1, 3, 4}});
    EXPECT_DOUBLE_EQ(k(0, 0), 1.0 / 3);
    EXPECT_DOUBLE_EQ(k(0, 1), 2.0 / 3);
    EXPECT_EQ(k(0, 2), 0);
    // Every key kept: the rows as they were, bit for bit (a row summing to 1 within a reader's
    // tolerance is not nudged), queries left out or not.
    const Matrix almost{{0.5, 0.3, 0.2004}, {0.1, 0.6, 0.3}};
    const Matrix same = renormalised_weights(almost, {{1, 0}, {0, 1, 2}});
    EXPECT_EQ(same.row(0), almost.row(1));
    EXPECT_EQ(same.row(1), almost.row(0));
}

}  // namespace
}  // namespace attnviz::core
