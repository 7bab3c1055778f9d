#include "core/model/layer_weights.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <tuple>
#include <type_traits>
#include <utility>

namespace attnviz::model {

namespace {

// Reading several tensors, the problems of all of them kept.
class Reads {
public:
    explicit Reads(const ModelFolder& model) : model_(model) {}

    // The tensor's values as a Scalar matrix (1-D: one row), converted from its stored dtype
    // straight to Scalar, transposed when asked; empty for the name "" (a tensor the architecture
    // does not have) and after a problem.
    template <class Scalar>
    MatrixT<Scalar> as(const std::string& name, bool transpose = false) {
        if (name.empty()) return {};
        MatrixT<Scalar> m;
        if (const core::TensorInfo* info = model_.weights().find(name))
            m.resize(info->shape.size() == 2 ? static_cast<Eigen::Index>(info->shape[0]) : 1,
                     info->shape.empty() ? 1 : static_cast<Eigen::Index>(info->shape.back()));
        core::Problems p = model_.weights().read_into(name, m.data());  // "no such tensor" before any write
        if (!p.empty()) {
            for (core::Problem& problem : p) problems_.push_back(std::move(problem));
            return {};
        }
        if (transpose) return m.transpose();
        return m;
    }

    // As a double matrix, as sessions hold their inputs.
    core::Matrix matrix(const std::string& name, bool transpose = false) { return as<double>(name, transpose); }

    // The tensor as weights in Scalar: where the folder holds its values in memory as Scalar, those
    // values; else converted from their stored dtype (as()).
    template <class Scalar>
    Weights<Scalar> weights(const std::string& name) {
        if (name.empty()) return {};
        const core::TensorInfo* info = model_.weights().find(name);
        if (!info || info->shape.empty() || info->shape.size() > 2) return as<Scalar>(name);
        const auto rows = info->shape.size() == 2 ? static_cast<Eigen::Index>(info->shape[0]) : 1;
        const auto cols = static_cast<Eigen::Index>(info->shape.back());
        if (const Scalar* values = model_.weights().in_place<Scalar>(name))
            return Weights<Scalar>::in_place(core::MatrixView<Scalar>{values, rows, cols});
        return as<Scalar>(name);
    }

    // Tensors of rows × `cols` values (or 1-D ones of `cols`), one under the other, converted into
    // one matrix; a name "" is `rows` rows of zeros.
    template <class Scalar>
    MatrixT<Scalar> stacked(const std::vector<std::pair<std::string, Eigen::Index>>& parts, Eigen::Index cols) {
        Eigen::Index rows = 0;
        for (const auto& part : parts) rows += part.second;
        MatrixT<Scalar> m(rows, cols);
        Eigen::Index at = 0;
        for (const auto& [name, count] : parts) {
            if (name.empty())
                m.middleRows(at, count).setZero();
            else if (core::Problems p = model_.weights().read_into(name, m.row(at).data()); !p.empty())
                for (core::Problem& problem : p) problems_.push_back(std::move(problem));
            at += count;
        }
        return m;
    }

    // A 1-D tensor as a row; empty for the name "" and after a problem.
    template <class Scalar>
    RowVectorT<Scalar> row(const std::string& name) {
        const MatrixT<Scalar> m = as<Scalar>(name);
        if (m.rows() != 1) return {};
        return m.row(0);
    }

    // A 2-D tensor as the products take it (core::project): its values where the folder holds them
    // in memory as Scalar, as F32 (a double run), BF16 or F16, widened as they are packed; else
    // converted to Scalar (as()).
    template <class Scalar>
    Weights<Scalar> multiplier(const std::string& name) {
        if (name.empty()) return {};
        const core::TensorInfo* info = model_.weights().find(name);
        if (!info || info->shape.size() != 2) return weights<Scalar>(name);
        const auto rows = static_cast<Eigen::Index>(info->shape[0]), cols = static_cast<Eigen::Index>(info->shape[1]);
        const WeightFiles& files = model_.weights();
        core::WeightsView<Scalar> view;
        if (const Scalar* values = files.in_place<Scalar>(name))
            view.values = {values, rows, cols};
        else if (const float* floats = std::is_same_v<Scalar, double> ? files.in_place<float>(name) : nullptr)
            view.floats = {floats, rows, cols};
        else if (const core::bfloat16* b = files.in_place<core::bfloat16>(name))
            view.bfloat16s = {b, rows, cols};
        else if (const core::float16* h = files.in_place<core::float16>(name))
            view.float16s = {h, rows, cols};
        else
            return as<Scalar>(name);
        return Weights<Scalar>::in_place(view);
    }

