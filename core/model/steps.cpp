#include "core/model/steps.hpp"

#include "core/attention/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf

namespace attnviz::model {

template <class Scalar>
void Norm<Scalar>::apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& out) const {
    using Column = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
    const Scalar e = static_cast<Scalar>(eps);
    if (w.size() == 0) {
        out = x;
        return;
    }
    if (rms) {
        // 1/√(mean(x²) + eps) per row, then x times it, then times w (Llama's order), or 1 + w.
        const Column inv = ((x.array().square().rowwise().mean()) + e).rsqrt();
        if (plus_one)
            out = (x.array().colwise() * inv).rowwise() * (w.array() + Scalar(1));
        else
            out = (x.array().colwise() * inv).rowwise() * w.array();
        return;
    }
    const Column mean = x.array().rowwise().mean();
    out = x.array().colwise() - mean;  // centred
    const Column deviation = (out.array().square().rowwise().mean() + e).sqrt();
    out = ((out.array().colwise() / deviation).rowwise() * w.array()).rowwise() + b.array();
}

template <class Scalar>
void Projection<Scalar>::apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& y) const {
    core::project<Scalar>(x, W.view(), transposed, y);
    if (b.size()) y.rowwise() += b;
}

namespace {

// The activation on every entry of a block of rows, in place.
template <class Scalar, class Block>
void activate_block(Activation activation, Block&& block) {
    auto a = block.array();
    switch (activation) {
        case Activation::gelu: a = Scalar(0.5) * a * (Scalar(1) + (a / Scalar(M_SQRT2)).erf()); break;
        case Activation::gelu_new: {
            // ½·x·(1 + tanh(u)) = x·σ(2u) = x / (1 + e^(−2u)), u = √(2/π)·(x + 0.044715·x³): the same
            // function through exp, which Eigen vectorises in float and double (tanh only in float).
            const Scalar c = static_cast<Scalar>(-2 * std::sqrt(2 / M_PI));
            a = a / (Scalar(1) + (c * (a + Scalar(0.044715) * a.cube())).exp());
            break;
        }
        case Activation::silu: a = a / (Scalar(1) + (-a).exp()); break;
        case Activation::relu: a = a.max(Scalar(0)); break;
    }
}

}  // namespace

// Blocks of rows in parallel (OpenMP) when there are many entries (a real model's n × d_ff): each
// entry's value is the same either way.
template <class Scalar>
void activate(Activation activation, MatrixT<Scalar>& m) {
    constexpr Eigen::Index piece = 8;  // rows at a time
    const Eigen::Index rows = m.rows(), pieces = (rows + piece - 1) / piece;
#pragma omp parallel for if (m.size() > (1 << 16))
    for (Eigen::Index k = 0; k < pieces; ++k)
        activate_block<Scalar>(activation, m.middleRows(k * piece, std::min(piece, rows - k * piece)));
}

template <class Scalar>
void Mlp<Scalar>::apply(const MatrixT<Scalar>& x, MatrixT<Scalar>& out, MatrixT<Scalar>& hidden) const {
    if (gated && fused_gate_up) {
        MatrixT<Scalar> both;
        up.apply(x, both);  // n×2·d_ff: the gate's outputs, then the up projection's
        const Eigen::Index d_ff = both.cols() / 2;
        hidden = both.leftCols(d_ff);
        activate(activation, hidden);
        hidden.array() *= both.rightCols(d_ff).array();
    } else if (gated) {
        gate.apply(x, hidden);  // n×d_ff
        activate(activation, hidden);
        MatrixT<Scalar> lifted;
        up.apply(x, lifted);
        hidden.array() *= lifted.array();
    } else {
        up.apply(x, hidden);
        activate(activation, hidden);
    }
    down.apply(hidden, out);
}

template struct Norm<float>;
template struct Norm<double>;
template struct Projection<float>;
template struct Projection<double>;
template struct Mlp<float>;
template struct Mlp<double>;
template void activate<float>(Activation, MatrixT<float>&);
template void activate<double>(Activation, MatrixT<double>&);

}  // namespace attnviz::model
