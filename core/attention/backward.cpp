#include "core/attention/backward.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::core {

template <class Scalar>
void unrotate(MatrixT<Scalar>& d, const Rope& rope, int d_k, int positions) {
    const int pairs = rope.rotated(d_k) / 2;
    for (int j = 0; j < pairs; ++j) {
        const RopePair p = rope_pair(rope, d_k, j);
        for (Eigen::Index pos = 0; pos < d.rows(); ++pos) {
            const double angle = rope_angle(rope, d_k, static_cast<int>(pos), j, positions);
            const auto c = static_cast<Scalar>(std::cos(angle)), s = static_cast<Scalar>(std::sin(angle));
            const Scalar a = d(pos, p.first), b = d(pos, p.second);
            d(pos, p.first) = a * c + b * s;
            d(pos, p.second) = -a * s + b * c;
        }
    }
}

template <class Scalar>
void rms_norm_backward(const MatrixT<Scalar>& x, const MatrixT<Scalar>& r, const MatrixT<Scalar>& w,
                       MatrixT<Scalar>& d_y, MatrixT<Scalar>& d_w) {
    const auto D = static_cast<Scalar>(x.cols());
    d_w = MatrixT<Scalar>::Zero(1, x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const Scalar ri = r(i, 0);
        const Eigen::Matrix<Scalar, 1, Eigen::Dynamic> wdy = w.row(0).cwiseProduct(d_y.row(i));
        d_w.row(0) += d_y.row(i).cwiseProduct(x.row(i)) / ri;
        d_y.row(i) = wdy / ri - x.row(i) * (wdy.dot(x.row(i)) / (D * ri * ri * ri));
    }
}

namespace {

// Per head (in parallel): d_A = d_Z·Vᵀ, through the softmax (and the soft-cap) and the scale to
// d_S_raw, then d_Q, d_K (turned back through RoPE) and d_V, each into its columns of d_P — a K/V
// group's summed over its heads in order of the head, after the parallel part.
template <class Scalar>
void heads_backward(const Config& c, const TraceT<Scalar>& t, const MatrixT<Scalar>& d_concat, MatrixT<Scalar>& d_P,
                    std::vector<MatrixT<Scalar>>& d_weights) {
    const int heads = c.heads;
    std::vector<MatrixT<Scalar>> d_Q(static_cast<size_t>(heads)), d_K(static_cast<size_t>(heads)),
        d_V(static_cast<size_t>(heads));
    d_weights.resize(static_cast<size_t>(heads));
    const int positions = std::max(c.n, c.kv_len());
#pragma omp parallel for if (c.n >= 64)
    for (int h = 0; h < heads; ++h) {
        const auto k = static_cast<size_t>(h);
        const HeadTraceT<Scalar>& ht = t.heads[k];
        const MatrixT<Scalar> d_Z = d_concat.middleCols(Eigen::Index{h} * c.d_v, c.d_v);  // n×d_v
        const MatrixT<Scalar>& A = ht.weights;                                            // n×n
        MatrixT<Scalar>& d_A = d_weights[k];
        d_A.noalias() = d_Z * ht.V.transpose();
        d_V[k].noalias() = A.transpose() * d_Z;
        MatrixT<Scalar> d_S = A.cwiseProduct(d_A);
        const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> row_dot = d_S.rowwise().sum();
        d_S -= A.cwiseProduct(row_dot.replicate(1, A.cols()));
        if (c.softcap > 0) {
            const auto cap = static_cast<Scalar>(c.softcap);
            d_S = (A.array() > 0).select(d_S.array() * (1 - (ht.scores_capped.array() / cap).square()), Scalar(0));
        }
        d_S /= static_cast<Scalar>(t.scale);
        const MatrixT<Scalar>& Qr = c.rope.on ? ht.Q_rot : ht.Q;
        const MatrixT<Scalar>& Kr = c.rope.on ? ht.K_rot : ht.K;
        d_Q[k].noalias() = d_S * Kr;              // n×d_k
        d_K[k].noalias() = d_S.transpose() * Qr;  // n×d_k
        if (c.rope.on) {
            unrotate(d_Q[k], c.rope, c.d_k, positions);
            unrotate(d_K[k], c.rope, c.d_k, positions);
        }
    }
    d_P.setZero(c.n, qkv_columns(c));
    for (int h = 0; h < heads; ++h) {
        const auto k = static_cast<size_t>(h);
        d_P.middleCols(q_column(c, h), c.d_k) = d_Q[k];
        d_P.middleCols(k_column(c, h), c.d_k) += d_K[k];
        d_P.middleCols(v_column(c, h), c.d_v) += d_V[k];
    }
}

// The q/k norms backwards: d_P's Q columns and K columns, which are the gradients of the normed
// blocks, become those of X·W_qkv + b_qkv (recomputed: the forward kept only the RMS of each row).
template <class Scalar>
void norms_backward(const Config& c, const Eigen::Ref<const MatrixT<Scalar>>& X, const LayerWeightsT<Scalar>& w,
                    const TraceT<Scalar>& t, MatrixT<Scalar>& d_P, AttentionGradientsT<Scalar>& out) {
    MatrixT<Scalar> P;
    project_qkv<Scalar>(X, w, P);
    const Eigen::Index q_width = Eigen::Index{c.heads} * c.d_k, k_width = Eigen::Index{c.kv_count()} * c.d_k;
    const MatrixT<Scalar> q = P.leftCols(q_width), k = P.middleCols(q_width, k_width);
    MatrixT<Scalar> d_q = d_P.leftCols(q_width), d_k = d_P.middleCols(q_width, k_width);
    rms_norm_backward<Scalar>(q, t.q_rms, w.q_norm.map(), d_q, out.d_q_norm);
    rms_norm_backward<Scalar>(k, t.k_rms, w.k_norm.map(), d_k, out.d_k_norm);
    d_P.leftCols(q_width) = d_q;
    d_P.middleCols(q_width, k_width) = d_k;
}

}  // namespace

