// Token-space circuits and layer 0's position split (core/model/circuits.hpp) on the tiny models of
// tests/reference/models against tests/reference/models/circuits.py's NumPy computation from the
// stored weights (GPT-2, BERT, Llama with K/V groups and RMSNorm); the split's five parts against
// the run's own scores_raw.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/model/circuits.hpp"
#include "core/model/layer_weights.hpp"
#include "core/model/weight_files.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::model::ModelFolder;
using attnviz::test::expected_of;
using attnviz::test::max_error;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using attnviz::test::run_expected;
using attnviz::test::session_of;
using attnviz::test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

json circuits_of(const std::string& model) { return json::parse(slurp(models_dir / model / "circuits.json")); }

// A ranking (id, value) against NumPy's [[id, value], …]: the same ids in the same order, the values
// to 1e-9.
void expect_ranking(const std::vector<attnviz::model::TokenScore>& got, const json& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i][0].get<int>()) << what << " rank " << i;
        EXPECT_NEAR(got[i].value, want[i][1].get<double>(), 1e-9) << what << " rank " << i;
    }
}

TEST(ModelCircuits, TokenCircuitsAgreeWithNumPy) {
    for (const std::string name : {"gpt2", "bert", "llama"}) {
        SCOPED_TRACE(name);
        const json e = circuits_of(name);
        const ModelFolder m = open_model(name);
        const auto ids = e.at("token_ids").get<std::vector<std::int32_t>>();
        const int top = e.at("top").get<int>();
        ASSERT_EQ(e.at("token_circuits").size(), static_cast<size_t>(m.config().layers));
        for (int l = 0; l < m.config().layers; ++l) {
            const json& want = e["token_circuits"][static_cast<size_t>(l)];
            const auto got = attnviz::model::token_circuits(m, l, ids, top);
            ASSERT_TRUE(got) << got.problems.front().str();
            EXPECT_EQ(got.value->tokens, want.at("tokens").get<std::vector<std::int32_t>>());
            ASSERT_EQ(got.value->heads.size(), want.at("heads").size());
            for (size_t h = 0; h < want["heads"].size(); ++h) {
                const std::string where = "layer " + std::to_string(l) + " head " + std::to_string(h);
                const attnviz::model::HeadTokenCircuits& g = got.value->heads[h];
                const json& w = want["heads"][h];
                EXPECT_LE(max_error(g.qk, w.at("qk")), 1e-9) << where;
                ASSERT_EQ(g.top_keys.size(), w.at("top_keys").size());
                ASSERT_EQ(g.top_outputs.size(), w.at("top_outputs").size());
                for (size_t t = 0; t < g.top_keys.size(); ++t) {
                    expect_ranking(g.top_keys[t], w["top_keys"][t], where + " keys of candidate " + std::to_string(t));
                    expect_ranking(g.top_outputs[t], w["top_outputs"][t],
                                   where + " outputs of candidate " + std::to_string(t));
                }
                // The top pairs are NumPy's qk's largest entries, largest first.
                std::vector<double> all;
                for (const json& row : w["qk"])
                    for (const json& v : row) all.push_back(v.get<double>());
                std::sort(all.rbegin(), all.rend());
                ASSERT_EQ(g.top_pairs.size(), static_cast<size_t>(std::min<int>(top, static_cast<int>(all.size()))));
                for (size_t i = 0; i < g.top_pairs.size(); ++i) {
                    EXPECT_NEAR(g.top_pairs[i].value, all[i], 1e-9) << where << " pair " << i;
                    const auto a = std::find(got.value->tokens.begin(), got.value->tokens.end(), g.top_pairs[i].query);
                    const auto b = std::find(got.value->tokens.begin(), got.value->tokens.end(), g.top_pairs[i].key);
                    ASSERT_TRUE(a != got.value->tokens.end() && b != got.value->tokens.end());
                    EXPECT_EQ(g.qk(a - got.value->tokens.begin(), b - got.value->tokens.begin()), g.top_pairs[i].value);
                }
            }
        }
    }
}