    template <class Scalar>
    Projection<Scalar> projection(const std::string& weight, const std::string& bias) {
        Projection<Scalar> p;
        p.W = multiplier<Scalar>(weight);
        p.transposed = !model_.conv1d();
        p.b = row<Scalar>(bias);
        return p;
    }

    // GPT-NeoX's query_key_value (3·h·d_k × d_model, or its bias of 3·h·d_k) with its rows put in
    // LayerWeightsT's order: head 0's q, k, v rows, head 1's, … become every head's q rows, then
    // every k, then every v (a bias: one column). Empty for "" and after a problem.
    template <class Scalar>
    MatrixT<Scalar> per_head_to_qkv(const std::string& name, int heads, int d_k) {
        MatrixT<Scalar> stored = as<Scalar>(name);
        if (stored.size() == 0) return {};
        if (stored.rows() == 1) stored.transposeInPlace();              // a bias: a column
        if (stored.rows() != Eigen::Index{3} * heads * d_k) return {};  // the shape was checked on opening
        MatrixT<Scalar> out(stored.rows(), stored.cols());
        for (int h = 0; h < heads; ++h)
            for (int part = 0; part < 3; ++part)
                out.middleRows((Eigen::Index{part} * heads + h) * d_k,
                               d_k) = stored.middleRows((Eigen::Index{h} * 3 + part) * d_k, d_k);
        return out;
    }

