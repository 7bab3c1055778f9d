#include "core/model/runtime.hpp"

#include <algorithm>
#include <memory>

#include "core/base/format.hpp"
#include "core/model/layer_weights.hpp"

namespace attnviz::model {

namespace {

using core::Problems;

Problems fail(std::string message) { return {{"", std::move(message)}}; }

// Adds row at[i] of a table of the model to row i of x (read_table_rows).
template <class Scalar>
Problems add_rows(const ModelFolder& model, const std::string& name, const std::vector<int>& at, MatrixT<Scalar>& x) {
    core::Result<MatrixT<Scalar>> rows = read_table_rows<Scalar>(model, name, at, x.cols());
    if (!rows) return rows.problems;
    x += *rows.value;
    return {};
}

// 0. The embeddings of the tokens: x = E[ids] (+ P[positions]) (+ T[0]), then BERT's LayerNorm.
template <class Scalar>
Problems embed(const ModelFolder& model, RunState<Scalar>& s) {
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    const auto n = static_cast<Eigen::Index>(s.token_ids.size());
    MatrixT<Scalar>& x = s.embeddings;
    x.setZero(n, c.d_model);
    if (Problems p = add_rows(model, names.token_embeddings, {s.token_ids.begin(), s.token_ids.end()}, x); !p.empty())
        return p;
    if (c.embedding_scale != 1) x *= static_cast<Scalar>(c.embedding_scale);  // Gemma: × √d_model
    if (c.learned_positions())
        if (Problems p = add_rows(model, names.position_embeddings, position_ids(c, s.token_ids), x); !p.empty())
            return p;
    if (!names.type_embeddings.empty())  // every token of type 0
        if (Problems p = add_rows(model, names.type_embeddings, std::vector<int>(s.token_ids.size(), 0), x); !p.empty())
            return p;
    if (!names.embeddings_norm_w.empty()) {
        const core::Result<Norm<Scalar>> norm = read_norm<Scalar>(model, names.embeddings_norm_w,
                                                                  names.embeddings_norm_b);
        if (!norm) return norm.problems;
        const MatrixT<Scalar> summed = std::move(x);
        norm.value->apply(summed, x);
    }
    return {};
}

// Whether a matrix may be a session's input: finite, and within core::Limits::max_abs_value.
template <class Scalar>
bool allowed(const MatrixT<Scalar>& m) {
    return m.size() == 0 ||
           static_cast<double>(m.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>()) <= core::Limits::max_abs_value;
}

// Step 2 of a block: its attention's trace, of its edited session, or of the folder's weights on
// its input; the trace's scratch space released after.
template <class Scalar>
Problems attend(const ModelFolder& model, LayerRun<Scalar>& run, int layer) {
    if (run.edited) {
        run.config = run.edited->config;
        core::forward_into(run.trace, run.config, run.edited->params);
    } else {
        core::Result<core::Config> config = attention_config(model, layer, static_cast<int>(run.input.rows()));
        if (!config) return config.problems;
        run.config = *config.value;
        core::Result<AttentionWeights<Scalar>> w = read_attention<Scalar>(model, layer);
        if (!w) return w.problems;
        core::forward_into<Scalar>(run.trace, run.config, run.input, w.value->layer());
    }
    run.trace.scratch = {};
    return {};
}

// Steps 3–4 of a block: its output `out` from x (the stream entering it) and its attention's output.
template <class Scalar>
void finish_block(const ModelConfig& c, const BlockWeights<Scalar>& w, const MatrixT<Scalar>& x,
                  const MatrixT<Scalar>& attended, MatrixT<Scalar>& out) {
    MatrixT<Scalar> x1, m, hidden;
    if (c.parallel_residual) {  // GPT-NeoX: x + attn(ln₁x) + mlp(ln₂x)
        w.norm_mlp.apply(x, m);
        w.mlp.apply(m, out, hidden);
        out += x + attended;
    } else if (c.pre_norm()) {
        if (w.post_attention.w.size()) {  // Gemma 2, OLMo 2: the attention's output normed before the sum
            w.post_attention.apply(attended, m);
            x1 = x + m;
        } else {
            x1 = x + attended;
        }
        if (c.input_norms)
            w.norm_mlp.apply(x1, m);
        else  // OLMo 2
            m = x1;
        if (w.post_mlp.w.size()) {  // Gemma 2, OLMo 2: the MLP's output normed before the sum
            MatrixT<Scalar> f;
            w.mlp.apply(m, f, hidden);
            w.post_mlp.apply(f, out);
        } else {
            w.mlp.apply(m, out, hidden);
        }
        out += x1;
    } else {
        const MatrixT<Scalar> summed = x + attended;
        w.norm_attention.apply(summed, x1);
        w.mlp.apply(x1, m, hidden);
        m += x1;
        w.norm_mlp.apply(m, out);
    }
}

// One block, steps 1–4 (see runtime.hpp). With keep_x an edited block's X is used as it is (the
// block the edit was made in); otherwise X is the new attention input (an edited session's X too).
template <class Scalar>
Problems run_block(const ModelFolder& model, RunState<Scalar>& s, int layer, bool keep_x) {
    const ModelConfig& c = model.config();
    const MatrixT<Scalar>& x = s.stream_into(layer);
    core::Result<BlockWeights<Scalar>> read = read_block<Scalar>(model, layer);
    if (!read) return read.problems;
    const BlockWeights<Scalar>& w = *read.value;
    LayerRun<Scalar>& run = s.layers[static_cast<size_t>(layer)];

    // 1. attention in
    if (keep_x && run.edited) {
        run.input = run.edited->params.X.template cast<Scalar>();
    } else if (!keep_x) {
        if (c.pre_norm() && c.input_norms)
            w.norm_attention.apply(x, run.input);
        else  // post-norm blocks, OLMo 2
            run.input = x;
        if (!allowed(run.input))  // what a session takes
            return fail("block " + std::to_string(layer) + ": the attention's input overflows (a value beyond " +
                        core::format_number(core::Limits::max_abs_value) + " or not finite)");
        if (run.edited) {
            auto session = std::make_shared<core::Session>(*run.edited);
            session->params.X = run.input.template cast<double>();
            run.edited = std::move(session);
        }
    }
    // 2. attention
    if (Problems p = attend(model, run, layer); !p.empty()) return p;

    // 3. residual, 4. MLP
    finish_block(c, w, x, run.trace.output, run.output);
    return {};
}

// 6. LM head: the logits of the last token, hidden_last · W_Uᵀ over the vocabulary (W_U vocab_size ×
// d_model, read a block of rows at a time, the blocks spread over the threads).
template <class Scalar>
Problems last_logits(const ModelFolder& model, RunState<Scalar>& s) {
    const auto last = s.hidden.row(s.hidden.rows() - 1);
    s.logits_last.resize(model.config().vocab_size);
    return for_each_lm_head_block<Scalar>(
        model,
        [&](Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& W_U_rows) {
            s.logits_last.segment(first, W_U_rows.rows()).noalias() = last * W_U_rows.transpose();
        },
        true);  // each block its own logits
}

// 5. final norm, 6. LM head.
template <class Scalar>
Problems finish(const ModelFolder& model, RunState<Scalar>& s) {
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    const MatrixT<Scalar>& x = s.stream_into(c.layers);
    if (c.final_norm()) {
        const core::Result<Norm<Scalar>> norm = read_norm<Scalar>(model, names.final_norm_w, names.final_norm_b);
        if (!norm) return norm.problems;
        norm.value->apply(x, s.hidden);
    } else {
        s.hidden = x;
    }
    s.logits_last.resize(0);
    if (c.causal())
        if (Problems p = last_logits(model, s); !p.empty()) return p;
    if (c.final_softcap > 0) {  // Gemma 2: c·tanh(logits / c)
        const auto cap = static_cast<Scalar>(c.final_softcap);
        s.logits_last = cap * (s.logits_last.array() / cap).tanh();
    }
    if (!s.hidden.allFinite() || !s.logits_last.allFinite())
        return fail("the model's values overflow: the hidden state or the logits are not finite");
    return {};
}

}  // namespace

std::vector<int> position_ids(const ModelConfig& c, const std::vector<std::int32_t>& ids) {
    std::vector<int> out(ids.size());
    int counted = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (c.architecture != Architecture::roberta)
            out[i] = static_cast<int>(i);
        else
            out[i] = ids[i] == c.pad_token_id ? c.pad_token_id : c.pad_token_id + ++counted;
    }
    return out;
}