// One chosen token: the candidates are that token alone, and its rows are those of the whole text's.
TEST(ModelCircuits, OneTokensRowsAreThoseOfItsPlaceAmongMany) {
    const json e = circuits_of("gpt2");
    const ModelFolder m = open_model("gpt2");
    const auto ids = e.at("token_ids").get<std::vector<std::int32_t>>();
    const auto one = attnviz::model::token_circuits(m, 1, {ids[2], ids[2]}, 3);
    ASSERT_TRUE(one) << one.problems.front().str();
    ASSERT_EQ(one.value->tokens, std::vector<std::int32_t>{ids[2]});
    for (size_t h = 0; h < one.value->heads.size(); ++h) {
        const json& w = e["token_circuits"][1]["heads"][h];
        ASSERT_EQ(one.value->heads[h].qk.size(), 1);
        EXPECT_NEAR(one.value->heads[h].qk(0, 0), w["qk"][2][2].get<double>(), 1e-9);
        json first = json::array();  // the three best of its five
        for (size_t i = 0; i < 3; ++i) first.push_back(w["top_outputs"][2][i]);
        expect_ranking(one.value->heads[h].top_outputs.at(0), first, "head " + std::to_string(h));
    }
}

// A vocabulary of several blocks (for_each_vocab_block reads 2¹⁸ values at a time, 16384 rows of
// d_model = 16): the tiny GPT-2 with its token table copied to rows 0, 16384 and 32768 of a table of
// 40000 (the other rows 0), so that each token's row is three times in three blocks. Each OV ranking
// is then the tiny model's best value at its three places, then its second best at two, smaller ids
// first: the blocks' rankings are merged whole, equal values by id.
TEST(ModelCircuits, RankingsOverSeveralBlocksAreMergedWithEqualValuesById) {
    const attnviz::test::ScratchFolder scratch;
    const fs::path folder = scratch.copy_of("gpt2");
    const attnviz::core::Result<attnviz::model::WeightFiles> read = attnviz::model::WeightFiles::open(folder.string());
    ASSERT_TRUE(read);
    constexpr std::uint64_t vocab = 40000, block = 16384;
    json header = json::object();
    std::string data;
    for (const std::string& name : read.value->names()) {
        attnviz::core::Result<attnviz::core::Tensor> t = read.value->read(name);
        ASSERT_TRUE(t);
        std::vector<double> values = t.value->values;
        std::vector<std::uint64_t> shape = t.value->shape;
        if (name == "transformer.wte.weight") {  // V0 × 16 → 40000 × 16, copied at 0, 16384, 32768
            values.assign(vocab * shape[1], 0.0);
            for (std::uint64_t copy = 0; copy < 3; ++copy)
                std::copy(t.value->values.begin(), t.value->values.end(),
                          values.begin() + static_cast<std::ptrdiff_t>(copy * block * shape[1]));
            shape[0] = vocab;
        }
        header[name] = {{"dtype", "F64"},
                        {"shape", shape},
                        {"data_offsets", {data.size(), data.size() + 8 * values.size()}}};
        data.append(reinterpret_cast<const char*>(values.data()), 8 * values.size());
    }
    const std::string text = header.dump();
    const std::uint64_t size = text.size();
    std::ofstream(folder / "model.safetensors", std::ios::binary)
        << std::string(reinterpret_cast<const char*>(&size), 8) << text << data;
    json config = json::parse(slurp(folder / "config.json"));
    config["vocab_size"] = vocab;
    std::ofstream(folder / "config.json") << config.dump();

    const attnviz::core::Result<ModelFolder> m = ModelFolder::open(folder.string());
    ASSERT_TRUE(m) << m.problems.front().str();
    const json e = circuits_of("gpt2");
    const auto ids = e.at("token_ids").get<std::vector<std::int32_t>>();
    const auto got = attnviz::model::token_circuits(*m.value, 0, ids, 5);
    ASSERT_TRUE(got) << got.problems.front().str();
    for (size_t h = 0; h < got.value->heads.size(); ++h)
        for (size_t t = 0; t < got.value->tokens.size(); ++t) {
            const json& want = e["token_circuits"][0]["heads"][h]["top_outputs"][t];  // over the tiny vocabulary
            const int best = want[0][0].get<int>(), second = want[1][0].get<int>();
            json spread = json::array();
            for (const int id : {best, best + 16384, best + 32768}) spread.push_back({id, want[0][1]});
            for (const int id : {second, second + 16384}) spread.push_back({id, want[1][1]});
            ASSERT_GT(want[1][1].get<double>(), 0);  // above the zero rows' 0
            expect_ranking(got.value->heads[h].top_outputs[t], spread,
                           "head " + std::to_string(h) + " candidate " + std::to_string(t));
        }
}