    core::Problems take() { return std::move(problems_); }
    bool ok() const { return problems_.empty(); }

private:
    const ModelFolder& model_;
    core::Problems problems_;
};

}  // namespace

template <class Scalar>
core::Result<MatrixT<Scalar>> read_matrix(const ModelFolder& model, const std::string& name) {
    Reads r(model);
    MatrixT<Scalar> m = r.as<Scalar>(name);
    if (!r.ok()) return core::Result<MatrixT<Scalar>>::fail(r.take());
    return core::Result<MatrixT<Scalar>>::ok(std::move(m));
}

template <class Scalar>
core::Problems for_each_lm_head_block(
    const ModelFolder& model,
    const std::function<void(Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& rows)>& use,
    bool concurrent) {
    if (model.names().lm_head.empty()) return {{"", "the model has no LM head"}};
    return for_each_vocab_block<Scalar>(model, model.names().lm_head, use, concurrent);
}

template <class Scalar>
core::Problems for_each_vocab_block(
    const ModelFolder& model, const std::string& name,
    const std::function<void(Eigen::Index first, const Eigen::Ref<const MatrixT<Scalar>>& rows)>& use,
    bool concurrent) {
    const ModelConfig& c = model.config();
    const core::TensorInfo* info = model.weights().find(name);
    if (!info || info->shape.size() != 2 || info->shape[0] != static_cast<std::uint64_t>(c.vocab_size) ||
        info->shape[1] != static_cast<std::uint64_t>(c.d_model))
        return {{"", name + ": expected vocab_size × d_model = " + std::to_string(c.vocab_size) + " × " +
                         std::to_string(c.d_model) + " values"}};
    // About 256 K values a block: converted, then used while they are in the cache (or used where
    // they are, when the folder holds them in memory as Scalar).
    const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max(1, c.d_model));
    const std::int64_t blocks = (c.vocab_size + block - 1) / block;
    const Scalar* in_place = model.weights().in_place<Scalar>(name);
    // Held as float for a double run: cast (the values are known to be finite).
    const float* floats = std::is_same_v<Scalar, double> ? model.weights().in_place<float>(name) : nullptr;
    core::Problems problems;
    std::exception_ptr failure;  // an exception cannot leave an OpenMP region: kept, thrown after it
#pragma omp parallel if (concurrent && blocks > 1)
    {
        MatrixT<Scalar> rows;
#pragma omp for schedule(static)
        for (std::int64_t b = 0; b < blocks; ++b) {
            const std::int64_t first = b * block, count = std::min<std::int64_t>(block, c.vocab_size - first);
            try {
                core::Problems p;
                if (in_place) {
                    use(first, Eigen::Map<const MatrixT<Scalar>>(in_place + first * c.d_model, count, c.d_model));
                } else if (floats) {
                    rows = Eigen::Map<const MatrixT<float>>(floats + first * c.d_model, count, c.d_model)
                               .template cast<Scalar>();
                    use(first, rows);
                } else {
                    rows.resize(count, c.d_model);
                    p = model.weights().read_rows_into(name, static_cast<std::uint64_t>(first),
                                                       static_cast<std::uint64_t>(count), rows.data());
                    if (p.empty()) use(first, rows);
                }
#pragma omp critical(attnviz_lm_head)
                if (problems.empty() && !p.empty()) problems = std::move(p);
            } catch (...) {
#pragma omp critical(attnviz_lm_head)
                if (!failure) failure = std::current_exception();
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
    return problems;
}

template <class Scalar>
core::Result<MatrixT<Scalar>> read_table_rows(const ModelFolder& model, const std::string& name,
                                              const std::vector<int>& at, Eigen::Index cols) {
    using R = core::Result<MatrixT<Scalar>>;
    const core::TensorInfo* info = model.weights().find(name);
    if (info && info->shape.size() == 2 && info->shape[1] != static_cast<std::uint64_t>(cols))
        return R::fail({{"", name + ": a row of " + std::to_string(info->shape[1]) + " values, expected " +
                                 std::to_string(cols)}});
    std::map<int, RowVectorT<Scalar>> rows;  // row number → its values
    for (const int r : at) {
        if (rows.count(r)) continue;
        RowVectorT<Scalar> row(cols);
        if (core::Problems p = model.weights().read_rows_into(name, static_cast<std::uint64_t>(r), 1, row.data());
            !p.empty())
            return R::fail(std::move(p));
        rows.emplace(r, std::move(row));
    }
    MatrixT<Scalar> out(static_cast<Eigen::Index>(at.size()), cols);
    for (size_t i = 0; i < at.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = rows.at(at[i]);
    return R::ok(std::move(out));
}

template <class Scalar>
core::Result<Norm<Scalar>> read_norm(const ModelFolder& model, const std::string& weight, const std::string& bias) {
    Reads r(model);
    Norm<Scalar> n;
    n.rms = model.config().rms_norm();
    n.plus_one = model.config().norm_plus_one;
    n.eps = model.config().norm_eps;
    n.w = r.row<Scalar>(weight);
    n.b = r.row<Scalar>(bias);
    if (!r.ok()) return core::Result<Norm<Scalar>>::fail(r.take());
    return core::Result<Norm<Scalar>>::ok(std::move(n));
}

template <class Scalar>
core::Result<BlockWeights<Scalar>> read_block(const ModelFolder& model, int layer) {
    using R = core::Result<BlockWeights<Scalar>>;
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    BlockWeights<Scalar> w;
    core::Problems problems;
    for (auto [norm, weight, bias] : {std::tuple{&w.norm_attention, &b.norm_attention_w, &b.norm_attention_b},
                                      std::tuple{&w.norm_mlp, &b.norm_mlp_w, &b.norm_mlp_b},
                                      std::tuple{&w.post_attention, &b.post_attention_w, &b.post_attention_b},
                                      std::tuple{&w.post_mlp, &b.post_mlp_w, &b.post_mlp_b}}) {
        core::Result<Norm<Scalar>> n = read_norm<Scalar>(model, *weight, *bias);
        if (!n) return R::fail(std::move(n.problems));
        *norm = std::move(*n.value);
    }
    Reads r(model);
    w.mlp.activation = model.config().activation;
    w.mlp.gated = model.config().gated_mlp();
    w.mlp.fused_gate_up = !b.gate_up.empty();
    w.mlp.up = r.projection<Scalar>(w.mlp.fused_gate_up ? b.gate_up : b.up, b.up_b);
    if (w.mlp.gated && !w.mlp.fused_gate_up) w.mlp.gate = r.projection<Scalar>(b.gate, b.gate_b);
    w.mlp.down = r.projection<Scalar>(b.down, b.down_b);
    if (!r.ok()) return R::fail(r.take());
    return R::ok(std::move(w));
}

core::Result<core::Config> attention_config(const ModelFolder& model, int layer, int n) {
    const ModelConfig& c = model.config();
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    core::Config cf;
    cf.n = n;
    cf.d_model = c.d_model;
    cf.heads = c.heads;
    cf.d_k = cf.d_v = c.d_k;
    cf.output_projection = true;
    cf.mask = c.causal() ? core::Mask::causal : core::Mask::none;
    for (const std::string* bias : {&b.qkv_b, &b.q_b, &b.k_b, &b.v_b, &b.o_b}) cf.biases |= !bias->empty();
    cf.kv_heads = c.kv_heads == c.heads ? 0 : c.kv_heads;
    if (c.rope()) {
        cf.rope.on = true;
        cf.rope.base = c.rope_theta;
        cf.rope.dims = c.rope_dims;
        cf.rope.scaling = c.rope_scaling;
    }
    if (c.windowed_layer(layer) && c.sliding_window < n) cf.window = c.sliding_window;
    if (c.query_pre_attn_scalar > 0) cf.scale = {core::Scale::Kind::divisor, std::sqrt(c.query_pre_attn_scalar)};
    cf.softcap = c.attn_softcap;
    if (c.qk_norm) cf.qk_norm = {true, c.norm_eps};
    if (core::Problems problems = core::validate(cf); !problems.empty())
        return core::Result<core::Config>::fail(std::move(problems));
    return core::Result<core::Config>::ok(cf);
}

template <class Scalar>
MatrixT<Scalar> AttentionWeights<Scalar>::output_weights() const {
    const MatrixT<Scalar> stored = core::widened(W_O.view());
    return o_transposed ? MatrixT<Scalar>(stored.transpose()) : stored;
}

template <class Scalar>
core::Result<AttentionWeights<Scalar>> read_attention(const ModelFolder& model, int layer) {
    using R = core::Result<AttentionWeights<Scalar>>;
    const ModelConfig& c = model.config();
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    Reads r(model);
    AttentionWeights<Scalar> w;
    const Eigen::Index q = Eigen::Index{c.heads} * c.d_k, kv = Eigen::Index{c.kv_heads} * c.d_k;
    if (!b.qkv.empty() && model.qkv_layout() == QkvLayout::per_head) {  // GPT-NeoX: into Q, K, V order
        w.W_qkv = r.per_head_to_qkv<Scalar>(b.qkv, c.heads, c.d_k);
        w.qkv_transposed = true;
        if (!b.qkv_b.empty()) w.b_qkv = MatrixT<Scalar>(r.per_head_to_qkv<Scalar>(b.qkv_b, c.heads, c.d_k).transpose());
    } else if (!b.qkv.empty()) {  // GPT-2's c_attn (columns Q, K, V) or Phi-3's qkv_proj (rows), as LayerWeightsT has
                                  // them
        w.W_qkv = r.multiplier<Scalar>(b.qkv);
        w.qkv_transposed = model.qkv_layout() == QkvLayout::rows;
        w.b_qkv = r.weights<Scalar>(b.qkv_b);
    } else {  // nn.Linear: y = x·Wᵀ, the query, key and value weights one under the other, as they lie
        // Their shapes (q × d_model, kv × d_model) were checked when the folder was opened.
        const std::string* names[3] = {&b.q, &b.k, &b.v};
        for (size_t k = 0; k < 3; ++k) w.W_qkv_parts[k] = r.multiplier<Scalar>(*names[k]);
        w.qkv_transposed = true;
        if (!b.q_b.empty() || !b.k_b.empty() || !b.v_b.empty())
            w.b_qkv = MatrixT<Scalar>(r.stacked<Scalar>({{b.q_b, q}, {b.k_b, kv}, {b.v_b, kv}}, 1).transpose());
    }
    w.W_O = r.multiplier<Scalar>(b.o);
    w.o_transposed = !model.conv1d();
    w.b_O = r.weights<Scalar>(b.o_b);
    w.q_norm = r.weights<Scalar>(b.q_norm);
    w.k_norm = r.weights<Scalar>(b.k_norm);
    if (!r.ok()) return R::fail(r.take());
    return R::ok(std::move(w));
}

// As import_layer (core/io/import.cpp) builds a session: every projection as x·W (d_model × columns),
// the biases as rows, split into heads by columns, then validated.
core::Result<core::Session> attention_session(const ModelFolder& model, int layer, core::Matrix X,
                                              std::vector<std::string> tokens) {
    using R = core::Result<core::Session>;
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    Reads r(model);
    const bool linear = !model.conv1d();  // y = x·Wᵀ: transposed to x·W
    core::LayerProjections p;
    if (!b.qkv.empty()) {  // as x·W: d_model × (h + 2·kv)·d_k, the columns of Q, K, V
        const ModelConfig& c = model.config();
        const QkvLayout layout = model.qkv_layout();
        core::Matrix all, all_b;
        if (layout == QkvLayout::per_head) {
            all = r.per_head_to_qkv<double>(b.qkv, c.heads, c.d_k).transpose();
            all_b = r.per_head_to_qkv<double>(b.qkv_b, c.heads, c.d_k);
            if (all_b.cols() == 1) all_b.transposeInPlace();
        } else {
            all = r.matrix(b.qkv, layout == QkvLayout::rows), all_b = r.matrix(b.qkv_b);
        }
        if (!r.ok()) return R::fail(r.take());
        const Eigen::Index q = Eigen::Index{c.heads} * c.d_k, kv = Eigen::Index{c.kv_heads} * c.d_k;
        p.W_Q = all.leftCols(q), p.W_K = all.middleCols(q, kv), p.W_V = all.rightCols(kv);
        if (all_b.size()) p.b_Q = all_b.leftCols(q), p.b_K = all_b.middleCols(q, kv), p.b_V = all_b.rightCols(kv);
    } else {
        p.W_Q = r.matrix(b.q, linear), p.W_K = r.matrix(b.k, linear), p.W_V = r.matrix(b.v, linear);
        p.b_Q = r.matrix(b.q_b), p.b_K = r.matrix(b.k_b), p.b_V = r.matrix(b.v_b);
    }
    p.W_O = r.matrix(b.o, linear), p.b_O = r.matrix(b.o_b);
    if (!r.ok()) return R::fail(r.take());

    core::Result<core::Config> config = attention_config(model, layer, static_cast<int>(X.rows()));
    if (!config) return R::fail(std::move(config.problems));
    core::Session s;
    const core::Config& cf = s.config = *config.value;
    s.tokens = std::move(tokens);
    // X, then every other input this config has (no Y, no custom mask) from the projections.
    s.params.kv_group_size = cf.group_size();
    s.params.heads.resize(static_cast<size_t>(cf.heads));
    s.params.X = std::move(X);
    core::set_projections(s.params, cf, p);
    if (cf.qk_norm.on) {  // stored as vectors: one row each
        s.params.q_norm = r.matrix(b.q_norm);
        s.params.k_norm = r.matrix(b.k_norm);
        if (!r.ok()) return R::fail(r.take());
    }
    if (core::Problems problems = core::validate(s); !problems.empty()) return R::fail(std::move(problems));
    return R::ok(std::move(s));
}

template core::Problems for_each_lm_head_block<float>(
    const ModelFolder&, const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<float>>&)>&, bool);
template core::Problems for_each_lm_head_block<double>(
    const ModelFolder&, const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<double>>&)>&, bool);
template core::Problems for_each_vocab_block<float>(
    const ModelFolder&, const std::string&,
    const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<float>>&)>&, bool);
template core::Problems for_each_vocab_block<double>(
    const ModelFolder&, const std::string&,
    const std::function<void(Eigen::Index, const Eigen::Ref<const MatrixT<double>>&)>&, bool);
template core::Result<MatrixT<float>> read_table_rows<float>(const ModelFolder&, const std::string&,
                                                             const std::vector<int>&, Eigen::Index);
template core::Result<MatrixT<double>> read_table_rows<double>(const ModelFolder&, const std::string&,
                                                               const std::vector<int>&, Eigen::Index);
template core::Result<MatrixT<float>> read_matrix<float>(const ModelFolder&, const std::string&);
template core::Result<MatrixT<double>> read_matrix<double>(const ModelFolder&, const std::string&);
template core::Result<Norm<float>> read_norm<float>(const ModelFolder&, const std::string&, const std::string&);
template core::Result<Norm<double>> read_norm<double>(const ModelFolder&, const std::string&, const std::string&);
template core::Result<BlockWeights<float>> read_block<float>(const ModelFolder&, int);
template core::Result<BlockWeights<double>> read_block<double>(const ModelFolder&, int);
template struct AttentionWeights<float>;
template struct AttentionWeights<double>;
template core::Result<AttentionWeights<float>> read_attention<float>(const ModelFolder&, int);
template core::Result<AttentionWeights<double>> read_attention<double>(const ModelFolder&, int);

}  // namespace attnviz::model
