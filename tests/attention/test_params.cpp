// Tests of core/attention/params.hpp: validate(Config, Params), the fill rule, filled() and resize().
#include "core/attention/params.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <functional>
#include <limits>
#include <string>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// The fill rule as the header documents it, written out here rather than taken from the library
// (the generator itself is checked against splitmix64's published first output below).
double rule_weight(Weight w, int head, int r, int c, int cols) {
    if (head < 2) return (r + head) % cols == c ? 1.0 : 0.0;
    return fill_random(1 + static_cast<int>(w), head, r, c);
}
double rule_input(int r, int c) { return fill_random(0, 0, r, c); }
double rule_output(int r, int c) { return r == c ? 1.0 : 0.0; }

// ---------------------------------------------------------------------------------------------
// validate(Config, Params)

TEST(ValidateParams, WorkedExampleIsValid) {
    const Session s = worked_example();
    EXPECT_TRUE(validate(s.config, s.params).empty()) << all_text(validate(s.config, s.params));
}

TEST(ValidateParams, WrongShapeExactMessage) {
    Session s = worked_example();
    s.params.heads[1].W_K = Matrix::Zero(4, 3);
    const Problems p = validate(s.config, s.params);
    ASSERT_EQ(p.size(), 1u) << all_text(p);
    EXPECT_EQ(p[0].path, "heads[1].W_K");
    EXPECT_EQ(p[0].message, "expected 4×2, got 4×3");
    EXPECT_EQ(p[0].str(), "heads[1].W_K: expected 4×2, got 4×3");
}

TEST(ValidateParams, EveryMatrixShapeChecked) {
    const std::pair<std::string, std::function<void(Params&)>> cases[] = {
        {"X", [](Params& p) { p.X = Matrix::Zero(3, 4); }},
        {"heads[0].W_Q", [](Params& p) { p.heads[0].W_Q = Matrix::Zero(2, 2); }},
        {"heads[0].W_V", [](Params& p) { p.heads[0].W_V = Matrix::Zero(4, 1); }},
        {"heads[1].W_Q", [](Params& p) { p.heads[1].W_Q = Matrix(); }},
        {"W_O", [](Params& p) { p.W_O = Matrix::Zero(4, 3); }},
    };
    for (const auto& [path, edit] : cases) {
        Session s = worked_example();
        edit(s.params);
        const Problems p = validate(s.config, s.params);
        ASSERT_EQ(p.size(), 1u) << path << "\n" << all_text(p);
        EXPECT_EQ(p[0].path, path);
    }
}

TEST(ValidateParams, XShapeMessage) {
    Session s = worked_example();
    s.params.X = Matrix::Zero(3, 5);
    const Problems p = validate(s.config, s.params);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].str(), "X: expected 2×4, got 3×5");
}

TEST(ValidateParams, WrongHeadCount) {
    Session s = worked_example();
    s.params.heads.pop_back();
    const Problems p = validate(s.config, s.params);
    ASSERT_EQ(p.size(), 1u) << all_text(p);
    EXPECT_EQ(p[0].path, "heads");
}

TEST(ValidateParams, NonFiniteCellsHaveCellPaths) {
    Session s = worked_example();
    s.params.X(0, 2) = std::numeric_limits<double>::quiet_NaN();
    s.params.heads[0].W_V(3, 1) = std::numeric_limits<double>::infinity();
    s.params.heads[1].W_Q(2, 0) = -std::numeric_limits<double>::infinity();
    s.params.W_O(1, 3) = std::numeric_limits<double>::quiet_NaN();
    const Problems p = validate(s.config, s.params);
    EXPECT_EQ(p.size(), 4u) << all_text(p);
    EXPECT_NE(find_path(p, "X[0][2]"), nullptr) << all_text(p);
    EXPECT_NE(find_path(p, "heads[0].W_V[3][1]"), nullptr) << all_text(p);
    EXPECT_NE(find_path(p, "heads[1].W_Q[2][0]"), nullptr) << all_text(p);
    EXPECT_NE(find_path(p, "W_O[1][3]"), nullptr) << all_text(p);
    EXPECT_NE(find_path(p, "X[0][2]")->message.find("NaN"), std::string::npos);
}