template <class Scalar>
void attention_backward(const Config& c, const Eigen::Ref<const MatrixT<Scalar>>& X, const LayerWeightsT<Scalar>& w,
                        const TraceT<Scalar>& t, const MatrixT<Scalar>& G, AttentionGradientsT<Scalar>& out,
                        bool weights_too) {
    // output = concat·W_O + b_O
    MatrixT<Scalar> d_concat;
    project<Scalar>(G, w.W_O, !w.o_transposed, d_concat);  // n×h·d_v
    out.d_W_O.resize(0, 0);
    out.d_b_O.resize(0, 0);
    if (weights_too) {
        if (w.o_transposed)
            product_of_transpose<Scalar>(G, t.concat, out.d_W_O);  // d_model × h·d_v
        else
            product_of_transpose<Scalar>(t.concat, G, out.d_W_O);  // h·d_v × d_model
        if (!w.b_O.empty()) out.d_b_O = G.colwise().sum();
    }
    heads_backward(c, t, d_concat, out.d_projections, out.d_weights);
    out.d_q_norm.resize(0, 0);
    out.d_k_norm.resize(0, 0);
    if (c.qk_norm.on) norms_backward(c, X, w, t, out.d_projections, out);
    const MatrixT<Scalar>& d_P = out.d_projections;
    // P = X·W_qkv + b_qkv
    if (w.W_qkv_parts[0].empty()) {
        project<Scalar>(d_P, w.W_qkv, !w.qkv_transposed, out.d_X);
    } else {
        out.d_X.setZero(X.rows(), X.cols());
        Eigen::Index at = 0;
        MatrixT<Scalar> part_d_X;
        for (const WeightsView<Scalar>& part : w.W_qkv_parts) {
            if (part.empty()) continue;
            project<Scalar>(d_P.middleCols(at, part.rows()), part, false, part_d_X);
            out.d_X += part_d_X;
            at += part.rows();
        }
    }
    out.d_W_qkv.resize(0, 0);
    out.d_b_qkv.resize(0, 0);
    if (!weights_too) return;
    if (w.qkv_transposed)
        product_of_transpose<Scalar>(d_P, X, out.d_W_qkv);  // qkv_columns × d_model
    else
        product_of_transpose<Scalar>(X, d_P, out.d_W_qkv);  // d_model × qkv_columns
    if (!w.b_qkv.empty()) out.d_b_qkv = d_P.leftCols(w.b_qkv.cols).colwise().sum();
}

template void attention_backward<float>(const Config&, const Eigen::Ref<const MatrixT<float>>&,
                                        const LayerWeightsT<float>&, const TraceT<float>&, const MatrixT<float>&,
                                        AttentionGradientsT<float>&, bool);
template void attention_backward<double>(const Config&, const Eigen::Ref<const MatrixT<double>>&,
                                         const LayerWeightsT<double>&, const TraceT<double>&, const MatrixT<double>&,
                                         AttentionGradientsT<double>&, bool);
template void unrotate<float>(MatrixT<float>&, const Rope&, int, int);
template void unrotate<double>(MatrixT<double>&, const Rope&, int, int);
template void rms_norm_backward<float>(const MatrixT<float>&, const MatrixT<float>&, const MatrixT<float>&,
                                       MatrixT<float>&, MatrixT<float>&);
template void rms_norm_backward<double>(const MatrixT<double>&, const MatrixT<double>&, const MatrixT<double>&,
                                        MatrixT<double>&, MatrixT<double>&);

}  // namespace attnviz::core
