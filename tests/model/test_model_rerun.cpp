// Recomputing a model from an edited layer (rerun_from): the result is what a fresh run of a folder
// whose weights hold the same edit gives, the layers before it are not touched, and the edits of
// later layers are kept.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "core/model/runtime.hpp"
#include "model_test_support.hpp"

namespace {

using attnviz::model::ModelFolder;
using attnviz::model::RunState;
using attnviz::test::models_dir;
using attnviz::test::ScratchFolder;
using attnviz::test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

ModelFolder open(const fs::path& folder) {
    attnviz::core::Result<ModelFolder> m = ModelFolder::open(folder.string());
    if (!m) ADD_FAILURE() << m.problems.front().str();
    return std::move(*m.value);
}

template <class Scalar>
RunState<Scalar> run(const ModelFolder& m, const std::vector<std::int32_t>& ids) {
    attnviz::core::Result<RunState<Scalar>> s = attnviz::model::run_model<Scalar>(m, ids, {});
    if (!s) ADD_FAILURE() << s.problems.front().str();
    return std::move(*s.value);
}

std::vector<std::int32_t> ids_of(const std::string& model) {
    return attnviz::test::expected_of(model).at("token_ids").get<std::vector<std::int32_t>>();
}

// Sets element `index` (C order) of an F32 tensor of a safetensors file.
void set_f32(const fs::path& file, const std::string& tensor, std::uint64_t index, float value) {
    std::string bytes = slurp(file);
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    const json header = json::parse(bytes.substr(8, n));
    ASSERT_EQ(header.at(tensor).at("dtype"), "F32");
    const std::uint64_t at = 8 + n + header[tensor]["data_offsets"][0].get<std::uint64_t>() + 4 * index;
    std::memcpy(bytes.data() + at, &value, 4);
    std::ofstream(file, std::ios::binary) << bytes;
}

template <class Scalar>
void expect_same_run(const RunState<Scalar>& a, const RunState<Scalar>& b) {
    ASSERT_EQ(a.layers.size(), b.layers.size());
    for (size_t L = 0; L < a.layers.size(); ++L) {
        EXPECT_TRUE(a.layers[L].session == b.layers[L].session) << "layer " << L;
        for (size_t h = 0; h < a.layers[L].trace.heads.size(); ++h)
            EXPECT_TRUE(attnviz::core::same(a.layers[L].trace.heads[h].weights, b.layers[L].trace.heads[h].weights))
                << "layer " << L << " head " << h;
        EXPECT_TRUE(attnviz::core::same(a.layers[L].output, b.layers[L].output)) << "layer " << L;
    }
    EXPECT_TRUE(attnviz::core::same(a.hidden, b.hidden));
    EXPECT_TRUE(a.logits_last.size() == b.logits_last.size() && a.logits_last == b.logits_last);
}

// GPT-2, layer 1's W_Q of head 1 at row 3, column 2 set to 0.5: in the session and rerun from layer
// 1, or in the file (c_attn.weight is 16 × 48, Q's columns first: head 1's column 2 is column 6)
// and run afresh. 0.5 is a float exactly, so both runs compute from the same numbers.
TEST(ModelRerun, AnEditFlowsOnAsAFreshRunOfTheEditedWeights) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("gpt2");
    set_f32(dir / "model.safetensors", "transformer.h.1.attn.c_attn.weight", 3 * 48 + 6, 0.5f);
    const ModelFolder original = open(models_dir / "gpt2"), edited = open(dir);
    const std::vector<std::int32_t> ids = ids_of("gpt2");

    RunState<double> state = run<double>(original, ids);
    const RunState<double> before = state;
    ASSERT_NE(state.layers[1].session.params.heads[1].W_Q(3, 2), 0.5);
    state.layers[1].session.params.heads[1].W_Q(3, 2) = 0.5;
    ASSERT_TRUE(attnviz::model::rerun_from(original, state, 1).empty());

    expect_same_run(state, run<double>(edited, ids));
    EXPECT_TRUE(attnviz::core::same(state.layers[0].output, before.layers[0].output));  // not recomputed
    EXPECT_TRUE(state.layers[0].session == before.layers[0].session);
    EXPECT_FALSE(state.logits_last == before.logits_last);  // the edit reached the prediction
}

TEST(ModelRerun, RerunningWithoutAnEditGivesTheSameRun) {
    const ModelFolder m = open(models_dir / "qwen2");
    RunState<float> state = run<float>(m, ids_of("qwen2"));
    const RunState<float> before = state;
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    expect_same_run(state, before);
}

