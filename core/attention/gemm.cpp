#include "core/attention/gemm.hpp"

#include <omp.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>

#include "core/attention/gemm/kernels.hpp"

namespace attnviz::core {

namespace gemm {

namespace {

const KernelSet& set_of(Kernel kernel) {
    switch (kernel) {
        case Kernel::avx512: return avx512_kernels();
        case Kernel::avx2: return avx2_kernels();
        case Kernel::generic: break;
    }
    return generic_kernels();
}

// The best kernel this CPU runs, from its cpuid bits (as BLIS's bli_cpuid does): the instructions,
// and that the operating system saves the registers they use (XCR0: the YMM state for AVX2, the
// opmask and ZMM state too for AVX-512).
Kernel best_of_cpu() {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return Kernel::generic;
    const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx) return Kernel::generic;
    unsigned xcr0_low = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low & 0x6) != 0x6) return Kernel::generic;  // the SSE and AVX states
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return Kernel::generic;
    const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16);
    if (avx512f && fma && f16c && avx2 && (xcr0_low & 0xe0) == 0xe0) return Kernel::avx512;
    if (avx2 && fma && f16c) return Kernel::avx2;
#endif
    return Kernel::generic;
}

// The kernel in use: the CPU's best until one is chosen.
std::atomic<Kernel>& current() {
    static std::atomic<Kernel> kernel{best_of_cpu()};
    return kernel;
}

}  // namespace

const char* name(Kernel kernel) {
    switch (kernel) {
        case Kernel::avx512: return "avx512";
        case Kernel::avx2: return "avx2";
        case Kernel::generic: break;
    }
    return "generic";
}

std::string description(Kernel kernel) {
    const TileShape f = tile_shape(kernel, false), d = tile_shape(kernel, true);
    const char* instructions = kernel == Kernel::avx512 ? "AVX-512F"
                               : kernel == Kernel::avx2 ? "AVX2 + FMA"
                                                        : "generic loops, no fused multiply-add";
    return std::string(instructions) + ", tiles of " + std::to_string(f.rows) + " × " + std::to_string(f.cols) +
           " floats / " + std::to_string(d.rows) + " × " + std::to_string(d.cols) + " doubles";
}

bool cpu_has(Kernel kernel) {
    const Kernel best = best_of_cpu();
    return kernel == Kernel::generic || kernel == best || (kernel == Kernel::avx2 && best == Kernel::avx512);
}

std::vector<Kernel> cpu_kernels() {
    std::vector<Kernel> kernels;
    for (Kernel k : {Kernel::generic, Kernel::avx2, Kernel::avx512})
        if (cpu_has(k)) kernels.push_back(k);
    return kernels;
}

Kernel kernel() { return current().load(std::memory_order_relaxed); }

bool use(Kernel kernel) {
    if (!cpu_has(kernel)) return false;
    current().store(kernel, std::memory_order_relaxed);
    return true;
}

std::string choose(const char* wanted) {
    if (!wanted || !*wanted) {
        current().store(best_of_cpu());
        return "";
    }
    for (Kernel k : {Kernel::generic, Kernel::avx2, Kernel::avx512}) {
        if (std::strcmp(wanted, name(k)) != 0) continue;
        if (use(k)) return "";
        return std::string("ATTNVIZ_KERNEL=") + wanted + ": this CPU has no " +
               (k == Kernel::avx512 ? "AVX-512F" : "AVX2 with FMA and F16C") + " (its best kernel is " +
               name(best_of_cpu()) + ")";
    }
    return std::string("ATTNVIZ_KERNEL=") + wanted + ": not a kernel; one of generic, avx2, avx512";
}

TileShape tile_shape(Kernel kernel, bool double_precision) {
    const KernelSet& set = set_of(kernel);
    return double_precision ? set.double_tile : set.float_tile;
}

namespace {

// Space for the packed operands, one per thread, slot and type, kept between products, aligned to
// 64 bytes for the kernels' aligned loads whatever the build's instructions (Eigen's allocator
// aligns to 16 bytes only in a build without AVX).
struct Aligned {
    void operator()(void* p) const { std::free(p); }
};
template <class Scalar>
Scalar* scratch(int slot, std::size_t count) {
    thread_local std::unique_ptr<Scalar[], Aligned> space[2];
    thread_local std::size_t sizes[2] = {0, 0};
    if (sizes[slot] < count) {
        const std::size_t bytes = (count * sizeof(Scalar) + 63) / 64 * 64;
        sizes[slot] = 0;
        space[slot].reset(static_cast<Scalar*>(std::aligned_alloc(64, bytes)));
        if (!space[slot]) throw std::bad_alloc();
        sizes[slot] = count;
    }
    return space[slot].get();
}

template <class Scalar, class Weight>
Columns<Scalar, Weight> columns_of(const KernelSet& set) {
    if constexpr (std::is_same_v<Scalar, float>) {
        if constexpr (std::is_same_v<Weight, float>) return set.float_float;
        if constexpr (std::is_same_v<Weight, bfloat16>) return set.float_bfloat16;
        if constexpr (std::is_same_v<Weight, float16>) return set.float_float16;
    } else {
        if constexpr (std::is_same_v<Weight, double>) return set.double_double;
        if constexpr (std::is_same_v<Weight, float>) return set.double_float;
        if constexpr (std::is_same_v<Weight, bfloat16>) return set.double_bfloat16;
        if constexpr (std::is_same_v<Weight, float16>) return set.double_float16;
    }
}

}  // namespace

float* float_scratch(int slot, std::size_t count) { return scratch<float>(slot, count); }
double* double_scratch(int slot, std::size_t count) { return scratch<double>(slot, count); }

}  // namespace gemm

