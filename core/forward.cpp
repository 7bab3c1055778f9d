#include "forward.hpp"

#include <cmath>
#include <limits>

namespace attnviz::core {

template <class Scalar>
void softmax_rows(MatrixT<Scalar>& m) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        auto row = m.row(i);
        const Scalar row_max = row.maxCoeff();  // finite: the diagonal is never masked
        Scalar sum = 0;
        for (Eigen::Index j = 0; j < row.size(); ++j) {
            row(j) = std::exp(row(j) - row_max);  // exp(−∞) = 0 for masked entries
            sum += row(j);
        }
        row /= sum;  // sum ≥ 1: the max entry contributes exp(0)
    }
}

namespace {

template <class Scalar>
RowStats row_stats(const MatrixT<Scalar>& weights, Eigen::Index i) {
    RowStats s;
    s.max = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
        const double w = weights(i, j);
        s.sum += w;
        s.max = std::max(s.max, w);
        if (w > 0) s.entropy -= w * std::log(w);
    }
    return s;
}

}  // namespace

template <class Scalar>
TraceT<Scalar> forward(const Config& config, const Params& params) {
    using M = MatrixT<Scalar>;
    TraceT<Scalar> t;
    t.config = config;
    t.scale = config.scale.value(config.d_k);
    const int n = config.n;
    const M X = params.X.template cast<Scalar>();  // n×d_model
    const Scalar scale = static_cast<Scalar>(t.scale);

    t.heads.resize(config.heads);
    t.rows.resize(config.heads);
    t.concat.resize(n, config.concat_width());
    for (int h = 0; h < config.heads; ++h) {
        const HeadParams& w = params.heads[h];
        HeadTraceT<Scalar>& head = t.heads[h];
        // Linear projections.
        head.Q.noalias() = X * w.W_Q.template cast<Scalar>();  // n×d_k
        head.K.noalias() = X * w.W_K.template cast<Scalar>();  // n×d_k
        head.V.noalias() = X * w.W_V.template cast<Scalar>();  // n×d_v
        // Dot products of every query with every key.
        head.scores_raw.noalias() = head.Q * head.K.transpose();  // n×n
        // Scale, then mask the future (j > i) when causal.
        head.scores = head.scores_raw / scale;
        if (config.mask == Mask::causal)
            for (int i = 0; i < n; ++i)
                for (int j = i + 1; j < n; ++j) head.scores(i, j) = -std::numeric_limits<Scalar>::infinity();
        // Softmax of each row.
        head.weights = head.scores;
        softmax_rows(head.weights);
        // Weighted sum of the values.
        head.Z.noalias() = head.weights * head.V;  // n×d_v
        t.concat.middleCols(static_cast<Eigen::Index>(h) * config.d_v, config.d_v) = head.Z;

        t.rows[h].resize(n);
        for (int i = 0; i < n; ++i) t.rows[h][i] = row_stats(head.weights, i);
    }
    if (config.output_projection)
        t.output.noalias() = t.concat * params.W_O.template cast<Scalar>();  // n×d_model
    else
        t.output = t.concat;
    return t;
}

template void softmax_rows<double>(MatrixT<double>&);
template void softmax_rows<float>(MatrixT<float>&);
template TraceT<double> forward<double>(const Config&, const Params&);
template TraceT<float> forward<float>(const Config&, const Params&);

}  // namespace attnviz::core
