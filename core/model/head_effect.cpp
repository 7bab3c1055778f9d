#include "core/model/head_effect.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace attnviz::model {

Eigen::RowVectorXd next_token_distribution(const Eigen::Ref<const Eigen::RowVectorXd>& logits) {
    if (logits.size() == 0) return {};
    Eigen::RowVectorXd e(logits.size());
    core::exp_or_zero(logits.array() - logits.maxCoeff(), e.array());
    return e / e.sum();
}

double kl_divergence(const Eigen::Ref<const Eigen::RowVectorXd>& p, const Eigen::Ref<const Eigen::RowVectorXd>& q) {
    double kl = 0;
    for (Eigen::Index i = 0; i < std::min(p.size(), q.size()); ++i)
        if (p(i) > 0) kl += p(i) * (std::log(p(i)) - std::log(std::max(q(i), 1e-300)));
    return kl;
}

core::Result<core::Session> ablated_session(const core::Session& session, int head, core::Ablation how,
                                            const Eigen::RowVectorXd& Z_mean) {
    using R = core::Result<core::Session>;
    const core::Config& c = session.config;
    if (head < 0 || head >= c.heads)
        return R::fail(
            {{"", "head " + std::to_string(head + 1) + " is not one of the block's " + std::to_string(c.heads)}});
    if (!c.output_projection)
        return R::fail({{"", "ablating a head in a model needs the block's output projection W_O"}});
    core::Session out = session;
    core::Params& p = out.params;
    const auto rows = p.W_O.middleRows(static_cast<Eigen::Index>(head) * c.d_v, c.d_v);
    if (how == core::Ablation::mean) {
        if (Z_mean.size() != c.d_v) return R::fail({{"", "the head's mean row of Z has the wrong size"}});
        if (p.b_O.cols() != c.d_model || !out.config.biases) {
            if (p.b_O.cols() != c.d_model) p.b_O = core::Matrix::Zero(1, c.d_model);
            out.config.biases = true;  // the other biases are held as zeros (params.hpp)
        }
        p.b_O += Z_mean * rows;  // 1×d_model: what every query's row of Z now adds
    }
    p.W_O.middleRows(static_cast<Eigen::Index>(head) * c.d_v, c.d_v).setZero();
    return R::ok(std::move(out));
}

namespace {

// √Σ_h ‖A'_h − A_h‖²_F of two traces of the same block.
template <class Scalar>
double weights_change(const core::TraceT<Scalar>& after, const core::TraceT<Scalar>& before) {
    double sum = 0;
    for (size_t h = 0; h < std::min(after.heads.size(), before.heads.size()); ++h)
        sum += (after.heads[h].weights.template cast<double>() - before.heads[h].weights.template cast<double>())
                   .squaredNorm();
    return std::sqrt(sum);
}

}  // namespace

template <class Scalar>
core::Result<HeadEffect> head_effect(const ModelFolder& model, const RunState<Scalar>& run, int layer, int head,
                                     core::Ablation how, int k) {
    using R = core::Result<HeadEffect>;
    const core::Result<core::Session> session = layer_session(model, run, layer);
    if (!session) return R::fail(session.problems);
    const auto& trace = run.layers[static_cast<size_t>(layer)].trace;
    Eigen::RowVectorXd Z_mean;
    if (head >= 0 && head < static_cast<int>(trace.heads.size()))
        Z_mean = trace.heads[static_cast<size_t>(head)].Z.template cast<double>().colwise().mean();
    core::Result<core::Session> ablated = ablated_session(*session.value, head, how, Z_mean);
    if (!ablated) return R::fail(ablated.problems);
    RunState<Scalar> after = copy_for_rerun(run, layer);  // what the rerun reads, not what it writes
    after.layers[static_cast<size_t>(layer)].edited = std::make_shared<const core::Session>(std::move(*ablated.value));
    if (core::Problems p = rerun_from(model, after, layer); !p.empty()) return R::fail(std::move(p));
    HeadEffect e;
    e.layer = layer;
    e.head = head;
    e.how = how;
    e.next_token = run.logits_last.size() > 0 && after.logits_last.size() == run.logits_last.size();
    if (e.next_token) {
        const Eigen::RowVectorXd before_logits = run.logits_last.template cast<double>();
        const Eigen::RowVectorXd after_logits = after.logits_last.template cast<double>();
        e.kl = kl_divergence(next_token_distribution(before_logits), next_token_distribution(after_logits));
        e.top_before = top_tokens(before_logits, k);
        e.top_after = top_tokens(after_logits, k);
    }
    for (size_t l = static_cast<size_t>(layer); l < run.layers.size(); ++l) {
        e.residual_delta.push_back(
            (after.layers[l].output.template cast<double>() - run.layers[l].output.template cast<double>()).norm());
        e.weights_delta.push_back(weights_change(after.layers[l].trace, run.layers[l].trace));
    }
    return R::ok(std::move(e));
}

template core::Result<HeadEffect> head_effect<float>(const ModelFolder&, const RunState<float>&, int, int,
                                                     core::Ablation, int);
template core::Result<HeadEffect> head_effect<double>(const ModelFolder&, const RunState<double>&, int, int,
                                                      core::Ablation, int);

}  // namespace attnviz::model
