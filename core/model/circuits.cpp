#include "core/model/circuits.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "core/model/layer_weights.hpp"
#include "core/model/runtime.hpp"

namespace attnviz::model {

namespace {

using core::Matrix;

// The norm in front of layer `layer`'s attention as the token rows take it (circuits.hpp), or none.
core::Result<std::optional<Norm<double>>> input_norm(const ModelFolder& model, int layer) {
    using R = core::Result<std::optional<Norm<double>>>;
    const ModelNames& names = model.names();
    const std::string& w = model.config().pre_norm() ? names.blocks[static_cast<size_t>(layer)].norm_attention_w
                                                     : names.embeddings_norm_w;
    const std::string& b = model.config().pre_norm() ? names.blocks[static_cast<size_t>(layer)].norm_attention_b
                                                     : names.embeddings_norm_b;
    if (w.empty()) return R::ok(std::nullopt);
    core::Result<Norm<double>> norm = read_norm<double>(model, w, b);
    if (!norm) return R::fail(std::move(norm.problems));
    return R::ok(std::move(*norm.value));
}

// Embedding rows as they enter the norm (times Gemma's √d_model), through it; without a norm the
// rows as they are (the LM head's).
Matrix normed(const std::optional<Norm<double>>& norm, const Matrix& rows, double embedding_scale) {
    if (!norm) return rows;
    Matrix out;
    norm->apply(embedding_scale == 1 ? rows : Matrix(rows * embedding_scale), out);
    return out;
}

// The `top` largest values of each row over the vocabulary, largest first, equal values by the
// smaller id, whatever order the values are offered in.
struct TopPerRow {
    int top;
    std::vector<std::vector<TokenScore>> rows;

    TopPerRow(Eigen::Index count, int top_) : top(top_), rows(static_cast<size_t>(count)) {}
    static bool before(const TokenScore& x, const TokenScore& y) {
        return x.value > y.value || (x.value == y.value && x.id < y.id);
    }
    void offer(Eigen::Index row, TokenScore s) {
        std::vector<TokenScore>& best = rows[static_cast<size_t>(row)];
        if (static_cast<int>(best.size()) == top && !before(s, best.back())) return;
        best.insert(std::upper_bound(best.begin(), best.end(), s, before), s);
        if (static_cast<int>(best.size()) > top) best.pop_back();
    }
};

// The `top` largest of rows·N(table)ᵀ per row over the vocabulary (rows: count × d_model). The
// table's blocks are spread over OpenMP's threads (each block's product on one thread, not Eigen's
// threads on a small product); each block ranks its own, then offers them to the whole ranking.
// Once `stopped` says so, the blocks left are skipped and the ranking refused.
core::Result<std::vector<std::vector<TokenScore>>> top_over_vocab(const ModelFolder& model, const std::string& table,
                                                                  const std::optional<Norm<double>>& norm,
                                                                  const Matrix& rows, int top,
                                                                  const std::function<bool()>& stopped) {
    using R = core::Result<std::vector<std::vector<TokenScore>>>;
    TopPerRow best(rows.rows(), top);
    std::mutex merging;
    const core::Problems problems = for_each_vocab_block<double>(
        model, table,
        [&](Eigen::Index first, const Eigen::Ref<const Matrix>& block) {
            if (stopped && stopped()) return;
            const Matrix values =
                rows * normed(norm, block, model.config().embedding_scale).transpose();  // count × block rows
            TopPerRow own(rows.rows(), top);
            for (Eigen::Index r = 0; r < values.rows(); ++r)
                for (Eigen::Index j = 0; j < values.cols(); ++j)
                    own.offer(r, {static_cast<std::int32_t>(first + j), values(r, j)});
            const std::lock_guard<std::mutex> lock(merging);
            for (Eigen::Index r = 0; r < values.rows(); ++r)
                for (const TokenScore& s : own.rows[static_cast<size_t>(r)]) best.offer(r, s);
        },
        true);
    if (!problems.empty()) return R::fail(problems);
    if (stopped && stopped()) return R::fail({{"", "stopped"}});
    return R::ok(std::move(best.rows));
}

// The `top` largest entries of qk (k×k), largest first; equal values by query, then key id.
std::vector<TokenPair> top_pairs(const Matrix& qk, const std::vector<std::int32_t>& tokens, int top) {
    std::vector<TokenPair> all;
    for (Eigen::Index a = 0; a < qk.rows(); ++a)
        for (Eigen::Index b = 0; b < qk.cols(); ++b)
            all.push_back({tokens[static_cast<size_t>(a)], tokens[static_cast<size_t>(b)], qk(a, b)});
    const auto count = std::min(all.size(), static_cast<size_t>(std::max(top, 0)));
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count), all.end(),
                      [](const TokenPair& x, const TokenPair& y) {
                          if (x.value != y.value) return x.value > y.value;
                          return x.query != y.query ? x.query < y.query : x.key < y.key;
                      });
    all.resize(count);
    return all;
}

