#include "core/model/backward.hpp"

#include <cmath>

#include "core/attention/backward.hpp"
#include "core/model/layer_weights.hpp"

namespace attnviz::model {

namespace {

using core::Problems;

Problems fail(std::string message) { return {{"", std::move(message)}}; }

// A tensor's entry in `grads` as zeros of its stored shape (a 1-D tensor as one row) on the
// pass's first use, for rows to be added into.
template <class Scalar>
MatrixT<Scalar>& zeros_of(NamedGradients<Scalar>& grads, const ModelFolder& model, const std::string& name) {
    const core::TensorInfo* info = model.weights().find(name);
    const bool known = info && !info->shape.empty();
    const auto rows = static_cast<Eigen::Index>(!known ? 0 : info->shape.size() == 1 ? 1 : info->shape[0]);
    const auto cols = static_cast<Eigen::Index>(known ? info->shape.back() : 0);
    return grads.zeros(name, rows, cols);
}

// What keeps the objective from being taken on this run.
template <class Scalar>
Problems objective_problems(const ModelFolder& model, const RunState<Scalar>& s, const Objective& o, bool weights) {
    const ModelConfig& c = model.config();
    if (!c.causal())
        return fail(std::string("a ") + to_string(c.architecture) +
                    " model is an encoder without an LM head: there are no logits to take the gradient of");
    if (static_cast<int>(s.layers.size()) != c.layers || s.logits_last.size() != c.vocab_size)
        return fail("the gradient needs a whole run of the model, to its logits");
    for (size_t l = 0; l < s.layers.size() && weights; ++l)
        if (s.layers[l].edited)
            return fail("block " + std::to_string(l) +
                        " was edited: the weights' gradients are of the folder's tensors only (reset the block)");
    const auto check = [&](std::int32_t id, const char* what) {
        return id < 0 || id >= c.vocab_size
                   ? what + std::string(" token id ") + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(c.vocab_size) + " ids"
                   : std::string();
    };
    core::ProblemList problems;
    if (o.kind != Objective::Kind::mean_loss)
        if (std::string p = check(o.target, "the target"); !p.empty()) problems.add("", p);
    if (o.kind == Objective::Kind::difference)
        if (std::string p = check(o.versus, "the versus"); !p.empty()) problems.add("", p);
    if (o.kind == Objective::Kind::mean_loss && s.token_ids.size() < 2)
        problems.add("", "the mean next-token loss needs at least 2 tokens");
    return std::move(problems).take();
}

// 6. The objective's value, d_hidden, and (with grads) the LM head's gradient; logit objectives
// at the last position: d_logits = e_target (− e_versus), times the soft-cap's derivative.
template <class Scalar>
Problems logit_backward(const ModelFolder& model, const RunState<Scalar>& s, const Objective& o,
                        ModelGradients<Scalar>& g, NamedGradients<Scalar>* grads) {
    const ModelConfig& c = model.config();
    const Eigen::Index n = s.hidden.rows(), last = n - 1;
    std::vector<int> ids{o.target};
    std::vector<Scalar> signs{Scalar(1)};
    if (o.kind == Objective::Kind::difference) {
        ids.push_back(o.versus);
        signs.push_back(Scalar(-1));
    }
    core::Result<MatrixT<Scalar>> rows = read_table_rows<Scalar>(model, model.names().lm_head, ids, c.d_model);
    if (!rows) return rows.problems;
    g.value = 0;
    g.d_hidden = MatrixT<Scalar>::Zero(n, c.d_model);
    MatrixT<Scalar>* head = grads ? &zeros_of(*grads, model, model.names().lm_head) : nullptr;
    for (size_t k = 0; k < ids.size(); ++k) {
        const Scalar logit = s.logits_last(ids[k]);
        g.value += static_cast<double>(signs[k] * logit);
        Scalar d = signs[k];
        if (c.final_softcap > 0) {  // 1 − tanh²(z/c) as 1/cosh²(z/c), from z: exact where tanh is near ±1
            const double z = static_cast<double>(s.hidden.row(last).dot(rows.value->row(static_cast<Eigen::Index>(k))));
            d *= static_cast<Scalar>(1 / std::pow(std::cosh(z / c.final_softcap), 2));
        }
        g.d_hidden.row(last) += d * rows.value->row(static_cast<Eigen::Index>(k));
        if (head) head->row(ids[k]) += d * s.hidden.row(last);
    }
    return {};
}

// 6. The mean next-token loss: every position's logits (n×V, a block of the LM head at a time),
// log-softmax, d_logits = (softmax − one-hot of the next token) / (n − 1) on rows 0 … n − 2.
template <class Scalar>
Problems loss_backward(const ModelFolder& model, const RunState<Scalar>& s, ModelGradients<Scalar>& g,
                       NamedGradients<Scalar>* grads) {
    const ModelConfig& c = model.config();
    const Eigen::Index n = s.hidden.rows();
    MatrixT<Scalar> logits(n, c.vocab_size);
    Problems p = for_each_lm_head_block<Scalar>(
        model,
        [&](Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& W_U) {
            logits.middleCols(first, W_U.rows()).noalias() = s.hidden * W_U.transpose();
        },
        true);
    if (!p.empty()) return p;
    MatrixT<Scalar> cap_derivative;
    if (c.final_softcap > 0) {  // c·tanh(z/c), its derivative 1/cosh²(z/c)
        const auto cap = static_cast<Scalar>(c.final_softcap);
        cap_derivative = (logits.array() / cap).cosh().square().inverse();
        logits = cap * (logits.array() / cap).tanh();
    }
    MatrixT<Scalar> d_logits = MatrixT<Scalar>::Zero(n, c.vocab_size);
    double loss = 0;
    const auto share = static_cast<Scalar>(1.0 / static_cast<double>(n - 1));
    for (Eigen::Index i = 0; i + 1 < n; ++i) {
        const Scalar top = logits.row(i).maxCoeff();
        const Eigen::Array<Scalar, 1, Eigen::Dynamic> e = (logits.row(i).array() - top).exp();
        const Scalar sum = e.sum();
        const std::int32_t next = s.token_ids[static_cast<size_t>(i + 1)];
        loss -= static_cast<double>(logits(i, next) - top - std::log(sum));
        d_logits.row(i) = (e / sum * share).matrix();
        d_logits(i, next) -= share;
    }
    g.value = loss / static_cast<double>(n - 1);
    if (cap_derivative.size()) d_logits.array() *= cap_derivative.array();
    g.d_hidden = MatrixT<Scalar>::Zero(n, c.d_model);
    MatrixT<Scalar>* head = grads ? &zeros_of(*grads, model, model.names().lm_head) : nullptr;
    p = for_each_lm_head_block<Scalar>(model, [&](Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& W_U) {
        g.d_hidden.noalias() += d_logits.middleCols(first, W_U.rows()) * W_U;
        if (head)
            head->middleRows(first, W_U.rows()).noalias() += d_logits.middleCols(first, W_U.rows()).transpose() *
                                                             s.hidden;
    });
    if (!p.empty()) return p;
    return {};
}

// The attention's weight gradients under the layer's tensor names, from the layout LayerWeightsT
// has (read_attention): GPT-2's c_attn and Phi-3's qkv_proj as they are, GPT-NeoX's rows back to
// head after head, nn.Linear's query, key and value rows split.
template <class Scalar>
void add_attention_gradients(const ModelFolder& model, int layer, const core::AttentionGradientsT<Scalar>& a,
                             NamedGradients<Scalar>& grads) {
    const ModelConfig& c = model.config();
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    const Eigen::Index q = Eigen::Index{c.heads} * c.d_k, kv = Eigen::Index{c.kv_heads} * c.d_k;
    if (!b.qkv.empty() && model.qkv_layout() == QkvLayout::per_head) {
        // Row block (part·h + head) of the Q, K, V order is block (head·3 + part) of the stored one.
        const auto per_head = [&](const MatrixT<Scalar>& qkv_rows) {
            MatrixT<Scalar> stored(qkv_rows.rows(), qkv_rows.cols());
            for (int h = 0; h < c.heads; ++h)
                for (int part = 0; part < 3; ++part)
                    stored.middleRows((Eigen::Index{h} * 3 + part) * c.d_k,
                                      c.d_k) = qkv_rows.middleRows((Eigen::Index{part} * c.heads + h) * c.d_k, c.d_k);
            return stored;
        };
        grads.add(b.qkv, per_head(a.d_W_qkv));
        if (a.d_b_qkv.size()) grads.add(b.qkv_b, per_head(a.d_b_qkv.transpose()).transpose());
    } else if (!b.qkv.empty()) {
        grads.add(b.qkv, a.d_W_qkv);
        if (a.d_b_qkv.size()) grads.add(b.qkv_b, a.d_b_qkv);
    } else {
        grads.add(b.q, a.d_W_qkv.topRows(q));
        grads.add(b.k, a.d_W_qkv.middleRows(q, kv));
        grads.add(b.v, a.d_W_qkv.middleRows(q + kv, kv));
        if (a.d_b_qkv.size()) {
            grads.add(b.q_b, a.d_b_qkv.leftCols(q));
            grads.add(b.k_b, a.d_b_qkv.middleCols(q, kv));
            grads.add(b.v_b, a.d_b_qkv.middleCols(q + kv, kv));
        }
    }
    grads.add(b.o, a.d_W_O);
    if (a.d_b_O.size()) grads.add(b.o_b, a.d_b_O);
    if (a.d_q_norm.size()) grads.add(b.q_norm, a.d_q_norm);
    if (a.d_k_norm.size()) grads.add(b.k_norm, a.d_k_norm);
}

// Steps 4–3 of a block backwards: from d_out (the stream after it) to d_x (the stream entering it)
// and d_attn (the attention's output), the MLP and the norms recomputed from x and the trace.
template <class Scalar>
void residual_backward(const ModelConfig& c, const BlockWeights<Scalar>& w, const BlockNames& names,
                       const MatrixT<Scalar>& x, const MatrixT<Scalar>& attn, const MatrixT<Scalar>& d_out,
                       MatrixT<Scalar>& d_x, MatrixT<Scalar>& d_attn, NamedGradients<Scalar>* grads) {
    MatrixT<Scalar> m, d_m, hidden;
    if (c.parallel_residual) {  // out = x + attn + mlp(norm_mlp(x))
        w.norm_mlp.apply(x, m);
        mlp_backward(w.mlp, m, d_out, d_m, grads, names);
        norm_backward(w.norm_mlp, x, d_m, d_x, grads, names.norm_mlp_w, names.norm_mlp_b);
        d_x += d_out;
        d_attn = d_out;
    } else if (c.pre_norm()) {  // x₁ = x + post_attention(attn); out = x₁ + post_mlp(mlp(norm_mlp(x₁)))
        MatrixT<Scalar> x1;
        if (w.post_attention.w.size()) {
            w.post_attention.apply(attn, m);
            x1 = x + m;
        } else {
            x1 = x + attn;
        }
        if (c.input_norms)
            w.norm_mlp.apply(x1, m);
        else
            m = x1;
        MatrixT<Scalar> d_f = d_out;
        if (w.post_mlp.w.size()) {
            MatrixT<Scalar> f;
            w.mlp.apply(m, f, hidden);
            norm_backward(w.post_mlp, f, d_out, d_f, grads, names.post_mlp_w, names.post_mlp_b);
        }
        mlp_backward(w.mlp, m, d_f, d_m, grads, names);
        MatrixT<Scalar> d_x1;
        if (c.input_norms)
            norm_backward(w.norm_mlp, x1, d_m, d_x1, grads, names.norm_mlp_w, names.norm_mlp_b);
        else
            d_x1 = d_m;
        d_x1 += d_out;
        if (w.post_attention.w.size())
            norm_backward(w.post_attention, attn, d_x1, d_attn, grads, names.post_attention_w, names.post_attention_b);
        else
            d_attn = d_x1;
        d_x = std::move(d_x1);
    } else {  // post-norm: x₁ = norm_attention(x + attn); out = norm_mlp(x₁ + mlp(x₁))
        const MatrixT<Scalar> summed = x + attn;
        MatrixT<Scalar> x1, f;
        w.norm_attention.apply(summed, x1);
        w.mlp.apply(x1, f, hidden);
        const MatrixT<Scalar> s2 = f + x1;
        MatrixT<Scalar> d_s2;
        norm_backward(w.norm_mlp, s2, d_out, d_s2, grads, names.norm_mlp_w, names.norm_mlp_b);
        mlp_backward(w.mlp, x1, d_s2, d_m, grads, names);
        d_m += d_s2;
        norm_backward(w.norm_attention, summed, d_m, d_x, grads, names.norm_attention_w, names.norm_attention_b);
        d_attn = d_x;
    }
}

// Block `layer` backwards: d_out (∂L/∂ its output) in bg.d_output; d_x the stream entering it.
template <class Scalar>
Problems block_backward(const ModelFolder& model, const RunState<Scalar>& s, int layer, BlockGradients<Scalar>& bg,
                        MatrixT<Scalar>& d_x, NamedGradients<Scalar>* grads) {
    const ModelConfig& c = model.config();
    const BlockNames& names = model.names().blocks[static_cast<size_t>(layer)];
    const LayerRun<Scalar>& run = s.layers[static_cast<size_t>(layer)];
    const MatrixT<Scalar>& x = s.stream_into(layer);
    core::Result<BlockWeights<Scalar>> w = read_block<Scalar>(model, layer);
    if (!w) return w.problems;
    residual_backward(c, *w.value, names, x, run.trace.output, bg.d_output, d_x, bg.d_attention_output, grads);
    core::AttentionGradientsT<Scalar> a;
    if (run.edited) {  // its session's weights (no weight's gradient is asked for: objective_problems)
        typename core::TraceT<Scalar>::Scratch scratch;
        const core::LayerWeightsT<Scalar> w = core::layer_weights<Scalar>(run.edited->config, run.edited->params,
                                                                          scratch);
        core::attention_backward<Scalar>(run.config, run.input, w, run.trace, bg.d_attention_output, a, false);
    } else {
        core::Result<AttentionWeights<Scalar>> aw = read_attention<Scalar>(model, layer);
        if (!aw) return aw.problems;
        core::attention_backward<Scalar>(run.config, run.input, aw.value->layer(), run.trace, bg.d_attention_output, a,
                                         grads != nullptr);
        if (grads) add_attention_gradients(model, layer, a, *grads);
    }
    bg.d_weights = std::move(a.d_weights);
    bg.d_attention_input = std::move(a.d_X);
    if (c.pre_norm() && c.input_norms) {  // a = norm_attention(x)
        MatrixT<Scalar> d_from_attention;
        norm_backward(w.value->norm_attention, x, bg.d_attention_input, d_from_attention, grads, names.norm_attention_w,
                      names.norm_attention_b);
        d_x += d_from_attention;
    } else {  // a = x
        d_x += bg.d_attention_input;
    }
    return {};
}

// 0. The embeddings' tables: row ids[i] of the token embeddings gets scale·d_x₀[i], the position
// table its row for token i, the type table its row 0.
template <class Scalar>
void embeddings_backward(const ModelFolder& model, const RunState<Scalar>& s, const MatrixT<Scalar>& d_x0,
                         NamedGradients<Scalar>& grads) {
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    MatrixT<Scalar>& tokens = zeros_of(grads, model, names.token_embeddings);
    for (size_t i = 0; i < s.token_ids.size(); ++i)
        tokens.row(s.token_ids[i]) += static_cast<Scalar>(c.embedding_scale) * d_x0.row(static_cast<Eigen::Index>(i));
    if (c.learned_positions() && !names.position_embeddings.empty()) {
        MatrixT<Scalar>& positions = zeros_of(grads, model, names.position_embeddings);
        const std::vector<int> at = position_ids(c, s.token_ids);
        for (size_t i = 0; i < at.size(); ++i) positions.row(at[i]) += d_x0.row(static_cast<Eigen::Index>(i));
    }
    if (!names.type_embeddings.empty()) zeros_of(grads, model, names.type_embeddings).row(0) += d_x0.colwise().sum();
}

}  // namespace

std::string describe(const Objective& o) {
    switch (o.kind) {
        case Objective::Kind::logit: return "logit[" + std::to_string(o.target) + "] at the last position";
        case Objective::Kind::difference:
            return "logit[" + std::to_string(o.target) + "] − logit[" + std::to_string(o.versus) +
                   "] at the last position";
        case Objective::Kind::mean_loss: return "the mean next-token loss";
    }
    return "";
}

template <class Scalar>
Problems model_gradients_into(ModelGradients<Scalar>& g, const ModelFolder& model, const RunState<Scalar>& s,
                              const Objective& objective, bool weights) {
    if (Problems p = objective_problems(model, s, objective, weights); !p.empty()) return p;
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    g.objective = objective;
    g.weights.begin();
    NamedGradients<Scalar>* grads = weights ? &g.weights : nullptr;
    // 6. LM head
    Problems p = objective.kind == Objective::Kind::mean_loss ? loss_backward(model, s, g, grads)
                                                              : logit_backward(model, s, objective, g, grads);
    if (!p.empty()) return p;
    // 5. final norm
    MatrixT<Scalar> d_x;
    const MatrixT<Scalar>& x_last = s.stream_into(c.layers);
    if (c.final_norm()) {
        const core::Result<Norm<Scalar>> norm = read_norm<Scalar>(model, names.final_norm_w, names.final_norm_b);
        if (!norm) return norm.problems;
        norm_backward(*norm.value, x_last, g.d_hidden, d_x, grads, names.final_norm_w, names.final_norm_b);
    } else {
        d_x = g.d_hidden;
    }
    // 4–1. blocks, last first
    g.blocks.resize(static_cast<size_t>(c.layers));
    for (int layer = c.layers - 1; layer >= 0; --layer) {
        BlockGradients<Scalar>& bg = g.blocks[static_cast<size_t>(layer)];
        bg.d_output = std::move(d_x);
        if (Problems q = block_backward(model, s, layer, bg, d_x, grads); !q.empty()) return q;
    }
    // 0. embeddings
    g.d_embeddings = std::move(d_x);
    if (weights) embeddings_backward(model, s, g.d_embeddings, g.weights);
    g.weights.drop_unwritten();
    return {};
}

template <class Scalar>
core::Result<ModelGradients<Scalar>> model_gradients(const ModelFolder& model, const RunState<Scalar>& s,
                                                     const Objective& objective, bool weights) {
    using R = core::Result<ModelGradients<Scalar>>;
    ModelGradients<Scalar> g;
    if (Problems p = model_gradients_into(g, model, s, objective, weights); !p.empty()) return R::fail(std::move(p));
    return R::ok(std::move(g));
}

template Problems model_gradients_into<float>(ModelGradients<float>&, const ModelFolder&, const RunState<float>&,
                                              const Objective&, bool);
template Problems model_gradients_into<double>(ModelGradients<double>&, const ModelFolder&, const RunState<double>&,
                                               const Objective&, bool);
template core::Result<ModelGradients<float>> model_gradients<float>(const ModelFolder&, const RunState<float>&,
                                                                    const Objective&, bool);
template core::Result<ModelGradients<double>> model_gradients<double>(const ModelFolder&, const RunState<double>&,
                                                                      const Objective&, bool);

}  // namespace attnviz::model
