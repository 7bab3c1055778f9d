// Inside core::product (core/attention/gemm.hpp): what a kernel set of one instruction set gives
// the product, and how the product hands it its operands (plain pointers: the kernel files
// include nothing but this header and the standard library's). One set per instruction set (generic.cpp,
// avx2.cpp, avx512.cpp), each compiled for its instructions with function target attributes, so
// one binary carries all three and gemm.cpp picks one at run time from the CPU's features.
//
// Only the functions of the kernel files carry the target attributes: inline code they use from
// headers is compiled for any CPU, so nothing compiled for AVX2 or AVX-512 can be shared with (and
// run by) the rest of the program.
#pragma once

#include <cstddef>

#include "core/base/half.hpp"

namespace attnviz::core::gemm {

enum class Kernel { generic, avx2, avx512 };

// k summed in one chain (a run), by every kernel: the same for all, so the kernels with fused
// multiply-adds (AVX2, AVX-512) give the same numbers.
constexpr int depth = 256;

// A kernel's tile of y: rows × cols summed in registers at a time.
struct TileShape {
    int rows, cols;
};

// y (m × d_out, rows y_stride apart) = x (m × d_in, rows x_stride apart) · W, with W d_in × d_out,
// or x · Wᵀ with W d_out × d_in when `transposed` (W's rows W_cols apart, W_cols its columns).
template <class Scalar, class Weight>
struct Operands {
    const Scalar* x;
    std::ptrdiff_t x_stride, m, d_in;
    const Weight* W;
    std::ptrdiff_t W_cols;
    bool transposed;
    Scalar* y;
    std::ptrdiff_t y_stride, d_out;
};

// Columns first … last − 1 of y, every row, on the calling thread (first a multiple of the set's
// tile columns, last one too or d_out).
template <class Scalar, class Weight>
using Columns = void (*)(const Operands<Scalar, Weight>&, std::ptrdiff_t first, std::ptrdiff_t last);

struct KernelSet {
    Kernel kernel;
    TileShape float_tile, double_tile;  // what its kernels sum in registers
    Columns<float, float> float_float;
    Columns<float, bfloat16> float_bfloat16;
    Columns<float, float16> float_float16;
    Columns<double, double> double_double;
    Columns<double, float> double_float;
    Columns<double, bfloat16> double_bfloat16;
    Columns<double, float16> double_float16;
};

const KernelSet& generic_kernels();
const KernelSet& avx2_kernels();
const KernelSet& avx512_kernels();

// Scratch space of the calling thread for packed operands, `count` values aligned to 64 bytes,
// kept between products; slot 0 and 1 are distinct buffers (x's block, W's panels).
float* float_scratch(int slot, std::size_t count);
double* double_scratch(int slot, std::size_t count);

}  // namespace attnviz::core::gemm
