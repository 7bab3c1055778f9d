#include "core/attention/gradient.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/attention/backward.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

// Accumulates `add` into `into` (sized on first use).
void accumulate(Matrix& into, const Matrix& add) {
    if (into.size() == 0)
        into = add;
    else
        into += add;
}

// The q/k norms backwards: every head's d_Q (of the normed Q) side by side becomes that of X·W_Q +
// b_Q; every group's d_K (summed over the heads sharing it) that of X·W_K + b_K, then held by the
// group's first head (the others' emptied). The norms' weights' gradients into d.q_norm, d.k_norm.
void unnorm(const Config& c, const Params& p, const Trace& t, std::vector<Matrix>& d_Q, std::vector<Matrix>& d_K,
            Params& d) {
    const int groups = c.kv_count(), d_k = c.d_k;
    Matrix x_q(c.n, c.heads * d_k), dy_q(c.n, c.heads * d_k);
    Matrix x_k(c.n, groups * d_k), dy_k = Matrix::Zero(c.n, groups * d_k);
    for (int h = 0; h < c.heads; ++h) {
        const HeadParams& own = p.heads[static_cast<size_t>(h)];
        Matrix q = p.X * own.W_Q;
        if (c.biases) q.rowwise() += own.b_Q.row(0);
        x_q.middleCols(h * d_k, d_k) = q;
        dy_q.middleCols(h * d_k, d_k) = d_Q[static_cast<size_t>(h)];
        const int g = c.kv_group(h);
        dy_k.middleCols(g * d_k, d_k) += d_K[static_cast<size_t>(h)];
        if (p.kv_owner(h) != h) continue;
        Matrix k = p.X * own.W_K;
        if (c.biases) k.rowwise() += own.b_K.row(0);
        x_k.middleCols(g * d_k, d_k) = k;
    }
    rms_norm_backward<double>(x_q, t.q_rms, p.q_norm, dy_q, d.q_norm);
    rms_norm_backward<double>(x_k, t.k_rms, p.k_norm, dy_k, d.k_norm);
    for (int h = 0; h < c.heads; ++h) {
        d_Q[static_cast<size_t>(h)] = dy_q.middleCols(h * d_k, d_k);
        d_K[static_cast<size_t>(h)] = p.kv_owner(h) == h ? Matrix(dy_k.middleCols(c.kv_group(h) * d_k, d_k)) : Matrix();
    }
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
    // The gradients of each head's Q and K as the scores use them (normed with q/k norms), and of V.
    std::vector<Matrix> d_Q(static_cast<size_t>(c.heads)), d_K(static_cast<size_t>(c.heads)),
        d_V(static_cast<size_t>(c.heads));
    for (int h = 0; h < c.heads; ++h) {
        const HeadTrace& ht = t.heads[static_cast<size_t>(h)];
        const Matrix d_Z = d_concat.middleCols(static_cast<Eigen::Index>(h) * c.d_v, c.d_v);  // n×d_v
        const Matrix& A = ht.weights;
        const Matrix d_A = d_Z * ht.V.transpose();          // n×m
        d_V[static_cast<size_t>(h)] = A.transpose() * d_Z;  // m×d_v
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
        Matrix& dq = d_Q[static_cast<size_t>(h)];
        Matrix& dk = d_K[static_cast<size_t>(h)];
        dq = d_raw * Kr;              // n×d_k
        dk = d_raw.transpose() * Qr;  // m×d_k
        if (c.rope.on) {
            const int positions = std::max(c.n, c.kv_len());
            unrotate<double>(dq, c.rope, c.d_k, positions);
            unrotate<double>(dk, c.rope, c.d_k, positions);
        }
    }
    if (c.qk_norm.on) unnorm(c, p, t, d_Q, d_K, g.d);
    for (int h = 0; h < c.heads; ++h) {
        const HeadParams& own = p.heads[static_cast<size_t>(h)];
        const int owner = p.kv_owner(h);
        const HeadParams& kv = p.heads[static_cast<size_t>(owner)];
        HeadParams& dh = g.d.heads[static_cast<size_t>(h)];
        HeadParams& dkv = g.d.heads[static_cast<size_t>(owner)];
        const Matrix &dq = d_Q[static_cast<size_t>(h)], &dk = d_K[static_cast<size_t>(h)],
                     &dv = d_V[static_cast<size_t>(h)];
        dh.W_Q = p.X.transpose() * dq;
        g.d.X += dq * own.W_Q.transpose();
        Matrix& d_kv_input = cross ? g.d.Y : g.d.X;
        accumulate(dkv.W_V, kv_input.transpose() * dv);
        d_kv_input += dv * kv.W_V.transpose();
        if (c.biases) {
            dh.b_Q = dq.colwise().sum();
            accumulate(dkv.b_V, dv.colwise().sum());
        }
        if (!dk.size()) continue;  // q/k norms: the group's K gradient is its first head's (unnorm)
        accumulate(dkv.W_K, kv_input.transpose() * dk);
        if (c.biases) accumulate(dkv.b_K, dk.colwise().sum());
        d_kv_input += dk * kv.W_K.transpose();
    }
    return R::ok(std::move(g));
}

}  // namespace attnviz::core
