// The baseline kernel set, for any CPU: plain loops, which the compiler vectorizes with the build's
// instructions (SSE2 on any x86-64). A step of a chain is a product and a sum, each rounded (the
// file is built with -ffp-contract=off: the baseline has no fused multiply-add), so its numbers
// can differ in the last bits from the AVX2 and AVX-512 sets', which fuse them.
#include <cstddef>
#include <type_traits>

#include "core/attention/gemm/kernels.hpp"

#define ATTNVIZ_GEMM_TARGET

namespace attnviz::core::gemm {
namespace generic {

// tile (rows × cols at out, rows ld apart) = a · b, or += when `add`.
template <class Scalar, int rows, int cols>
void loop_tile(int kc, const Scalar* __restrict a, const Scalar* __restrict b, Scalar* out, std::ptrdiff_t ld,
               bool add) {
    Scalar sum[rows][cols] = {};
    for (int k = 0; k < kc; ++k, a += rows, b += cols)
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j) {
                const Scalar product = a[i] * b[j];
                sum[i][j] = sum[i][j] + product;
            }
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) out[i * ld + j] = add ? out[i * ld + j] + sum[i][j] : sum[i][j];
}

template <class Scalar>
struct Tile {
    static constexpr int rows = 4, cols = 64 / sizeof(Scalar);
    static constexpr int block_rows = 128, slab_cols = 512;
    static void kernel(int kc, const Scalar* a, const Scalar* b, Scalar* out, std::ptrdiff_t ld, bool add) {
        loop_tile<Scalar, rows, cols>(kc, a, b, out, ld, add);
    }
};

#include "core/attention/gemm/blocked.inc"

}  // namespace generic

const KernelSet& generic_kernels() {
    static const KernelSet set = generic::kernel_set(Kernel::generic);
    return set;
}

}  // namespace attnviz::core::gemm
