#include "core/io/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "core/attention/config.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

namespace {
bool is_separator(char c) { return c == ',' || c == '\t' || c == ';' || c == ' '; }
}  // namespace

Result<Matrix> parse_matrix_text(std::string_view text) {
    // One pass; the values are kept in one row-major array (8 bytes a number, nothing per row),
    // and every problem is reported, the first max_reported_problems in full.
    ProblemList problems;
    std::vector<double> values;
    std::size_t rows = 0, cols = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::size_t count = 0;  // values on this line
        bool bad = false;
        size_t k = 0;
        while (k < line.size()) {
            while (k < line.size() && is_separator(line[k])) ++k;
            if (k >= line.size()) break;
            size_t stop = k;
            while (stop < line.size() && !is_separator(line[stop])) ++stop;
            std::string_view field = line.substr(k, stop - k);
            if (!field.empty() && field.front() == '+') field.remove_prefix(1);
            double v = 0;
            auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
            const auto where = [&] {
                return "row " + std::to_string(rows + 1) + ", value " + std::to_string(count + 1);
            };
            if (ec != std::errc{} || ptr != field.data() + field.size()) {
                problems.add_lazy([&] {
                    return Problem{where(), "\"" + printable(line.substr(k, stop - k)) + "\" is not a number"};
                });
                bad = true;
            } else if (!std::isfinite(v)) {
                problems.add_lazy([&] { return Problem{where(), "values must be finite"}; });
                bad = true;
            } else if (problems.empty()) {
                if (values.size() >= static_cast<std::size_t>(Limits::max_input_numbers)) {
                    problems.add("", "more than " + std::to_string(Limits::max_input_numbers) +
                                         " numbers, more than a matrix can hold");
                    break;
                }
                values.push_back(v);
            }
            ++count;
            k = stop;
        }
        if (count == 0) continue;
        if (rows > 0 && count != cols) {
            problems.add_lazy([&] {
                return Problem{"row " + std::to_string(rows + 1),
                               "has " + std::to_string(count) + " values, row 1 has " + std::to_string(cols)};
            });
            bad = true;
        }
        if (rows == 0) cols = count;
        ++rows;
        if (bad || !problems.empty()) std::vector<double>().swap(values);  // no matrix comes of it now
    }
    if (!problems.empty()) return Result<Matrix>::fail(std::move(problems).take());
    if (rows == 0) return Result<Matrix>::fail({{"", "no numbers found"}});
    Matrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    std::copy(values.begin(), values.end(), m.data());
    return Result<Matrix>::ok(std::move(m));
}

std::string delimited_text(const Matrix& m, std::string_view separator, int precision) {
    std::string out;
    out.reserve(static_cast<size_t>(m.size()) * 12);
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            if (c) out += separator;
            out += precision > 0 ? format_number(m(r, c), precision) : format_exact(m(r, c));
        }
        out += '\n';
    }
    return out;
}

}  // namespace attnviz::core