// Layer `layer`'s attention as a session on the rows X (its W_Q, W_K, W_V, W_O, biases, config).
core::Result<core::Session> session_on(const ModelFolder& model, int layer, const Matrix& X,
                                       const std::vector<std::int32_t>& ids) {
    std::vector<std::string> labels;
    for (const std::int32_t id : ids) labels.push_back("#" + std::to_string(id));
    return attention_session(model, layer, X, std::move(labels));
}

std::string shape_of(const Matrix& m) { return std::to_string(m.rows()) + "×" + std::to_string(m.cols()); }

// The first weight of `edited` whose shape is not the stored one's ("heads[1].W_Q: the model's
// 16×4, edited 16×2"), or "" when every one has its shape and the K/V grouping is the same.
std::string weights_mismatch(const core::Params& stored, const core::Params& edited) {
    if (edited.heads.size() != stored.heads.size())
        return "the model's " + std::to_string(stored.heads.size()) + " heads, edited " +
               std::to_string(edited.heads.size());
    if (edited.kv_group_size != stored.kv_group_size)
        return "the model's K/V groups of " + std::to_string(stored.kv_group_size) + " heads, edited " +
               std::to_string(edited.kv_group_size);
    std::vector<std::pair<std::string, std::pair<const Matrix*, const Matrix*>>> weights = {
        {"W_O", {&stored.W_O, &edited.W_O}}, {"b_O", {&stored.b_O, &edited.b_O}}};
    for (size_t h = 0; h < stored.heads.size(); ++h) {
        const core::HeadParams &s = stored.heads[h], &e = edited.heads[h];
        const std::string at = "heads[" + std::to_string(h) + "].";
        weights.push_back({at + "W_Q", {&s.W_Q, &e.W_Q}});
        weights.push_back({at + "W_K", {&s.W_K, &e.W_K}});
        weights.push_back({at + "W_V", {&s.W_V, &e.W_V}});
        weights.push_back({at + "b_Q", {&s.b_Q, &e.b_Q}});
        weights.push_back({at + "b_K", {&s.b_K, &e.b_K}});
        weights.push_back({at + "b_V", {&s.b_V, &e.b_V}});
    }
    for (const auto& [name, pair] : weights)
        if (pair.first->rows() != pair.second->rows() || pair.first->cols() != pair.second->cols())
            return name + ": the model's " + shape_of(*pair.first) + ", edited " + shape_of(*pair.second);
    return "";
}

// The session's weights replaced by `edited`'s when each has the stored shape (its X kept); else
// why they were not (and the session keeps the stored ones).
std::string use_edited(core::Session& session, const core::Params& edited) {
    const std::string mismatch = weights_mismatch(session.params, edited);
    if (!mismatch.empty())
        return "the edited weights no longer have the model's shapes (" + mismatch + "): the stored weights are used";
    session.params.heads = edited.heads;
    session.params.W_O = edited.W_O;
    session.params.b_O = edited.b_O;
    return "";
}

}  // namespace