template <class Scalar, class Weight>
void product(RowsInT<Scalar> x, const MatrixView<Weight>& W, bool transposed, RowsOutT<Scalar> y) {
    static_assert(std::is_same_v<Weight, Scalar> || std::is_same_v<Weight, float> || std::is_same_v<Weight, bfloat16> ||
                  std::is_same_v<Weight, float16>);
    using Index = Eigen::Index;
    const Index m = x.rows(), d_in = x.cols(), d_out = y.cols();
    if (m == 0 || d_out == 0) return;
    if (d_in == 0) {
        y.setZero();
        return;
    }
    const gemm::KernelSet& set = gemm::set_of(gemm::kernel());
    const gemm::Columns<Scalar, Weight> columns = gemm::columns_of<Scalar, Weight>(set);
    const gemm::Operands<Scalar, Weight> operands{x.data(), x.outerStride(), m,    d_in, W.data, W.cols, transposed,
                                                  y.data(), y.outerStride(), d_out};
    const Index cols = std::is_same_v<Scalar, float> ? set.float_tile.cols : set.double_tile.cols;
    const Index panels = (d_out + cols - 1) / cols;
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(d_in) * static_cast<double>(d_out);
    std::exception_ptr failure;  // out of memory for the packed operands: cannot leave the parallel region
#pragma omp parallel if (flops > 4e6 && panels > 1)
    {
        const Index threads = omp_get_num_threads(), t = omp_get_thread_num();
        const Index first = panels * t / threads * cols, last = std::min(d_out, panels * (t + 1) / threads * cols);
        try {
            if (first < last) columns(operands, first, last);
        } catch (...) {
#pragma omp critical(attnviz_gemm)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
}

template <class Scalar>
void project(RowsInT<Scalar> x, const WeightsView<Scalar>& W, bool transposed, MatrixT<Scalar>& y) {
    y.resize(x.rows(), transposed ? W.rows() : W.cols());
    project_into<Scalar>(x, W, transposed, y);
}

template <class Scalar>
void project_into(RowsInT<Scalar> x, const WeightsView<Scalar>& W, bool transposed, RowsOutT<Scalar> y) {
    if (W.bfloat16s.data) return product<Scalar, bfloat16>(x, W.bfloat16s, transposed, y);
    if (W.float16s.data) return product<Scalar, float16>(x, W.float16s, transposed, y);
    if constexpr (std::is_same_v<Scalar, double>)
        if (W.floats.data) return product<double, float>(x, W.floats, transposed, y);
    product<Scalar, Scalar>(x, W.values, transposed, y);
}

template <class Scalar>
MatrixT<Scalar> widened(const WeightsView<Scalar>& W) {
    MatrixT<Scalar> m(W.rows(), W.cols());
    const auto widen = [&](const auto& view) {
        for (Eigen::Index i = 0; i < m.size(); ++i) {
            if constexpr (std::is_same_v<std::decay_t<decltype(view.data[i])>, Scalar> ||
                          std::is_same_v<std::decay_t<decltype(view.data[i])>, float>)
                m.data()[i] = static_cast<Scalar>(view.data[i]);
            else
                m.data()[i] = static_cast<Scalar>(to_float(view.data[i]));
        }
    };
    if (W.values.data) widen(W.values);
    if (W.floats.data) widen(W.floats);
    if (W.bfloat16s.data) widen(W.bfloat16s);
    if (W.float16s.data) widen(W.float16s);
    return m;
}

template <class Scalar>
void product_of_transpose(RowsInT<Scalar> a, RowsInT<Scalar> b, MatrixT<Scalar>& y) {
    const MatrixT<Scalar> a_t = a.transpose();  // p × n
    y.resize(a.cols(), b.cols());
    if (b.outerStride() == b.cols()) {  // rows one after another, as a view takes them
        product<Scalar, Scalar>(a_t, MatrixView<Scalar>{b.data(), b.rows(), b.cols()}, false, y);
        return;
    }
    const MatrixT<Scalar> b_rows = b;
    product<Scalar, Scalar>(a_t, view_of(b_rows), false, y);
}

template void product_of_transpose<double>(RowsInT<double>, RowsInT<double>, MatrixT<double>&);
template void product_of_transpose<float>(RowsInT<float>, RowsInT<float>, MatrixT<float>&);
template void project<double>(RowsInT<double>, const WeightsView<double>&, bool, MatrixT<double>&);
template void project<float>(RowsInT<float>, const WeightsView<float>&, bool, MatrixT<float>&);
template void project_into<double>(RowsInT<double>, const WeightsView<double>&, bool, RowsOutT<double>);
template void project_into<float>(RowsInT<float>, const WeightsView<float>&, bool, RowsOutT<float>);
template MatrixT<double> widened<double>(const WeightsView<double>&);
template MatrixT<float> widened<float>(const WeightsView<float>&);
template void product<double, double>(RowsInT<double>, const MatrixView<double>&, bool, RowsOutT<double>);
template void product<double, float>(RowsInT<double>, const MatrixView<float>&, bool, RowsOutT<double>);
template void product<float, float>(RowsInT<float>, const MatrixView<float>&, bool, RowsOutT<float>);
template void product<double, bfloat16>(RowsInT<double>, const MatrixView<bfloat16>&, bool, RowsOutT<double>);
template void product<double, float16>(RowsInT<double>, const MatrixView<float16>&, bool, RowsOutT<double>);
template void product<float, bfloat16>(RowsInT<float>, const MatrixView<bfloat16>&, bool, RowsOutT<float>);
template void product<float, float16>(RowsInT<float>, const MatrixView<float16>&, bool, RowsOutT<float>);

}  // namespace attnviz::core
