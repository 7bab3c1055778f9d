// Tests of core/base/format.hpp: exact and readable number formatting.
#include "core/base/format.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

namespace attnviz::core {
namespace {

TEST(FormatExact, ReadsBackBitForBit) {
    std::mt19937_64 gen(1);
    for (int k = 0; k < 20000; ++k) {
        const double v = std::bit_cast<double>(gen());
        if (!std::isfinite(v)) continue;
        const std::string s = format_exact(v);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(std::strtod(s.c_str(), nullptr)), std::bit_cast<std::uint64_t>(v)) << s;
    }
    for (double v : {0.1, 1e-300, 5e-324, std::numeric_limits<double>::max(), 1.0 / 3, -2.5, 1e21}) {
        const std::string s = format_exact(v);
        EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    }
}

TEST(FormatExact, Shortest) {
    EXPECT_EQ(format_exact(0.1), "0.1");
    EXPECT_EQ(format_exact(2.0), "2");
    EXPECT_EQ(format_exact(-2.5), "-2.5");
    EXPECT_EQ(format_exact(0.30000000000000004), "0.30000000000000004");
    EXPECT_EQ(format_exact(1e-300), "1e-300");
    EXPECT_LE(format_exact(1.0 / 3).size(), 19u);  // 17 significant digits plus "0."
}

TEST(FormatNumber, Readable) {
    EXPECT_EQ(format_number(0.0), "0");
    EXPECT_EQ(format_number(-0.0), "0");
    EXPECT_EQ(format_number(2.0), "2");
    EXPECT_EQ(format_number(1.0 / 3), "0.333333");
    EXPECT_EQ(format_number(2.8284271247461903), "2.82843");
    EXPECT_EQ(format_number(2.8284271247461903, 3), "2.83");
    EXPECT_EQ(format_number(-1234567.0), "-1.23457e+06");
    EXPECT_EQ(format_number(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(FormatCompact, ShortExponents) {
    EXPECT_EQ(format_compact(1.2e-5), "1.2e-5");
    EXPECT_EQ(format_compact(1.5e20), "1.5e20");
    EXPECT_EQ(format_compact(1e100), "1e100");
    EXPECT_EQ(format_compact(-3e-7), "-3e-7");
    EXPECT_EQ(format_compact(0.25), "0.25");
    EXPECT_EQ(format_compact(1.0 / 3), "0.333");
    EXPECT_EQ(format_compact(-0.0), "0");
}

}  // namespace
}  // namespace attnviz::core

namespace attnviz::core {
namespace {
TEST(CellNumber, EachLevelIsShorter) {
    EXPECT_EQ(cell_number(0.944157, 3, "~0"), "0.944");
    EXPECT_EQ(cell_number(0.944157, 2, "~0"), "0.94");
    EXPECT_EQ(cell_number(2.5e-7, 2, "~0"), "2.5e-7");
    EXPECT_EQ(cell_number(2.5e-7, 1, "~0"), "~0");         // below 1e-3 at level 1
    EXPECT_EQ(cell_number(0.0069, 1, "~0"), "0.0069");     // not below 1e-3
    EXPECT_EQ(cell_number(0.0069, 0, "~0"), "7e-3");       // one digit: shorter than "0.007"
    EXPECT_EQ(cell_number(0.5, 0, "~0"), "0.5");           // plain is shorter
    EXPECT_EQ(cell_number(-123456.789, 0, "~0"), "-1e5");  // one digit, as an exponent
    EXPECT_EQ(cell_number(96, 0, "~0"), "1e2");            // 96 rounds to one digit: 10 → 1e2
    EXPECT_EQ(cell_number(0, 0, "~0"), "0");
}

TEST(CellNumber, LeadingZeroDropped) {
    EXPECT_EQ(without_leading_zero("0.94"), ".94");
    EXPECT_EQ(without_leading_zero("-0.5"), "-.5");
    EXPECT_EQ(without_leading_zero("10.5"), "10.5");
    EXPECT_EQ(without_leading_zero("0"), "0");
    EXPECT_EQ(without_leading_zero("~0"), "~0");
    EXPECT_EQ(without_leading_zero("7e-3"), "7e-3");
    EXPECT_EQ(without_leading_zero(""), "");
}

// A cell `width` characters wide.
std::string fitted(double value, int digits, size_t width) {
    return fitted_cell_number(value, digits, "~0", [&](const std::string& t) { return t.size() <= width; });
}

TEST(CellNumber, FittedTakesTheMostDigitsThatFit) {
    EXPECT_EQ(fitted(0.944157, 3, 5), "0.944");
    EXPECT_EQ(fitted(0.944157, 3, 4), ".944");  // three digits without the zero before two with it
    EXPECT_EQ(fitted(0.944157, 3, 3), ".94");
    EXPECT_EQ(fitted(0.088, 3, 3), ".09");  // not blank beside a neighbour's "0.1"
    EXPECT_EQ(fitted(-0.26, 3, 3), "-.3");
    EXPECT_EQ(fitted(1.56, 3, 3), "1.6");
    EXPECT_EQ(fitted(1.56, 3, 1), "2");
    EXPECT_EQ(fitted(2.5e-7, 3, 2), "~0");
    EXPECT_EQ(fitted(-123456.789, 3, 3), "");  // "-1e5" is the shortest: nothing fits
    EXPECT_EQ(fitted(0.5, 0, 2), ".5");
}

// A cell with room for ".2" (two characters) rounds a value under 0.1 to one decimal instead of
// leaving it blank: its significant digits (".08", "8e-2") take a character more.
TEST(CellNumber, ACellThatShowsPoint2ShowsEverySmallerValueToOneDecimal) {
    EXPECT_EQ(fitted(0.2, 3, 2), ".2");
    EXPECT_EQ(fitted(0.08, 3, 2), ".1");
    EXPECT_EQ(fitted(0.051, 3, 2), ".1");
    EXPECT_EQ(fitted(0.04, 3, 2), "~0");  // rounds to 0 at one decimal
    EXPECT_EQ(fitted(0.0069, 3, 2), "~0");
    EXPECT_EQ(fitted(0, 3, 2), "0");
    EXPECT_EQ(fitted(-0.08, 3, 3), "-.1");
    EXPECT_EQ(fitted(0.08, 3, 3), ".08");  // room for its two digits: they are kept
    EXPECT_EQ(cell_number(0.96, -1, "~0"), "1");
    EXPECT_EQ(cell_number(12.34, -1, "~0"), "12.3");
}

TEST(Printable, ControlCharactersAndInvalidUtf8AreEscapedPrintableTextIsNot) {
    EXPECT_EQ(printable("layer.0.weight"), "layer.0.weight");
    EXPECT_EQ(printable("Zürich 猫 😀 naïve"), "Zürich 猫 😀 naïve");
    EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");          // an escape sequence
    EXPECT_EQ(printable("1\n2\t3\r4"), "1\\n2\\t3\\r4");      // new lines stay on one line
    EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");  // a NUL
    EXPECT_EQ(printable("\x7f"), "\\x7f");                    // DEL
    EXPECT_EQ(printable("\xc2\x9b"
                        "31m"),
              "\\u{9b}31m");                                           // C1's CSI, valid UTF-8 but a control
    EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                    // no UTF-8 at all
    EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");                    // a character cut short
    EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // an overlong '/'
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
    EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
    EXPECT_EQ(printable("é\xffé"), "é\\xffé");                         // the rest is kept
    EXPECT_EQ(printable(""), "");
}

}  // namespace
}  // namespace attnviz::core

// Times print as ms or s with 3 digits, never with an exponent ("2.72e+03 ms" was a frame time).
TEST(FormatDuration, MillisecondsThenSecondsNeverAnExponent) {
    EXPECT_EQ(attnviz::core::format_duration(0.0111), "0.0111 ms");
    EXPECT_EQ(attnviz::core::format_duration(16.66), "16.7 ms");
    EXPECT_EQ(attnviz::core::format_duration(270), "270 ms");
    EXPECT_EQ(attnviz::core::format_duration(999.4), "999 ms");
    EXPECT_EQ(attnviz::core::format_duration(999.6), "1 s");
    EXPECT_EQ(attnviz::core::format_duration(2720), "2.72 s");
    EXPECT_EQ(attnviz::core::format_duration(95300), "95.3 s");
    EXPECT_EQ(attnviz::core::format_duration(99990), "100 s");
    EXPECT_EQ(attnviz::core::format_duration(1234000), "1234 s");
    EXPECT_EQ(attnviz::core::format_duration(0.001), "<0.01 ms");
    EXPECT_EQ(attnviz::core::format_duration(-1), "?");
    for (double ms = 1e-3; ms < 1e9; ms *= 1.37)
        EXPECT_EQ(attnviz::core::format_duration(ms).find('e'), std::string::npos) << ms;
}
