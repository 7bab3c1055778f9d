// What the model runtime's tests share: the reference models' expected outputs, and comparing
// matrices with the nested JSON arrays generate.py writes.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "files.hpp"

namespace attnviz::test {

inline nlohmann::json expected_of(const std::string& model) {
    return nlohmann::json::parse(slurp(models_dir / model / "expected.json"));
}

// The largest |a − b| over a matrix and a JSON array of rows (or one row for a 1×n matrix), with
// each difference divided by max(1, |b|) (relative for large values, absolute for small ones);
// infinity when the shapes differ.
template <class Derived>
double max_error(const Eigen::MatrixBase<Derived>& a, const nlohmann::json& b) {
    const bool vector = !b.empty() && b[0].is_number();
    const auto rows = static_cast<Eigen::Index>(vector ? 1 : b.size());
    const auto cols = static_cast<Eigen::Index>(vector ? b.size() : b.empty() ? 0 : b[0].size());
    if (a.rows() != rows || a.cols() != cols) return INFINITY;
    double worst = 0;
    for (Eigen::Index i = 0; i < rows; ++i) {
        const nlohmann::json& row = vector ? b : b[static_cast<size_t>(i)];
        if (static_cast<Eigen::Index>(row.size()) != cols) return INFINITY;
        for (Eigen::Index j = 0; j < cols; ++j) {
            const double want = row[static_cast<size_t>(j)].get<double>();
            worst = std::max(worst, std::abs(static_cast<double>(a(i, j)) - want) / std::max(1.0, std::abs(want)));
        }
    }
    return worst;
}

}  // namespace attnviz::test