core::Result<TokenCircuits> token_circuits(const ModelFolder& model, int layer, const std::vector<std::int32_t>& ids,
                                           int top, const TokenCircuitOptions& options) {
    using R = core::Result<TokenCircuits>;
    const ModelConfig& c = model.config();
    if (layer < 0 || layer >= c.layers) return R::fail({{"", "no layer " + std::to_string(layer) + " in the model"}});
    TokenCircuits out;
    for (const std::int32_t id : ids)
        if (std::find(out.tokens.begin(), out.tokens.end(), id) == out.tokens.end()) out.tokens.push_back(id);
    if (core::Problems p = token_problems(c, out.tokens); !p.empty()) return R::fail(std::move(p));
    core::Result<std::optional<Norm<double>>> norm = input_norm(model, layer);
    if (!norm) return R::fail(std::move(norm.problems));
    const std::string& E = model.names().token_embeddings;
    core::Result<Matrix> rows = read_table_rows<double>(model, E, {out.tokens.begin(), out.tokens.end()}, c.d_model);
    if (!rows) return R::fail(std::move(rows.problems));
    const Matrix X = normed(*norm.value, *rows.value, c.embedding_scale);  // k × d_model: the token rows x_t
    core::Result<core::Session> session = session_on(model, layer, X, out.tokens);
    if (!session) return R::fail(std::move(session.problems));
    if (options.edited) {
        out.stored_because = use_edited(*session.value, *options.edited);
        out.edited = out.stored_because.empty();
    }
    const core::Params& p = session.value->params;
    const int heads = session.value->config.heads, d_v = session.value->config.d_v;
    const Eigen::Index k = X.rows();
    // Every head's query rows x_a·W_Q·W_Kᵀ and OV rows x_t·W_V·W_O⁽ʰ⁾, stacked: (heads·k) × d_model.
    Matrix queries(heads * k, c.d_model), values(heads * k, c.d_model);
    for (int h = 0; h < heads; ++h) {
        const core::HeadParams& own = p.heads[static_cast<size_t>(h)];
        const core::HeadParams& group = p.heads[static_cast<size_t>(p.kv_owner(h))];
        HeadTokenCircuits head;
        const Matrix Q = X * own.W_Q;  // k × d_k
        head.qk = Q * (X * group.W_K).transpose();
        head.top_pairs = top_pairs(head.qk, out.tokens, top);
        queries.middleRows(h * k, k) = Q * group.W_K.transpose();
        values.middleRows(h * k, k) = X * group.W_V * p.W_O.middleRows(static_cast<Eigen::Index>(h) * d_v, d_v);
        out.heads.push_back(std::move(head));
    }
    const std::string& W_U = model.names().lm_head.empty() ? E : model.names().lm_head;
    core::Result<std::vector<std::vector<TokenScore>>> keys = top_over_vocab(model, E, *norm.value, queries, top,
                                                                             options.stopped);
    if (!keys) return R::fail(std::move(keys.problems));
    core::Result<std::vector<std::vector<TokenScore>>> outputs = top_over_vocab(model, W_U, std::nullopt, values, top,
                                                                                options.stopped);
    if (!outputs) return R::fail(std::move(outputs.problems));
    for (int h = 0; h < heads; ++h) {
        const auto from = static_cast<std::ptrdiff_t>(h * k), to = from + k;
        HeadTokenCircuits& head = out.heads[static_cast<size_t>(h)];
        head.top_keys.assign(keys.value->begin() + from, keys.value->begin() + to);
        head.top_outputs.assign(outputs.value->begin() + from, outputs.value->begin() + to);
    }
    return R::ok(std::move(out));
}

core::Result<std::vector<PositionSplit>> position_split(const ModelFolder& model, const std::vector<std::int32_t>& ids,
                                                        const core::Params* edited, std::string* stored_because) {
    using R = core::Result<std::vector<PositionSplit>>;
    const ModelConfig& c = model.config();
    const ModelNames& names = model.names();
    if (!c.learned_positions()) return R::fail({{"", "the position split needs learned positions"}});
    if (core::Problems p = token_problems(c, ids); !p.empty()) return R::fail(std::move(p));
    core::Result<std::optional<Norm<double>>> read = input_norm(model, 0);
    if (!read) return R::fail(std::move(read.problems));
    if (!*read.value || (*read.value)->rms)
        return R::fail({{"", "the position split needs a LayerNorm in front of layer 0's attention"}});
    const Norm<double>& norm = **read.value;
    const auto n = static_cast<Eigen::Index>(ids.size());
    core::Result<Matrix> e = read_table_rows<double>(model, names.token_embeddings, {ids.begin(), ids.end()},
                                                     c.d_model);
    if (!e) return R::fail(std::move(e.problems));
    core::Result<Matrix> pos = read_table_rows<double>(model, names.position_embeddings, position_ids(c, ids),
                                                       c.d_model);
    if (!pos) return R::fail(std::move(pos.problems));
    Matrix content = *e.value;
    if (!names.type_embeddings.empty()) {  // every token of type 0: part of the content
        core::Result<Matrix> type = read_table_rows<double>(model, names.type_embeddings, std::vector<int>(1, 0),
                                                            c.d_model);
        if (!type) return R::fail(std::move(type.problems));
        content.rowwise() += type.value->row(0);
    }
    // σ_i of the sum, and each part centred, scaled by 1/σ_i and γ.
    const Matrix x = content + *pos.value;
    const Eigen::VectorXd mean = x.rowwise().mean();
    const Eigen::VectorXd sigma = ((x.colwise() - mean).array().square().rowwise().mean() + norm.eps).sqrt().matrix();
    const auto part = [&](const Matrix& m) {
        Matrix centred = m.colwise() - m.rowwise().mean();
        centred.array().colwise() /= sigma.array();
        centred.array().rowwise() *= norm.w.array();
        return centred;
    };
    const Matrix C = part(content), P = part(*pos.value);
    const Eigen::RowVectorXd beta = norm.b.size() ? Eigen::RowVectorXd(norm.b) : Eigen::RowVectorXd::Zero(c.d_model);
    core::Result<core::Session> session = session_on(model, 0, (C + P).rowwise() + beta, ids);
    if (!session) return R::fail(std::move(session.problems));
    const std::string stored = edited ? use_edited(*session.value, *edited) : "";
    if (stored_because) *stored_because = stored;
    const core::Config& cf = session.value->config;
    const core::Params& p = session.value->params;
    std::vector<PositionSplit> out;
    for (int h = 0; h < cf.heads; ++h) {
        const core::HeadParams& own = p.heads[static_cast<size_t>(h)];
        const core::HeadParams& group = p.heads[static_cast<size_t>(p.kv_owner(h))];
        const Matrix QC = C * own.W_Q, QP = P * own.W_Q, KC = C * group.W_K, KP = P * group.W_K;  // n × d_k
        Eigen::RowVectorXd B_Q = beta * own.W_Q, B_K = beta * group.W_K;                          // 1 × d_k
        if (cf.biases) B_Q += own.b_Q, B_K += group.b_K;
        PositionSplit s;
        s.content_content = QC * KC.transpose();
        s.content_position = QC * KP.transpose();
        s.position_content = QP * KC.transpose();
        s.position_position = QP * KP.transpose();
        const Eigen::VectorXd by_query = (QC + QP) * B_K.transpose();   // n: the same for every key
        const Eigen::RowVectorXd by_key = B_Q * (KC + KP).transpose();  // n: the same for every query
        s.bias = (by_query.replicate(1, n).rowwise() + by_key).array() + B_Q.dot(B_K);
        out.push_back(std::move(s));
    }
    return R::ok(std::move(out));
}

