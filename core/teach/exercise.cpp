#include "core/teach/exercise.hpp"

#include <cmath>
#include <limits>

namespace attnviz::core {

namespace {
constexpr double no_answer = std::numeric_limits<double>::quiet_NaN();
}

Exercise::Exercise(const Matrix& expected)
    : expected_(expected),
      answers_(Matrix::Constant(expected.rows(), expected.cols(), no_answer)),
      revealed_(static_cast<size_t>(expected.size()), 0) {}

void Exercise::answer(int row, int col, double value) { answers_(row, col) = value; }

void Exercise::clear(int row, int col) {
    answers_(row, col) = no_answer;
    revealed_[static_cast<size_t>(row) * cols() + col] = 0;
}

void Exercise::reveal(int row, int col) { revealed_[static_cast<size_t>(row) * cols() + col] = 1; }

void Exercise::reveal_all() { std::fill(revealed_.begin(), revealed_.end(), 1); }

bool Exercise::answered(int row, int col) const { return !std::isnan(answers_(row, col)); }

double Exercise::answer_of(int row, int col) const { return answers_(row, col); }

CellMark Exercise::mark(int row, int col) const {
    if (revealed_[static_cast<size_t>(row) * cols() + col]) return CellMark::revealed;
    const double a = answers_(row, col);
    if (std::isnan(a)) return CellMark::empty;
    const double e = expected_(row, col);
    if (std::isinf(e)) return a == e ? CellMark::right : CellMark::wrong;
    return std::abs(a - e) <= exercise_tolerance ? CellMark::right : CellMark::wrong;
}

int Exercise::count(CellMark m) const {
    int total = 0;
    for (int r = 0; r < rows(); ++r)
        for (int c = 0; c < cols(); ++c) total += mark(r, c) == m;
    return total;
}

void Exercise::retarget(const Matrix& expected) {
    Exercise next(expected);
    for (int r = 0; r < std::min(rows(), next.rows()); ++r)
        for (int c = 0; c < std::min(cols(), next.cols()); ++c) {
            next.answers_(r, c) = answers_(r, c);
            next.revealed_[static_cast<size_t>(r) * next.cols() + c] = revealed_[static_cast<size_t>(r) * cols() + c];
        }
    *this = std::move(next);
}

}  // namespace attnviz::core
