// Matrices as CSV/TSV text, for the clipboard.
#pragma once

#include <string>
#include <string_view>

#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// Parses rows separated by newlines, values by commas, tabs, semicolons or spaces.
// Blank lines are skipped. Fails, naming the row and column, on a non-number, a non-finite value
// or a ragged row ("row 2 has 3 values, row 1 has 4"): every such problem, the first
// max_reported_problems in full and then "and N more problems". Reads in one pass keeping 8 bytes
// a number; more than Limits::max_input_numbers numbers are refused.
Result<Matrix> parse_matrix_text(std::string_view text);

// One row per line, values separated by `separator`; precision 0: each value in its shortest
// exact form (reads back bit for bit, -inf for a masked score), 1..17: that many significant digits.
std::string delimited_text(const Matrix& m, std::string_view separator, int precision = 0);

// For the clipboard: one row per line, values separated by ", ", each in its shortest exact form.
inline std::string write_csv(const Matrix& m) { return delimited_text(m, ", "); }

}  // namespace attnviz::core
