// Tests of core/attention/stiefel.hpp: WᵀW = I after the polar decomposition, and it is the nearest such W.
#include "core/attention/stiefel.hpp"

#include <gtest/gtest.h>

#include <Eigen/QR>
#include <cmath>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

TEST(Stiefel, TheDistanceIsZeroExactlyForOrthonormalColumns) {
    EXPECT_EQ(stiefel_distance(Matrix{{1, 0}, {0, 1}, {0, 0}}), 0);
    // WᵀW = [[4, 0], [0, 1]]: ‖[[3, 0], [0, 0]]‖ = 3.
    EXPECT_DOUBLE_EQ(stiefel_distance(Matrix{{2, 0}, {0, 1}, {0, 0}}), 3);
}

TEST(Stiefel, NearestOrthonormalByHand) {
    // Scaled axes: the nearest orthonormal matrix keeps the directions.
    const Result<Matrix> q = nearest_orthonormal(Matrix{{2, 0}, {0, 3}, {0, 0}});
    ASSERT_TRUE(q);
    EXPECT_LT((*q.value - Matrix{{1, 0}, {0, 1}, {0, 0}}).norm(), 1e-14);
    // Already orthonormal: unchanged.
    const double c = std::cos(0.3), s = std::sin(0.3);
    const Matrix rot{{c, -s}, {s, c}};
    EXPECT_LT((*nearest_orthonormal(rot).value - rot).norm(), 1e-14);
}

TEST(Stiefel, TheResultHasOrthonormalColumnsAndIsTheNearest) {
    const Session s = random_session(test::make_config(3, 8, 2, 4, 3), 5);
    for (const Matrix* w : {&s.params.heads[0].W_Q, &s.params.heads[1].W_V}) {
        const Result<Matrix> q = nearest_orthonormal(*w);
        ASSERT_TRUE(q);
        ASSERT_EQ(q.value->rows(), w->rows());
        ASSERT_EQ(q.value->cols(), w->cols());
        EXPECT_LT(stiefel_distance(*q.value), 1e-12);
        const double best = (*w - *q.value).norm();
        // Other matrices with orthonormal columns are farther: QR's Q, and Q turned a little.
        const Eigen::HouseholderQR<Eigen::MatrixXd> qr(*w);
        const Matrix householder = Matrix(qr.householderQ()).leftCols(w->cols());
        EXPECT_LT(best, (*w - householder).norm() + 1e-12);
        for (double angle : {0.05, -0.05, 0.2}) {
            Matrix turned = *q.value;
            const double c = std::cos(angle), sn = std::sin(angle);
            const Eigen::VectorXd a = turned.col(0), b = turned.col(1);
            turned.col(0) = c * a - sn * b;
            turned.col(1) = sn * a + c * b;
            ASSERT_LT(stiefel_distance(turned), 1e-12);
            EXPECT_LT(best, (*w - turned).norm());
        }
    }
}

TEST(Stiefel, MoreColumnsThanRowsIsRefused) {
    const Result<Matrix> q = nearest_orthonormal(Matrix::Ones(2, 3));
    ASSERT_FALSE(q);
    EXPECT_NE(q.problems[0].message.find("2×3"), std::string::npos);
    EXPECT_FALSE(nearest_orthonormal(Matrix()));
}

}  // namespace
}  // namespace attnviz::core
