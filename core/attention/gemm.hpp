// The products of a layer's projections, y = x·W or y = x·Wᵀ, in float or double, with W's values
// in the compute type or stored otherwise: float in a double run, bfloat16 or float16 (a model's
// weights as its file holds them: widened as they are packed, never all at once). A blocked product
// in the manner of GotoBLAS: x is packed a block of rows and `depth` columns at a time, W a slab of
// panels at a time, and a kernel sums tiles of y in registers.
//
// The kernels are chosen at run time from the CPU's instructions (gemm/kernels.hpp): AVX-512,
// AVX2 + FMA, or the generic loops; one binary carries all three. ATTNVIZ_KERNEL forces one.
//
// Every entry of y is summed the same way wherever it lies: its products x_ik·w_kj in order of k,
// in runs of `depth` k each summed by one chain of multiply-adds from zero (fused, with AVX2 and
// AVX-512, so those two give the same numbers), the runs added to y in order. So an entry's value
// depends on its row of x and its column of W only: not on its row or column in y, on W's layout
// (transposed or not; its values stored as float, bfloat16 or float16 or the same values in the
// compute type), on the number of rows or columns, nor on the threads (which split y's columns).
#pragma once
#include <Eigen/Core>
#include <string>
#include <vector>

#include "core/attention/gemm/kernels.hpp"
#include "core/attention/matrix_types.hpp"

namespace attnviz::core {

namespace gemm {
// "generic", "avx2", "avx512" (as ATTNVIZ_KERNEL names them).
const char* name(Kernel kernel);
// What it uses and its tiles, e.g. "AVX2 + FMA, tiles of 6 × 16 floats / 6 × 8 doubles".
std::string description(Kernel kernel);
// Whether this CPU (and its operating system) runs the kernel's instructions.
bool cpu_has(Kernel kernel);
// Every kernel this CPU runs, the best last.
std::vector<Kernel> cpu_kernels();
// The kernel the products use: the CPU's best unless one was chosen.
Kernel kernel();
// Chooses the kernel by its name (ATTNVIZ_KERNEL's value; null or "": the CPU's best). Returns ""
// or why it is refused (an unknown name; a kernel this CPU lacks): the kernel is then unchanged.
std::string choose(const char* name);
// Uses `kernel` from now on (tests, benchmarks); one the CPU lacks is refused (false).
bool use(Kernel kernel);
// A kernel's tile of y: rows × cols summed in registers at a time.
TileShape tile_shape(Kernel kernel, bool double_precision);
}  // namespace gemm

template <class Scalar>
using RowsInT = Eigen::Ref<const MatrixT<Scalar>, 0, Eigen::OuterStride<>>;
template <class Scalar>
using RowsOutT = Eigen::Ref<MatrixT<Scalar>, 0, Eigen::OuterStride<>>;

// y (m × d_out) = x (m × d_in) · W with W d_in × d_out, or x · Wᵀ with W d_out × d_in when
// `transposed`; Weight is Scalar, bfloat16, float16, or float for a double product. y has its shape already and shares
// no memory with x or W; d_in = 0 gives zeros. Large products spread y's columns over OpenMP's
// threads.
template <class Scalar, class Weight>
void product(RowsInT<Scalar> x, const MatrixView<Weight>& W, bool transposed, RowsOutT<Scalar> y);

// A matrix of weights as the products take it: its values in the compute type, or as a model's file
// stores them (float in a double run; bfloat16, float16), widened a panel at a time as they are
// packed, never all at once. At most one of the four is set; none: no matrix.
template <class Scalar>
struct WeightsView {
    MatrixView<Scalar> values;
    MatrixView<float> floats;  // a double run's
    MatrixView<bfloat16> bfloat16s;
    MatrixView<float16> float16s;

    WeightsView() = default;
    WeightsView(MatrixView<Scalar> v) : values(v) {}  // NOLINT: implicit, values in the compute type
    Eigen::Index rows() const {
        return values.data ? values.rows : floats.data ? floats.rows : bfloat16s.data ? bfloat16s.rows : float16s.rows;
    }
    Eigen::Index cols() const {
        return values.data ? values.cols : floats.data ? floats.cols : bfloat16s.data ? bfloat16s.cols : float16s.cols;
    }
    bool empty() const { return rows() == 0 || cols() == 0; }
};

// y = x·W (or x·Wᵀ), resized; project_into writes a block of a matrix (y has its shape already).
template <class Scalar>
void project(RowsInT<Scalar> x, const WeightsView<Scalar>& W, bool transposed, MatrixT<Scalar>& y);
template <class Scalar>
void project_into(RowsInT<Scalar> x, const WeightsView<Scalar>& W, bool transposed, RowsOutT<Scalar> y);
template <class Scalar>
void project(RowsInT<Scalar> x, const MatrixView<Scalar>& W, bool transposed, MatrixT<Scalar>& y) {
    project<Scalar>(x, WeightsView<Scalar>(W), transposed, y);
}

// y = aᵀ·b (a: n×p, b: n×q; y: p×q, resized): the product above with a transposed once (a
// weight's gradient from a layer's input and its output's gradient).
template <class Scalar>
void product_of_transpose(RowsInT<Scalar> a, RowsInT<Scalar> b, MatrixT<Scalar>& y);

// The weights' values in the compute type (a copy: for the few places that need them whole).
template <class Scalar>
MatrixT<Scalar> widened(const WeightsView<Scalar>& W);

extern template void product_of_transpose<double>(RowsInT<double>, RowsInT<double>, MatrixT<double>&);
extern template void product_of_transpose<float>(RowsInT<float>, RowsInT<float>, MatrixT<float>&);
extern template void project<double>(RowsInT<double>, const WeightsView<double>&, bool, MatrixT<double>&);
extern template void project<float>(RowsInT<float>, const WeightsView<float>&, bool, MatrixT<float>&);
extern template void project_into<double>(RowsInT<double>, const WeightsView<double>&, bool, RowsOutT<double>);
extern template void project_into<float>(RowsInT<float>, const WeightsView<float>&, bool, RowsOutT<float>);
extern template MatrixT<double> widened<double>(const WeightsView<double>&);
extern template MatrixT<float> widened<float>(const WeightsView<float>&);
extern template void product<double, double>(RowsInT<double>, const MatrixView<double>&, bool, RowsOutT<double>);
extern template void product<double, float>(RowsInT<double>, const MatrixView<float>&, bool, RowsOutT<double>);
extern template void product<float, float>(RowsInT<float>, const MatrixView<float>&, bool, RowsOutT<float>);
extern template void product<double, bfloat16>(RowsInT<double>, const MatrixView<bfloat16>&, bool, RowsOutT<double>);
extern template void product<double, float16>(RowsInT<double>, const MatrixView<float16>&, bool, RowsOutT<double>);
extern template void product<float, bfloat16>(RowsInT<float>, const MatrixView<bfloat16>&, bool, RowsOutT<float>);
extern template void product<float, float16>(RowsInT<float>, const MatrixView<float16>&, bool, RowsOutT<float>);

}  // namespace attnviz::core
