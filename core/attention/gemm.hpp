// The products of a layer's projections, y = x·W or y = x·Wᵀ, in float or double, with W's values
// in the compute type or, in double, float ones (a model's F32 weights in a double run: widened as
// they are packed, never all at once). A blocked product in the manner of GotoBLAS: x is packed a
// block of rows and `depth` columns at a time, W a panel of tile_cols columns at a time, and a
// kernel sums tiles of tile_rows × tile_cols entries of y in registers (AVX-512 where the build has
// it).
//
// Every entry of y is summed the same way wherever it lies: its products x_ik·w_kj in order of k,
// in runs of `depth` k each summed by one chain of (fused) multiply-adds from zero, the runs added
// to y in order. So an entry's value depends on its row of x and its column of W only: not on its
// row or column in y, on W's layout (transposed or not; float or the same values as double), on
// the number of rows or columns, nor on the threads (which split y's columns).
#pragma once
#include <Eigen/Core>

#include "core/attention/matrix_types.hpp"

namespace attnviz::core {

namespace gemm {
constexpr int tile_rows = 8;  // rows of y a kernel call sums
// Columns of y a kernel call sums: three AVX-512 vectors (24 doubles, 48 floats).
template <class Scalar>
constexpr int tile_cols = 3 * 64 / static_cast<int>(sizeof(Scalar));
constexpr int depth = 256;       // k a kernel call sums (a panel of W: depth × tile_cols, 48 KB, in L1)
constexpr int block_rows = 512;  // rows of x packed at a time (block_rows × depth, in L2)
}  // namespace gemm

template <class Scalar>
using RowsInT = Eigen::Ref<const MatrixT<Scalar>, 0, Eigen::OuterStride<>>;
template <class Scalar>
using RowsOutT = Eigen::Ref<MatrixT<Scalar>, 0, Eigen::OuterStride<>>;

// y (m × d_out) = x (m × d_in) · W with W d_in × d_out, or x · Wᵀ with W d_out × d_in when
// `transposed`; Weight is Scalar, or float for a double product. y has its shape already and shares
// no memory with x or W; d_in = 0 gives zeros. Large products spread y's columns over OpenMP's
// threads.
template <class Scalar, class Weight>
void product(RowsInT<Scalar> x, const MatrixView<Weight>& W, bool transposed, RowsOutT<Scalar> y);

// y = x·W (or x·Wᵀ), resized. In double, W's values are `floats` where that holds any (W then
// unused), widened as they are packed.
template <class Scalar>
void project(RowsInT<Scalar> x, const MatrixView<Scalar>& W, const MatrixView<float>& floats, bool transposed,
             MatrixT<Scalar>& y);
template <class Scalar>
void project(RowsInT<Scalar> x, const MatrixView<Scalar>& W, bool transposed, MatrixT<Scalar>& y) {
    project<Scalar>(x, W, {}, transposed, y);
}

extern template void project<double>(RowsInT<double>, const MatrixView<double>&, const MatrixView<float>&, bool,
                                     MatrixT<double>&);
extern template void project<float>(RowsInT<float>, const MatrixView<float>&, const MatrixView<float>&, bool,
                                    MatrixT<float>&);
extern template void product<double, double>(RowsInT<double>, const MatrixView<double>&, bool, RowsOutT<double>);
extern template void product<double, float>(RowsInT<double>, const MatrixView<float>&, bool, RowsOutT<double>);
extern template void product<float, float>(RowsInT<float>, const MatrixView<float>&, bool, RowsOutT<float>);

}  // namespace attnviz::core