TEST(ValidateParams, WOIgnoredWithoutProjection) {
    Session s = worked_example();
    s.config.output_projection = false;
    s.params.W_O = Matrix::Zero(1, 1);
    s.params.W_O(0, 0) = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(validate(s.config, s.params).empty()) << all_text(validate(s.config, s.params));
}

TEST(ValidateParams, ReportsEveryProblemAtOnce) {
    Session s = worked_example();
    s.params.X = Matrix::Zero(2, 3);
    s.params.heads[0].W_K = Matrix::Zero(4, 3);
    s.params.heads[1].W_V(0, 0) = std::numeric_limits<double>::infinity();
    const Problems p = validate(s.config, s.params);
    EXPECT_EQ(p.size(), 3u) << all_text(p);
    EXPECT_NE(find_path(p, "X"), nullptr);
    EXPECT_NE(find_path(p, "heads[0].W_K"), nullptr);
    EXPECT_NE(find_path(p, "heads[1].W_V[0][0]"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// The fill rule

TEST(FillRule, ValuesByHand) {
    // Head 0 of a 4×2 matrix: [[1,0],[0,1],[1,0],[0,1]]; head 1: [[0,1],[1,0],[0,1],[1,0]].
    const double head0[4][2] = {{1, 0}, {0, 1}, {1, 0}, {0, 1}};
    const double head1[4][2] = {{0, 1}, {1, 0}, {0, 1}, {1, 0}};
    for (const Weight w : {Weight::W_Q, Weight::W_K, Weight::W_V})
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 2; ++c) {
                EXPECT_EQ(fill_weight(w, 0, r, c, 2), head0[r][c]) << r << "," << c;
                EXPECT_EQ(fill_weight(w, 1, r, c, 2), head1[r][c]) << r << "," << c;
            }
    // Head 1 of a 3-column matrix: row 0 → column 1, row 2 → column 0.
    EXPECT_EQ(fill_weight(Weight::W_Q, 1, 0, 1, 3), 1.0);
    EXPECT_EQ(fill_weight(Weight::W_Q, 1, 2, 0, 3), 1.0);
    EXPECT_EQ(fill_weight(Weight::W_Q, 1, 2, 1, 3), 0.0);
    EXPECT_EQ(fill_output(0, 0), 1.0);
    EXPECT_EQ(fill_output(3, 3), 1.0);
    EXPECT_EQ(fill_output(0, 1), 0.0);
    EXPECT_EQ(fill_output(2, 1), 0.0);
}

TEST(FillRule, TheGeneratorIsSplitmix64OfTheCellsPlace) {
    // splitmix64's first output from state 0 is 0xe220a8397b1dcdaf (its reference implementation);
    // as a 53-bit fraction that is 0.88334…, so 2·0.88334 − 1 = 0.7667 → 0.77.
    EXPECT_EQ(fill_random(0, 0, 0, 0), 0.77);
    EXPECT_EQ(fill_input(0, 0), 0.77);
    // Every value in [−1, 1] with at most 2 decimals; the same place gives the same value.
    double sum = 0;
    int distinct_streams = 0;
    for (int r = 0; r < 40; ++r)
        for (int c = 0; c < 40; ++c) {
            const double v = fill_random(2, 3, r, c);
            EXPECT_GE(v, -1.0);
            EXPECT_LE(v, 1.0);
            EXPECT_EQ(std::round(v * 100) / 100, v);
            EXPECT_EQ(fill_random(2, 3, r, c), v);
            sum += v;
            distinct_streams += fill_random(1, 3, r, c) != v;
        }
    EXPECT_NEAR(sum / 1600, 0.0, 0.05);  // mean of U(−1, 1) over 1600 cells: σ ≈ 0.014
    EXPECT_GT(distinct_streams, 1500);   // W_Q and W_K of a head differ
    // Heads from 2 on: from the generator, one stream per weight.
    EXPECT_EQ(fill_weight(Weight::W_K, 2, 3, 1, 2), fill_random(2, 2, 3, 1));
    EXPECT_NE(fill_weight(Weight::W_K, 2, 3, 1, 2), fill_weight(Weight::W_K, 3, 3, 1, 2));
}

TEST(FillRule, FilledWorkedConfigIsTheWorkedExample) {
    const Session w = worked_example();
    const Params p = filled(w.config);
    ASSERT_EQ(p.heads.size(), 2u);
    const Matrix head1{{1, 0}, {0, 1}, {1, 0}, {0, 1}};
    const Matrix head2{{0, 1}, {1, 0}, {0, 1}, {1, 0}};
    for (const Matrix* m : {&p.heads[0].W_Q, &p.heads[0].W_K, &p.heads[0].W_V}) EXPECT_EQ(*m, head1);
    for (const Matrix* m : {&p.heads[1].W_Q, &p.heads[1].W_K, &p.heads[1].W_V}) EXPECT_EQ(*m, head2);
    for (int h = 0; h < 2; ++h) {
        EXPECT_EQ(p.heads[h].W_Q, w.params.heads[h].W_Q);
        EXPECT_EQ(p.heads[h].W_K, w.params.heads[h].W_K);
        EXPECT_EQ(p.heads[h].W_V, w.params.heads[h].W_V);
    }
    EXPECT_EQ(p.W_O, Matrix::Identity(4, 4));
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) EXPECT_EQ(p.X(r, c), rule_input(r, c));
    EXPECT_TRUE(validate(w.config, p).empty());
}

TEST(FillRule, FilledHasRightShapesForOtherConfigs) {
    const Config c = make_config(3, 5, 3, 2, 4);
    const Params p = filled(c);
    EXPECT_TRUE(validate(c, p).empty()) << all_text(validate(c, p));
    ASSERT_EQ(p.W_O.rows(), 12);
    ASSERT_EQ(p.W_O.cols(), 5);
    for (int h = 0; h < 3; ++h)
        for (int r = 0; r < 5; ++r) {
            for (int col = 0; col < 2; ++col) {
                EXPECT_EQ(p.heads[h].W_Q(r, col), rule_weight(Weight::W_Q, h, r, col, 2));
                EXPECT_EQ(p.heads[h].W_K(r, col), rule_weight(Weight::W_K, h, r, col, 2));
            }
            for (int col = 0; col < 4; ++col) EXPECT_EQ(p.heads[h].W_V(r, col), rule_weight(Weight::W_V, h, r, col, 4));
        }
    for (int r = 0; r < 12; ++r)
        for (int col = 0; col < 5; ++col) EXPECT_EQ(p.W_O(r, col), rule_output(r, col));
    for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 5; ++col) EXPECT_EQ(p.X(r, col), rule_input(r, col));
}

