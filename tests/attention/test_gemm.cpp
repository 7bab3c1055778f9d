// Tests of core/attention/gemm.hpp, once for every kernel this CPU runs (generic, AVX2, AVX-512):
// the products against direct loops, the order of their sums (the same for an entry wherever it
// lies, whatever W's layout, dtype or the threads), and weights stored as bfloat16 and float16.
#include "core/attention/gemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

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

// Shapes around every kernel's blocking edges: one entry; fewer rows and columns than a tile; a
// tile exactly (4 × 12, 4 × 24, 8 × 24, 8 × 48); one past a run of k, a tile's rows and columns;
// more rows than a block of x (128 to 512); more columns than a slab of W (504 to 1536).
const Index shapes[][3] = {{1, 1, 1},   {7, 5, 3},      {4, 256, 12},  {5, 257, 13},   {8, 256, 24},   {9, 257, 25},
                           {17, 3, 49}, {130, 600, 50}, {260, 40, 17}, {513, 300, 49}, {64, 1024, 72}, {3, 70, 1540}};

// A matrix's values rounded to bfloat16 (by truncation) and to float16 (by the hardware-free
// route: the nearest half found among the patterns, for the small matrices here).
template <class Half>
MatrixT<Half> halves_of(const Matrix& m) {
    MatrixT<Half> h(m.rows(), m.cols());
    for (Index i = 0; i < m.size(); ++i) {
        const float f = static_cast<float>(m.data()[i]);
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        if constexpr (std::is_same_v<Half, bfloat16>) {
            h.data()[i] = bfloat16{static_cast<std::uint16_t>(u >> 16)};
        } else {  // |values| < 8 here: a half's 10 mantissa bits from the float's (truncated)
            const int exponent = static_cast<int>((u >> 23) & 255) - 127;
            const std::uint32_t sign = (u >> 31) << 15;
            if (exponent < -14) {  // subnormal or zero: mantissa/1024 · 2^−14
                const auto mantissa = static_cast<std::uint32_t>(std::ldexp(std::abs(f), 24));
                h.data()[i] = float16{static_cast<std::uint16_t>(sign | mantissa)};
            } else {
                h.data()[i] = float16{static_cast<std::uint16_t>(
                    sign | static_cast<std::uint32_t>(exponent + 15) << 10 | ((u >> 13) & 1023))};
            }
        }
    }
    return h;
}

template <class Half>
MatrixF widened_halves(const MatrixT<Half>& h) {
    MatrixF f(h.rows(), h.cols());
    for (Index i = 0; i < h.size(); ++i) f.data()[i] = to_float(h.data()[i]);
    return f;
}

// Each test of the suite runs once per kernel of the CPU, that kernel in use.
class GemmKernel : public testing::TestWithParam<gemm::Kernel> {
protected:
    void SetUp() override { ASSERT_TRUE(gemm::use(GetParam())); }
    void TearDown() override { gemm::choose(nullptr); }
};

std::string kernel_name(const testing::TestParamInfo<gemm::Kernel>& info) { return gemm::name(info.param); }

INSTANTIATE_TEST_SUITE_P(Kernels, GemmKernel, testing::ValuesIn(gemm::cpu_kernels()), kernel_name);

TEST_P(GemmKernel, EveryEntryIsTheSumOfItsProductsAsADirectLoopAddsThem) {
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

// x·w rounded on its own (a call: the compiler cannot fuse it into the sum that follows).
[[gnu::noinline]] double rounded_product(double x, double w) { return x * w; }

// The order gemm.hpp gives: runs of `depth` k, each a chain from zero (of fused multiply-adds with
// AVX2 and AVX-512; a product then a sum, each rounded, with the generic loops), the runs added
// in order.
TEST_P(GemmKernel, EachEntryIsSummedInRunsOfDepthEachAChainOfMultiplyAdds) {
    const bool fused = GetParam() != gemm::Kernel::generic;
    const Index m = 11, d_in = 2 * gemm::depth + 37, d_out = 29;
    const Matrix x = random_matrix(m, d_in, 3), W = random_matrix(d_in, d_out, 4);
    const Matrix y = product_of(x, W);
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < d_out; ++j) {
            double total = 0;
            for (Index k0 = 0; k0 < d_in; k0 += gemm::depth) {
                double run = 0;
                for (Index k = k0; k < std::min<Index>(d_in, k0 + gemm::depth); ++k)
                    run = fused ? std::fma(x(i, k), W(k, j), run) : run + rounded_product(x(i, k), W(k, j));
                total = k0 == 0 ? run : total + run;
            }
            ASSERT_EQ(y(i, j), total) << i << "," << j;
        }
}

