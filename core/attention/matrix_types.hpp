// Matrix types shared by the whole core.
//
// Every matrix is row-major, so row i of X is token i, exactly as the seeds
// write it (X ∈ R^{n×d_model}, one token per row).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "core/base/half.hpp"

namespace attnviz::core {

template <class Scalar>
using MatrixT = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The user's values and the reference trace are kept in double.
using Matrix = MatrixT<double>;

// Equal shapes and equal values. (Eigen's == needs equal shapes; this is safe for any two.)
template <class Scalar>
bool same(const MatrixT<Scalar>& a, const MatrixT<Scalar>& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

// A row-major matrix of values held elsewhere (rows × cols), which must outlive its use.
template <class Scalar>
struct MatrixView {
    const Scalar* data = nullptr;
    Eigen::Index rows = 0, cols = 0;
    Eigen::Map<const MatrixT<Scalar>> map() const { return {data, rows, cols}; }
    bool empty() const { return rows == 0 || cols == 0; }
};
// e = e^x for each entry of the vector x (scores or logits less their max; e may be x itself),
// with 0 where e^x is below twice the smallest normal number: Eigen's vectorised exp clamps x
// (with AVX2, e^−50000 came out near 10^−308, not IEEE's 0), so a row that is one-hot to the last
// digit is one-hot in its weights too, and a masked score (−∞) gets weight 0 exactly. The exp is
// Eigen's (SIMD); only the comparison goes entry by entry (a select over the exp would not be
// vectorised: libm's exp for every entry).
template <class X, class E>
void exp_or_zero(const Eigen::ArrayBase<X>& x, E&& e) {
    using Scalar = typename X::Scalar;
    constexpr Scalar tiny = 2 * std::numeric_limits<Scalar>::min();
    e = x.exp();
    for (Eigen::Index i = 0; i < e.size(); ++i)
        if (e(i) < tiny) e(i) = 0;
}

template <class Scalar>
MatrixView<Scalar> view_of(const MatrixT<Scalar>& m) {
    return {m.data(), m.rows(), m.cols()};
}

}  // namespace attnviz::core
