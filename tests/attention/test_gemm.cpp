// Tests of core/attention/gemm.hpp: the double product against direct loops, and the order of its
// sums (the same for an entry wherever it lies, whatever W's layout, dtype or the threads).
#include "core/attention/gemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace attnviz::core {
namespace {

using Index = Eigen::Index;
using MatrixF = MatrixT<float>;

Matrix random_matrix(Index rows, Index cols, unsigned seed) {
    std::mt19937 engine(seed);
    std::normal_distribution<double> normal;
    Matrix m(rows, cols);
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = normal(engine);
    return m;
}

Matrix product_of(const Matrix& x, const Matrix& W, bool transposed = false) {
    Matrix y(x.rows(), transposed ? W.rows() : W.cols());
    product<double, double>(x, view_of(W), transposed, y);
    return y;
}

std::string shape(Index m, Index d_in, Index d_out) {
    return std::to_string(m) + "×" + std::to_string(d_in) + " · " + std::to_string(d_in) + "×" + std::to_string(d_out);
}

// Shapes around the blocking's edges: one entry; fewer rows and columns than a tile; a tile
// exactly; one past a run of k, a tile's rows and columns; more rows than a block of x.
const Index shapes[][3] = {{1, 1, 1},   {7, 5, 3},      {8, 256, 24},   {9, 257, 25},
                           {17, 3, 49}, {130, 600, 50}, {513, 300, 49}, {64, 1024, 72}};

TEST(Gemm, EveryEntryIsTheSumOfItsProductsAsADirectLoopAddsThem) {
    for (const auto& [m, d_in, d_out] : shapes) {
        const Matrix x = random_matrix(m, d_in, 1), W = random_matrix(d_in, d_out, 2);
        const Matrix y = product_of(x, W);
        for (Index i = 0; i < m; ++i)
            for (Index j = 0; j < d_out; ++j) {
                long double sum = 0, size = 0;
                for (Index k = 0; k < d_in; ++k) {
                    sum += static_cast<long double>(x(i, k)) * W(k, j);
                    size += std::abs(static_cast<long double>(x(i, k)) * W(k, j));
                }
                // Each of d_in additions rounds by at most half an ulp of a partial sum ≤ size.
                const double bound = static_cast<double>(size) * static_cast<double>(d_in) * 1.2e-16;
                ASSERT_NEAR(y(i, j), static_cast<double>(sum), bound)
                    << shape(m, d_in, d_out) << " at " << i << "," << j;
            }
    }
}

#if defined(__AVX512F__)
// The order gemm.hpp gives: runs of `depth` k, each a chain of fused multiply-adds from zero, the
// runs added in order.
TEST(Gemm, EachEntryIsSummedInRunsOfDepthEachAFusedMultiplyAddChain) {
    const Index m = 11, d_in = 2 * gemm::depth + 37, d_out = 29;
    const Matrix x = random_matrix(m, d_in, 3), W = random_matrix(d_in, d_out, 4);
    const Matrix y = product_of(x, W);
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < d_out; ++j) {
            double total = 0;
            for (Index k0 = 0; k0 < d_in; k0 += gemm::depth) {
                double run = 0;
                for (Index k = k0; k < std::min<Index>(d_in, k0 + gemm::depth); ++k)
                    run = std::fma(x(i, k), W(k, j), run);
                total = k0 == 0 ? run : total + run;
            }
            ASSERT_EQ(y(i, j), total) << i << "," << j;
        }
}
#endif

TEST(Gemm, AnEntrysValueDependsOnlyOnItsRowOfXAndItsColumnOfW) {
    // x·[A B] and [x0; x] · B: B's columns of the first are x·B's, number for number, and the rows
    // of x in the second too, though every one of them lies elsewhere in y (other tiles, panels,
    // blocks and threads).
    const Matrix x = random_matrix(70, 300, 5), A = random_matrix(300, 13, 6), B = random_matrix(300, 61, 7);
    const Matrix alone = product_of(x, B);
    Matrix AB(300, 13 + 61);
    AB << A, B;
    EXPECT_EQ(Matrix(product_of(x, AB).rightCols(61)), alone);
    Matrix x0x(5 + 70, 300);
    x0x << random_matrix(5, 300, 8), x;
    EXPECT_EQ(Matrix(product_of(x0x, B).bottomRows(70)), alone);
}

