#include "core/model/layer_weights.hpp"

#include <algorithm>
#include <tuple>
#include <type_traits>

namespace attnviz::model {

namespace {

// Reading several tensors, the problems of all of them kept.
class Reads {
public:
    explicit Reads(const ModelFolder& model) : model_(model) {}

    // The tensor's values as a double matrix (1-D: one row), transposed when asked; empty for the
    // name "" (a tensor the architecture does not have) and after a problem.
    core::Matrix matrix(const std::string& name, bool transpose = false) {
        if (name.empty()) return {};
        core::Result<core::Tensor> t = model_.weights().read(name);
        if (!t) {
            for (core::Problem& p : t.problems) problems_.push_back(std::move(p));
            return {};
        }
        const auto rows = static_cast<Eigen::Index>(t.value->rows()), cols = static_cast<Eigen::Index>(t.value->cols());
        const Eigen::Map<const core::Matrix> m(t.value->values.data(), rows, cols);  // both row-major
        return transpose ? core::Matrix(m.transpose()) : core::Matrix(m);
    }

    template <class Scalar>
    MatrixT<Scalar> as(const std::string& name) {
        if constexpr (std::is_same_v<Scalar, double>)
            return matrix(name);
        else
            return matrix(name).template cast<Scalar>();
    }

    // A 1-D tensor as a row; empty for the name "" and after a problem.
    template <class Scalar>
    RowVectorT<Scalar> row(const std::string& name) {
        const core::Matrix m = matrix(name);
        if (m.rows() != 1) return {};
        return m.row(0).template cast<Scalar>();
    }

    template <class Scalar>
    Projection<Scalar> projection(const std::string& weight, const std::string& bias) {
        Projection<Scalar> p;
        p.W = as<Scalar>(weight);
        p.transposed = !model_.conv1d();
        p.b = row<Scalar>(bias);
        return p;
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

core::Problems for_each_lm_head_block(
    const ModelFolder& model,
    const std::function<void(Eigen::Index first, const Eigen::Ref<const core::Matrix>& rows)>& use) {
    const ModelConfig& c = model.config();
    const std::string& name = model.names().lm_head;
    if (name.empty()) return {{"", "the model has no LM head"}};
    const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t{1} << 22) / std::max(1, c.d_model));
    for (std::int64_t first = 0; first < c.vocab_size; first += block) {
        const std::int64_t count = std::min<std::int64_t>(block, c.vocab_size - first);
        const core::Result<core::Tensor> rows = model.weights().read_rows(name, static_cast<std::uint64_t>(first),
                                                                          static_cast<std::uint64_t>(count));
        if (!rows) return rows.problems;
        if (rows.value->values.size() != static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(c.d_model))
            return {{"", name + ": expected rows of d_model = " + std::to_string(c.d_model) + " values"}};
        use(first, Eigen::Map<const core::Matrix>(rows.value->values.data(), count, c.d_model));
    }
    return {};
}

template <class Scalar>
core::Result<Norm<Scalar>> read_norm(const ModelFolder& model, const std::string& weight, const std::string& bias) {
    Reads r(model);
    Norm<Scalar> n;
    n.rms = model.config().rms_norm();
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
                                      std::tuple{&w.norm_mlp, &b.norm_mlp_w, &b.norm_mlp_b}}) {
        core::Result<Norm<Scalar>> n = read_norm<Scalar>(model, *weight, *bias);
        if (!n) return R::fail(std::move(n.problems));
        *norm = std::move(*n.value);
    }
    Reads r(model);
    w.mlp.activation = model.config().activation;
    w.mlp.gated = model.config().gated_mlp();
    w.mlp.up = r.projection<Scalar>(b.up, b.up_b);
    if (w.mlp.gated) w.mlp.gate = r.projection<Scalar>(b.gate, b.gate_b);
    w.mlp.down = r.projection<Scalar>(b.down, b.down_b);
    if (!r.ok()) return R::fail(r.take());
    return R::ok(std::move(w));
}

// As import_layer (core/io/import.cpp) builds a session: every projection as x·W (d_model × columns),
// the biases as rows, split into heads by columns, then validated.
core::Result<core::Session> attention_session(const ModelFolder& model, int layer, core::Matrix X,
                                              std::vector<std::string> tokens) {
    using R = core::Result<core::Session>;
    const ModelConfig& c = model.config();
    const BlockNames& b = model.names().blocks[static_cast<size_t>(layer)];
    Reads r(model);
    const bool linear = !model.conv1d();  // y = x·Wᵀ: transposed to x·W
    core::LayerProjections p;
    if (!b.qkv.empty()) {  // GPT-2's c_attn: d_model × 3·d_model, columns Q, K, V
        const core::Matrix all = r.matrix(b.qkv), all_b = r.matrix(b.qkv_b);
        if (!r.ok()) return R::fail(r.take());
        const Eigen::Index d = all.cols() / 3;
        p.W_Q = all.leftCols(d), p.W_K = all.middleCols(d, d), p.W_V = all.rightCols(d);
        if (all_b.size()) p.b_Q = all_b.leftCols(d), p.b_K = all_b.middleCols(d, d), p.b_V = all_b.rightCols(d);
    } else {
        p.W_Q = r.matrix(b.q, linear), p.W_K = r.matrix(b.k, linear), p.W_V = r.matrix(b.v, linear);
        p.b_Q = r.matrix(b.q_b), p.b_K = r.matrix(b.k_b), p.b_V = r.matrix(b.v_b);
    }
    p.W_O = r.matrix(b.o, linear), p.b_O = r.matrix(b.o_b);
    if (!r.ok()) return R::fail(r.take());

    core::Session s;
    core::Config& cf = s.config;
    cf.n = static_cast<int>(X.rows());
    cf.d_model = c.d_model;
    cf.heads = c.heads;
    cf.d_k = cf.d_v = c.d_k;
    cf.output_projection = true;
    cf.mask = c.causal() ? core::Mask::causal : core::Mask::none;
    cf.biases = p.has_biases();
    cf.kv_heads = c.kv_heads == c.heads ? 0 : c.kv_heads;
    if (c.llama_family()) {
        cf.rope.on = true;
        cf.rope.base = c.rope_theta;
    }
    if (core::Problems problems = core::validate(cf); !problems.empty()) return R::fail(std::move(problems));
    s.tokens = std::move(tokens);
    s.params = core::resize(core::Params{}, cf);  // every matrix at its shape, then the layer's values
    s.params.X = std::move(X);
    core::set_projections(s.params, cf, p);
    if (core::Problems problems = core::validate(s); !problems.empty()) return R::fail(std::move(problems));
    return R::ok(std::move(s));
}

template core::Result<MatrixT<float>> read_matrix<float>(const ModelFolder&, const std::string&);
template core::Result<MatrixT<double>> read_matrix<double>(const ModelFolder&, const std::string&);
template core::Result<Norm<float>> read_norm<float>(const ModelFolder&, const std::string&, const std::string&);
template core::Result<Norm<double>> read_norm<double>(const ModelFolder&, const std::string&, const std::string&);
template core::Result<BlockWeights<float>> read_block<float>(const ModelFolder&, int);
template core::Result<BlockWeights<double>> read_block<double>(const ModelFolder&, int);

}  // namespace attnviz::model
