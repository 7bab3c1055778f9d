// The products' kernels in a portable build (ATTNVIZ_PORTABLE: no -march=native, as a package is
// built): this executable is compiled for any x86-64, so its AVX2 and AVX-512 code is only what
// the kernel files' target attributes give. It picks the kernel of this CPU's instructions at run
// time, read here independently from /proc/cpuinfo, and every kernel the CPU has multiplies right.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "core/attention/gemm.hpp"

namespace attnviz::core {
namespace {

std::set<std::string> cpu_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::string> flags;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("flags", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            for (std::string w; words >> w;) flags.insert(w);
            break;
        }
    return flags;
}

TEST(PortableBuild, WasCompiledForAnyX8664) {
#if defined(__AVX__) || defined(__AVX2__) || defined(__AVX512F__)
    FAIL() << "compiled with AVX: not the portable build's flags";
#endif
}

TEST(PortableBuild, PicksTheKernelOfThisCpusInstructions) {
    const std::set<std::string> flags = cpu_flags();
    if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
    const char* want = flags.count("avx512f")                                             ? "avx512"
                       : flags.count("avx2") && flags.count("fma") && flags.count("f16c") ? "avx2"
                                                                                          : "generic";
    EXPECT_STREQ(gemm::name(gemm::kernel()), want);
    EXPECT_EQ(gemm::cpu_kernels().back(), gemm::kernel());
}

TEST(PortableBuild, EveryKernelOfTheCpuMultipliesAsADirectLoop) {
    std::mt19937 engine(1);
    std::normal_distribution<double> normal;
    Matrix x(37, 300), W(300, 53);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(engine);
    for (Eigen::Index i = 0; i < W.size(); ++i) W.data()[i] = normal(engine);
    for (const gemm::Kernel kernel : gemm::cpu_kernels()) {
        ASSERT_TRUE(gemm::use(kernel));
        Matrix y(37, 53);
        product<double, double>(x, view_of(W), false, y);
        MatrixT<float> yf(37, 53);
        const MatrixT<float> xf = x.cast<float>(), Wf = W.cast<float>();
        product<float, float>(xf, view_of(Wf), false, yf);
        for (Eigen::Index i = 0; i < 37; ++i)
            for (Eigen::Index j = 0; j < 53; ++j) {
                double sum = 0, size = 0;
                for (Eigen::Index k = 0; k < 300; ++k) {
                    sum += x(i, k) * W(k, j);
                    size += std::abs(x(i, k) * W(k, j));
                }
                ASSERT_NEAR(y(i, j), sum, size * 1e-13) << gemm::name(kernel);
                ASSERT_NEAR(yf(i, j), sum, size * 1e-4) << gemm::name(kernel);
            }
    }
    gemm::choose(nullptr);
}

}  // namespace
}  // namespace attnviz::core