Problems token_problems(const ModelConfig& c, const std::vector<std::int32_t>& ids) {
    core::ProblemList problems;
    const auto n = static_cast<std::int64_t>(ids.size());
    if (n == 0) return fail("no tokens: the model needs at least one");
    if (n > core::Limits::max_n)
        problems.add("", std::to_string(n) + " tokens, more than attnviz runs at once (" +
                             std::to_string(core::Limits::max_n) + ")");
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= c.vocab_size)
            problems.add("", "token id " + std::to_string(ids[i]) + " (token " + std::to_string(i + 1) +
                                 ") is outside the vocabulary of " + std::to_string(c.vocab_size) + " ids");
    if (c.learned_positions() && problems.empty()) {
        const std::vector<int> at = position_ids(c, ids);
        const int last = *std::max_element(at.begin(), at.end());
        if (last >= c.max_positions)
            problems.add("", std::to_string(n) + " tokens need position " + std::to_string(last) +
                                 ", beyond the model's position table of " + std::to_string(c.max_positions) +
                                 " (max_position_embeddings)" +
                                 (c.architecture == Architecture::roberta
                                      ? "; RoBERTa's positions start at pad_token_id + 1 = " +
                                            std::to_string(c.pad_token_id + 1)
                                      : ""));
    }
    return std::move(problems).take();
}

