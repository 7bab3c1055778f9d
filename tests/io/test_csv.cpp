// Tests of core/io/csv.hpp: matrices as CSV/TSV text.
#include "core/io/csv.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

TEST(Csv, ParsesSeparators) {
    const Matrix want{{1, 0, 1, 0}, {0, 2, 0, 2}};
    for (const char* text : {"1,0,1,0\n0,2,0,2", "1, 0, 1, 0\n0, 2, 0, 2\n", "1\t0\t1\t0\r\n0\t2\t0\t2\r\n",
                             "1;0;1;0\n\n0;2;0;2\n\n", "  1 0 1 0\n0 2 0 2  ", "+1,0,+1,0\n0,2.0,0,2e0"}) {
        const Result<Matrix> r = parse_matrix_text(text);
        ASSERT_TRUE(r) << text << ": " << r.problems[0].str();
        EXPECT_EQ(*r.value, want) << text;
    }
    const Result<Matrix> neg = parse_matrix_text("-0.5 1e-3\n-2 3.25");
    ASSERT_TRUE(neg);
    EXPECT_EQ(*neg.value, (Matrix{{-0.5, 1e-3}, {-2, 3.25}}));
}

TEST(Csv, Problems) {
    struct Case {
        const char* text;
        const char* path;
        const char* part;
    };
    const Case cases[] = {
        {"1,2\n3,x", "row 2, value 2", "\"x\""},
        {"1,2,3\n4,5", "row 2", "2 values"},
        {"1,2\n3,inf", "row 2, value 2", "finite"},
        {"nan", "row 1, value 1", "finite"},
        {"1,2e", "row 1, value 2", ""},
        {"", "", "no numbers"},
        {"\n \n\t\n", "", "no numbers"},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.text);
        const Result<Matrix> r = parse_matrix_text(k.text);
        EXPECT_FALSE(r);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_EQ(r.problems[0].path, k.path) << r.problems[0].str();
        EXPECT_TRUE(contains(r.problems[0].message, k.part)) << r.problems[0].str();
    }
    // A number too large for a double is refused, not turned into infinity.
    EXPECT_FALSE(parse_matrix_text("1e999"));
}

TEST(Csv, EveryProblemIsReportedUpToTheCap) {
    const Result<Matrix> two = parse_matrix_text("1,x\n1,2,3\n4,5");
    ASSERT_FALSE(two);
    ASSERT_EQ(two.problems.size(), 2u) << all_text(two.problems);
    EXPECT_EQ(two.problems[0].str(), "row 1, value 2: \"x\" is not a number");
    EXPECT_EQ(two.problems[1].str(), "row 2: has 3 values, row 1 has 2");
    std::string text;
    for (int r = 0; r < 1000; ++r) text += "1, y, 2\n";  // 1000 bad values
    const Result<Matrix> many = parse_matrix_text(text);
    ASSERT_FALSE(many);
    ASSERT_EQ(many.problems.size(), max_reported_problems + 1);
    EXPECT_EQ(many.problems[19].path, "row 20, value 2");
    EXPECT_EQ(many.problems.back(), (Problem{"", "and 980 more problems"}));
    // A large paste is fine: one array of numbers, no per-row overhead.
    std::string big;
    for (int r = 0; r < 2000; ++r) big += "0.5 1 2 3 4 5 6 7 8 9\n";
    const Result<Matrix> ok = parse_matrix_text(big);
    ASSERT_TRUE(ok) << all_text(ok.problems);
    EXPECT_EQ(ok.value->rows(), 2000);
    EXPECT_EQ((*ok.value)(1999, 9), 9.0);
}

TEST(Csv, WriteByHand) {
    EXPECT_EQ(write_csv(Matrix{{1, 0.5}, {-2, 0.1}}), "1, 0.5\n-2, 0.1\n");
    EXPECT_EQ(write_csv(Matrix()), "");
}

TEST(Csv, RoundTripBitForBit) {
    Config c;
    c.n = 7;
    c.d_model = 5;
    const Matrix m = random_session(c, 8).params.X * 1e-3;
    const Result<Matrix> r = parse_matrix_text(write_csv(m));
    ASSERT_TRUE(r);
    ASSERT_EQ(r.value->rows(), m.rows());
    ASSERT_EQ(r.value->cols(), m.cols());
    for (Eigen::Index i = 0; i < m.size(); ++i)
        EXPECT_EQ(std::bit_cast<std::uint64_t>(r.value->data()[i]), std::bit_cast<std::uint64_t>(m.data()[i]));
}

}  // namespace
}  // namespace attnviz::core
