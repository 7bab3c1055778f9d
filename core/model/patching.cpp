#include "core/model/patching.hpp"

#include <cmath>

#include "core/model/layer_weights.hpp"

namespace attnviz::model {

namespace {

using core::Problems;

Problems fail(std::string message) { return {{"", std::move(message)}}; }

template <class Scalar>
Problems check(const ModelFolder& model, const RunState<Scalar>& clean, const RunState<Scalar>& corrupt,
               const Objective& o) {
    const ModelConfig& c = model.config();
    if (clean.token_ids.size() != corrupt.token_ids.size())
        return fail("the clean sentence is " + std::to_string(clean.token_ids.size()) +
                    " tokens and the corrupted one " + std::to_string(corrupt.token_ids.size()) +
                    ": patching needs as many tokens in both");
    if (o.kind == Objective::Kind::mean_loss)
        return fail("patching compares a logit or a logit difference at the last position, not the mean loss");
    for (const RunState<Scalar>* s : {&clean, &corrupt})
        if (static_cast<int>(s->layers.size()) != c.layers || s->logits_last.size() != c.vocab_size)
            return fail(c.causal() ? "patching needs whole runs of the model, to their logits"
                                   : "an encoder has no LM head: there are no logits to compare");
    for (const std::int32_t id : {o.target, o.versus})
        if (id < 0 || id >= c.vocab_size)
            return fail("token id " + std::to_string(id) + " is outside the vocabulary of " +
                        std::to_string(c.vocab_size) + " ids");
    return {};
}

// The patched runs of one block, on `work` (the corrupted run, whose blocks before `layer` are as
// they ran): each head's z, each head's weights, each position's stream entering the block.
template <class Scalar>
class BlockPatcher {
public:
    BlockPatcher(const ModelFolder& model, const RunState<Scalar>& clean, const RunState<Scalar>& corrupt,
                 RunState<Scalar>& work, const Objective& o, Patching& out)
        : model_(model), clean_(clean), corrupt_(corrupt), work_(work), o_(o), out_(out) {}

    // diff after the attention of block `layer` became `attended`.
    Problems with_attention(int layer, const MatrixT<Scalar>& attended, double& diff) {
        if (Problems p = block_output(model_, layer, corrupt_.stream_into(layer), attended,
                                      work_.layers[static_cast<size_t>(layer)].output);
            !p.empty())
            return p;
        if (Problems p = run_blocks_from(model_, work_, layer + 1); !p.empty()) return p;
        diff = share(objective_value(work_, o_));
        return {};
    }

    Problems heads(int layer, const MatrixT<Scalar>& W_O, int& done, const PatchingProgress& progress, int total) {
        const LayerRun<Scalar>& run = corrupt_.layers[static_cast<size_t>(layer)];
        const LayerRun<Scalar>& from = clean_.layers[static_cast<size_t>(layer)];
        const int d_v = run.config.d_v;
        for (int h = 0; h < run.config.heads; ++h) {
            const auto k = static_cast<size_t>(h);
            const auto W_O_h = W_O.middleRows(Eigen::Index{h} * d_v, d_v);
            const MatrixT<Scalar> own = run.trace.heads[k].Z * W_O_h;
            MatrixT<Scalar> attended = run.trace.output + from.trace.heads[k].Z * W_O_h - own;
            if (Problems p = with_attention(layer, attended, out_.heads(layer, h)); !p.empty()) return p;
            const MatrixT<Scalar> z = from.trace.heads[k].weights * run.trace.heads[k].V;  // A_clean·V_corrupt
            attended = run.trace.output + z * W_O_h - own;
            if (Problems p = with_attention(layer, attended, out_.attention(layer, h)); !p.empty()) return p;
            if (progress && !progress(done += 2, total)) return fail("stopped in block " + std::to_string(layer));
        }
        return {};
    }

    Problems residual(int layer, int& done, const PatchingProgress& progress, int total) {
        MatrixT<Scalar>& stream = layer == 0 ? work_.embeddings : work_.layers[static_cast<size_t>(layer) - 1].output;
        for (Eigen::Index i = 0; i < stream.rows(); ++i) {
            stream.row(i) = clean_.stream_into(layer).row(i);
            const Problems p = run_blocks_from(model_, work_, layer);
            stream.row(i) = corrupt_.stream_into(layer).row(i);
            if (!p.empty()) return p;
            out_.residual(layer, i) = share(objective_value(work_, o_));
            if (progress && !progress(++done, total)) return fail("stopped in block " + std::to_string(layer));
        }
        return {};
    }

private:
    double share(double diff) const { return (diff - out_.corrupt_diff) / (out_.clean_diff - out_.corrupt_diff); }

    const ModelFolder& model_;
    const RunState<Scalar>&clean_, &corrupt_;
    RunState<Scalar>& work_;
    const Objective& o_;
    Patching& out_;
};

}  // namespace

template <class Scalar>
core::Result<Patching> patch(const ModelFolder& model, const RunState<Scalar>& clean, const RunState<Scalar>& corrupt,
                             const Objective& o, const PatchingProgress& progress) {
    using R = core::Result<Patching>;
    if (Problems p = check(model, clean, corrupt, o); !p.empty()) return R::fail(std::move(p));
    const ModelConfig& c = model.config();
    Patching out;
    out.objective = o;
    out.clean_diff = objective_value(clean, o);
    out.corrupt_diff = objective_value(corrupt, o);
    if (out.clean_diff == out.corrupt_diff)
        return R::fail(fail("the clean and the corrupted runs give the same difference (" +
                            std::to_string(out.clean_diff) + "): there is nothing to restore"));
    const auto n = static_cast<Eigen::Index>(clean.token_ids.size());
    out.heads = out.attention = core::Matrix::Zero(c.layers, c.heads);
    out.residual = core::Matrix::Zero(c.layers, n);
    RunState<Scalar> work = corrupt;
    BlockPatcher<Scalar> patcher(model, clean, corrupt, work, o, out);
    const int total = c.layers * (2 * c.heads + static_cast<int>(n));
    int done = 0;
    // Last block first: a block's patches rerun only the blocks after it, so every earlier block of
    // `work` is still the corrupted run's.
    for (int layer = c.layers - 1; layer >= 0; --layer) {
        const core::Result<MatrixT<Scalar>> W_O = output_weights_of(model, corrupt, layer);
        if (!W_O) return R::fail(W_O.problems);
        if (Problems p = patcher.heads(layer, *W_O.value, done, progress, total); !p.empty())
            return R::fail(std::move(p));
        if (Problems p = patcher.residual(layer, done, progress, total); !p.empty()) return R::fail(std::move(p));
    }
    return R::ok(std::move(out));
}

template core::Result<Patching> patch<float>(const ModelFolder&, const RunState<float>&, const RunState<float>&,
                                             const Objective&, const PatchingProgress&);
template core::Result<Patching> patch<double>(const ModelFolder&, const RunState<double>&, const RunState<double>&,
                                              const Objective&, const PatchingProgress&);

}  // namespace attnviz::model
