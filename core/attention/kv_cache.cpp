#include "core/attention/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attnviz::core {

namespace {

// Row x with RoPE at `position` (a copy: the row as RoPE leaves it), the frequencies those of a
// layer of n positions.
Eigen::RowVectorXd rotated(const Eigen::RowVectorXd& x, const Rope& rope, int position, int n) {
    if (!rope.on) return x;
    const int d_k = static_cast<int>(x.size());
    Eigen::RowVectorXd out = x;
    for (int j = 0; j < rope.rotated(d_k) / 2; ++j) {
        const RopePair p = rope_pair(rope, d_k, j);
        const double angle = rope_angle(rope, d_k, position, j, n), c = std::cos(angle), s = std::sin(angle);
        out(p.first) = x(p.first) * c - x(p.second) * s;
        out(p.second) = x(p.second) * c + x(p.first) * s;
    }
    return out;
}

Eigen::RowVectorXd projected(const Eigen::RowVectorXd& x, const Matrix& W, const Matrix& b, bool biases) {
    Eigen::RowVectorXd r = x * W;
    if (biases) r += b;
    return r;
}

// The rows of every head (or K/V group) for one token, normed together as the q/k norms do: divided
// by the RMS of all of them side by side, times the norm's weights `w` (1 × parts·width).
void norm_together(std::vector<Eigen::RowVectorXd>& parts, const Matrix& w, double eps) {
    double squares = 0, count = 0;
    for (const Eigen::RowVectorXd& r : parts) {
        squares += r.squaredNorm();
        count += static_cast<double>(r.size());
    }
    const double inv = 1 / std::sqrt(squares / count + eps);
    Eigen::Index at = 0;
    for (Eigen::RowVectorXd& r : parts) {
        r = (r * inv).cwiseProduct(w.row(0).segment(at, r.size()));
        at += r.size();
    }
}

}  // namespace

Result<KvCacheRun> kv_cache_decode(const Session& session, int prefill) {
    const Config& c = session.config;
    if (c.cross())
        return Result<KvCacheRun>::fail({{"config.n_kv",
                                          "a KV cache decodes self-attention; under cross-attention "
                                          "the keys and values come from Y"}});
    if (prefill < 0 || prefill >= c.n)
        return Result<KvCacheRun>::fail(
            {{"prefill", "expected 0 to " + std::to_string(c.n - 1) + " tokens, got " + std::to_string(prefill)}});
    Config causal = c;
    causal.mask = Mask::causal;
    Params params = session.params;
    params.mask = Matrix();
    const Trace whole = forward<double>(causal, params);
    const Params& p = session.params;
    const int groups = c.kv_count(), group_size = c.group_size();
    const double s = whole.scale;
    std::vector<Matrix> K(static_cast<std::size_t>(groups)), V(static_cast<std::size_t>(groups));
    for (int g = 0; g < groups; ++g) {  // the prefill: the first `prefill` rows of K (rotated) and V
        const int owner = g * group_size;
        const HeadTrace& h = whole.heads[static_cast<std::size_t>(owner)];
        K[static_cast<std::size_t>(g)] = (c.rope.on ? h.K_rot : h.K).topRows(prefill);
        V[static_cast<std::size_t>(g)] = h.V.topRows(prefill);
    }
    KvCacheRun run;
    run.prefill = prefill;
    for (int t = prefill; t < c.n; ++t) {
        KvCacheStep step;
        step.token = t;
        const Eigen::RowVectorXd x = p.X.row(t);
        std::vector<Eigen::RowVectorXd> k_rows, q_rows;  // every group's new key, every head's query
        for (int g = 0; g < groups; ++g) {
            const HeadParams& owner = p.heads[static_cast<std::size_t>(g * group_size)];
            k_rows.push_back(projected(x, owner.W_K, owner.b_K, c.biases));
            step.v.push_back(projected(x, owner.W_V, owner.b_V, c.biases));
        }
        for (int i = 0; i < c.heads; ++i) {
            const HeadParams& hp = p.heads[static_cast<std::size_t>(i)];
            q_rows.push_back(projected(x, hp.W_Q, hp.b_Q, c.biases));
        }
        if (c.qk_norm.on) {
            norm_together(k_rows, p.k_norm, c.qk_norm.eps);
            norm_together(q_rows, p.q_norm, c.qk_norm.eps);
        }
        for (int g = 0; g < groups; ++g) {
            step.k.push_back(rotated(k_rows[static_cast<std::size_t>(g)], c.rope, t, c.n));
            Matrix& Kg = K[static_cast<std::size_t>(g)];
            Matrix& Vg = V[static_cast<std::size_t>(g)];
            Kg.conservativeResize(t + 1, Eigen::NoChange);
            Vg.conservativeResize(t + 1, Eigen::NoChange);
            Kg.row(t) = step.k.back();
            Vg.row(t) = step.v[static_cast<std::size_t>(g)];
        }
        Eigen::RowVectorXd concat(c.heads * c.d_v);
        for (int i = 0; i < c.heads; ++i) {
            step.q.push_back(rotated(q_rows[static_cast<std::size_t>(i)], c.rope, t, c.n));
            const std::size_t g = static_cast<std::size_t>(c.kv_group(i));
            Matrix weights = step.q.back() * K[g].transpose() / s;  // 1 × (t + 1): the scores, then
            if (c.softcap > 0) weights = c.softcap * (weights.array() / c.softcap).tanh();  // capped,
            for (int j = 0; j < t + 1; ++j)  // the keys the sliding window has left behind hidden,
                if (c.hides(t, j)) weights(0, j) = -std::numeric_limits<double>::infinity();
            softmax_rows(weights, c.softmax);  // their softmax, as the layer's
            step.weights.push_back(weights.row(0));
            concat.segment(i * c.d_v, c.d_v) = step.weights.back() * V[g];
        }
        step.output = c.output_projection ? Eigen::RowVectorXd(concat * p.W_O) : concat;
        if (c.output_projection && c.biases) step.output += p.b_O;
        step.difference = (step.output - whole.output.row(t)).cwiseAbs().maxCoeff();
        step.cache_bytes = kv_cache_bytes(c, 1, t + 1, static_cast<int>(sizeof(double)));
        run.max_difference = std::max(run.max_difference, step.difference);
        run.steps.push_back(std::move(step));
    }
    run.whole_output = whole.output;
    return Result<KvCacheRun>::ok(std::move(run));
}

std::int64_t kv_cache_bytes(const Config& c, int layers, std::int64_t tokens, int bytes_per_value, bool grouped) {
    const std::int64_t kv = grouped ? c.kv_count() : c.heads;
    return static_cast<std::int64_t>(layers) * tokens * kv * (c.d_k + c.d_v) * bytes_per_value;
}

}  // namespace attnviz::core