// Llama: layer 2's W_O zeroed, rerun; then layer 0's X edited and rerun from 0: layer 2 keeps its
// zero W_O (its attention adds nothing), and layer 0 keeps the edited X.
TEST(ModelRerun, EditsOfLaterLayersAreKept) {
    const ModelFolder m = open(models_dir / "llama");
    RunState<double> state = run<double>(m, ids_of("llama"));
    state.layers[2].session.params.W_O.setZero();
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 2).empty());
    EXPECT_TRUE(state.layers[2].trace.output.isZero(0));
    const attnviz::core::Matrix layer2_X = state.layers[2].session.params.X;

    state.layers[0].session.params.X(4, 7) += 1;
    const double edited = state.layers[0].session.params.X(4, 7);
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    EXPECT_EQ(state.layers[0].session.params.X(4, 7), edited);
    EXPECT_TRUE(state.layers[2].session.params.W_O.isZero(0));
    EXPECT_TRUE(state.layers[2].trace.output.isZero(0));
    // Layer 2's input was recomputed from the edit: its rows from token 4 on changed, those before
    // it (which a causal model's token 4 cannot reach) did not.
    EXPECT_TRUE(state.layers[2].session.params.X.topRows(4) == layer2_X.topRows(4));
    EXPECT_FALSE(state.layers[2].session.params.X.row(4) == layer2_X.row(4));
}

TEST(ModelRerun, ALayerOutOfRangeOrAResizedSessionIsRefused) {
    const ModelFolder m = open(models_dir / "bert");
    RunState<double> state = run<double>(m, ids_of("bert"));
    EXPECT_FALSE(attnviz::model::rerun_from(m, state, 2).empty());
    EXPECT_FALSE(attnviz::model::rerun_from(m, state, -1).empty());
    RunState<double> resized = state;
    resized.layers[1].session.config.n = 3;  // the model runs 11 tokens
    const attnviz::core::Problems p = attnviz::model::rerun_from(m, resized, 1);
    ASSERT_FALSE(p.empty());
    EXPECT_NE(p.front().message.find("block 1: the edited attention must keep n, d_model and an output"),
              std::string::npos)
        << p.front().str();
    state.layers[0].session.params.heads[0].W_K(0, 0) = NAN;
    const attnviz::core::Problems nan = attnviz::model::rerun_from(m, state, 0);
    ASSERT_FALSE(nan.empty());
    EXPECT_EQ(nan.front().path, "heads[0].W_K[0][0]");
}

// A run of the first blocks only (what `attnviz import --layer` needs) is the whole run's first
// blocks exactly, ends at the last one's output and has no logits; 0 blocks or more than the
// model's are refused.
TEST(ModelRun, RunningTheFirstBlocksGivesTheWholeRunsFirstBlocks) {
    const ModelFolder m = open(models_dir / "gpt2");
    const std::vector<std::int32_t> ids = ids_of("gpt2");
    const RunState<double> whole = run<double>(m, ids);
    ASSERT_GE(whole.layers.size(), 2u);
    ASSERT_GT(whole.logits_last.size(), 0);
    attnviz::core::Result<RunState<double>> first = attnviz::model::run_model<double>(m, ids, {}, 1 << 30, 1);
    ASSERT_TRUE(first) << first.problems.front().str();
    ASSERT_EQ(first.value->layers.size(), 1u);
    EXPECT_TRUE(first.value->layers[0].session == whole.layers[0].session);
    EXPECT_TRUE(attnviz::core::same(first.value->layers[0].output, whole.layers[0].output));
    EXPECT_TRUE(attnviz::core::same(first.value->hidden, whole.layers[0].output));
    EXPECT_EQ(first.value->logits_last.size(), 0);
    EXPECT_FALSE(attnviz::model::rerun_from(m, *first.value, 0).empty());  // a part of the model cannot be rerun
    const int layers = static_cast<int>(whole.layers.size());
    for (const int blocks : {0, layers + 1}) {
        attnviz::core::Result<RunState<double>> refused = attnviz::model::run_model<double>(m, ids, {}, 1 << 30,
                                                                                            blocks);
        ASSERT_FALSE(refused) << blocks;
        EXPECT_NE(refused.problems.front().message.find("cannot run " + std::to_string(blocks) + " blocks"),
                  std::string::npos)
            << refused.problems.front().str();
    }
}

