// Tests of core/attention/config.hpp: Scale, total_numbers, validate(Config), the memory budget, shape_note, to_string.
#include "core/attention/config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/base/format.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

TEST(Config, DefaultIsSeed001Dimensions) {
    const Config c;
    EXPECT_EQ(c.n, 2);
    EXPECT_EQ(c.d_model, 4);
    EXPECT_EQ(c.heads, 2);
    EXPECT_EQ(c.d_k, 2);
    EXPECT_EQ(c.d_v, 2);
    EXPECT_TRUE(c.output_projection);
    EXPECT_EQ(c.mask, Mask::none);
    EXPECT_EQ(c.scale.kind, Scale::Kind::sqrt_dk);
    EXPECT_TRUE(validate(c).empty());
}

TEST(Config, ScaleValue) {
    EXPECT_DOUBLE_EQ((Scale{Scale::Kind::sqrt_dk, 1.0}.value(9)), 3.0);
    EXPECT_DOUBLE_EQ((Scale{Scale::Kind::sqrt_dk, 1.0}.value(2)), std::sqrt(2.0));
    EXPECT_EQ((Scale{Scale::Kind::none, 7.0}.value(9)), 1.0);
    EXPECT_EQ((Scale{Scale::Kind::divisor, 2.5}.value(9)), 2.5);
}

TEST(Config, Widths) {
    Config c;
    c.heads = 3;
    c.d_v = 5;
    c.d_model = 7;
    EXPECT_EQ(c.concat_width(), 15);
    EXPECT_EQ(c.output_width(), 7);
    c.output_projection = false;
    EXPECT_EQ(c.output_width(), 15);
}

TEST(Config, TotalNumbersByHand) {
    // Seed 001: X 2×4 = 8; per head W_Q, W_K, W_V 4×2 = 24, two heads 48; W_O 4×4 = 16 → inputs 72.
    // Trace per head: Q, K, V, Z 2×2 = 16, scores_raw, scores, weights 2×2 = 12 → 28, two heads 56.
    // concat 2×4 = 8, output 2×4 = 8. Total 72 + 56 + 16 = 144.
    Config c;
    EXPECT_EQ(total_numbers(c), 144);
    // Without W_O: inputs 56, output 2×(h·d_v) = 8 → 128.
    c.output_projection = false;
    EXPECT_EQ(total_numbers(c), 128);
}

TEST(Config, ValidateReportsEachDimension) {
    struct Case {
        const char* path;
        void (*set)(Config&);
    };
    const Case cases[] = {
        {"config.n", [](Config& c) { c.n = 0; }},
        {"config.d_model", [](Config& c) { c.d_model = -3; }},
        {"config.heads", [](Config& c) { c.heads = 0; }},
        {"config.d_k", [](Config& c) { c.d_k = -1; }},
        {"config.d_v", [](Config& c) { c.d_v = 0; }},
        {"config.n", [](Config& c) { c.n = Limits::max_n + 1; }},
        {"config.d_model", [](Config& c) { c.d_model = Limits::max_d_model + 1; }},
        {"config.heads", [](Config& c) { c.heads = Limits::max_heads + 1; }},
        {"config.d_k", [](Config& c) { c.d_k = Limits::max_d_k + 1; }},
        {"config.d_v", [](Config& c) { c.d_v = Limits::max_d_v + 1; }},
    };
    for (const Case& k : cases) {
        Config c;
        k.set(c);
        const Problems p = validate(c);
        ASSERT_EQ(p.size(), 1u) << k.path << "\n" << all_text(p);
        EXPECT_EQ(p[0].path, k.path);
        EXPECT_FALSE(p[0].message.empty());
    }
}

TEST(Config, ValidateMessagesNameTheValue) {
    Config c;
    c.d_k = -1;
    Problems p = validate(c);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].message.find("-1"), std::string::npos) << p[0].message;

    c = Config{};
    c.heads = 300;
    p = validate(c);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].path, "config.heads");
    EXPECT_NE(p[0].message.find("300"), std::string::npos) << p[0].message;
    EXPECT_NE(p[0].message.find("256"), std::string::npos) << p[0].message;
}

TEST(Config, LimitsThemselvesAreAccepted) {
    Config c;
    c.heads = Limits::max_heads;
    c.d_k = 1;
    c.d_v = 1;
    c.d_model = 4;
    EXPECT_TRUE(validate(c).empty()) << all_text(validate(c));
}

TEST(Config, ValidateReportsEveryBadField) {
    Config c;
    c.n = 0;
    c.d_k = 0;
    c.scale = {Scale::Kind::divisor, -1.0};
    const Problems p = validate(c);
    EXPECT_EQ(p.size(), 3u) << all_text(p);
    EXPECT_NE(find_path(p, "config.n"), nullptr);
    EXPECT_NE(find_path(p, "config.d_k"), nullptr);
    EXPECT_NE(find_path(p, "config.scale"), nullptr);
}

TEST(Config, DivisorMustBeFiniteAndNotTooSmall) {
    const double bad[] = {0.0,
                          -0.0,
                          -1.0,
                          std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          1e-300,
                          Limits::min_divisor * 0.99};  // tiny divisors would overflow the scores
    for (double d : bad) {
        Config c;
        c.scale = {Scale::Kind::divisor, d};
        const Problems p = validate(c);
        ASSERT_EQ(p.size(), 1u) << d;
        EXPECT_EQ(p[0].path, "config.scale") << d;
    }
    const double good[] = {Limits::min_divisor, 0.5, 1.0, 3.0, 1e300};
    for (double d : good) {
        Config c;
        c.scale = {Scale::Kind::divisor, d};
        EXPECT_TRUE(validate(c).empty()) << d;
    }
    // The divisor is ignored unless the kind is divisor.
    Config c;
    c.scale = {Scale::Kind::none, -5.0};
    EXPECT_TRUE(validate(c).empty());
}

