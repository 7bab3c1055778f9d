#include "csv.hpp"

#include <charconv>
#include <cmath>
#include <vector>

#include "format.hpp"

namespace attnviz::core {

namespace {
bool is_separator(char c) { return c == ',' || c == '\t' || c == ';' || c == ' '; }
}  // namespace

Result<Matrix> parse_matrix_text(std::string_view text) {
    std::vector<std::vector<double>> rows;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::vector<double> row;
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
            const std::string where = "row " + std::to_string(rows.size() + 1) + ", value " +
                                      std::to_string(row.size() + 1);
            if (ec != std::errc{} || ptr != field.data() + field.size())
                return Result<Matrix>::fail({{where, "\"" + std::string(line.substr(k, stop - k)) +
                                                         "\" is not a number"}});
            if (!std::isfinite(v)) return Result<Matrix>::fail({{where, "values must be finite"}});
            row.push_back(v);
            k = stop;
        }
        if (row.empty()) continue;
        if (!rows.empty() && row.size() != rows.front().size())
            return Result<Matrix>::fail({{"row " + std::to_string(rows.size() + 1),
                                          "has " + std::to_string(row.size()) + " values, row 1 has " +
                                              std::to_string(rows.front().size())}});
        rows.push_back(std::move(row));
    }
    if (rows.empty()) return Result<Matrix>::fail({{"", "no numbers found"}});
    Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.front().size()));
    for (size_t r = 0; r < rows.size(); ++r)
        for (size_t c = 0; c < rows[r].size(); ++c) m(r, c) = rows[r][c];
    return Result<Matrix>::ok(std::move(m));
}

std::string write_csv(const Matrix& m) {
    std::string out;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            if (c) out += ", ";
            out += format_exact(m(r, c));
        }
        out += "\n";
    }
    return out;
}

}  // namespace attnviz::core