namespace {

using attnviz::core::Matrix;

// Layer `layer`'s stored attention weights as a session holds them (its X the tokens' rows, unused).
attnviz::core::Params stored_params(const ModelFolder& m, int layer, const std::vector<std::int32_t>& ids) {
    const auto session =
        attnviz::model::attention_session(m, layer,
                                          Matrix::Zero(static_cast<Eigen::Index>(ids.size()), m.config().d_model),
                                          std::vector<std::string>(ids.size(), "t"));
    if (!session) ADD_FAILURE() << session.problems.front().str();
    return session ? session.value->params : attnviz::core::Params{};
}

// The rows of `table` for `ids`, through the tiny GPT-2's ln_1 of `layer` (as circuits.hpp's x_t).
Matrix token_rows(const ModelFolder& m, int layer, const std::string& table, const std::vector<int>& ids) {
    const auto rows = attnviz::model::read_table_rows<double>(m, table, ids, m.config().d_model);
    const auto& block = m.names().blocks[static_cast<size_t>(layer)];
    const auto norm = attnviz::model::read_norm<double>(m, block.norm_attention_w, block.norm_attention_b);
    if (!rows || !norm) {
        ADD_FAILURE() << "the tiny GPT-2's rows or ln_1 could not be read";
        return {};
    }
    Matrix out;
    norm.value->apply(*rows.value, out);
    return out;
}

// Σ_c (Σ_i x[i]·A[i][c])·(Σ_j y[j]·B[j][c]): x·A·(y·B)ᵀ written as the loops it is.
double bilinear(const Eigen::RowVectorXd& x, const Matrix& A, const Eigen::RowVectorXd& y, const Matrix& B) {
    double sum = 0;
    for (Eigen::Index c = 0; c < A.cols(); ++c) {
        double xa = 0, yb = 0;
        for (Eigen::Index i = 0; i < A.rows(); ++i) xa += x(i) * A(i, c);
        for (Eigen::Index j = 0; j < B.rows(); ++j) yb += y(j) * B(j, c);
        sum += xa * yb;
    }
    return sum;
}

}  // namespace

