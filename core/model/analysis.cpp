#include "core/model/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "core/attention/head_analysis.hpp"
#include "core/model/layer_weights.hpp"

namespace attnviz::model {

std::vector<TopToken> top_tokens(const Eigen::Ref<const Eigen::RowVectorXd>& logits, int k, double temperature) {
    if (logits.size() == 0 || k <= 0 || !(temperature > 0)) return {};
    const Eigen::RowVectorXd scaled = logits / temperature;
    const double max = scaled.maxCoeff();
    Eigen::RowVectorXd e(scaled.size());
    core::exp_or_zero(scaled.array() - max, e.array());
    const double sum = e.sum();
    std::vector<std::int32_t> order(static_cast<size_t>(logits.size()));
    std::iota(order.begin(), order.end(), 0);
    const auto count = std::min(order.size(), static_cast<size_t>(k));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                      [&](std::int32_t a, std::int32_t b) { return e(a) > e(b) || (e(a) == e(b) && a < b); });
    std::vector<TopToken> out;
    for (size_t i = 0; i < count; ++i) out.push_back({order[i], e(order[i]) / sum});
    return out;
}

template <class Scalar>
core::Matrix residual_norms(const RunState<Scalar>& s) {
    const auto streams = static_cast<int>(s.layers.size()) + 1;
    core::Matrix norms(streams, s.embeddings.rows());
    for (int l = 0; l < streams; ++l)
        norms.row(l) = s.stream_into(l).template cast<double>().rowwise().norm().transpose();
    return norms;
}

template <class Scalar>
std::vector<core::Matrix> attention_rollout(const RunState<Scalar>& s) {
    const Eigen::Index n = s.embeddings.rows();
    std::vector<core::Matrix> rollout;
    core::Matrix R = core::Matrix::Identity(n, n);
    for (const LayerRun<Scalar>& layer : s.layers) {
        core::Matrix mean = core::Matrix::Zero(n, n);  // ½·mean over heads of the weights, + ½·I
        for (const auto& head : layer.trace.heads) mean += head.weights.template cast<double>();
        core::Matrix A = 0.5 * mean / static_cast<double>(std::max<size_t>(layer.trace.heads.size(), 1));
        A.diagonal().array() += 0.5;
        A.array().colwise() /= A.rowwise().sum().array();
        R = A * R;  // n × n: Ã_l · (Ã_{l−1} ⋯ Ã_0)
        rollout.push_back(R);
    }
    return rollout;
}

template <class Scalar>
core::Result<LogitLens> logit_lens(const ModelFolder& model, const RunState<Scalar>& s,
                                   const std::function<bool()>& stopped) {
    using R = core::Result<LogitLens>;
    const ModelConfig& c = model.config();
    if (model.names().lm_head.empty()) return R::fail({{"", "the model has no LM head: the logit lens needs one"}});
    if (static_cast<int>(s.layers.size()) != c.layers)
        return R::fail({{"", "the logit lens needs a run of every block"}});
    const Eigen::Index n = s.embeddings.rows(), streams = c.layers + 1;
    // Every stream of every position through the final norm: (L+1)·n × d_model, stream-major.
    core::Matrix normed(streams * n, c.d_model);
    std::optional<Norm<double>> final_norm;
    if (c.final_norm()) {
        core::Result<Norm<double>> read = read_norm<double>(model, model.names().final_norm_w,
                                                            model.names().final_norm_b);
        if (!read) return R::fail(std::move(read.problems));
        final_norm = std::move(*read.value);
    }
    for (Eigen::Index l = 0; l < streams; ++l) {
        const core::Matrix x = s.stream_into(static_cast<int>(l)).template cast<double>();
        core::Matrix out;
        if (final_norm)
            final_norm->apply(x, out);
        else
            out = x;
        normed.middleRows(l * n, n) = out;
    }
    // One pass over the LM head: per row the largest logit, and the softmax's sum around it
    // (max and sum updated block by block, as an online softmax does).
    const Eigen::Index rows = normed.rows();
    Eigen::VectorXd best = Eigen::VectorXd::Constant(rows, -INFINITY), sum = Eigen::VectorXd::Zero(rows);
    Eigen::VectorXi best_id = Eigen::VectorXi::Zero(rows);
    bool stop = false;
    const core::Problems problems =
        for_each_lm_head_block<double>(model, [&](Eigen::Index first, const Eigen::Ref<const core::Matrix>& W_U_rows) {
            if (stop || (stopped && (stop = stopped()))) return;
            core::Matrix logits = normed * W_U_rows.transpose();           // rows × count
            if (const double cap = model.config().final_softcap; cap > 0)  // Gemma 2's, as the run's logits
                logits = cap * (logits.array() / cap).tanh();
            for (Eigen::Index r = 0; r < rows; ++r) {
                Eigen::Index j = 0;
                const double top = logits.row(r).maxCoeff(&j);
                if (top > best(r)) {
                    sum(r) = sum(r) * std::exp(best(r) - top);
                    best(r) = top;
                    best_id(r) = static_cast<int>(first + j);
                }
                // The sum reaches 1 here (best's own e^0), so the 10^−308 Eigen's exp gives for a
                // far smaller logit instead of 0 adds nothing.
                sum(r) += (logits.row(r).array() - best(r)).exp().sum();
            }
        });
    if (!problems.empty()) return R::fail(problems);
    if (stop) return R::fail({{"", "stopped before it was complete"}});
    LogitLens lens;
    lens.ids.resize(streams, n);
    lens.p.resize(streams, n);
    for (Eigen::Index l = 0; l < streams; ++l)
        for (Eigen::Index i = 0; i < n; ++i) {
            lens.ids(l, i) = best_id(l * n + i);
            lens.p(l, i) = 1 / sum(l * n + i);
        }
    return R::ok(std::move(lens));
}