// The same folder with `tensor` (F32) grown to `rows` rows of zeros after its own: rewritten with
// that tensor last and the file extended without writing (a sparse file), so a vocabulary of
// hundreds of thousands of rows costs no disk.
void grow_rows_f32(const fs::path& file, const std::string& tensor, std::uint64_t rows) {
    const std::string bytes = slurp(file);
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    json header = json::parse(bytes.substr(8, n));
    const std::string data = bytes.substr(8 + n);
    std::string packed;  // every other tensor's bytes, in the order of their names
    for (auto& [name, t] : header.items()) {
        if (name == tensor || name == "__metadata__") continue;
        const auto from = t["data_offsets"][0].get<std::uint64_t>(), to = t["data_offsets"][1].get<std::uint64_t>();
        t["data_offsets"] = {packed.size(), packed.size() + (to - from)};
        packed += data.substr(from, to - from);
    }
    json& grown = header[tensor];
    ASSERT_EQ(grown["dtype"], "F32");
    const auto from = grown["data_offsets"][0].get<std::uint64_t>(), to = grown["data_offsets"][1].get<std::uint64_t>();
    const std::uint64_t cols = grown["shape"][1].get<std::uint64_t>();
    grown["shape"][0] = rows;
    grown["data_offsets"] = {packed.size(), packed.size() + rows * cols * 4};
    packed += data.substr(from, to - from);  // its own rows first; the rest are zeros
    const std::string text = header.dump();
    std::string out(8, '\0');
    const std::uint64_t m = text.size();
    std::memcpy(out.data(), &m, 8);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << out << text << packed;
    fs::resize_file(file, 8 + m + header[tensor]["data_offsets"][1].get<std::uint64_t>());
}

// A vocabulary larger than one block of the LM head (GPT-2 ties it to the token embeddings): the
// tokens' rows and the logits read a block at a time give the run of the small vocabulary exactly,
// and the logits of the added (zero) rows are 0.
TEST(ModelRows, AVocabularyOfManyBlocksRunsAsTheSmallOne) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("gpt2");
    const std::uint64_t rows = 600'000;  // 37 MB of F32 at d_model 16: three blocks of the LM head
    grow_rows_f32(dir / "model.safetensors", "transformer.wte.weight", rows);
    json config = json::parse(slurp(dir / "config.json"));
    const int small = config["vocab_size"].get<int>();
    config["vocab_size"] = rows;
    s.write(dir / "config.json", config.dump());
    const std::vector<std::int32_t> ids = ids_of("gpt2");
    const RunState<double> want = run<double>(open(models_dir / "gpt2"), ids);
    RunState<double> got = run<double>(open(dir), ids);
    ASSERT_EQ(got.logits_last.size(), static_cast<Eigen::Index>(rows));
    ASSERT_EQ(want.logits_last.size(), small);
    const Eigen::RowVectorXd added = got.logits_last.tail(static_cast<Eigen::Index>(rows) - small);
    got.logits_last = got.logits_last.head(small).eval();
    expect_same_run(got, want);  // the logits of the small vocabulary's ids included
    EXPECT_EQ(added.cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace

// Weights within the memory budget are read into memory when the folder is opened, and each run
// converts them from there: a later change to the file does not reach the run. Over the budget
// they are read from the disk by each run (streamed), which sees the change. Both give the same
// run of the same weights, in float and double, for F32 (GPT-2) and sharded BF16 (Llama) weights.
TEST(ModelRows, WeightsWithinTheBudgetAreHeldInMemoryAndStreamedOverIt) {
    for (const auto& [name, file, tensor] :
         {std::tuple{"gpt2", "model.safetensors", "transformer.h.0.attn.c_attn.weight"},
          std::tuple{"llama", "model-00001-of-00002.safetensors", "model.layers.0.self_attn.q_proj.weight"}}) {
        SCOPED_TRACE(name);
        ScratchFolder s;
        const fs::path dir = s.copy_of(name);
        const attnviz::core::Result<ModelFolder> resident = ModelFolder::open(dir.string());
        const attnviz::core::Result<ModelFolder> streamed = ModelFolder::open(dir.string(), nullptr, 0);
        ASSERT_TRUE(resident && streamed);
        EXPECT_TRUE(resident.value->weights().in_memory());
        EXPECT_FALSE(streamed.value->weights().in_memory());
        const std::vector<std::int32_t> ids = ids_of(name);
        expect_same_run(run<double>(*resident.value, ids), run<double>(*streamed.value, ids));
        expect_same_run(run<float>(*resident.value, ids), run<float>(*streamed.value, ids));
        const RunState<double> before = run<double>(*resident.value, ids);
        if (std::string(name) == "gpt2") {
            set_f32(dir / file, tensor, 0, 0.5f);
            expect_same_run(run<double>(*resident.value, ids), before);
            EXPECT_FALSE(run<double>(*streamed.value, ids).logits_last == before.logits_last);
        }
    }
}
