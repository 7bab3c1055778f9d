// The AVX2 kernel set (AVX2, FMA and F16C: Intel since Haswell, AMD since Zen): tiles of 6 rows ×
// 2 vectors of 8 floats or 4 doubles, summed in 12 of the 16 ymm registers (with 3 × 3 vectors
// and all 16 in use, the compiler reloads W's vectors in every multiply-add, 0.6× as fast on Zen 3). Compiled with
// target attributes, so the binary runs on any x86-64 and gemm.cpp calls this set only where the CPU has these
// instructions.
#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "core/attention/gemm/kernels.hpp"

#define ATTNVIZ_GEMM_TARGET __attribute__((target("avx2,fma,f16c")))

namespace attnviz::core::gemm {
namespace avx2 {

template <class Scalar>
struct Vector;
template <>
struct Vector<float> {
    using Register = __m256;
    static constexpr int lanes = 8;
    ATTNVIZ_GEMM_TARGET static Register zero() { return _mm256_setzero_ps(); }
    ATTNVIZ_GEMM_TARGET static Register all(float x) { return _mm256_set1_ps(x); }
    ATTNVIZ_GEMM_TARGET static Register load(const float* p) { return _mm256_load_ps(p); }
    ATTNVIZ_GEMM_TARGET static Register load_any(const float* p) { return _mm256_loadu_ps(p); }
    ATTNVIZ_GEMM_TARGET static void store_any(float* p, Register r) { _mm256_storeu_ps(p, r); }
    ATTNVIZ_GEMM_TARGET static Register fma(Register a, Register b, Register c) { return _mm256_fmadd_ps(a, b, c); }
    ATTNVIZ_GEMM_TARGET static Register add(Register a, Register b) { return _mm256_add_ps(a, b); }
};
template <>
struct Vector<double> {
    using Register = __m256d;
    static constexpr int lanes = 4;
    ATTNVIZ_GEMM_TARGET static Register zero() { return _mm256_setzero_pd(); }
    ATTNVIZ_GEMM_TARGET static Register all(double x) { return _mm256_set1_pd(x); }
    ATTNVIZ_GEMM_TARGET static Register load(const double* p) { return _mm256_load_pd(p); }
    ATTNVIZ_GEMM_TARGET static Register load_any(const double* p) { return _mm256_loadu_pd(p); }
    ATTNVIZ_GEMM_TARGET static void store_any(double* p, Register r) { _mm256_storeu_pd(p, r); }
    ATTNVIZ_GEMM_TARGET static Register fma(Register a, Register b, Register c) { return _mm256_fmadd_pd(a, b, c); }
    ATTNVIZ_GEMM_TARGET static Register add(Register a, Register b) { return _mm256_add_pd(a, b); }
};

// F16 weights widened 8 at a time (F16C); the other stored types are widened by loops the
// compiler vectorizes (blocked.inc).
ATTNVIZ_GEMM_TARGET inline void widen_row(const float16* __restrict from, float* __restrict to, int count) {
    int j = 0;
    for (; j + 8 <= count; j += 8)
        _mm256_storeu_ps(to + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + j))));
    for (; j < count; ++j) to[j] = _cvtsh_ss(from[j].bits);
}
ATTNVIZ_GEMM_TARGET inline void widen_row(const float16* __restrict from, double* __restrict to, int count) {
    int j = 0;
    for (; j + 8 <= count; j += 8) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + j)));
        _mm256_storeu_pd(to + j, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(to + j + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
    for (; j < count; ++j) to[j] = _cvtsh_ss(from[j].bits);
}

template <class Scalar>
struct Tile {
    static constexpr int rows = 6, cols = 2 * Vector<Scalar>::lanes;
    // A block of x: 256–336 KB (of Zen 3's 512 KB L2); a slab of W: 1–2 MB.
    static constexpr int block_rows = sizeof(Scalar) == 8 ? 168 : 256;
    static constexpr int slab_cols = 1024;
    ATTNVIZ_GEMM_TARGET static void kernel(int kc, const Scalar* a, const Scalar* b, Scalar* out, std::ptrdiff_t ld,
                                           bool add);
};

#include "core/attention/gemm/blocked.inc"
#include "core/attention/gemm/transpose.inc"

template <class Scalar>
ATTNVIZ_GEMM_TARGET void Tile<Scalar>::kernel(int kc, const Scalar* a, const Scalar* b, Scalar* out, std::ptrdiff_t ld,
                                              bool add) {
    vector_tile<Vector<Scalar>, rows, 2>(kc, a, b, out, ld, add);
}

}  // namespace avx2

const KernelSet& avx2_kernels() {
    static const KernelSet set = avx2::kernel_set(Kernel::avx2);
    return set;
}

}  // namespace attnviz::core::gemm