// The layer's weights as edited in a session stand for the stored ones: head 1's W_Q and W_O edited
// move its QK and OV numbers as a direct loop over the edited weights says, and no other head's;
// the stored weights given as edited give today's numbers exactly.
TEST(ModelCircuits, EditedWeightsMoveTheTokenCircuitsAsADirectLoopSays) {
    const ModelFolder m = open_model("gpt2");
    const auto ids = circuits_of("gpt2").at("token_ids").get<std::vector<std::int32_t>>();
    constexpr int layer = 1, head = 1, top = 5;
    const auto base = attnviz::model::token_circuits(m, layer, ids, top);
    ASSERT_TRUE(base) << base.problems.front().str();
    attnviz::core::Params edited = stored_params(m, layer, ids);
    const auto same = attnviz::model::token_circuits(m, layer, ids, top, {&edited, {}});
    ASSERT_TRUE(same);
    EXPECT_TRUE(same.value->edited);
    for (size_t h = 0; h < base.value->heads.size(); ++h) {
        EXPECT_EQ(same.value->heads[h].qk, base.value->heads[h].qk) << h;
        for (size_t t = 0; t < base.value->tokens.size(); ++t)
            for (size_t r = 0; r < static_cast<size_t>(top); ++r) {
                EXPECT_EQ(same.value->heads[h].top_keys[t][r].id, base.value->heads[h].top_keys[t][r].id);
                EXPECT_EQ(same.value->heads[h].top_outputs[t][r].value, base.value->heads[h].top_outputs[t][r].value);
            }
    }

    const int d_v = static_cast<int>(edited.heads[head].W_V.cols());
    edited.heads[head].W_Q = edited.heads[head].W_Q.reverse() * -2.0;  // d_model × d_k, new values
    edited.W_O.middleRows(head * d_v, d_v) *= -3.0;
    const auto got = attnviz::model::token_circuits(m, layer, ids, top, {&edited, {}});
    ASSERT_TRUE(got) << got.problems.front().str();
    EXPECT_TRUE(got.value->edited);
    EXPECT_EQ(got.value->stored_because, "");
    const std::vector<std::int32_t>& tokens = got.value->tokens;
    const std::vector<int> all_ids = [&] {
        std::vector<int> v(static_cast<size_t>(m.config().vocab_size));
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
        return v;
    }();
    const Matrix x = token_rows(m, layer, m.names().token_embeddings, {tokens.begin(), tokens.end()});
    const Matrix vocab = token_rows(m, layer, m.names().token_embeddings, all_ids);
    const auto W_U = attnviz::model::read_table_rows<double>(m, m.names().lm_head, all_ids, m.config().d_model);
    ASSERT_TRUE(W_U);
    const attnviz::core::HeadParams& p = edited.heads[head];
    const Matrix W_O = edited.W_O.middleRows(head * d_v, d_v);
    const attnviz::model::HeadTokenCircuits& g = got.value->heads[head];
    for (Eigen::Index a = 0; a < x.rows(); ++a) {
        for (Eigen::Index b = 0; b < x.rows(); ++b)
            EXPECT_NEAR(g.qk(a, b), bilinear(x.row(a), p.W_Q, x.row(b), p.W_K), 1e-12) << a << " " << b;
        // Every key and output token of the vocabulary by the loops, the best five of each.
        std::vector<attnviz::model::TokenScore> keys, outputs;
        for (int u = 0; u < m.config().vocab_size; ++u) {
            keys.push_back({u, bilinear(x.row(a), p.W_Q, vocab.row(u), p.W_K)});
            double logit = 0;
            for (Eigen::Index c = 0; c < W_O.cols(); ++c) {
                double ov = 0;
                for (Eigen::Index v = 0; v < d_v; ++v) {
                    double xv = 0;
                    for (Eigen::Index i = 0; i < x.cols(); ++i) xv += x(a, i) * p.W_V(i, v);
                    ov += xv * W_O(v, c);
                }
                logit += ov * (*W_U.value)(u, c);
            }
            outputs.push_back({u, logit});
        }
        for (auto* ranking : {&keys, &outputs})
            std::stable_sort(ranking->begin(), ranking->end(),
                             [](const auto& l, const auto& r) { return l.value > r.value; });
        for (size_t r = 0; r < static_cast<size_t>(top); ++r) {
            const auto t = static_cast<size_t>(a);
            EXPECT_EQ(g.top_keys[t][r].id, keys[r].id) << a << " rank " << r;
            EXPECT_NEAR(g.top_keys[t][r].value, keys[r].value, 1e-12);
            EXPECT_EQ(g.top_outputs[t][r].id, outputs[r].id) << a << " rank " << r;
            EXPECT_NEAR(g.top_outputs[t][r].value, outputs[r].value, 1e-12);
        }
    }
    EXPECT_GT((g.qk - base.value->heads[head].qk).cwiseAbs().maxCoeff(), 1e-3);  // the edit moved it
    EXPECT_NE(g.top_outputs[0][0].value, base.value->heads[head].top_outputs[0][0].value);
    for (size_t h = 0; h < base.value->heads.size(); ++h)
        if (h != static_cast<size_t>(head)) {
            EXPECT_EQ(got.value->heads[h].qk, base.value->heads[h].qk) << h;
        }
}

