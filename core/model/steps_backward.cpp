#include "core/model/steps_backward.hpp"

#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf

#include "core/attention/gemm.hpp"

namespace attnviz::model {

template <class Scalar>
void NamedGradients<Scalar>::add_product(const std::string& name, const MatrixT<Scalar>& a, const MatrixT<Scalar>& b) {
    if (name.empty()) return;
    MatrixT<Scalar>& m = values_[name];
    if (written_.insert(name).second) {
        core::product_of_transpose<Scalar>(a, b, m);
        return;
    }
    MatrixT<Scalar> sum;
    core::product_of_transpose<Scalar>(a, b, sum);
    m += sum;
}

template <class Scalar>
MatrixT<Scalar>& NamedGradients<Scalar>::zeros(const std::string& name, Eigen::Index rows, Eigen::Index cols) {
    MatrixT<Scalar>& m = values_[name];
    if (written_.insert(name).second) m.setZero(rows, cols);
    return m;
}

template <class Scalar>
void NamedGradients<Scalar>::drop_unwritten() {
    for (auto it = values_.begin(); it != values_.end();)
        it = written_.count(it->first) ? std::next(it) : values_.erase(it);
}

template <class Scalar>
MatrixT<Scalar> activation_derivative(Activation activation, const MatrixT<Scalar>& u) {
    const auto a = u.array();
    switch (activation) {
        case Activation::gelu: {  // Φ(u) + u·φ(u)
            const auto inv_sqrt_2pi = static_cast<Scalar>(1 / std::sqrt(2 * M_PI));
            return (Scalar(0.5) * (Scalar(1) + (a / Scalar(M_SQRT2)).erf()) +
                    a * (Scalar(-0.5) * a.square()).exp() * inv_sqrt_2pi)
                .matrix();
        }
        case Activation::gelu_new: {  // ½(1 + t) + ½·u·(1 − t²)·k·(1 + 3·0.044715·u²), t = tanh(k(u + 0.044715u³))
            const auto k = static_cast<Scalar>(std::sqrt(2 / M_PI));
            const Eigen::Array<Scalar, Eigen::Dynamic, Eigen::Dynamic> t =
                (k * (a + Scalar(0.044715) * a.cube())).tanh();
            return (Scalar(0.5) * (Scalar(1) + t) +
                    Scalar(0.5) * a * (Scalar(1) - t.square()) * k * (Scalar(1) + Scalar(3 * 0.044715) * a.square()))
                .matrix();
        }
        case Activation::silu: {  // σ(u)·(1 + u·(1 − σ(u)))
            const Eigen::Array<Scalar, Eigen::Dynamic, Eigen::Dynamic> s = Scalar(1) / (Scalar(1) + (-a).exp());
            return (s * (Scalar(1) + a * (Scalar(1) - s))).matrix();
        }
        case Activation::relu: return (a > Scalar(0)).template cast<Scalar>().matrix();
    }
    return MatrixT<Scalar>::Zero(u.rows(), u.cols());
}

template <class Scalar>
void norm_backward(const Norm<Scalar>& norm, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_y, MatrixT<Scalar>& d_x,
                   NamedGradients<Scalar>* grads, const std::string& w_name, const std::string& b_name) {
    using Column = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
    if (norm.w.size() == 0) {
        d_x = d_y;
        return;
    }
    const Scalar e = static_cast<Scalar>(norm.eps);
    const auto d = static_cast<Scalar>(x.cols());
    if (norm.rms) {
        const Column rho = ((x.array().square().rowwise().mean()) + e).rsqrt();
        const RowVectorT<Scalar> scale = norm.plus_one ? RowVectorT<Scalar>(norm.w.array() + Scalar(1)) : norm.w;
        const MatrixT<Scalar> g = d_y.array().rowwise() * scale.array();
        const Column g_dot_x = (g.array() * x.array()).rowwise().sum() / d;
        d_x = (g.array().colwise() * rho) - (x.array().colwise() * (rho.cube() * g_dot_x));
        if (grads) grads->add(w_name, (d_y.array() * (x.array().colwise() * rho)).colwise().sum().matrix());
        return;
    }
    const Column mean = x.array().rowwise().mean();
    MatrixT<Scalar> x_hat = x.array().colwise() - mean;
    const Column sigma = (x_hat.array().square().rowwise().mean() + e).sqrt();
    x_hat.array().colwise() /= sigma;
    const MatrixT<Scalar> g = d_y.array().rowwise() * norm.w.array();
    const Column g_mean = g.array().rowwise().mean(), g_x_mean = (g.array() * x_hat.array()).rowwise().sum() / d;
    d_x = ((g.array().colwise() - g_mean) - x_hat.array().colwise() * g_x_mean).colwise() / sigma;
    if (grads) {
        grads->add(w_name, (d_y.array() * x_hat.array()).colwise().sum().matrix());
        grads->add(b_name, d_y.colwise().sum());
    }
}

template <class Scalar>
void projection_backward(const Projection<Scalar>& p, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_y,
                         MatrixT<Scalar>* d_x, NamedGradients<Scalar>* grads, const std::string& w_name,
                         const std::string& b_name) {
    if (d_x) core::project<Scalar>(d_y, p.W.view(), !p.transposed, *d_x);
    if (!grads) return;
    if (p.transposed)
        grads->add_product(w_name, d_y, x);  // d_out × d_in
    else
        grads->add_product(w_name, x, d_y);  // d_in × d_out
    if (p.b.size()) grads->add(b_name, d_y.colwise().sum());
}

template <class Scalar>
void mlp_backward(const Mlp<Scalar>& mlp, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_out, MatrixT<Scalar>& d_x,
                  NamedGradients<Scalar>* grads, const BlockNames& names) {
    MatrixT<Scalar> h, d_h;
    if (!mlp.gated) {
        MatrixT<Scalar> u;
        mlp.up.apply(x, u);  // n×d_ff
        h = u;
        activate(mlp.activation, h);
        projection_backward(mlp.down, h, d_out, &d_h, grads, names.down, names.down_b);
        const MatrixT<Scalar> d_u = d_h.cwiseProduct(activation_derivative(mlp.activation, u));
        projection_backward(mlp.up, x, d_u, &d_x, grads, names.up, names.up_b);
        return;
    }
    MatrixT<Scalar> g, v;
    if (mlp.fused_gate_up) {
        MatrixT<Scalar> both;
        mlp.up.apply(x, both);  // n×2·d_ff: the gate's outputs, then the up projection's
        g = both.leftCols(both.cols() / 2);
        v = both.rightCols(both.cols() / 2);
    } else {
        mlp.gate.apply(x, g);
        mlp.up.apply(x, v);
    }
    MatrixT<Scalar> a = g;
    activate(mlp.activation, a);
    h = a.cwiseProduct(v);
    projection_backward(mlp.down, h, d_out, &d_h, grads, names.down, names.down_b);
    const MatrixT<Scalar> d_g = d_h.cwiseProduct(v).cwiseProduct(activation_derivative(mlp.activation, g));
    const MatrixT<Scalar> d_v = d_h.cwiseProduct(a);
    if (mlp.fused_gate_up) {
        MatrixT<Scalar> d_both(x.rows(), 2 * g.cols());
        d_both << d_g, d_v;
        projection_backward(mlp.up, x, d_both, &d_x, grads, names.gate_up, std::string());
        return;
    }
    MatrixT<Scalar> d_x_up;
    projection_backward(mlp.gate, x, d_g, &d_x, grads, names.gate, names.gate_b);
    projection_backward(mlp.up, x, d_v, &d_x_up, grads, names.up, names.up_b);
    d_x += d_x_up;
}

#define ATTNVIZ_STEPS_BACKWARD(Scalar)                                                                           \
    template class NamedGradients<Scalar>;                                                                       \
    template MatrixT<Scalar> activation_derivative<Scalar>(Activation, const MatrixT<Scalar>&);                  \
    template void norm_backward<Scalar>(const Norm<Scalar>&, const MatrixT<Scalar>&, const MatrixT<Scalar>&,     \
                                        MatrixT<Scalar>&, NamedGradients<Scalar>*, const std::string&,           \
                                        const std::string&);                                                     \
    template void projection_backward<Scalar>(const Projection<Scalar>&, const MatrixT<Scalar>&,                 \
                                              const MatrixT<Scalar>&, MatrixT<Scalar>*, NamedGradients<Scalar>*, \
                                              const std::string&, const std::string&);                           \
    template void mlp_backward<Scalar>(const Mlp<Scalar>&, const MatrixT<Scalar>&, const MatrixT<Scalar>&,       \
                                       MatrixT<Scalar>&, NamedGradients<Scalar>*, const BlockNames&);
ATTNVIZ_STEPS_BACKWARD(float)
ATTNVIZ_STEPS_BACKWARD(double)
#undef ATTNVIZ_STEPS_BACKWARD

}  // namespace attnviz::model
