// Number formatting used by explanations, messages and the JSON writers.
#pragma once

#include <string>
#include <string_view>

namespace attnviz::core {

// Shortest text that reads back as exactly the same double (at most 17 significant digits).
std::string format_exact(double value);

// A readable number for people: up to `digits` significant digits, trailing zeros dropped,
// "−∞"/"-inf" style never produced for finite values. Negative zero prints as "0".
std::string format_number(double value, int digits = 6);

// "rows×cols", the way every message and view writes a matrix's shape.
std::string format_shape(long long rows, long long cols);

// As format_number, but shorter for small cells: exponents without padding ("1.2e-5", not "1.2e-05").
std::string format_compact(double value, int digits = 3);

// A value as a heatmap cell prints it, shorter as `level` goes down: level ≥ 2, that many significant
// digits (format_compact); 1, two digits but "≈0" (`about_zero`) below 1e-3; 0, one digit, plain or
// as "7e-3", whichever is shorter; −1 (and below), rounded to one decimal place ("0.1" for 0.08),
// "≈0" when that is 0. Cells try the levels from the most digits down and print the first that
// fits (heatmaps in the app and in exported figures). The last level is for the cells of values
// under 0.1, whose significant digits take a character more than a neighbour's ".2": a cell with
// room for ".2" shows every value to one decimal rather than leaving the small ones blank.
inline constexpr int last_cell_level = -1;
std::string cell_number(double value, int level, const std::string& about_zero);

// `text` without the zero before its decimal point: ".94" for "0.94", "-.5" for "-0.5"; other text
// as it is.
std::string without_leading_zero(const std::string& text);

// The most of a finite `value` that a cell shows where `fits(text)` says whether a text fits it:
// cell_number from `digits` down to last_cell_level, each level also tried without its leading
// zero (".94" before "0.9", so a narrow cell keeps two digits rather than one); "" when nothing fits.
template <class Fits>
std::string fitted_cell_number(double value, int digits, const std::string& about_zero, Fits&& fits) {
    for (int level = digits; level >= last_cell_level; --level) {
        std::string text = cell_number(value, level, about_zero);
        if (fits(text)) return text;
        text = without_leading_zero(text);
        if (fits(text)) return text;
    }
    return {};
}

// Text from a file or a name (a tensor's name, a path, a label) as a message may echo it to a
// terminal or a window: valid UTF-8 as it is, except that control characters (U+0000–U+001F,
// U+007F, U+0080–U+009F: escape sequences, carriage returns, newlines) become \n, \t, \r or
// \xNN / \u{NN}, and each byte that is not part of valid UTF-8 becomes \xNN. Printable text,
// "Zürich" or "猫" included, is unchanged.
std::string printable(std::string_view text);

// A number of bytes for people, in powers of 1024 with 3 significant digits: "512 bytes",
// "3.28 GiB", "8 GiB".
std::string format_bytes(long long bytes);

// A duration for people, from milliseconds: 3 significant digits in ms below a second ("0.0111 ms",
// "16.7 ms", "270 ms"), in seconds from there ("2.72 s", "95.3 s", "1234 s"); "<0.01 ms" for less,
// never an exponent. Every time attnviz prints (the status bar, the views' notes) goes through it.
std::string format_duration(double ms);

}  // namespace attnviz::core