TEST(Gemm, WsLayoutDtypeAndTheThreadsChangeNoValue) {
    const Matrix x = random_matrix(100, 500, 9);
    const MatrixF W_float = random_matrix(500, 300, 10).cast<float>();
    const Matrix W = W_float.cast<double>();
    const Matrix want = product_of(x, W);
    // x·Wᵀ with W's transpose stored: the same numbers.
    const Matrix W_t = W.transpose();
    EXPECT_EQ(product_of(x, W_t, true), want);
    // W's values as float, widened as they are packed: the same numbers, in both layouts.
    for (bool transposed : {false, true}) {
        const MatrixF stored = transposed ? MatrixF(W_float.transpose()) : W_float;
        Matrix y(100, 300);
        product<double, float>(x, view_of(stored), transposed, y);
        EXPECT_EQ(y, want) << "transposed " << transposed;
    }
    // One thread or two.
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const Matrix one = product_of(x, W);
    omp_set_num_threads(2);
    const Matrix two = product_of(x, W);
    omp_set_num_threads(threads);
    EXPECT_EQ(one, want);
    EXPECT_EQ(two, want);
}

TEST(Gemm, ABlockOfYIsWrittenAndNothingBesideIt) {
    const Matrix x = random_matrix(20, 40, 11), W = random_matrix(40, 30, 12);
    Matrix y = Matrix::Constant(20, 50, 7.0);
    product<double, double>(x, view_of(W), false, y.middleCols(10, 30));
    EXPECT_EQ(Matrix(y.middleCols(10, 30)), product_of(x, W));
    EXPECT_TRUE((y.leftCols(10).array() == 7.0).all());
    EXPECT_TRUE((y.rightCols(10).array() == 7.0).all());
}

TEST(Gemm, NoColumnsOfXGiveZerosAndNoRowsNothing) {
    const Matrix x(6, 0), W(0, 5);
    Matrix y = Matrix::Constant(6, 5, std::numeric_limits<double>::quiet_NaN());
    product<double, double>(x, view_of(W), false, y);
    EXPECT_TRUE((y.array() == 0.0).all());
    Matrix none(0, 5);
    product<double, double>(Matrix(0, 3), view_of(random_matrix(3, 5, 13)), false, none);
    EXPECT_EQ(none.size(), 0);
}

TEST(Gemm, ProjectResizesYAndMultipliesInEitherScalar) {
    const Matrix x = random_matrix(9, 30, 14), W = random_matrix(26, 30, 15);  // W d_out × d_in
    Matrix y;
    project<double>(x, view_of(W), true, y);
    EXPECT_EQ(y, product_of(x, W, true));
    // In double, W's float values where there are any (W itself then unused).
    const MatrixF W_float = W.cast<float>();
    project<double>(x, view_of(W), view_of(W_float), true, y);
    EXPECT_EQ(y, product_of(x, W_float.cast<double>(), true));
    // In float: the float kernel, the same tiles of 48 columns.
    const MatrixF xf = x.cast<float>(), Wf = W.cast<float>();
    MatrixF yf;
    project<float>(xf, view_of(Wf), true, yf);
    ASSERT_EQ(yf.rows(), 9);
    ASSERT_EQ(yf.cols(), 26);
    EXPECT_LT((yf.cast<double>() - product_of(xf.cast<double>(), Wf.cast<double>(), true)).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Gemm, InFloatEveryEntryIsTheSumOfItsProductsAndLiesAnywhere) {
    for (const auto& [m, d_in, d_out] : shapes) {
        const MatrixF x = random_matrix(m, d_in, 16).cast<float>(),
                      W = random_matrix(d_in, d_out + 50, 17).cast<float>();
        MatrixF y(m, d_out + 50);
        product<float, float>(x, view_of(W), false, y);
        const Matrix want = x.cast<double>() * W.cast<double>();
        for (Index i = 0; i < m; ++i)
            for (Index j = 0; j < d_out + 50; ++j) {
                const double size = (x.row(i).cast<double>().cwiseAbs() * W.col(j).cast<double>().cwiseAbs()).value();
                ASSERT_NEAR(y(i, j), want(i, j), size * static_cast<double>(d_in) * 6e-8) << shape(m, d_in, d_out + 50);
            }
        // The last d_out columns alone: the same numbers.
        const MatrixF right = W.rightCols(d_out);
        MatrixF alone(m, d_out);
        product<float, float>(x, view_of(right), false, alone);
        EXPECT_EQ(alone, MatrixF(y.rightCols(d_out))) << shape(m, d_in, d_out);
    }
}

}  // namespace
}  // namespace attnviz::core
