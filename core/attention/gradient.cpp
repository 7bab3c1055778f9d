#include "core/attention/gradient.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

// RoPE backwards: the gradient of a rotated matrix turned back, pair by pair (the transpose of
// each rotation); columns RoPE leaves alone pass through.
Matrix unrotate(const Matrix& d_rot, const Rope& rope, int d_k, int positions) {
    Matrix d = d_rot;
    const int pairs = rope.rotated(d_k) / 2;
    for (int j = 0; j < pairs; ++j) {
        const RopePair p = rope_pair(rope, d_k, j);
        for (Eigen::Index pos = 0; pos < d_rot.rows(); ++pos) {
            const double angle = rope_angle(rope, d_k, static_cast<int>(pos), j, positions);
            const double c = std::cos(angle), s = std::sin(angle);
            const double a = d_rot(pos, p.first), b = d_rot(pos, p.second);
            d(pos, p.first) = a * c + b * s;
            d(pos, p.second) = -a * s + b * c;
        }
    }
    return d;
}

// Accumulates `add` into `into` (sized on first use).
void accumulate(Matrix& into, const Matrix& add) {
    if (into.size() == 0)
        into = add;
    else
        into += add;
}

}  // namespace

Result<Gradients> output_gradient(const Config& c, const Params& p, const Trace& t, int row, int col) {
    using R = Result<Gradients>;
    if (!has_shapes(c, p) || static_cast<int>(t.heads.size()) != c.heads)
        return R::fail({{"", "the params and the trace do not have the config's shapes"}});
    if (row < 0 || col < 0 || row >= t.output.rows() || col >= t.output.cols())
        return R::fail({{"", "there is no cell output[" + std::to_string(row) + "][" + std::to_string(col) +
                                 "]: the output is " + format_shape(t.output.rows(), t.output.cols())}});
    Gradients g;
    g.row = row;
    g.col = col;
    g.d.kv_group_size = p.kv_group_size;
    g.d.heads.resize(static_cast<size_t>(c.heads));
    // G: 1 at output[row][col].
    Matrix G = Matrix::Zero(t.output.rows(), t.output.cols());
    G(row, col) = 1;
    Matrix d_concat;
    if (c.output_projection) {
        g.d.W_O = t.concat.transpose() * G;  // (h·d_v)×d_model
        if (c.biases) g.d.b_O = G.colwise().sum();
        d_concat = G * p.W_O.transpose();  // n×(h·d_v)
    } else {
        d_concat = G;
    }
    g.d.X = Matrix::Zero(p.X.rows(), p.X.cols());
    // Under cross-attention K and V come from Y: their gradients flow there, Q's to X.
    const bool cross = c.cross();
    const Matrix& kv_input = cross ? p.Y : p.X;  // m×d_model
    if (cross) g.d.Y = Matrix::Zero(p.Y.rows(), p.Y.cols());
    for (int h = 0; h < c.heads; ++h) {
        const HeadTrace& ht = t.heads[static_cast<size_t>(h)];
        const Matrix d_Z = d_concat.middleCols(static_cast<Eigen::Index>(h) * c.d_v, c.d_v);  // n×d_v
        const Matrix& A = ht.weights;
        const Matrix d_A = d_Z * ht.V.transpose();  // n×m
        const Matrix d_V = A.transpose() * d_Z;     // m×d_v
        // The softmax's Jacobian, row by row; masked keys have A = 0.
        Matrix d_S = A.cwiseProduct(d_A);
        const Eigen::VectorXd row_dot = d_S.rowwise().sum();
        d_S -= A.cwiseProduct(row_dot.replicate(1, A.cols()));
        // Soft-capping: d scores = d scores_capped · (1 − tanh²(scores / c)), tanh(scores / c) =
        // scores_capped / c (a masked score, −∞ in both, has no gradient).
        if (c.softcap > 0)
            d_S = (A.array() > 0)
                      .select(d_S.array() * (1 - (ht.scores_capped.array() / c.softcap).square()), 0.0)
                      .matrix();
        const Matrix d_raw = d_S / t.scale;
        const Matrix& Qr = c.rope.on ? ht.Q_rot : ht.Q;
        const Matrix& Kr = c.rope.on ? ht.K_rot : ht.K;
        Matrix d_Q = d_raw * Kr;              // n×d_k
        Matrix d_K = d_raw.transpose() * Qr;  // m×d_k
        if (c.rope.on) {
            const int positions = std::max(c.n, c.kv_len());
            d_Q = unrotate(d_Q, c.rope, c.d_k, positions);
            d_K = unrotate(d_K, c.rope, c.d_k, positions);
        }
        const HeadParams& own = p.heads[static_cast<size_t>(h)];
        const int owner = p.kv_owner(h);
        const HeadParams& kv = p.heads[static_cast<size_t>(owner)];
        HeadParams& dh = g.d.heads[static_cast<size_t>(h)];
        HeadParams& dkv = g.d.heads[static_cast<size_t>(owner)];
        dh.W_Q = p.X.transpose() * d_Q;
        accumulate(dkv.W_K, kv_input.transpose() * d_K);
        accumulate(dkv.W_V, kv_input.transpose() * d_V);
        if (c.biases) {
            dh.b_Q = d_Q.colwise().sum();
            accumulate(dkv.b_K, d_K.colwise().sum());
            accumulate(dkv.b_V, d_V.colwise().sum());
        }
        g.d.X += d_Q * own.W_Q.transpose();
        (cross ? g.d.Y : g.d.X) += d_K * kv.W_K.transpose() + d_V * kv.W_V.transpose();
    }
    return R::ok(std::move(g));
}

}  // namespace attnviz::core
