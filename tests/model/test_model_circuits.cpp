// Token-space circuits and layer 0's position split (core/model/circuits.hpp) on the tiny models of
// tests/reference/models against tests/reference/models/circuits.py's NumPy computation from the
// stored weights (GPT-2, BERT, Llama with K/V groups and RMSNorm); the split's five parts against
// the run's own scores_raw.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "core/model/circuits.hpp"
#include "core/model/weight_files.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::model::ModelFolder;
using attnviz::test::expected_of;
using attnviz::test::max_error;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using attnviz::test::run_expected;
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