// ---------------------------------------------------------------------------------------------
// resize()

// Checks every cell of `to_params` (for config `to`): old value where (head, row, col) existed in
// `from`, otherwise the documented fill value.
void expect_resized(const Params& from, const Params& got, const Config& to) {
    ASSERT_TRUE(validate(to, got).empty()) << all_text(validate(to, got));
    auto check = [](const Matrix& old, const Matrix& now, const std::function<double(int, int)>& fill,
                    const std::string& what) {
        for (int r = 0; r < now.rows(); ++r)
            for (int c = 0; c < now.cols(); ++c) {
                const bool kept = r < old.rows() && c < old.cols();
                const double expected = kept ? old(r, c) : fill(r, c);
                EXPECT_EQ(now(r, c), expected) << what << "[" << r << "][" << c << "] kept=" << kept;
            }
    };
    check(from.X, got.X, rule_input, "X");
    for (int h = 0; h < to.heads; ++h) {
        const HeadParams old = h < static_cast<int>(from.heads.size()) ? from.heads[h] : HeadParams{};
        const std::string hp = "heads[" + std::to_string(h) + "].";
        const auto rule = [&](Weight w, int cols) {
            return [=](int r, int c) { return rule_weight(w, h, r, c, cols); };
        };
        check(old.W_Q, got.heads[h].W_Q, rule(Weight::W_Q, to.d_k), hp + "W_Q");
        check(old.W_K, got.heads[h].W_K, rule(Weight::W_K, to.d_k), hp + "W_K");
        check(old.W_V, got.heads[h].W_V, rule(Weight::W_V, to.d_v), hp + "W_V");
    }
    check(from.W_O, got.W_O, rule_output, "W_O");
}

Config base_config() { return make_config(3, 4, 2, 3, 2); }

struct DimCase {
    const char* name;
    int Config::*field;
};
const DimCase dims[] = {{"n", &Config::n},
                        {"d_model", &Config::d_model},
                        {"heads", &Config::heads},
                        {"d_k", &Config::d_k},
                        {"d_v", &Config::d_v}};