TEST(Gemm, TheKernelsWithFusedMultiplyAddsGiveTheSameNumbers) {
    const std::vector<gemm::Kernel> kernels = gemm::cpu_kernels();
    if (kernels.size() < 3) GTEST_SKIP() << "this CPU has no AVX-512: one kernel with fused multiply-adds";
    const Matrix x = random_matrix(37, 700, 30), W = random_matrix(700, 130, 31);
    ASSERT_TRUE(gemm::use(gemm::Kernel::avx2));
    const Matrix avx2 = product_of(x, W);
    ASSERT_TRUE(gemm::use(gemm::Kernel::avx512));
    const Matrix avx512 = product_of(x, W);
    gemm::choose(nullptr);
    EXPECT_EQ(avx2, avx512);
}

TEST_P(GemmKernel, AnEntrysValueDependsOnlyOnItsRowOfXAndItsColumnOfW) {
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

TEST_P(GemmKernel, WsLayoutDtypeAndTheThreadsChangeNoValue) {
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

TEST_P(GemmKernel, ABlockOfYIsWrittenAndNothingBesideIt) {
    const Matrix x = random_matrix(20, 40, 11), W = random_matrix(40, 30, 12);
    Matrix y = Matrix::Constant(20, 50, 7.0);
    product<double, double>(x, view_of(W), false, y.middleCols(10, 30));
    EXPECT_EQ(Matrix(y.middleCols(10, 30)), product_of(x, W));
    EXPECT_TRUE((y.leftCols(10).array() == 7.0).all());
    EXPECT_TRUE((y.rightCols(10).array() == 7.0).all());
}

TEST_P(GemmKernel, NoColumnsOfXGiveZerosAndNoRowsNothing) {
    const Matrix x(6, 0), W(0, 5);
    Matrix y = Matrix::Constant(6, 5, std::numeric_limits<double>::quiet_NaN());
    product<double, double>(x, view_of(W), false, y);
    EXPECT_TRUE((y.array() == 0.0).all());
    Matrix none(0, 5);
    product<double, double>(Matrix(0, 3), view_of(random_matrix(3, 5, 13)), false, none);
    EXPECT_EQ(none.size(), 0);
}

TEST_P(GemmKernel, ProjectResizesYAndMultipliesInEitherScalar) {
    const Matrix x = random_matrix(9, 30, 14), W = random_matrix(26, 30, 15);  // W d_out × d_in
    Matrix y;
    project<double>(x, view_of(W), true, y);
    EXPECT_EQ(y, product_of(x, W, true));
    // In double, W's values stored as float, bfloat16 or float16 where they are so.
    const MatrixF W_float = W.cast<float>();
    WeightsView<double> stored;
    stored.floats = view_of(W_float);
    project<double>(x, stored, true, y);
    EXPECT_EQ(y, product_of(x, W_float.cast<double>(), true));
    EXPECT_EQ(widened(stored), W_float.cast<double>());
    const MatrixT<bfloat16> W_bf16 = halves_of<bfloat16>(W);
    WeightsView<double> bf16;
    bf16.bfloat16s = view_of(W_bf16);
    project<double>(x, bf16, true, y);
    EXPECT_EQ(y, product_of(x, widened(bf16), true));
    EXPECT_EQ(widened(bf16), widened_halves(W_bf16).cast<double>());
    // In float: the float kernel.
    const MatrixF xf = x.cast<float>(), Wf = W.cast<float>();
    MatrixF yf;
    project<float>(xf, view_of(Wf), true, yf);
    ASSERT_EQ(yf.rows(), 9);
    ASSERT_EQ(yf.cols(), 26);
    EXPECT_LT((yf.cast<double>() - product_of(xf.cast<double>(), Wf.cast<double>(), true)).cwiseAbs().maxCoeff(), 1e-5);
}

TEST_P(GemmKernel, InFloatEveryEntryIsTheSumOfItsProductsAndLiesAnywhere) {
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
        // W's transpose stored (nn.Linear's layout), packed through a transpose: the same numbers.
        const MatrixF W_t = W.transpose();
        MatrixF y_t(m, d_out + 50);
        product<float, float>(x, view_of(W_t), true, y_t);
        EXPECT_EQ(y_t, y) << shape(m, d_in, d_out + 50) << " transposed";
    }
}

// aᵀ·b (a weight's gradient): every entry the sum of its products, as the direct loops give it; a
// block of rows of a larger matrix (rows apart by more than their length) the same.
TEST_P(GemmKernel, TheProductOfATransposeIsTheSumOfItsProducts) {
    const Matrix a = random_matrix(70, 33, 50), b = random_matrix(70, 260, 51);
    Matrix y;
    product_of_transpose<double>(a, b, y);
    ASSERT_EQ(y.rows(), 33);
    ASSERT_EQ(y.cols(), 260);
    for (Index i = 0; i < 33; ++i)
        for (Index j = 0; j < 260; ++j) {
            double sum = 0, size = 0;
            for (Index k = 0; k < 70; ++k) {
                sum += a(k, i) * b(k, j);
                size += std::abs(a(k, i) * b(k, j));
            }
            ASSERT_NEAR(y(i, j), sum, size * 1e-14) << i << " " << j;
        }
    const Matrix wide = random_matrix(70, 300, 52);
    Matrix y_block;
    product_of_transpose<double>(a, wide.leftCols(260), y_block);
    Matrix y_wide;
    product_of_transpose<double>(a, Matrix(wide.leftCols(260)), y_wide);
    EXPECT_EQ(y_block, y_wide);
}

// Every half's value, by its definition: (−1)^sign · 2^(exponent − 15) · (1 + mantissa/1024), or
// 2^−14 · mantissa/1024 for exponent 0; exponent 31 infinity (mantissa 0) or NaN.
double half_by_definition(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    double v = exponent == 0 ? std::ldexp(mantissa / 1024.0, -14)
               : exponent == 31
                   ? (mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                   : std::ldexp(1 + mantissa / 1024.0, exponent - 15);
    return sign ? -v : v;
}

TEST(Half, EveryFloat16AndBfloat16IsWidenedToItsValue) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const double want = half_by_definition(bits), got = to_float(float16{bits});
        if (std::isnan(want))
            ASSERT_TRUE(std::isnan(got)) << std::hex << b;
        else
            ASSERT_EQ(got, want) << std::hex << b;
        ASSERT_EQ(std::signbit(got), (b >> 15) != 0) << std::hex << b;
        // bfloat16: a float's top 16 bits.
        const double bf = to_float(bfloat16{bits});
        const int exponent = (b >> 7) & 255, mantissa = b & 127, sign = b >> 15;
        double bf_want = exponent == 0     ? std::ldexp(mantissa / 128.0, -126)
                         : exponent == 255 ? (mantissa ? std::numeric_limits<double>::quiet_NaN()
                                                       : std::numeric_limits<double>::infinity())
                                           : std::ldexp(1 + mantissa / 128.0, exponent - 127);
        if (sign) bf_want = -bf_want;
        if (std::isnan(bf_want))
            ASSERT_TRUE(std::isnan(bf)) << std::hex << b;
        else
            ASSERT_EQ(bf, bf_want) << std::hex << b;
    }
}

