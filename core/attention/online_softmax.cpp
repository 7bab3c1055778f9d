#include "core/attention/online_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attnviz::core {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// e^{x − m}, 0 for a masked score (x = −∞) or while no key was seen (m = −∞).
double exp_from(double x, double m) { return x == minus_infinity || m == minus_infinity ? 0.0 : std::exp(x - m); }

// One key tile into the row tile's m, ℓ and Õ (rows a.., keys c..d).
void step(const Matrix& scores, const Matrix& V, int a, int c, int d, std::vector<double>& m, std::vector<double>& l,
          Matrix& O_tilde) {
    for (int r = 0; r < static_cast<int>(m.size()); ++r) {
        const int i = a + r;
        double m_new = m[static_cast<std::size_t>(r)];
        for (int j = c; j < d; ++j) m_new = std::max(m_new, scores(i, j));
        // What was summed against the old max, rescaled to the new one (1 while nothing was summed).
        const double rescale =
            m[static_cast<std::size_t>(r)] == minus_infinity ? 1.0 : exp_from(m[static_cast<std::size_t>(r)], m_new);
        double sum = 0;
        O_tilde.row(r) *= rescale;
        for (int j = c; j < d; ++j) {
            const double p = exp_from(scores(i, j), m_new);
            sum += p;
            if (p != 0) O_tilde.row(r) += p * V.row(j);
        }
        l[static_cast<std::size_t>(r)] = rescale * l[static_cast<std::size_t>(r)] + sum;
        m[static_cast<std::size_t>(r)] = m_new;
    }
}

}  // namespace

Result<OnlineSoftmaxRun> online_softmax(const Trace& trace, int head, int block_rows, int block_cols) {
    if (head < 0 || head >= static_cast<int>(trace.heads.size()))
        return Result<OnlineSoftmaxRun>::fail(
            {{"head", "head " + std::to_string(head + 1) + " does not exist: there are " +
                          std::to_string(trace.heads.size())}});
    for (const auto& [size, name] : {std::pair{block_rows, "block_rows"}, std::pair{block_cols, "block_cols"}})
        if (size < 1 || size > max_block)
            return Result<OnlineSoftmaxRun>::fail(
                {{name, "expected 1 to " + std::to_string(max_block) + ", got " + std::to_string(size)}});
    const HeadTrace& h = trace.heads[static_cast<std::size_t>(head)];
    const Matrix& scores = h.scores_capped.size() > 0 ? h.scores_capped : h.scores;  // the softmax's input
    const int n = static_cast<int>(scores.rows()), n_kv = static_cast<int>(scores.cols());
    const int d_v = static_cast<int>(h.V.cols()), d_k = static_cast<int>(h.K.cols());
    OnlineSoftmaxRun run;
    run.O = Matrix::Zero(n, d_v);
    for (int a = 0; a < n; a += block_rows) {
        const int b = std::min(n, a + block_rows);
        // Every row starts where the softmax does (softmax₁: m = 0 and ℓ = 1, the constant 1 = e^0,
        // rescaled with the rest as the max grows).
        const SoftmaxStart start = softmax_start(trace.config.softmax);
        std::vector<double> m(static_cast<std::size_t>(b - a), start.m), l(static_cast<std::size_t>(b - a), start.l);
        Matrix O_tilde = Matrix::Zero(b - a, d_v);
        for (int c = 0; c < n_kv; c += block_cols) {
            const int d = std::min(n_kv, c + block_cols);
            step(scores, h.V, a, c, d, m, l, O_tilde);
            run.steps.push_back({a, b, c, d, m, l});
        }
        // O = diag(ℓ)⁻¹·Õ (a row with every key masked has no weights: zeros, as Z has).
        for (int r = 0; r < b - a; ++r)
            if (l[static_cast<std::size_t>(r)] > 0) run.O.row(a + r) = O_tilde.row(r) / l[static_cast<std::size_t>(r)];
    }
    run.max_difference = n > 0 && d_v > 0 ? (run.O - h.Z).cwiseAbs().maxCoeff() : 0.0;
    const std::int64_t row_tiles = (n + block_rows - 1) / block_rows;
    run.standard_nn_accesses = 4 * static_cast<std::int64_t>(n) * n_kv;
    run.standard_kv_reads = static_cast<std::int64_t>(n_kv) * (d_k + d_v);
    run.tiled_kv_reads = row_tiles * run.standard_kv_reads;
    return Result<OnlineSoftmaxRun>::ok(std::move(run));
}

}  // namespace attnviz::core