std::int64_t run_bytes(const ModelConfig& c, int n, int scalar_bytes) {
    core::Config cf;
    cf.n = n;
    cf.d_model = c.d_model;
    cf.heads = c.heads;
    cf.d_k = cf.d_v = c.d_k;
    cf.kv_heads = c.kv_heads;
    cf.biases = true;
    cf.rope.on = c.rope();
    cf.softcap = c.attn_softcap;
    const std::int64_t inputs = core::input_numbers(cf), trace = core::total_numbers(cf) - inputs;
    const std::int64_t nd = std::int64_t{n} * c.d_model, s = scalar_bytes;
    const std::int64_t per_layer = trace * s + 2 * nd * s;  // the trace, the attention's input, the output
    // While a block runs: its weights converted to Scalar (the attention's inputs, which hold them,
    // and the MLP's), the forward's scratch space (X·W_qkv: at most the trace's Q, K, V) and the
    // MLP's hidden layers; the LM head's rows converted a block per thread (256 K values each, for
    // up to 64 threads).
    const std::int64_t running = (inputs + std::int64_t{3} * c.d_model * c.d_ff + 2 * n * c.d_ff) * s +
                                 std::int64_t{n} * (c.heads + 2 * c.kv_heads) * c.d_k * s +
                                 std::int64_t{64} * (1 << 18) * s;
    return c.layers * per_layer + 3 * nd * s + std::int64_t{c.vocab_size} * s + running;
}

