// The steps around a block's attention on cases worked out by hand: LayerNorm, RMSNorm, each
// activation, both weight layouts of a projection, and the plain and gated (SwiGLU) MLPs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/model/steps.hpp"

namespace {

using attnviz::model::Activation;
using attnviz::model::Mlp;
using attnviz::model::Norm;
using attnviz::model::Projection;
using M = attnviz::core::MatrixT<double>;
using Row = attnviz::model::RowVectorT<double>;

M matrix(std::initializer_list<std::initializer_list<double>> rows) {
    M m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
    Eigen::Index i = 0;
    for (const auto& r : rows) {
        Eigen::Index j = 0;
        for (double v : r) m(i, j++) = v;
        ++i;
    }
    return m;
}

Row row(std::initializer_list<double> values) { return matrix({values}).row(0); }

void expect_near(const M& got, const M& want, double tolerance = 1e-15) {
    ASSERT_EQ(got.rows(), want.rows());
    ASSERT_EQ(got.cols(), want.cols());
    for (Eigen::Index i = 0; i < got.rows(); ++i)
        for (Eigen::Index j = 0; j < got.cols(); ++j)
            EXPECT_NEAR(got(i, j), want(i, j), tolerance) << "[" << i << "][" << j << "]";
}

// x = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so with
// eps = 0 the row becomes [−1.5, −0.5, 0.5, 1.5] / √1.25; then times w, plus b. Each row alone.
TEST(ModelSteps, LayerNormByHand) {
    Norm<double> n;
    n.eps = 0;
    n.w = row({2, 1, 1, 1});
    n.b = row({0, 0, 0, 1});
    M out;
    n.apply(matrix({{1, 2, 3, 4}, {10, 10, 10, 12}}), out);
    const double s = std::sqrt(1.25);
    // Row 2: mean 10.5, variance (0.25·3 + 2.25) / 4 = 0.75.
    const double t = std::sqrt(0.75);
    expect_near(out, matrix({{2 * -1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s + 1},
                             {2 * -0.5 / t, -0.5 / t, -0.5 / t, 1.5 / t + 1}}));
    n.eps = 0.25;  // var + eps = 1.5
    n.apply(matrix({{1, 2, 3, 4}}), out);
    const double e = std::sqrt(1.5);
    expect_near(out, matrix({{2 * -1.5 / e, -0.5 / e, 0.5 / e, 1.5 / e + 1}}));
}

// x = [3, 4]: mean square (9 + 16) / 2 = 12.5; x = [2, −2, 2, −2]: 4, so x / 2.
TEST(ModelSteps, RmsNormByHand) {
    Norm<double> n;
    n.rms = true;
    n.eps = 0;
    n.w = row({1, 2});
    M out;
    n.apply(matrix({{3, 4}}), out);
    expect_near(out, matrix({{3 / std::sqrt(12.5), 8 / std::sqrt(12.5)}}));
    n.w = row({1, 1, 1, 0.5});
    n.eps = 5;  // 4 + 5 = 9: x / 3
    n.apply(matrix({{2, -2, 2, -2}}), out);
    expect_near(out, matrix({{2.0 / 3, -2.0 / 3, 2.0 / 3, -1.0 / 3}}));
}

// gelu(x) = x·Φ(x): Φ(1) = 0.8413447460685429; gelu_new(1) = 0.8411919906082768 (the tanh form is
// within 2e-4 of it); silu(1) = 1 / (1 + e⁻¹) = 0.7310585786300049.
TEST(ModelSteps, ActivationsAtKnownPoints) {
    const M x = matrix({{1, -1, 0, -2}});
    const std::pair<Activation, M> cases[] = {
        {Activation::gelu, matrix({{0.8413447460685429, -0.15865525393145707, 0, -2 * (1 - 0.9772498680518208)}})},
        {Activation::gelu_new, matrix({{0.8411919906082768, 0.8411919906082768 - 1, 0, -0.04540230591222494}})},
        {Activation::silu, matrix({{0.7310585786300049, 0.7310585786300049 - 1, 0, -2 / (1 + std::exp(2.0))}})},
        {Activation::relu, matrix({{1, 0, 0, 0}})}};
    for (const auto& [activation, want] : cases) {
        SCOPED_TRACE(attnviz::model::to_string(activation));
        M m = x;
        attnviz::model::activate(activation, m);
        expect_near(m, want, 1e-15);
    }
    // float: the same values to float's precision (Eigen's vectorised tanh and erf).
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f = x.cast<float>();
    attnviz::model::activate(Activation::gelu_new, f);
    EXPECT_NEAR(f(0, 0), 0.8411919906082768, 1e-6);
    EXPECT_NEAR(f(0, 3), -0.04540230591222494, 1e-6);
}

// The same map stored both ways: Conv1D's d_in×d_out W (y = x·W + b) and nn.Linear's d_out×d_in.
TEST(ModelSteps, ProjectionInBothLayouts) {
    Projection<double> conv;
    conv.W = matrix({{1, 2, 0}, {0, 1, -1}});  // 2 → 3
    conv.b = row({0.5, 0, 0});
    Projection<double> linear = conv;
    linear.W = M(conv.W.view().values.map().transpose());
    linear.transposed = true;
    M a, b;
    conv.apply(matrix({{1, 1}, {2, 0}}), a);
    linear.apply(matrix({{1, 1}, {2, 0}}), b);
    expect_near(a, matrix({{1.5, 3, -1}, {2.5, 4, 0}}));
    expect_near(b, a);
    EXPECT_EQ(conv.d_out(), 3);
    EXPECT_EQ(linear.d_out(), 3);
}

// x = [1, 2]: the gate gives 1, up gives 2, so the hidden unit is silu(1)·2, and down maps it to
// [h, 3h].
TEST(ModelSteps, SwiGluByHand) {
    Mlp<double> mlp;
    mlp.activation = Activation::silu;
    mlp.gated = true;
    mlp.gate.W = matrix({{1, 0}});  // nn.Linear 2 → 1
    mlp.up.W = matrix({{0, 1}});
    mlp.down.W = matrix({{1}, {3}});  // 1 → 2
    mlp.gate.transposed = mlp.up.transposed = mlp.down.transposed = true;
    M out, hidden;
    mlp.apply(matrix({{1, 2}}), out, hidden);
    const double h = 0.7310585786300049 * 2;
    expect_near(out, matrix({{h, 3 * h}}));
}

// Plain: relu(x·W_up + b_up)·W_down + b_down, x = [1, −1].
TEST(ModelSteps, PlainMlpByHand) {
    Mlp<double> mlp;
    mlp.activation = Activation::relu;
    mlp.up.W = matrix({{1, 1}, {2, -1}});  // Conv1D 2 → 2: x·W = [−1, 2]
    mlp.up.b = row({0, -0.5});             // [−1, 1.5] → relu [0, 1.5]
    mlp.down.W = matrix({{4}, {2}});       // 2 → 1: 3
    mlp.down.b = row({1});
    M out, hidden;
    mlp.apply(matrix({{1, -1}}), out, hidden);
    expect_near(out, matrix({{4}}));
}

}  // namespace