core::Result<std::vector<double>> copying_scores(const ModelFolder& model, int layer,
                                                 const std::function<bool()>& stopped) {
    using R = core::Result<std::vector<double>>;
    const ModelConfig& c = model.config();
    if (layer < 0 || layer >= c.layers) return R::fail({{"", "no layer " + std::to_string(layer) + " in the model"}});
    core::Result<std::optional<Norm<double>>> norm = input_norm(model, layer);
    if (!norm) return R::fail(std::move(norm.problems));
    const std::string& E = model.names().token_embeddings;
    const std::string& W_U = model.names().lm_head.empty() ? E : model.names().lm_head;
    Matrix G = Matrix::Zero(c.d_model, c.d_model);  // W_Uᵀ·X
    core::Problems problems;
    const core::Problems read =
        for_each_vocab_block<double>(model, E, [&](Eigen::Index first, const Eigen::Ref<const Matrix>& rows) {
            if (!problems.empty() || (stopped && stopped())) return;
            const Matrix X = normed(*norm.value, rows, c.embedding_scale);
            if (W_U == E) {
                G.noalias() += rows.transpose() * X;
                return;
            }
            std::vector<int> at(static_cast<size_t>(rows.rows()));
            for (size_t i = 0; i < at.size(); ++i) at[i] = static_cast<int>(first) + static_cast<int>(i);
            core::Result<Matrix> unembed = read_table_rows<double>(model, W_U, at, c.d_model);
            if (!unembed) {
                problems = std::move(unembed.problems);
                return;
            }
            G.noalias() += unembed.value->transpose() * X;
        });
    if (!read.empty()) return R::fail(read);
    if (!problems.empty()) return R::fail(std::move(problems));
    if (stopped && stopped()) return R::fail({{"", "stopped"}});
    core::Result<core::Session> session = session_on(model, layer, Matrix::Zero(1, c.d_model), {0});
    if (!session) return R::fail(std::move(session.problems));
    const core::Params& p = session.value->params;
    const int d_v = session.value->config.d_v;
    std::vector<double> out;
    for (int h = 0; h < session.value->config.heads; ++h) {
        const Matrix M = p.W_O.middleRows(static_cast<Eigen::Index>(h) * d_v, d_v) * G *
                         p.heads[static_cast<size_t>(p.kv_owner(h))].W_V;  // d_v × d_v
        const Eigen::VectorXcd lambda = Eigen::EigenSolver<Matrix>(M, false).eigenvalues();
        const double magnitude = lambda.cwiseAbs().sum();
        out.push_back(magnitude > 0 ? lambda.real().sum() / magnitude : 0.0);
    }
    return R::ok(std::move(out));
}

}  // namespace attnviz::model