// Edited weights of other shapes (a head's W_Q of one more column, or a head fewer) do not stand
// for the stored ones: the stored weights are used, and the result says why.
TEST(ModelCircuits, EditedWeightsOfOtherShapesFallBackToTheStoredOnes) {
    const ModelFolder m = open_model("gpt2");
    const auto ids = circuits_of("gpt2").at("token_ids").get<std::vector<std::int32_t>>();
    const auto base = attnviz::model::token_circuits(m, 0, ids, 3);
    ASSERT_TRUE(base);
    attnviz::core::Params wider = stored_params(m, 0, ids);
    wider.heads[2].W_Q.conservativeResize(Eigen::NoChange, wider.heads[2].W_Q.cols() + 1);
    wider.heads[2].W_Q.rightCols(1).setOnes();
    attnviz::core::Params fewer = stored_params(m, 0, ids);
    fewer.heads.pop_back();
    for (const auto* edited : {&wider, &fewer}) {
        const auto got = attnviz::model::token_circuits(m, 0, ids, 3, {edited, {}});
        ASSERT_TRUE(got);
        EXPECT_FALSE(got.value->edited);
        EXPECT_NE(got.value->stored_because.find("stored weights are used"), std::string::npos);
        for (size_t h = 0; h < base.value->heads.size(); ++h)
            EXPECT_EQ(got.value->heads[h].qk, base.value->heads[h].qk);
    }
    EXPECT_NE(attnviz::model::token_circuits(m, 0, ids, 3, {&wider, {}}).value->stored_because.find("heads[2].W_Q"),
              std::string::npos);
    const auto run = run_expected<double>(m, expected_of("gpt2"));
    std::string why;
    const auto split = attnviz::model::position_split(m, run.token_ids, &wider, &why);
    ASSERT_TRUE(split);
    EXPECT_NE(why.find("heads[2].W_Q"), std::string::npos);
    const attnviz::model::PositionSplit& s = (*split.value)[2];
    const Matrix sum = s.content_content + s.content_position + s.position_content + s.position_position + s.bias;
    EXPECT_LE((sum - run.layers[0].trace.heads[2].scores_raw).cwiseAbs().maxCoeff(), 1e-9);
}

// Work no longer wanted stops between blocks of the vocabulary and is refused.
TEST(ModelCircuits, TokenCircuitsStopWhenAsked) {
    const ModelFolder m = open_model("gpt2");
    const auto got = attnviz::model::token_circuits(m, 0, {1, 2}, 3, {nullptr, [] { return true; }});
    ASSERT_FALSE(got);
    EXPECT_EQ(got.problems.front().message, "stopped");
}

// Block 0 edited (head 1's W_Q and W_K scaled, b_Q changed): the split of the edited weights adds up
// to the scores_raw of the edited session's forward on the run's own input.
TEST(ModelCircuits, ThePositionSplitOfEditedWeightsAddsUpToTheEditedScores) {
    const ModelFolder m = open_model("gpt2");
    const auto run = run_expected<double>(m, expected_of("gpt2"));
    attnviz::core::Session session = session_of(m, run, 0);
    session.params.heads[1].W_Q *= 1.5;
    session.params.heads[1].W_K = session.params.heads[1].W_K.reverse().eval();
    session.params.heads[1].b_Q.array() += 0.25;
    const attnviz::core::Trace trace = attnviz::core::forward<double>(session.config, session.params);
    std::string why = "unset";
    const auto split = attnviz::model::position_split(m, run.token_ids, &session.params, &why);
    ASSERT_TRUE(split) << split.problems.front().str();
    EXPECT_EQ(why, "");
    for (size_t h = 0; h < split.value->size(); ++h) {
        const attnviz::model::PositionSplit& s = (*split.value)[h];
        const Matrix sum = s.content_content + s.content_position + s.position_content + s.position_position + s.bias;
        EXPECT_LE((sum - trace.heads[h].scores_raw).cwiseAbs().maxCoeff(), 1e-9) << h;
    }
    const auto stored = attnviz::model::position_split(m, run.token_ids);
    ASSERT_TRUE(stored);
    EXPECT_GT(((*split.value)[1].content_content - (*stored.value)[1].content_content).cwiseAbs().maxCoeff(), 1e-3);
    EXPECT_EQ((*split.value)[0].content_content, (*stored.value)[0].content_content);
}