TEST(Resize, GrowAndShrinkEachDimension) {
    const Config base = base_config();
    // Random values (never exactly 0 or 1) so a kept value cannot be mistaken for a filled one.
    const Params from = random_session(base, 11).params;
    for (const DimCase& d : dims) {
        for (int delta : {-2, -1, 1, 3}) {
            Config to = base;
            to.*d.field += delta;
            if (to.*d.field < 1) continue;
            SCOPED_TRACE(std::string(d.name) + " += " + std::to_string(delta));
            const Params got = resize(from, to);
            expect_resized(from, got, to);
        }
    }
}

TEST(Resize, SameConfigIsIdentity) {
    const Config base = base_config();
    const Params from = random_session(base, 5).params;
    EXPECT_EQ(resize(from, base), from);
}

TEST(Resize, GrowNewCellsByHand) {
    // The worked example grown to d_k = 3 and 3 heads. Head 0's W_Q keeps its 4×2 block (with an
    // edit at [0][0]); the new column 2 is 1 where (r + 0) mod 3 == 2, i.e. only in row 2.
    Session w = worked_example();
    w.params.heads[0].W_Q(0, 0) = 7;  // an edit that must survive
    Config to = w.config;
    to.d_k = 3;
    to.heads = 3;
    const Params p = resize(w.params, to);
    const Matrix q0{{7, 0, 0}, {0, 1, 0}, {1, 0, 1}, {0, 1, 0}};
    EXPECT_EQ(p.heads[0].W_Q, q0);
    // Head 1: old [[0,1],[1,0],[0,1],[1,0]]; column 2 gets 1 where (r + 1) mod 3 == 2 → r = 1.
    const Matrix k1{{0, 1, 0}, {1, 0, 1}, {0, 1, 0}, {1, 0, 0}};
    EXPECT_EQ(p.heads[1].W_K, k1);
    // Head 2 is new: from the generator, so unlike heads 1 and 2 (and W_Q unlike W_K).
    EXPECT_EQ(p.heads[2].W_Q(3, 2), fill_random(1, 2, 3, 2));
    EXPECT_EQ(p.heads[2].W_V(0, 1), fill_random(3, 2, 0, 1));
    EXPECT_FALSE(same(p.heads[2].W_Q, p.heads[2].W_K));
    EXPECT_NE(Matrix(p.heads[2].W_Q.leftCols(2)), Matrix(p.heads[0].W_Q.leftCols(2)));
    EXPECT_NE(Matrix(p.heads[2].W_Q.leftCols(2)), Matrix(p.heads[1].W_Q.leftCols(2)));
    // W_O grows from 4×4 to 6×4: identity block kept, new rows 4 and 5 all zero (r ≠ c for c < 4).
    Matrix wo = Matrix::Zero(6, 4);
    wo.topLeftCorner(4, 4) = Matrix::Identity(4, 4);
    EXPECT_EQ(p.W_O, wo);
    EXPECT_EQ(p.X, w.params.X);
}

TEST(Resize, NewTokensGetRowsFromTheGenerator) {
    Session w = worked_example();
    Config to = w.config;
    to.n = 4;
    to.d_model = 5;
    const Params p = resize(w.params, to);
    EXPECT_EQ(p.X.topLeftCorner(2, 4), w.params.X);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 5; ++c)
            if (r >= 2 || c >= 4) {
                EXPECT_EQ(p.X(r, c), fill_input(r, c));
            }
    // Not a zero row: the new tokens attend unevenly.
    EXPECT_GT(p.X.row(2).cwiseAbs().sum(), 0.5);
    EXPECT_NE(Matrix(p.X.row(2)), Matrix(p.X.row(3)));
    // A new d_model row 4 of head 0's W_Q: (4 + 0) mod 2 == c → c = 0.
    EXPECT_EQ(p.heads[0].W_Q(4, 0), 1.0);
    EXPECT_EQ(p.heads[0].W_Q(4, 1), 0.0);
    // Head 1: (4 + 1) mod 2 == c → c = 1.
    EXPECT_EQ(p.heads[1].W_Q(4, 0), 0.0);
    EXPECT_EQ(p.heads[1].W_Q(4, 1), 1.0);
    // W_O 4×5: identity plus a zero column.
    Matrix wo = Matrix::Zero(4, 5);
    wo.topLeftCorner(4, 4) = Matrix::Identity(4, 4);
    EXPECT_EQ(p.W_O, wo);
}