// Weights stored as bfloat16 or float16 multiply as their values in the compute type: the same
// numbers, in float and double, either layout.
template <class Half>
void check_stored_halves() {
    Matrix values = random_matrix(300, 70, 40);
    values(0, 0) = 3e-6;  // a float16 subnormal
    const MatrixT<Half> W = halves_of<Half>(values);
    const MatrixT<Half> W_t = W.transpose();
    const MatrixF W_float = widened_halves(W);
    ASSERT_NE(W_float(0, 0), 0.0f);
    const Matrix x = random_matrix(45, 300, 41);
    const MatrixF xf = x.cast<float>();
    for (bool transposed : {false, true}) {
        const MatrixT<Half>& stored = transposed ? W_t : W;
        MatrixF yf(45, 70), want_f(45, 70);
        product<float, Half>(xf, view_of(stored), transposed, yf);
        product<float, float>(xf, view_of(W_float), false, want_f);
        EXPECT_EQ(yf, want_f) << "float, transposed " << transposed;
        Matrix y(45, 70);
        product<double, Half>(x, view_of(stored), transposed, y);
        EXPECT_EQ(y, product_of(x, W_float.cast<double>())) << "double, transposed " << transposed;
    }
}

TEST_P(GemmKernel, WeightsStoredAsBfloat16MultiplyAsTheirValues) { check_stored_halves<bfloat16>(); }
TEST_P(GemmKernel, WeightsStoredAsFloat16MultiplyAsTheirValues) { check_stored_halves<float16>(); }

}  // namespace
}  // namespace attnviz::core
