#include "core/attention/gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attnviz::core {

namespace {

using gemm::block_rows;
using gemm::depth;
using gemm::tile_rows;
using Index = Eigen::Index;

#if defined(__AVX512F__)
// One AVX-512 vector of Scalar and what the kernel does with it.
template <class Scalar>
struct Vector;
template <>
struct Vector<double> {
    __m512d v;
    static Vector zero() { return {_mm512_setzero_pd()}; }
    static Vector all(double x) { return {_mm512_set1_pd(x)}; }
    static Vector load(const double* p) { return {_mm512_load_pd(p)}; }  // aligned
    static Vector load_any(const double* p) { return {_mm512_loadu_pd(p)}; }
    void store_any(double* p) const { _mm512_storeu_pd(p, v); }
    Vector fma(Vector a, Vector b) const { return {_mm512_fmadd_pd(a.v, b.v, v)}; }  // a·b + this
    Vector operator+(Vector b) const { return {_mm512_add_pd(v, b.v)}; }
};
template <>
struct Vector<float> {
    __m512 v;
    static Vector zero() { return {_mm512_setzero_ps()}; }
    static Vector all(float x) { return {_mm512_set1_ps(x)}; }
    static Vector load(const float* p) { return {_mm512_load_ps(p)}; }
    static Vector load_any(const float* p) { return {_mm512_loadu_ps(p)}; }
    void store_any(float* p) const { _mm512_storeu_ps(p, v); }
    Vector fma(Vector a, Vector b) const { return {_mm512_fmadd_ps(a.v, b.v, v)}; }
    Vector operator+(Vector b) const { return {_mm512_add_ps(v, b.v)}; }
};

// y's tile (tile_rows × tile_cols at `out`, rows `ld` apart) = a · b, or += a · b when `add`:
// a is a packed panel of x (kc × tile_rows: row k holds x_ik for the tile's rows i), b a packed
// panel of W (kc × tile_cols). Each entry: one multiply-add chain over k from zero.
template <class Scalar>
void kernel(int kc, const Scalar* __restrict a, const Scalar* __restrict b, Scalar* out, Index ld, bool add) {
    using V = Vector<Scalar>;
    constexpr int lanes = 64 / sizeof(Scalar), vectors = gemm::tile_cols<Scalar> / lanes;
    V sum[tile_rows][vectors];
#pragma GCC unroll 8
    for (int i = 0; i < tile_rows; ++i)
#pragma GCC unroll 3
        for (int j = 0; j < vectors; ++j) sum[i][j] = V::zero();
    for (int k = 0; k < kc; ++k, a += tile_rows, b += gemm::tile_cols<Scalar>) {
        V w[vectors];
#pragma GCC unroll 3
        for (int j = 0; j < vectors; ++j) w[j] = V::load(b + lanes * j);
#pragma GCC unroll 8
        for (int i = 0; i < tile_rows; ++i) {
            const V x = V::all(a[i]);
#pragma GCC unroll 3
            for (int j = 0; j < vectors; ++j) sum[i][j] = sum[i][j].fma(x, w[j]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < tile_rows; ++i)
#pragma GCC unroll 3
        for (int j = 0; j < vectors; ++j) {
            Scalar* y = out + i * ld + lanes * j;
            (add ? V::load_any(y) + sum[i][j] : sum[i][j]).store_any(y);
        }
}
#else
template <class Scalar>
void kernel(int kc, const Scalar* __restrict a, const Scalar* __restrict b, Scalar* out, Index ld, bool add) {
    constexpr int cols = gemm::tile_cols<Scalar>;
    Scalar sum[tile_rows][cols] = {};
    for (int k = 0; k < kc; ++k, a += tile_rows, b += cols)
        for (int i = 0; i < tile_rows; ++i)
            for (int j = 0; j < cols; ++j) sum[i][j] += a[i] * b[j];
    for (int i = 0; i < tile_rows; ++i)
        for (int j = 0; j < cols; ++j) out[i * ld + j] = add ? out[i * ld + j] + sum[i][j] : sum[i][j];
}
#endif

// Space for the packed operands, one per thread and type, kept between products (a block of x:
// block_rows × depth; a panel of W: depth × tile_cols), aligned for the kernel's loads.
template <class Scalar>
struct Packs {
    std::vector<Scalar, Eigen::aligned_allocator<Scalar>> x, w;
    Packs()
        : x(static_cast<std::size_t>(block_rows) * depth),
          w(static_cast<std::size_t>(depth) * gemm::tile_cols<Scalar>) {}
};
template <class Scalar>
Packs<Scalar>& packs() {
    thread_local Packs<Scalar> p;
    return p;
}

// Rows first … first + count − 1 and columns k0 … k0 + kc − 1 of x as panels of tile_rows rows
// (the last one padded with zero rows): panel r at r·kc·tile_rows, row k of it x_ik for its rows i.
template <class Scalar>
void pack_x(const RowsInT<Scalar>& x, Index first, Index count, Index k0, int kc, Scalar* packed) {
    for (Index r = 0; r < count; r += tile_rows, packed += static_cast<Index>(kc) * tile_rows) {
        const Index rows = std::min<Index>(tile_rows, count - r);
        for (Index i = 0; i < tile_rows; ++i) {
            if (i >= rows) {
                for (int k = 0; k < kc; ++k) packed[k * tile_rows + i] = 0;
                continue;
            }
            const Scalar* row = x.data() + (first + r + i) * x.outerStride() + k0;
            for (int k = 0; k < kc; ++k) packed[k * tile_rows + i] = row[k];
        }
    }
}

// The panel of W for y's columns j0 … j0 + tile_cols − 1 and k0 … k0 + kc − 1 (kc × tile_cols,
// columns past W's zero), in Scalar.
template <class Scalar, class Weight>
void pack_w(const MatrixView<Weight>& W, bool transposed, Index j0, Index k0, int kc, Scalar* packed) {
    constexpr Index tile_cols = gemm::tile_cols<Scalar>;
    const Index d_out = transposed ? W.rows : W.cols, cols = std::min<Index>(tile_cols, d_out - j0);
    if (transposed) {  // column j of the panel is row j0 + j of W
        for (Index j = 0; j < tile_cols; ++j) {
            if (j >= cols) {
                for (int k = 0; k < kc; ++k) packed[k * tile_cols + j] = 0;
                continue;
            }
            const Weight* row = W.data + (j0 + j) * W.cols + k0;
            for (int k = 0; k < kc; ++k) packed[k * tile_cols + j] = static_cast<Scalar>(row[k]);
        }
        return;
    }
    for (int k = 0; k < kc; ++k) {
        const Weight* row = W.data + (k0 + k) * W.cols + j0;
        Scalar* to = packed + k * tile_cols;
#if defined(__AVX512F__)
        if constexpr (std::is_same_v<Scalar, double> && std::is_same_v<Weight, float>) {
            if (cols == tile_cols) {
                for (int v = 0; v < tile_cols; v += 8)
                    _mm512_store_pd(to + v, _mm512_cvtps_pd(_mm256_loadu_ps(row + v)));
                continue;
            }
        }
#endif
        for (Index j = 0; j < cols; ++j) to[j] = static_cast<Scalar>(row[j]);
        for (Index j = cols; j < tile_cols; ++j) to[j] = 0;
    }
}

// One tile of y: the kernel on it, through a tile of its own where y's edge cuts it (tile_m rows,
// cols columns of it lie in y).
template <class Scalar>
void tile(int kc, const Scalar* a, const Scalar* b, Scalar* out, Index ld, bool add, Index tile_m, Index cols) {
    constexpr Index tile_cols = gemm::tile_cols<Scalar>;
    if (tile_m == tile_rows && cols == tile_cols) {
        kernel(kc, a, b, out, ld, add);
        return;
    }
    alignas(64) Scalar edge[tile_rows * tile_cols];
    for (Index i = 0; i < tile_rows; ++i)
        for (Index j = 0; j < tile_cols; ++j)
            edge[i * tile_cols + j] = add && i < tile_m && j < cols ? out[i * ld + j] : Scalar(0);
    kernel(kc, a, b, edge, tile_cols, add);
    for (Index i = 0; i < tile_m; ++i)
        for (Index j = 0; j < cols; ++j) out[i * ld + j] = edge[i * tile_cols + j];
}

// y's columns of panels first_panel … last_panel − 1 (tile_cols each; the last may be cut by y's
// edge), every row, on the calling thread.
template <class Scalar, class Weight>
void product_panels(const RowsInT<Scalar>& x, const MatrixView<Weight>& W, bool transposed, RowsOutT<Scalar>& y,
                    Index first_panel, Index last_panel) {
    constexpr Index tile_cols = gemm::tile_cols<Scalar>;
    const Index m = x.rows(), d_in = x.cols(), d_out = y.cols(), ld = y.outerStride();
    Packs<Scalar>& p = packs<Scalar>();
    for (Index k0 = 0; k0 < d_in; k0 += depth) {
        const int kc = static_cast<int>(std::min<Index>(depth, d_in - k0));
        for (Index i0 = 0; i0 < m; i0 += block_rows) {
            const Index rows = std::min<Index>(block_rows, m - i0);
            pack_x(x, i0, rows, k0, kc, p.x.data());
            for (Index panel = first_panel; panel < last_panel; ++panel) {
                const Index j0 = panel * tile_cols, cols = std::min<Index>(tile_cols, d_out - j0);
                pack_w(W, transposed, j0, k0, kc, p.w.data());
                for (Index r = 0; r < rows; r += tile_rows)
                    tile(kc, p.x.data() + r * kc, p.w.data(), y.data() + (i0 + r) * ld + j0, ld, k0 > 0,
                         std::min<Index>(tile_rows, rows - r), cols);
            }
        }
    }
}

}  // namespace

template <class Scalar, class Weight>
void product(RowsInT<Scalar> x, const MatrixView<Weight>& W, bool transposed, RowsOutT<Scalar> y) {
    static_assert(std::is_same_v<Weight, Scalar> || std::is_same_v<Weight, float>);
    const Index m = x.rows(), d_in = x.cols(), d_out = y.cols();
    if (m == 0 || d_out == 0) return;
    if (d_in == 0) {
        y.setZero();
        return;
    }
    const Index panels = (d_out + gemm::tile_cols<Scalar> - 1) / gemm::tile_cols<Scalar>;
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(d_in) * static_cast<double>(d_out);
#pragma omp parallel if (flops > 4e6 && panels > 1)
    {
        const Index threads = omp_get_num_threads(), t = omp_get_thread_num();
        product_panels(x, W, transposed, y, panels * t / threads, panels * (t + 1) / threads);
    }
}

template <class Scalar>
void project(RowsInT<Scalar> x, const MatrixView<Scalar>& W, const MatrixView<float>& floats, bool transposed,
             MatrixT<Scalar>& y) {
    if constexpr (std::is_same_v<Scalar, double>) {
        if (floats.data) {
            y.resize(x.rows(), transposed ? floats.rows : floats.cols);
            product<double, float>(x, floats, transposed, y);
            return;
        }
    }
    y.resize(x.rows(), transposed ? W.rows : W.cols);
    product<Scalar, Scalar>(x, W, transposed, y);
}

template void project<double>(RowsInT<double>, const MatrixView<double>&, const MatrixView<float>&, bool,
                              MatrixT<double>&);
template void project<float>(RowsInT<float>, const MatrixView<float>&, const MatrixView<float>&, bool, MatrixT<float>&);
template void product<double, double>(RowsInT<double>, const MatrixView<double>&, bool, RowsOutT<double>);
template void product<double, float>(RowsInT<double>, const MatrixView<float>&, bool, RowsOutT<double>);
template void product<float, float>(RowsInT<float>, const MatrixView<float>&, bool, RowsOutT<float>);

}  // namespace attnviz::core