TEST(Resize, GrowThenBackRestoresOriginal) {
    const Config base = base_config();
    const Params orig = random_session(base, 21).params;
    for (const DimCase& d : dims) {
        Config bigger = base;
        bigger.*d.field += 2;
        SCOPED_TRACE(d.name);
        EXPECT_EQ(resize(resize(orig, bigger), base), orig);
    }
    Config all = base;
    for (const DimCase& d : dims) all.*d.field += 1;
    EXPECT_EQ(resize(resize(orig, all), base), orig);
}

TEST(Resize, WithMemoryGrowingBackRestoresEveryDroppedValue) {
    const Config base = base_config();
    const Params orig = random_session(base, 23).params;
    for (const DimCase& d : dims) {
        Config smaller = base;
        smaller.*d.field -= 1;
        SCOPED_TRACE(d.name);
        const Params memory = remembered(Params{}, orig);
        const Params shrunk = resize(orig, smaller);
        // Growing back from the shrunk params, remembering: the original exactly.
        EXPECT_EQ(resize(shrunk, base, remembered(memory, shrunk)), orig);
        // Past the original size: what was never there comes from the fill rule.
        Config bigger = base;
        bigger.*d.field += 1;
        expect_resized(orig, resize(shrunk, bigger, remembered(memory, shrunk)), bigger);
    }
}

TEST(Resize, RememberedPrefersTheCurrentValuesAndMarksTheUnknownAsNaN) {
    Params memory, current;
    memory.X = Matrix{{1, 2, 3}};
    current.X = Matrix{{9}, {8}};
    const Params u = remembered(memory, current);
    ASSERT_EQ(u.X.rows(), 2);
    ASSERT_EQ(u.X.cols(), 3);
    EXPECT_EQ(u.X(0, 0), 9);  // current wins
    EXPECT_EQ(u.X(0, 2), 3);  // memory fills the rest
    EXPECT_EQ(u.X(1, 0), 8);
    EXPECT_TRUE(std::isnan(u.X(1, 2)));  // neither knows
}

TEST(Resize, ShrinkThenBackKeepsOverlap) {
    const Config base = base_config();
    const Params orig = random_session(base, 22).params;
    for (const DimCase& d : dims) {
        Config smaller = base;
        smaller.*d.field -= 1;
        SCOPED_TRACE(d.name);
        const Params shrunk = resize(orig, smaller);
        const Params back = resize(shrunk, base);
        // Every value that survived the shrink is the original; everything else is the fill rule.
        expect_resized(shrunk, back, base);
        for (int r = 0; r < shrunk.X.rows(); ++r)
            for (int c = 0; c < shrunk.X.cols(); ++c) EXPECT_EQ(back.X(r, c), orig.X(r, c));
        for (size_t h = 0; h < shrunk.heads.size(); ++h)
            for (int r = 0; r < shrunk.heads[h].W_V.rows(); ++r)
                for (int c = 0; c < shrunk.heads[h].W_V.cols(); ++c)
                    EXPECT_EQ(back.heads[h].W_V(r, c), orig.heads[h].W_V(r, c));
    }
}

TEST(Resize, FromEmptyParamsIsFilled) {
    const Config c = base_config();
    const Params p = resize(Params{}, c);
    expect_resized(Params{}, p, c);
    EXPECT_EQ(p, filled(c));
}

TEST(HasShapes, ChecksShapesOnlyNotValues) {
    Session s = worked_example();
    EXPECT_TRUE(has_shapes(s.config, s.params));
    s.params.X(0, 0) = std::nan("");  // a bad value is validate()'s business, not a shape
    EXPECT_TRUE(has_shapes(s.config, s.params));
    s.params.heads[1].W_V.conservativeResize(4, 3);
    EXPECT_FALSE(has_shapes(s.config, s.params));
    s = worked_example();
    s.params.heads.pop_back();
    EXPECT_FALSE(has_shapes(s.config, s.params));
    s = worked_example();
    s.params.W_O.resize(0, 0);
    EXPECT_FALSE(has_shapes(s.config, s.params));
    s.config.output_projection = false;  // without the projection W_O is not asked for
    EXPECT_TRUE(has_shapes(s.config, s.params));
}

}  // namespace
}  // namespace attnviz::core
