#include "core/model/attribution.hpp"

#include <cmath>

#include "core/model/layer_weights.hpp"

namespace attnviz::model {

namespace {

using core::Problems;
using Row = Eigen::RowVectorXd;

Problems fail(std::string message) { return {{"", std::move(message)}}; }

// The norm as a linear map of a part u of a row whose whole is `whole` (1×d), its scale taken from
// the whole and frozen: LayerNorm (u − mean(u)) / σ(whole) ⊙ γ, RMSNorm u / RMS(whole) ⊙ γ (1 + γ
// for plus_one); a norm without weights is u. The bias is not part of it.
template <class Scalar>
Row frozen_norm(const Norm<Scalar>& norm, const Row& whole, const Row& u) {
    if (norm.w.size() == 0) return u;
    const Row gamma = norm.w.template cast<double>().array() + (norm.plus_one ? 1.0 : 0.0);
    if (norm.rms)
        return u.cwiseProduct(gamma) / std::sqrt(whole.squaredNorm() / static_cast<double>(whole.size()) + norm.eps);
    const double mean = whole.mean();
    const double sigma = std::sqrt((whole.array() - mean).square().mean() + norm.eps);
    return (u.array() - u.mean()).matrix().cwiseProduct(gamma) / sigma;
}

// Direct logit attribution at the last position (see attribution.hpp).
template <class Scalar>
Problems direct_logit_attribution(const ModelFolder& model, const RunState<Scalar>& s, const Objective& o,
                                  Attribution& a) {
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    const Eigen::Index last = s.hidden.rows() - 1;
    std::vector<int> ids{o.target};
    if (o.kind == Objective::Kind::difference) ids.push_back(o.versus);
    const core::Result<MatrixT<Scalar>> rows = read_table_rows<Scalar>(model, names.lm_head, ids, c.d_model);
    if (!rows) return rows.problems;
    Row direction = rows.value->row(0).template cast<double>();  // W_U[target] − W_U[versus]
    if (ids.size() == 2) direction -= rows.value->row(1).template cast<double>();
    Norm<Scalar> final_norm;
    if (c.final_norm()) {
        core::Result<Norm<Scalar>> read = read_norm<Scalar>(model, names.final_norm_w, names.final_norm_b);
        if (!read) return read.problems;
        final_norm = std::move(*read.value);
    }
    const Row x_final = s.stream_into(c.layers).row(last).template cast<double>();
    const auto part = [&](const Row& u) { return frozen_norm(final_norm, x_final, u).dot(direction); };
    a.dla_bias = final_norm.b.size() ? final_norm.b.template cast<double>().dot(direction) : 0.0;
    a.dla_heads = core::Matrix::Zero(c.layers, c.heads);
    a.dla_mlps.assign(static_cast<size_t>(c.layers), 0.0);
    Row embeddings = s.embeddings.row(last).template cast<double>();  // x₀ and the writes no head makes
    for (int L = 0; L < c.layers; ++L) {
        const LayerRun<Scalar>& run = s.layers[static_cast<size_t>(L)];
        const core::Result<BlockWeights<Scalar>> block = read_block<Scalar>(model, L);
        if (!block) return block.problems;
        const core::Result<MatrixT<Scalar>> attention = output_weights_of(model, s, L);
        if (!attention) return attention.problems;
        const core::Matrix W_O = attention.value->template cast<double>();  // h·d_v × d_model
        const Norm<Scalar>& post = block.value->post_attention;
        const Row attended = run.trace.output.row(last).template cast<double>();
        Row written = attended;  // the attention's write to the stream
        if (post.w.size()) {
            MatrixT<Scalar> normed;
            post.apply(MatrixT<Scalar>(run.trace.output.row(last)), normed);
            written = normed.row(0).template cast<double>();
        }
        Row heads_written = Row::Zero(c.d_model);
        const int d_v = run.config.d_v;
        for (int h = 0; h < c.heads; ++h) {
            const Row z = run.trace.heads[static_cast<size_t>(h)].Z.row(last).template cast<double>();
            const Row head = frozen_norm(post, attended, z * W_O.middleRows(Eigen::Index{h} * d_v, d_v));
            a.dla_heads(L, h) = part(head);
            heads_written += head;
        }
        embeddings += written - heads_written;
        const Row x = s.stream_into(L).row(last).template cast<double>();
        a.dla_mlps[static_cast<size_t>(L)] = part(run.output.row(last).template cast<double>() - x - written);
    }
    a.dla_embeddings = part(embeddings);
    a.dla_objective = s.hidden.row(last).template cast<double>().dot(direction);
    a.dla_sum = a.dla_heads.sum() + Eigen::Map<const Eigen::VectorXd>(a.dla_mlps.data(), c.layers).sum() +
                a.dla_embeddings + a.dla_bias;
    a.dla_residual = std::abs(a.dla_sum - a.dla_objective);
    return {};
}

// Integrated gradients: the run again with x₀·k/S for k = 1 … S, the gradients of x₀ summed; then
// at x₀ = 0 for the baseline's objective.
template <class Scalar>
Problems integrated_gradients(const ModelFolder& model, const RunState<Scalar>& s, const Objective& o, int steps,
                              const AttributionProgress& progress, Attribution& a) {
    RunState<Scalar> path = copy_for_rerun(s, 0);
    MatrixT<Scalar> summed = MatrixT<Scalar>::Zero(s.embeddings.rows(), s.embeddings.cols());
    for (int k = 1; k <= steps; ++k) {
        path.embeddings = s.embeddings * static_cast<Scalar>(static_cast<double>(k) / steps);
        if (Problems p = run_blocks_from(model, path, 0); !p.empty()) return p;
        const core::Result<ModelGradients<Scalar>> g = model_gradients(model, path, o, false);
        if (!g) return g.problems;
        summed += g.value->d_embeddings;
        if (progress && !progress(k + 1, steps + 2)) return fail("stopped at step " + std::to_string(k));
    }
    path.embeddings.setZero();
    if (Problems p = run_blocks_from(model, path, 0); !p.empty()) return p;
    a.baseline_value = objective_value(path, o);
    const Eigen::VectorXd per_token =
        (s.embeddings.template cast<double>().cwiseProduct(summed.template cast<double>()) / steps).rowwise().sum();
    a.integrated_gradients.assign(per_token.data(), per_token.data() + per_token.size());
    a.integrated_sum = per_token.sum();
    return {};
}

}  // namespace

template <class Scalar>
core::Result<Attribution> attribute(const ModelFolder& model, const RunState<Scalar>& s, const Objective& o, int steps,
                                    const AttributionProgress& progress) {
    using R = core::Result<Attribution>;
    if (o.kind == Objective::Kind::mean_loss)
        return R::fail(fail("attribution takes a logit or a logit difference at the last position, not the mean loss"));
    if (steps < 1 || steps > 4096)
        return R::fail(fail("--steps " + std::to_string(steps) + ": integrated gradients take 1 to 4096 steps"));
    const core::Result<ModelGradients<Scalar>> g = model_gradients(model, s, o, false);
    if (!g) return R::fail(g.problems);
    Attribution a;
    a.objective = o;
    a.value = g.value->value;
    a.steps = steps;
    const Eigen::VectorXd gxi = s.embeddings.template cast<double>()
                                    .cwiseProduct(g.value->d_embeddings.template cast<double>())
                                    .rowwise()
                                    .sum();
    a.grad_x_input.assign(gxi.data(), gxi.data() + gxi.size());
    for (size_t L = 0; L < s.layers.size(); ++L) {
        std::vector<core::Matrix>& heads = a.attention_x_gradient.emplace_back();
        for (size_t h = 0; h < g.value->blocks[L].d_weights.size(); ++h)
            heads.push_back(s.layers[L].trace.heads[h].weights.template cast<double>().cwiseProduct(
                g.value->blocks[L].d_weights[h].template cast<double>()));
    }
    if (progress && !progress(1, steps + 2)) return R::fail(fail("stopped before integrated gradients"));
    if (Problems p = direct_logit_attribution(model, s, o, a); !p.empty()) return R::fail(std::move(p));
    if (Problems p = integrated_gradients(model, s, o, steps, progress, a); !p.empty()) return R::fail(std::move(p));
    return R::ok(std::move(a));
}

template core::Result<Attribution> attribute<float>(const ModelFolder&, const RunState<float>&, const Objective&, int,
                                                    const AttributionProgress&);
template core::Result<Attribution> attribute<double>(const ModelFolder&, const RunState<double>&, const Objective&, int,
                                                     const AttributionProgress&);

}  // namespace attnviz::model