TEST(ModelCircuits, TokenCircuitsRefuseWhatTheyCannotRank) {
    const ModelFolder m = open_model("gpt2");
    EXPECT_FALSE(attnviz::model::token_circuits(m, 0, {}, 5));
    const auto outside = attnviz::model::token_circuits(m, 0, {m.config().vocab_size}, 5);
    ASSERT_FALSE(outside);
    EXPECT_NE(outside.problems.front().message.find("outside the vocabulary"), std::string::npos);
    const auto layer = attnviz::model::token_circuits(m, m.config().layers, {1}, 5);
    ASSERT_FALSE(layer);
    EXPECT_NE(layer.problems.front().message.find("no layer"), std::string::npos);
}

// The five parts add up to the run's scores_raw of layer 0 (every entry, masked ones too), and each
// agrees with NumPy's; RoBERTa's positions (after pad_token_id) too, against the run alone.
TEST(ModelCircuits, ThePositionSplitAddsUpToLayerZerosScores) {
    for (const std::string name : {"gpt2", "bert", "roberta"}) {
        SCOPED_TRACE(name);
        const json expected = expected_of(name);
        const ModelFolder m = open_model(name);
        const auto run = run_expected<double>(m, expected);
        const auto ids = expected.at("token_ids").get<std::vector<std::int32_t>>();
        const auto split = attnviz::model::position_split(m, ids);
        ASSERT_TRUE(split) << split.problems.front().str();
        ASSERT_EQ(split.value->size(), run.layers[0].trace.heads.size());
        const bool numpy = name != "roberta";
        const json e = numpy ? circuits_of(name).at("position_split") : json();
        for (size_t h = 0; h < split.value->size(); ++h) {
            const attnviz::model::PositionSplit& s = (*split.value)[h];
            const attnviz::core::Matrix sum = s.content_content + s.content_position + s.position_content +
                                              s.position_position + s.bias;
            EXPECT_LE((sum - run.layers[0].trace.heads[h].scores_raw).cwiseAbs().maxCoeff(), 1e-9) << "head " << h;
            EXPECT_GT(s.position_position.cwiseAbs().maxCoeff(), 1e-3);  // every part is there
            EXPECT_GT(s.content_position.cwiseAbs().maxCoeff(), 1e-3);
            if (!numpy) continue;
            EXPECT_LE(max_error(s.content_content, e[h].at("content_content")), 1e-9) << "head " << h;
            EXPECT_LE(max_error(s.content_position, e[h].at("content_position")), 1e-9) << "head " << h;
            EXPECT_LE(max_error(s.position_content, e[h].at("position_content")), 1e-9) << "head " << h;
            EXPECT_LE(max_error(s.position_position, e[h].at("position_position")), 1e-9) << "head " << h;
            EXPECT_LE(max_error(s.bias, e[h].at("bias")), 1e-9) << "head " << h;
        }
    }
}

TEST(ModelCircuits, ThePositionSplitNeedsLearnedPositions) {
    const ModelFolder llama = open_model("llama");
    const auto split = attnviz::model::position_split(llama,
                                                      expected_of("llama").at("token_ids").get<std::vector<int>>());
    ASSERT_FALSE(split);
    EXPECT_NE(split.problems.front().message.find("learned positions"), std::string::npos);
    EXPECT_FALSE(attnviz::model::position_split(open_model("gpt2"), {}));
}

}  // namespace