TEST(Config, InputsOverTheirLimitAreReported) {
    // The inputs alone: W_Q, W_K, W_V of 256 heads at 8192×8192 are far over 2^27 numbers.
    const Config c = make_config(2, 8192, 256, 8192, 8192);
    const Problems p = validate(c);
    ASSERT_EQ(p.size(), 1u) << all_text(p);
    EXPECT_EQ(p[0].path, "config");
    EXPECT_NE(p[0].message.find(std::to_string(input_numbers(c))), std::string::npos) << p[0].message;
    EXPECT_NE(p[0].message.find(std::to_string(Limits::max_input_numbers)), std::string::npos) << p[0].message;
    // A long sequence with small weights is valid: its size is the memory budget's business.
    EXPECT_TRUE(validate(make_config(8192, 64, 2, 32, 32)).empty());
}

TEST(Config, InputNumbersByHand) {
    Config c;  // seed 001: X 8 + W_Q, W_K, W_V 2·24 + W_O 16
    EXPECT_EQ(input_numbers(c), 72);
    c.output_projection = false;
    EXPECT_EQ(input_numbers(c), 56);
}

TEST(Config, MemoryBudgetRefusesWithTheSizeNeeded) {
    // n = 4096, d_model = 512, h = 8 (d_k = d_v = 64) needs about 3.3 GB: within the default budget.
    const Config long_input = make_config(4096, 512, 8, 64, 64);
    EXPECT_EQ(bytes_needed(long_input), total_numbers(long_input) * 8);
    EXPECT_GT(bytes_needed(long_input), std::int64_t{3} << 30);
    EXPECT_FALSE(memory_problem(long_input, default_memory_budget).has_value());
    // Under a 1 GiB budget it is refused, and the message gives both figures.
    const std::optional<Problem> p = memory_problem(long_input, std::int64_t{1} << 30);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->path, "config");
    EXPECT_NE(p->message.find(format_bytes(bytes_needed(long_input))), std::string::npos) << p->message;
    EXPECT_NE(p->message.find("1 GiB"), std::string::npos) << p->message;
    EXPECT_NE(p->message.find("--memory-budget"), std::string::npos) << p->message;
    // The budget is inclusive.
    EXPECT_FALSE(memory_problem(long_input, bytes_needed(long_input)).has_value());
    EXPECT_TRUE(memory_problem(long_input, bytes_needed(long_input) - 1).has_value());
    // The largest dimensions are over any default.
    EXPECT_TRUE(memory_problem(make_config(8192, 64, 256, 32, 32), default_memory_budget).has_value());
}

TEST(Config, ByteSizes) {
    EXPECT_EQ(*parse_byte_size("1073741824").value, std::int64_t{1} << 30);
    EXPECT_EQ(*parse_byte_size("8G").value, std::int64_t{8} << 30);
    EXPECT_EQ(*parse_byte_size("8g").value, std::int64_t{8} << 30);
    EXPECT_EQ(*parse_byte_size("1.5GiB").value, std::int64_t{3} << 29);
    EXPECT_EQ(*parse_byte_size("500MB").value, std::int64_t{500} << 20);
    EXPECT_EQ(*parse_byte_size("2T").value, std::int64_t{2} << 40);
    EXPECT_EQ(*parse_byte_size("64k").value, std::int64_t{64} << 10);
    for (const char* bad : {"", "G", "-1G", "8X", "8 G", "1.2.3M", "0", "nanG", "1e3M", "99999999999T"})
        EXPECT_FALSE(parse_byte_size(bad)) << bad;

    EXPECT_EQ(format_bytes(512), "512 bytes");
    EXPECT_EQ(format_bytes(std::int64_t{8} << 30), "8 GiB");
    EXPECT_EQ(format_bytes(std::int64_t{3} << 29), "1.5 GiB");
    EXPECT_EQ(format_bytes(1023 * 1024), "1023 KiB");
    EXPECT_EQ(format_bytes(3522000000LL), "3.28 GiB");
}

TEST(Config, ShapeNote) {
    Config c;  // h·d_v = 4 = d_model
    EXPECT_FALSE(shape_note(c).has_value());
    c.output_projection = false;
    EXPECT_FALSE(shape_note(c).has_value());  // concat already has X's shape
    c.d_v = 3;                                // h·d_v = 6 ≠ 4
    ASSERT_TRUE(shape_note(c).has_value());
    EXPECT_NE(shape_note(c)->find("2×6"), std::string::npos) << *shape_note(c);
    EXPECT_NE(shape_note(c)->find("2×4"), std::string::npos) << *shape_note(c);
    c.output_projection = true;  // W_O brings it back to d_model
    EXPECT_FALSE(shape_note(c).has_value());
}

TEST(Config, ToString) {
    EXPECT_STREQ(to_string(Mask::none), "none");
    EXPECT_STREQ(to_string(Mask::causal), "causal");
    EXPECT_EQ(to_string(Scale{Scale::Kind::sqrt_dk, 1.0}), "sqrt_dk");
    EXPECT_EQ(to_string(Scale{Scale::Kind::none, 1.0}), "none");
    EXPECT_EQ(to_string(Scale{Scale::Kind::divisor, 0.1}), "0.1");
    EXPECT_EQ(to_string(Scale{Scale::Kind::divisor, 2.0}), "2");
}

TEST(Problem, Str) {
    EXPECT_EQ((Problem{"heads[1].W_K", "expected 4×2, got 4×3"}.str()), "heads[1].W_K: expected 4×2, got 4×3");
    EXPECT_EQ((Problem{"", "malformed"}.str()), "malformed");
}

}  // namespace
}  // namespace attnviz::core
