// Recomputing a model from an edited layer (rerun_from): the result is what a fresh run of a folder
// whose weights hold the same edit gives, the layers before it are not touched, and the edits of
// later layers are kept.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <tuple>

#include "core/model/runtime.hpp"
#include "model_runs.hpp"
#include "model_test_support.hpp"

namespace {

using attnviz::core::Session;
using attnviz::model::ModelFolder;
using attnviz::model::RunState;
using attnviz::test::models_dir;
using attnviz::test::ScratchFolder;
using attnviz::test::session_of;
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

// Block `layer`'s session with its W_O zeroed (its attention then adds nothing), set as its edit.
template <class Scalar>
void zero_output_projection(const ModelFolder& m, RunState<Scalar>& state, int layer) {
    Session session = session_of(m, state, layer);
    session.params.W_O.setZero();
    state.layers[static_cast<size_t>(layer)].edited = std::make_shared<const Session>(std::move(session));
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

// The runs `a` of folder `ma` and `b` of `mb` are the same number for number: each layer's session,
// attention input, weights and output, the hidden state and the logits.
template <class Scalar>
void expect_same_run(const ModelFolder& ma, const RunState<Scalar>& a, const ModelFolder& mb,
                     const RunState<Scalar>& b) {
    ASSERT_EQ(a.layers.size(), b.layers.size());
    for (size_t L = 0; L < a.layers.size(); ++L) {
        const int l = static_cast<int>(L);
        EXPECT_TRUE(session_of(ma, a, l) == session_of(mb, b, l)) << "layer " << L;
        EXPECT_TRUE(attnviz::core::same(a.layers[L].input, b.layers[L].input)) << "layer " << L;
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
    Session layer1 = session_of(original, state, 1);
    ASSERT_NE(layer1.params.heads[1].W_Q(3, 2), 0.5);
    layer1.params.heads[1].W_Q(3, 2) = 0.5;
    state.layers[1].edited = std::make_shared<const Session>(std::move(layer1));
    ASSERT_TRUE(attnviz::model::rerun_from(original, state, 1).empty());

    expect_same_run(original, state, edited, run<double>(edited, ids));
    EXPECT_TRUE(attnviz::core::same(state.layers[0].output, before.layers[0].output));  // not recomputed
    EXPECT_TRUE(session_of(original, state, 0) == session_of(original, before, 0));
    EXPECT_FALSE(state.logits_last == before.logits_last);  // the edit reached the prediction
}

// Every layer run from its session as attention_session makes it (as the app runs a block it
// opened) gives the run of the folder's weights number for number, in float and double: GPT-2's
// in place (F32), BERT's, Qwen2's biases and Llama's K/V groups from BF16 shards, converted.
template <class Scalar>
void expect_sessions_run_as_the_folder(const std::string& name) {
    SCOPED_TRACE(name);
    const ModelFolder m = open(models_dir / name);
    const RunState<Scalar> read = run<Scalar>(m, ids_of(name));
    RunState<Scalar> state = read;
    for (int L = 0; L < static_cast<int>(state.layers.size()); ++L)
        state.layers[static_cast<size_t>(L)].edited = std::make_shared<const Session>(session_of(m, read, L));
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    expect_same_run(m, state, m, read);
}

TEST(ModelRerun, EachLayersSessionRunsAsTheFoldersWeights) {
    for (const std::string name : {"gpt2", "bert", "llama", "qwen2"}) {
        expect_sessions_run_as_the_folder<double>(name);
        expect_sessions_run_as_the_folder<float>(name);
    }
}

TEST(ModelRerun, RerunningWithoutAnEditGivesTheSameRun) {
    const ModelFolder m = open(models_dir / "qwen2");
    RunState<float> state = run<float>(m, ids_of("qwen2"));
    const RunState<float> before = state;
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    expect_same_run(m, state, m, before);
}

// Llama: layer 2's W_O zeroed, rerun; then layer 0's X edited and rerun from 0: layer 2 keeps its
// zero W_O (its attention adds nothing), and layer 0 keeps the edited X.
TEST(ModelRerun, EditsOfLaterLayersAreKept) {
    const ModelFolder m = open(models_dir / "llama");
    RunState<double> state = run<double>(m, ids_of("llama"));
    zero_output_projection(m, state, 2);
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 2).empty());
    EXPECT_TRUE(state.layers[2].trace.output.isZero(0));
    const attnviz::core::Matrix layer2_X = state.layers[2].edited->params.X;

    Session layer0 = session_of(m, state, 0);
    layer0.params.X(4, 7) += 1;
    const double edited = layer0.params.X(4, 7);
    state.layers[0].edited = std::make_shared<const Session>(std::move(layer0));
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    EXPECT_EQ(state.layers[0].edited->params.X(4, 7), edited);
    EXPECT_EQ(state.layers[0].input(4, 7), edited);
    EXPECT_TRUE(state.layers[2].edited->params.W_O.isZero(0));
    EXPECT_TRUE(state.layers[2].trace.output.isZero(0));
    // Layer 2's input was recomputed from the edit: its rows from token 4 on changed, those before
    // it (which a causal model's token 4 cannot reach) did not.
    const attnviz::core::Matrix& now_X = state.layers[2].edited->params.X;
    EXPECT_TRUE(now_X.topRows(4) == layer2_X.topRows(4));
    EXPECT_FALSE(now_X.row(4) == layer2_X.row(4));
    EXPECT_TRUE(now_X == state.layers[2].input);
}

// What copy_for_rerun keeps is all rerun_from reads: Llama with block 2 edited (its W_O zeroed), the
// copy for a rerun from each block reruns as the whole state does, number for number (a block
// before 2 from its kept input, block 2 and after with its edit); and it holds nothing of what the
// rerun writes.
TEST(ModelRerun, ACopyForARerunRerunsAsTheWholeState) {
    const ModelFolder m = open(models_dir / "llama");
    RunState<float> state = run<float>(m, ids_of("llama"));
    zero_output_projection(m, state, 2);
    for (int from = 0; from < static_cast<int>(state.layers.size()); ++from) {
        SCOPED_TRACE("from block " + std::to_string(from));
        RunState<float> whole = state;
        RunState<float> copy = attnviz::model::copy_for_rerun(state, from);
        const auto& first = copy.layers[static_cast<size_t>(from)];
        EXPECT_TRUE(first.trace.heads.empty());
        EXPECT_EQ(first.output.size(), 0);
        EXPECT_EQ(copy.hidden.size(), 0);
        ASSERT_TRUE(attnviz::model::rerun_from(m, whole, from).empty());
        ASSERT_TRUE(attnviz::model::rerun_from(m, copy, from).empty());
        expect_same_run(m, copy, m, whole);
    }
}

// A rerun asked to stop stops before the next block (an edit superseded by a newer one): the
// blocks it ran are computed, the later ones and the logits are not, and it says where it stopped;
// a stop that never says so changes nothing.
TEST(ModelRerun, ARerunStopsBeforeTheNextBlockWhenAsked) {
    const ModelFolder m = open(models_dir / "llama");
    const RunState<float> state = run<float>(m, ids_of("llama"));
    ASSERT_EQ(state.layers.size(), 3u);
    int asked = 0;
    RunState<float> stopped = attnviz::model::copy_for_rerun(state, 0);
    const attnviz::core::Problems p =
        attnviz::model::rerun_from(m, stopped, 0, [&asked] { return ++asked > 2; });  // stop before block 2
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(p.front().message, "stopped before block 2");
    EXPECT_EQ(asked, 3);
    EXPECT_EQ(stopped.layers[1].output, state.layers[1].output);
    EXPECT_EQ(stopped.layers[2].output.size(), 0);
    EXPECT_EQ(stopped.logits_last.size(), 0);
    asked = 0;
    RunState<float> whole = attnviz::model::copy_for_rerun(state, 1);
    ASSERT_TRUE(attnviz::model::rerun_from(m, whole, 1, [&asked] { return ++asked > 10; }).empty());
    EXPECT_EQ(asked, 3);  // before blocks 1 and 2 and before the logits
    expect_same_run(m, whole, m, state);
}

TEST(ModelRerun, ALayerOutOfRangeOrAResizedSessionIsRefused) {
    const ModelFolder m = open(models_dir / "bert");
    RunState<double> state = run<double>(m, ids_of("bert"));
    EXPECT_FALSE(attnviz::model::rerun_from(m, state, 2).empty());
    EXPECT_FALSE(attnviz::model::rerun_from(m, state, -1).empty());
    RunState<double> resized = state;
    Session layer1 = session_of(m, state, 1);
    layer1.config.n = 3;  // the model runs 11 tokens
    resized.layers[1].edited = std::make_shared<const Session>(std::move(layer1));
    const attnviz::core::Problems p = attnviz::model::rerun_from(m, resized, 1);
    ASSERT_FALSE(p.empty());
    EXPECT_NE(p.front().message.find("block 1: the edited attention must keep n, d_model and an output"),
              std::string::npos)
        << p.front().str();
    Session layer0 = session_of(m, state, 0);
    layer0.params.heads[0].W_K(0, 0) = NAN;
    state.layers[0].edited = std::make_shared<const Session>(std::move(layer0));
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
    EXPECT_TRUE(session_of(m, *first.value, 0) == session_of(m, whole, 0));
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

// A run tells after each block how far it is, that block complete as the whole run has it (what the
// app shows while a model opens), and stops where the caller says so.
TEST(ModelRun, EachBlockIsToldAsItIsDoneAndTheRunStopsWhenAsked) {
    const ModelFolder m = open(models_dir / "llama");
    const std::vector<std::int32_t> ids = ids_of("llama");
    const RunState<double> whole = run<double>(m, ids);
    const int layers = static_cast<int>(whole.layers.size());
    ASSERT_GE(layers, 2);
    std::vector<int> told;
    const auto after_block = [&](const RunState<double>& state, int done) {
        told.push_back(done);
        const auto& block = state.layers[static_cast<size_t>(done - 1)];
        EXPECT_TRUE(attnviz::core::same(block.output, whole.layers[static_cast<size_t>(done - 1)].output)) << done;
        EXPECT_TRUE(attnviz::core::same(block.trace.heads[0].weights,
                                        whole.layers[static_cast<size_t>(done - 1)].trace.heads[0].weights))
            << done;
        return true;
    };
    attnviz::core::Result<RunState<double>> all = attnviz::model::run_model<double>(m, ids, {}, 1 << 30, -1,
                                                                                    after_block);
    ASSERT_TRUE(all) << all.problems.front().str();
    std::vector<int> every(static_cast<size_t>(layers));
    std::iota(every.begin(), every.end(), 1);
    EXPECT_EQ(told, every);
    EXPECT_EQ(all.value->logits_last, whole.logits_last);
    // Stopped after the first block: no run, and the problem says where.
    told.clear();
    const auto stop_at_one = [&](const RunState<double>&, int done) {
        told.push_back(done);
        return done < 1;
    };
    attnviz::core::Result<RunState<double>> stopped = attnviz::model::run_model<double>(m, ids, {}, 1 << 30, -1,
                                                                                        stop_at_one);
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.problems.front().message, "stopped after block 0");
    EXPECT_EQ(told, std::vector<int>{1});
}

// A run into the state of an earlier one (of fewer tokens, with an edited block) is the fresh run
// of its tokens: the buffers are reused, the edit dropped; and again into the same state.
TEST(ModelRun, ARunIntoAnEarlierStateIsAFreshRun) {
    const ModelFolder m = open(models_dir / "gpt2");
    const std::vector<std::int32_t> ids = ids_of("gpt2");
    RunState<float> state = run<float>(m, {ids.begin(), ids.begin() + 3});
    Session layer0 = session_of(m, state, 0);
    layer0.params.W_O.setZero();
    state.layers[0].edited = std::make_shared<const Session>(std::move(layer0));
    ASSERT_TRUE(attnviz::model::rerun_from(m, state, 0).empty());
    const RunState<float> fresh = run<float>(m, ids);
    for (int k = 0; k < 2; ++k) {
        ASSERT_TRUE(attnviz::model::run_model_into(state, m, ids, {}).empty());
        EXPECT_EQ(state.layers[0].edited, nullptr);
        expect_same_run(m, state, m, fresh);
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
    const ModelFolder small_folder = open(models_dir / "gpt2"), grown = open(dir);
    const RunState<double> want = run<double>(small_folder, ids);
    RunState<double> got = run<double>(grown, ids);
    ASSERT_EQ(got.logits_last.size(), static_cast<Eigen::Index>(rows));
    ASSERT_EQ(want.logits_last.size(), small);
    const Eigen::RowVectorXd added = got.logits_last.tail(static_cast<Eigen::Index>(rows) - small);
    got.logits_last = got.logits_last.head(small).eval();
    expect_same_run(grown, got, small_folder, want);  // the logits of the small vocabulary's ids included
    EXPECT_EQ(added.cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace

// Weights within the memory budget are read into memory when the folder is opened, and each run
// uses them from there (in place, or converted): a later change to the file does not reach the run. Over the budget
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
        const ModelFolder &in_memory = *resident.value, &from_disk = *streamed.value;
        // GPT-2's F32 weights held in memory are used in place by a float run (and cast by a double
        // one); Llama's BF16 are converted; streamed ones are read from the disk.
        EXPECT_EQ(in_memory.weights().in_place<float>(tensor) != nullptr, std::string(name) == "gpt2");
        EXPECT_EQ(in_memory.weights().in_place<double>(tensor), nullptr);
        EXPECT_EQ(from_disk.weights().in_place<float>(tensor), nullptr);
        expect_same_run(in_memory, run<double>(in_memory, ids), from_disk, run<double>(from_disk, ids));
        expect_same_run(in_memory, run<float>(in_memory, ids), from_disk, run<float>(from_disk, ids));
        const RunState<double> before = run<double>(in_memory, ids);
        if (std::string(name) == "gpt2") {
            set_f32(dir / file, tensor, 0, 0.5f);
            expect_same_run(in_memory, run<double>(in_memory, ids), in_memory, before);
            EXPECT_FALSE(run<double>(*streamed.value, ids).logits_last == before.logits_last);
        }
    }
}
