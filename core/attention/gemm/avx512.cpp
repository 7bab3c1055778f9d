// The AVX-512 kernel set (AVX-512F: Intel's Xeons since Skylake-SP, AMD since Zen 4): tiles of 8
// rows × 3 vectors of 16 floats or 8 doubles, summed in 24 of the 32 zmm registers. Compiled with
// target attributes, so the binary runs on any x86-64 and gemm.cpp calls this set only where the
// CPU has these instructions.
#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "core/attention/gemm/kernels.hpp"

#define ATTNVIZ_GEMM_TARGET __attribute__((target("avx512f,avx2,fma,f16c")))

namespace attnviz::core::gemm {
namespace avx512 {

template <class Scalar>
struct Vector;
template <>
struct Vector<float> {
    using Register = __m512;
    static constexpr int lanes = 16;
    ATTNVIZ_GEMM_TARGET static Register zero() { return _mm512_setzero_ps(); }
    ATTNVIZ_GEMM_TARGET static Register all(float x) { return _mm512_set1_ps(x); }
    ATTNVIZ_GEMM_TARGET static Register load(const float* p) { return _mm512_load_ps(p); }
    ATTNVIZ_GEMM_TARGET static Register load_any(const float* p) { return _mm512_loadu_ps(p); }
    ATTNVIZ_GEMM_TARGET static void store_any(float* p, Register r) { _mm512_storeu_ps(p, r); }
    ATTNVIZ_GEMM_TARGET static Register fma(Register a, Register b, Register c) { return _mm512_fmadd_ps(a, b, c); }
    ATTNVIZ_GEMM_TARGET static Register add(Register a, Register b) { return _mm512_add_ps(a, b); }
};
template <>
struct Vector<double> {
    using Register = __m512d;
    static constexpr int lanes = 8;
    ATTNVIZ_GEMM_TARGET static Register zero() { return _mm512_setzero_pd(); }
    ATTNVIZ_GEMM_TARGET static Register all(double x) { return _mm512_set1_pd(x); }
    ATTNVIZ_GEMM_TARGET static Register load(const double* p) { return _mm512_load_pd(p); }
    ATTNVIZ_GEMM_TARGET static Register load_any(const double* p) { return _mm512_loadu_pd(p); }
    ATTNVIZ_GEMM_TARGET static void store_any(double* p, Register r) { _mm512_storeu_pd(p, r); }
    ATTNVIZ_GEMM_TARGET static Register fma(Register a, Register b, Register c) { return _mm512_fmadd_pd(a, b, c); }
    ATTNVIZ_GEMM_TARGET static Register add(Register a, Register b) { return _mm512_add_pd(a, b); }
};

// F16 weights widened 16 at a time; the other stored types are widened by loops the compiler
// vectorizes (blocked.inc). W stored transposed as float or bfloat16 is packed through transposes
// in registers (transpose.inc).
ATTNVIZ_GEMM_TARGET inline void widen_row(const float16* __restrict from, float* __restrict to, int count) {
    int j = 0;
    for (; j + 16 <= count; j += 16)
        _mm512_storeu_ps(to + j, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + j))));
    for (; j < count; ++j) to[j] = _cvtsh_ss(from[j].bits);
}
ATTNVIZ_GEMM_TARGET inline void widen_row(const float16* __restrict from, double* __restrict to, int count) {
    int j = 0;
    for (; j + 8 <= count; j += 8)
        _mm512_storeu_pd(to + j,
                         _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + j)))));
    for (; j < count; ++j) to[j] = _cvtsh_ss(from[j].bits);
}

template <class Scalar>
struct Tile {
    static constexpr int rows = 8, cols = 3 * Vector<Scalar>::lanes;
    // A block of x: up to 512 rows (0.5–1 MB, in the 1–2 MB L2 of these CPUs); a slab of W: 1.5 MB.
    static constexpr int block_rows = 512;
    static constexpr int slab_cols = (1536 * 4 / static_cast<int>(sizeof(Scalar))) / cols * cols;
    ATTNVIZ_GEMM_TARGET static void kernel(int kc, const Scalar* a, const Scalar* b, Scalar* out, std::ptrdiff_t ld,
                                           bool add);
};

#include "core/attention/gemm/blocked.inc"
#include "core/attention/gemm/transpose.inc"

template <class Scalar>
ATTNVIZ_GEMM_TARGET void Tile<Scalar>::kernel(int kc, const Scalar* a, const Scalar* b, Scalar* out, std::ptrdiff_t ld,
                                              bool add) {
    vector_tile<Vector<Scalar>, rows, 3>(kc, a, b, out, ld, add);
}

}  // namespace avx512

const KernelSet& avx512_kernels() {
    static const KernelSet set = avx512::kernel_set(Kernel::avx512);
    return set;
}

}  // namespace attnviz::core::gemm