template core::Matrix residual_norms<float>(const RunState<float>&);
template core::Matrix residual_norms<double>(const RunState<double>&);
template <class Scalar>
core::Result<std::vector<core::Matrix>> norm_weighted_block(const ModelFolder& model, const RunState<Scalar>& s,
                                                            int layer) {
    using R = core::Result<std::vector<core::Matrix>>;
    if (layer < 0 || layer >= static_cast<int>(s.layers.size()))
        return R::fail({{"", "no block " + std::to_string(layer) + " in the run"}});
    const LayerRun<Scalar>& block = s.layers[static_cast<size_t>(layer)];
    const core::Config& c = block.config;
    MatrixT<Scalar> W_O;  // h·d_v × d_model
    if (c.output_projection && block.edited) {
        W_O = block.edited->params.W_O.template cast<Scalar>();
    } else if (c.output_projection) {
        const core::Result<AttentionWeights<Scalar>> w = read_attention<Scalar>(model, layer);
        if (!w) return R::fail(w.problems);
        W_O = w.value->output_weights();
    }
    std::vector<core::Matrix> out;
    for (size_t h = 0; h < block.trace.heads.size(); ++h) {
        const core::HeadTraceT<Scalar>& head = block.trace.heads[h];
        const auto rows = static_cast<Eigen::Index>(h) * c.d_v;
        const core::Matrix weighted =
            c.output_projection ? core::norm_weighted<Scalar>(head.weights, head.V, W_O.middleRows(rows, c.d_v))
                                : core::norm_weighted<Scalar>(head.weights, head.V, W_O);  // W_O empty: V
        out.push_back(core::norm_weighted_rows(weighted));
    }
    return R::ok(std::move(out));
}

template std::vector<core::Matrix> attention_rollout<float>(const RunState<float>&);
template std::vector<core::Matrix> attention_rollout<double>(const RunState<double>&);
template core::Result<std::vector<core::Matrix>> norm_weighted_block<float>(const ModelFolder&, const RunState<float>&,
                                                                            int);
template core::Result<std::vector<core::Matrix>> norm_weighted_block<double>(const ModelFolder&,
                                                                             const RunState<double>&, int);
template core::Result<LogitLens> logit_lens<float>(const ModelFolder&, const RunState<float>&,
                                                   const std::function<bool()>&);
template core::Result<LogitLens> logit_lens<double>(const ModelFolder&, const RunState<double>&,
                                                    const std::function<bool()>&);

}  // namespace attnviz::model