template <class Scalar>
Problems run_model_into(RunState<Scalar>& s, const ModelFolder& model, const std::vector<std::int32_t>& ids,
                        std::vector<std::string> tokens, std::int64_t memory_budget, int blocks,
                        const AfterBlock<Scalar>& after_block) {
    const ModelConfig& c = model.config();
    if (Problems p = token_problems(c, ids); !p.empty()) return p;
    if (blocks == 0 || blocks > c.layers)
        return fail("cannot run " + std::to_string(blocks) + " blocks of a model of " + std::to_string(c.layers));
    const bool whole = blocks < 0 || blocks == c.layers;
    const std::int64_t need = run_bytes(c, static_cast<int>(ids.size()), static_cast<int>(sizeof(Scalar)));
    if (need > memory_budget)
        return fail(std::to_string(ids.size()) + " tokens through this model need about " + core::format_bytes(need) +
                    " (every layer's attention kept), over the memory budget of " + core::format_bytes(memory_budget) +
                    "; a larger budget can be set with --memory-budget");
    s.token_ids = ids;
    tokens.resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
        if (tokens[i].empty()) tokens[i] = "#" + std::to_string(ids[i]);
    s.tokens = std::move(tokens);
    if (Problems p = embed(model, s); !p.empty()) return p;
    s.layers.resize(static_cast<size_t>(whole ? c.layers : blocks));
    for (LayerRun<Scalar>& run : s.layers) run.edited.reset();
    for (int layer = 0; layer < static_cast<int>(s.layers.size()); ++layer) {
        if (Problems p = run_block(model, s, layer, false); !p.empty()) return p;
        if (after_block && !after_block(s, layer + 1)) return fail("stopped after block " + std::to_string(layer));
    }
    if (!whole) {
        s.hidden = s.layers.back().output;
        s.logits_last.resize(0);
        return {};
    }
    return finish(model, s);
}

template <class Scalar>
core::Result<RunState<Scalar>> run_model(const ModelFolder& model, const std::vector<std::int32_t>& ids,
                                         std::vector<std::string> tokens, std::int64_t memory_budget, int blocks,
                                         const AfterBlock<Scalar>& after_block) {
    using R = core::Result<RunState<Scalar>>;
    RunState<Scalar> s;
    if (Problems p = run_model_into(s, model, ids, std::move(tokens), memory_budget, blocks, after_block); !p.empty())
        return R::fail(std::move(p));
    return R::ok(std::move(s));
}

template <class Scalar>
core::Result<core::Session> layer_session(const ModelFolder& model, const RunState<Scalar>& s, int layer) {
    using R = core::Result<core::Session>;
    if (layer < 0 || layer >= static_cast<int>(s.layers.size()))
        return R::fail(
            fail("block " + std::to_string(layer) + " is not one of the run's " + std::to_string(s.layers.size())));
    const LayerRun<Scalar>& run = s.layers[static_cast<size_t>(layer)];
    if (run.edited) return R::ok(*run.edited);
    return attention_session(model, layer, run.input.template cast<double>(), s.tokens);
}

template <class Scalar>
Problems rerun_from(const ModelFolder& model, RunState<Scalar>& s, int layer, const std::function<bool()>& stopped) {
    const ModelConfig& c = model.config();
    if (layer < 0 || layer >= c.layers || static_cast<int>(s.layers.size()) != c.layers)
        return fail("block " + std::to_string(layer) + " is not one of the model's " + std::to_string(c.layers));
    if (const std::shared_ptr<const core::Session>& edited = s.layers[static_cast<size_t>(layer)].edited) {
        const core::Config& cf = edited->config;
        if (cf.n != static_cast<int>(s.token_ids.size()) || cf.d_model != c.d_model || cf.output_width() != c.d_model ||
            cf.cross())
            return fail("block " + std::to_string(layer) +
                        ": the edited attention must keep n, d_model and an output of n × d_model");
        if (Problems p = core::validate(*edited); !p.empty()) return p;
    }
    const auto stop = [&] { return stopped && stopped(); };
    for (int block = layer; block < c.layers; ++block) {
        if (stop()) return fail("stopped before block " + std::to_string(block));
        if (Problems p = run_block(model, s, block, block == layer); !p.empty()) return p;
    }
    if (stop()) return fail("stopped before the logits");
    return finish(model, s);
}

template <class Scalar>
Problems run_blocks_from(const ModelFolder& model, RunState<Scalar>& s, int first) {
    const ModelConfig& c = model.config();
    if (static_cast<int>(s.layers.size()) != c.layers || first < 0 || first > c.layers ||
        s.embeddings.rows() != static_cast<Eigen::Index>(s.token_ids.size()) || s.embeddings.cols() != c.d_model)
        return fail("blocks " + std::to_string(first) + " on of a whole run of " + std::to_string(c.layers));
    for (int block = first; block < c.layers; ++block)
        if (Problems p = run_block(model, s, block, false); !p.empty()) return p;
    return finish(model, s);
}

