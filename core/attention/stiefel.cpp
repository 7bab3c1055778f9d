#include "core/attention/stiefel.hpp"

#include <Eigen/SVD>
#include <string>

#include "core/base/format.hpp"

namespace attnviz::core {

double stiefel_distance(const Matrix& w) {
    const Matrix gram = w.transpose() * w;
    return (gram - Matrix::Identity(gram.rows(), gram.cols())).norm();
}

Result<Matrix> nearest_orthonormal(const Matrix& w) {
    if (w.size() == 0) return Result<Matrix>::fail({{"", "an empty matrix has no columns to make orthonormal"}});
    if (w.cols() > w.rows())
        return Result<Matrix>::fail(
            {{"", "a " + format_shape(w.rows(), w.cols()) + " matrix cannot have " + std::to_string(w.cols()) +
                      " orthonormal columns (at most " + std::to_string(w.rows()) + ")"}});
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(w, Eigen::ComputeThinU | Eigen::ComputeThinV);
    return Result<Matrix>::ok(svd.matrixU() * svd.matrixV().transpose());
}

}  // namespace attnviz::core
