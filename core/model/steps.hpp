// The small steps of a transformer block around its attention: norms, projections and the MLP's
// nonlinearity, each on a whole n×d matrix (one token per row); the products are core::project's
// (core/attention/gemm.hpp).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <utility>

#include "core/attention/forward.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/model/model_config.hpp"

namespace attnviz::model {

using core::MatrixT;
template <class Scalar>
using RowVectorT = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

// A norm of each row x (1×d) of a matrix:
//   LayerNorm  (x − mean(x)) / √(var(x) + eps) · w + b     var the biased variance (as nn.LayerNorm)
//   RMSNorm    w · (x / √(mean(x²) + eps))                 (Llama's LlamaRMSNorm; no bias)
//              (1 + w) · (x / √(mean(x²) + eps))           (Gemma's, `plus_one`)
// A norm without weights (w empty) is none: apply() copies.
template <class Scalar>
struct Norm {
    bool rms = false;
    bool plus_one = false;
    double eps = 1e-5;
    RowVectorT<Scalar> w;  // 1×d
    RowVectorT<Scalar> b;  // 1×d (LayerNorm only)

    // out (n×d) = the norm of each row of x (n×d); out may not be x.
    void apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& out) const;
};

// A matrix of weights: values of its own in the compute type, or a model's values where the folder
// holds them in memory (WeightFiles::in_place), used as they are: in the compute type, or stored as
// F32 (a double run), BF16 or F16 and widened by core::product a panel at a time as it packs them
// (core::WeightsView). The folder outlives every weight read from it. Copies share the values.
template <class Scalar>
class Weights {
public:
    Weights() = default;
    Weights(MatrixT<Scalar> own)  // NOLINT: implicit, so that `W = matrix` holds its own values
        : own_(std::make_shared<const MatrixT<Scalar>>(std::move(own))), view_(core::view_of(*own_)) {}
    static Weights in_place(core::WeightsView<Scalar> view) {
        Weights w;
        w.view_ = view;
        return w;
    }
    const core::WeightsView<Scalar>& view() const { return view_; }
    Eigen::Index rows() const { return view_.rows(); }
    Eigen::Index cols() const { return view_.cols(); }
    bool empty() const { return view_.empty(); }

private:
    std::shared_ptr<const MatrixT<Scalar>> own_;  // null for values in place
    core::WeightsView<Scalar> view_;
};

// A linear map of each row: y = x·W + b, with W d_in×d_out as GPT-2's Conv1D stores it, or
// y = x·Wᵀ + b with W d_out×d_in as nn.Linear stores it (`transposed`); b 1×d_out or empty.
template <class Scalar>
struct Projection {
    Weights<Scalar> W;
    bool transposed = false;
    RowVectorT<Scalar> b;

    Eigen::Index d_out() const { return transposed ? W.rows() : W.cols(); }
    // y (n×d_out) = x (n×d_in) through the map.
    void apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& y) const;
};

// The MLP's nonlinearity on every entry of m, in place (see Activation in model_config.hpp).
template <class Scalar>
void activate(Activation activation, MatrixT<Scalar>& m);

// The MLP of a block on x (n×d_model) into out (n×d_model), `hidden` (n×d_ff) its scratch:
//   plain (GPT-2, BERT):  out = act(x·W_up + b_up)·W_down + b_down
//   gated (Llama family): out = (act(x·W_gate) ⊙ (x·W_up))·W_down        (SwiGLU with act = silu)
// Phi-3 stores W_gate and W_up as one gate_up_proj, its first d_ff outputs the gate's: `up` is then
// that fused projection (2·d_ff outputs) and `gate` empty.
template <class Scalar>
struct Mlp {
    Activation activation = Activation::gelu;
    bool gated = false;
    bool fused_gate_up = false;
    Projection<Scalar> up, gate, down;  // gate only when gated and not fused

    void apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& out, MatrixT<Scalar>& hidden) const;
};

extern template struct Norm<float>;
extern template struct Norm<double>;
extern template struct Projection<float>;
extern template struct Projection<double>;
extern template struct Mlp<float>;
extern template struct Mlp<double>;
extern template void activate<float>(Activation, MatrixT<float>&);
extern template void activate<double>(Activation, MatrixT<double>&);

}  // namespace attnviz::model