template <class Scalar>
core::Result<MatrixT<Scalar>> output_weights_of(const ModelFolder& model, const RunState<Scalar>& s, int layer) {
    using R = core::Result<MatrixT<Scalar>>;
    const std::shared_ptr<const core::Session>& edited = s.layers[static_cast<size_t>(layer)].edited;
    if (edited) return R::ok(edited->params.W_O.template cast<Scalar>());
    core::Result<AttentionWeights<Scalar>> w = read_attention<Scalar>(model, layer);
    if (!w) return R::fail(std::move(w.problems));
    return R::ok(w.value->output_weights());
}

template <class Scalar>
Problems block_output(const ModelFolder& model, int layer, const MatrixT<Scalar>& x, const MatrixT<Scalar>& attended,
                      MatrixT<Scalar>& out) {
    core::Result<BlockWeights<Scalar>> w = read_block<Scalar>(model, layer);
    if (!w) return w.problems;
    finish_block(model.config(), *w.value, x, attended, out);
    return {};
}

template <class Scalar>
RunState<Scalar> copy_for_rerun(const RunState<Scalar>& s, int layer) {
    RunState<Scalar> out;
    out.token_ids = s.token_ids;
    out.tokens = s.tokens;
    out.embeddings = s.embeddings;
    out.layers.reserve(s.layers.size());
    for (size_t l = 0; l < s.layers.size(); ++l) {
        const LayerRun<Scalar>& from = s.layers[l];
        if (static_cast<int>(l) < layer) {
            out.layers.push_back(from);
            continue;
        }
        LayerRun<Scalar>& to = out.layers.emplace_back();
        to.config = from.config;
        to.edited = from.edited;
        if (static_cast<int>(l) == layer) to.input = from.input;
    }
    return out;
}

template core::Result<RunState<float>> run_model<float>(const ModelFolder&, const std::vector<std::int32_t>&,
                                                        std::vector<std::string>, std::int64_t, int,
                                                        const AfterBlock<float>&);
template core::Result<RunState<double>> run_model<double>(const ModelFolder&, const std::vector<std::int32_t>&,
                                                          std::vector<std::string>, std::int64_t, int,
                                                          const AfterBlock<double>&);
template core::Result<core::Session> layer_session<float>(const ModelFolder&, const RunState<float>&, int);
template core::Result<core::Session> layer_session<double>(const ModelFolder&, const RunState<double>&, int);
template Problems run_model_into<float>(RunState<float>&, const ModelFolder&, const std::vector<std::int32_t>&,
                                        std::vector<std::string>, std::int64_t, int, const AfterBlock<float>&);
template Problems run_model_into<double>(RunState<double>&, const ModelFolder&, const std::vector<std::int32_t>&,
                                         std::vector<std::string>, std::int64_t, int, const AfterBlock<double>&);
template Problems rerun_from<float>(const ModelFolder&, RunState<float>&, int, const std::function<bool()>&);
template RunState<float> copy_for_rerun<float>(const RunState<float>&, int);
template core::Result<MatrixT<float>> output_weights_of<float>(const ModelFolder&, const RunState<float>&, int);
template core::Result<MatrixT<double>> output_weights_of<double>(const ModelFolder&, const RunState<double>&, int);
template Problems run_blocks_from<float>(const ModelFolder&, RunState<float>&, int);
template Problems run_blocks_from<double>(const ModelFolder&, RunState<double>&, int);
template Problems block_output<float>(const ModelFolder&, int, const MatrixT<float>&, const MatrixT<float>&,
                                      MatrixT<float>&);
template Problems block_output<double>(const ModelFolder&, int, const MatrixT<double>&, const MatrixT<double>&,
                                       MatrixT<double>&);
template RunState<double> copy_for_rerun<double>(const RunState<double>&, int);
template Problems rerun_from<double>(const ModelFolder&, RunState<double>&, int, const std::function<bool()>&);

}  // namespace attnviz::model
