#include "core/attention/head_analysis.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>

namespace attnviz::core {

namespace {

// W_O⁽ʰ⁾: head h's d_v rows of W_O (d_v×d_model).
auto output_rows(const Config& c, const Params& p, int head) { return p.W_O.middleRows(head * c.d_v, c.d_v); }

// The singular values of A·Bᵀ (A, B d×k), descending, k of them: with k ≤ d from the k×k R_A·R_Bᵀ
// of A's and B's QR factorisations (A·Bᵀ = Q_A·(R_A·R_Bᵀ)·Q_Bᵀ with orthonormal Q_A, Q_B), so a
// d_model of 768 costs a k×k SVD; otherwise from A·Bᵀ itself, with zeros up to k.
Eigen::VectorXd product_singular_values(const Matrix& A, const Matrix& B) {
    const Eigen::Index d = A.rows(), k = A.cols();
    Eigen::VectorXd out = Eigen::VectorXd::Zero(k);
    if (k <= d) {
        const Eigen::HouseholderQR<Eigen::MatrixXd> qa(A), qb(B);
        const Eigen::MatrixXd Ra = qa.matrixQR().topRows(k).triangularView<Eigen::Upper>();
        const Eigen::MatrixXd Rb = qb.matrixQR().topRows(k).triangularView<Eigen::Upper>();
        out = Eigen::JacobiSVD<Eigen::MatrixXd>(Ra * Rb.transpose()).singularValues();
    } else {
        const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(A * B.transpose()).singularValues();
        out.head(s.size()) = s;
    }
    return out;  // JacobiSVD gives them in decreasing order
}

// Head h's Z replaced by `replacement` (n×d_v): the change of the output.
Matrix z_change(const Config& c, const Params& p, const Trace& t, int head, const Matrix& replacement) {
    const Matrix dZ = replacement - t.heads[static_cast<size_t>(head)].Z;  // n×d_v
    if (c.output_projection) return dZ * output_rows(c, p, head);          // n×d_model
    Matrix delta = Matrix::Zero(c.n, c.concat_width());
    delta.middleCols(head * c.d_v, c.d_v) = dZ;
    return delta;
}

}  // namespace

Matrix value_outputs(const Config& c, const Params& p, const Trace& t, int head) {
    const Matrix& V = t.heads[static_cast<size_t>(head)].V;  // m×d_v, b_V included
    return c.output_projection ? Matrix(V * output_rows(c, p, head)) : V;
}

Matrix norm_weighted(const Config& c, const Params& p, const Trace& t, int head) {
    const HeadTrace& h = t.heads[static_cast<size_t>(head)];
    return c.output_projection ? norm_weighted<double>(h.weights, h.V, output_rows(c, p, head))
                               : norm_weighted<double>(h.weights, h.V, Matrix());
}

template <class Scalar>
Matrix norm_weighted(const MatrixT<Scalar>& weights, const MatrixT<Scalar>& V,
                     const Eigen::Ref<const MatrixT<Scalar>>& W_O_rows) {
    const MatrixT<Scalar> f = W_O_rows.size() ? MatrixT<Scalar>(V * W_O_rows) : V;            // m×d_model, or m×d_v
    const Eigen::RowVectorXd norms = f.rowwise().norm().transpose().template cast<double>();  // 1×m
    return weights.template cast<double>().array().rowwise() * norms.array();
}

template Matrix norm_weighted<float>(const MatrixT<float>&, const MatrixT<float>&,
                                     const Eigen::Ref<const MatrixT<float>>&);
template Matrix norm_weighted<double>(const MatrixT<double>&, const MatrixT<double>&,
                                      const Eigen::Ref<const MatrixT<double>>&);

Matrix norm_weighted_rows(const Matrix& norm_weighted) {
    Matrix out = norm_weighted;  // n×m
    for (Eigen::Index i = 0; i < out.rows(); ++i)
        if (const double sum = out.row(i).sum(); sum > 0) out.row(i) /= sum;
    return out;
}

Circuits circuits(const Config& c, const Params& p, int head) {
    const HeadParams& own = p.heads[static_cast<size_t>(head)];
    const HeadParams& group = p.heads[static_cast<size_t>(p.kv_owner(head))];
    Circuits out;
    out.W_QK = own.W_Q * group.W_K.transpose();  // d_model×d_model
    out.qk_singular = product_singular_values(own.W_Q, group.W_K);
    if (!c.output_projection) return out;
    const Matrix W_Oh = output_rows(c, p, head);  // d_v×d_model
    out.W_OV = group.W_V * W_Oh;
    out.ov_singular = product_singular_values(group.W_V, W_Oh.transpose());
    // W_V·W_O⁽ʰ⁾ and W_O⁽ʰ⁾·W_V have the same non-zero eigenvalues; the second is d_v×d_v.
    const Eigen::MatrixXd small = W_Oh * group.W_V;
    const Eigen::EigenSolver<Eigen::MatrixXd> solver(small, false);
    if (solver.info() == Eigen::Success) {
        const Eigen::VectorXcd lambda = solver.eigenvalues();
        out.ov_eigenvalues.assign(lambda.data(), lambda.data() + lambda.size());
        std::stable_sort(out.ov_eigenvalues.begin(), out.ov_eigenvalues.end(),
                         [](std::complex<double> a, std::complex<double> b) { return std::abs(a) > std::abs(b); });
    }
    double magnitude = 0;
    for (const std::complex<double>& l : out.ov_eigenvalues) magnitude += std::abs(l);
    out.copying = magnitude > 0 ? small.trace() / magnitude : 0;
    return out;
}

Matrix ablation_delta(const Config& c, const Params& p, const Trace& t, int head, Ablation how) {
    const Matrix& Z = t.heads[static_cast<size_t>(head)].Z;
    const Matrix replacement = how == Ablation::zero ? Matrix(Matrix::Zero(Z.rows(), Z.cols()))
                                                     : Matrix(Z.colwise().mean().replicate(Z.rows(), 1));
    return z_change(c, p, t, head, replacement);
}

Matrix patching_delta(const Config& c, const Params& p, const Trace& t, const Trace& source, int head) {
    return z_change(c, p, t, head, source.heads[static_cast<size_t>(head)].Z);
}

Sink sink(const Trace& t, int head) { return sink(t.heads[static_cast<size_t>(head)].weights); }

Sink sink(const Matrix& w) {  // n×m
    Sink out;
    if (w.size() == 0) return out;
    const Eigen::RowVectorXd mean = w.colwise().mean();
    Eigen::Index key = 0;
    out.mean = mean.maxCoeff(&key);
    out.key = static_cast<int>(key);
    out.share = static_cast<double>((w.col(key).array() >= sink_threshold).count()) / static_cast<double>(w.rows());
    return out;
}

RopeSplit rope_split(const Config& c, const Trace& t, int head) {
    RopeSplit out;
    if (!c.rope.on) return out;
    const HeadTrace& h = t.heads[static_cast<size_t>(head)];
    const int pairs = c.rope.rotated(c.d_k) / 2;
    const auto part = [&](int column) -> Matrix { return h.Q_rot.col(column) * h.K_rot.col(column).transpose(); };
    for (int j = 0; j < pairs; ++j) {
        const RopePair pair = rope_pair(c.rope, c.d_k, j);
        out.pairs.push_back(part(pair.first) + part(pair.second));
    }
    out.rest = Matrix::Zero(h.Q_rot.rows(), h.K_rot.rows());
    for (int column = 0; column < c.d_k; ++column)
        if (!rope_pair_of_column(c.rope, c.d_k, column)) out.rest += part(column);
    return out;
}

namespace {

// A part of scores_raw (n×m): its mean |value| and its mean at each offset key − query.
RopePairProfile profile_of(const Matrix& part) {
    const Eigen::Index n = part.rows(), m = part.cols();
    RopePairProfile profile;
    profile.mean_abs = part.size() > 0 ? part.cwiseAbs().mean() : 0.0;
    if (n > 0 && m > 0) {
        std::vector<double> sum(static_cast<size_t>(n + m - 1), 0.0), count(sum.size(), 0.0);
        for (Eigen::Index i = 0; i < n; ++i)
            for (Eigen::Index k = 0; k < m; ++k) {
                const size_t offset = static_cast<size_t>(k - i + n - 1);
                sum[offset] += part(i, k);
                count[offset] += 1;
            }
        for (size_t o = 0; o < sum.size(); ++o) sum[o] /= count[o];
        profile.by_offset = std::move(sum);
    }
    return profile;
}

}  // namespace

std::vector<RopePairProfile> rope_pair_profiles(const Config& c, const RopeSplit& split) {
    std::vector<RopePairProfile> out;
    for (size_t j = 0; j < split.pairs.size(); ++j) {
        RopePairProfile profile = profile_of(split.pairs[j]);
        profile.theta = rope_frequency(c.rope, c.d_k, static_cast<int>(j), std::max(c.n, c.kv_len()));
        out.push_back(std::move(profile));
    }
    return out;
}

RopePairProfile rope_rest_profile(const RopeSplit& split) { return profile_of(split.rest); }

}  // namespace attnviz::core
