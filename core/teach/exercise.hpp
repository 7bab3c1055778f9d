// Exercise checking: the learner types a step's result, each cell is marked right or wrong.
#pragma once

#include <vector>

#include "core/attention/matrix_types.hpp"

namespace attnviz::core {

enum class CellMark { empty, right, wrong, revealed };

inline constexpr double exercise_tolerance = 1e-3;

class Exercise {
public:
    Exercise() = default;
    explicit Exercise(const Matrix& expected);

    int rows() const { return static_cast<int>(expected_.rows()); }
    int cols() const { return static_cast<int>(expected_.cols()); }
    const Matrix& expected() const { return expected_; }

    // The learner's answer for a cell (replacing any earlier one).
    void answer(int row, int col, double value);
    void clear(int row, int col);
    // Shows the expected value; the cell then counts as revealed, not right.
    void reveal(int row, int col);
    void reveal_all();

    bool answered(int row, int col) const;
    double answer_of(int row, int col) const;
    // right when |answer − expected| ≤ tolerance (absolute), or for −∞ expected, when the answer is too.
    CellMark mark(int row, int col) const;
    int count(CellMark m) const;
    bool solved() const { return count(CellMark::right) == rows() * cols(); }

    // A new expected matrix (the session changed): answers are kept where the shape still fits.
    void retarget(const Matrix& expected);

private:
    Matrix expected_;
    Matrix answers_;              // NaN: no answer
    std::vector<char> revealed_;  // row-major
};

}  // namespace attnviz::core
