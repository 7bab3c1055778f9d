// The tiny models of tests/reference/models run by the model runtime and compared with the forward
// pass tests/reference/models/generate.py computed in float64 from each architecture's definition:
// per layer the attention's input (the session's X), every head's weights and the block's output,
// the hidden state and the last position's logits. Double agrees to 1e-9 (measured: 9e-15), float to 2e-5 (3e-6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/io/import.hpp"
#include "core/model/layer_weights.hpp"
#include "core/model/runtime.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::model::ModelFolder;
using attnviz::model::RunState;
using attnviz::test::expected_of;
using attnviz::test::max_error;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using attnviz::test::run_expected;
using nlohmann::json;

const std::vector<std::string> models = {"gpt2",   "bert",  "roberta",         "llama",  "qwen2", "llama3", "mistral",
                                         "pythia", "gemma", "neox-sequential", "gemma2", "phi3",  "olmo2"};

// Every compared matrix of one model within `tolerance` (relative above 1, absolute below).
template <class Scalar>
void compare(const std::string& name, double tolerance) {
    SCOPED_TRACE(name);
    const ModelFolder m = open_model(name);
    const json e = expected_of(name);
    const RunState<Scalar> s = run_expected<Scalar>(m, e);
    ASSERT_EQ(s.layers.size(), e.at("layers").size());
    for (size_t L = 0; L < s.layers.size(); ++L) {
        SCOPED_TRACE("layer " + std::to_string(L));
        const json& want = e["layers"][L];
        EXPECT_LE(max_error(s.layers[L].input, want.at("attention_input")), tolerance);
        ASSERT_EQ(s.layers[L].trace.heads.size(), want.at("weights").size());
        for (size_t h = 0; h < want["weights"].size(); ++h)
            EXPECT_LE(max_error(s.layers[L].trace.heads[h].weights, want["weights"][h]), tolerance) << "head " << h;
        EXPECT_LE(max_error(s.layers[L].output, want.at("output")), tolerance);
    }
    EXPECT_LE(max_error(s.hidden, e.at("hidden")), tolerance);
    if (e.contains("logits_last"))
        EXPECT_LE(max_error(s.logits_last, e["logits_last"]), tolerance);
    else
        EXPECT_EQ(s.logits_last.size(), 0);
}

TEST(ModelReference, DoubleAgreesWithTheDefinitionsTo1e9) {
    for (const std::string& name : models) compare<double>(name, 1e-9);
}

TEST(ModelReference, FloatAgreesWithTheDefinitionsTo2e5) {
    for (const std::string& name : models) compare<float>(name, 2e-5);
}

// Each layer's session is the one `attnviz import` makes of that layer's tensors with the same X:
// the single-file models, and the llama's first shard, which holds all of layer 0.
TEST(ModelReference, EachLayerIsTheSessionImportGives) {
    using attnviz::core::Convention;
    const std::vector<std::tuple<std::string, std::string, Convention, int>> cases = {
        {"gpt2", "model.safetensors", Convention::gpt2, 2},
        {"bert", "model.safetensors", Convention::bert, 2},
        {"roberta", "model.safetensors", Convention::bert, 2},
        {"qwen2", "model.safetensors", Convention::llama, 2},
        {"llama", "model-00001-of-00002.safetensors", Convention::llama, 1}};
    for (const auto& [name, file, convention, layers] : cases) {
        SCOPED_TRACE(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, expected_of(name));
        const auto f = attnviz::core::TensorFile::open((models_dir / name / file).string());
        ASSERT_TRUE(f) << f.problems.front().str();
        for (int L = 0; L < layers; ++L) {
            const attnviz::core::Session session = attnviz::test::session_of(m, s, L);
            attnviz::core::ImportOptions o;
            o.convention = convention;
            o.layer = L;
            o.config_json = attnviz::test::slurp(models_dir / name / "config.json");
            attnviz::core::Tensor x;
            x.shape = {static_cast<std::uint64_t>(session.params.X.rows()),
                       static_cast<std::uint64_t>(session.params.X.cols())};
            x.values.assign(session.params.X.data(), session.params.X.data() + session.params.X.size());
            o.x = x;
            o.tokens = session.tokens;
            const auto imported = attnviz::core::import_layer(*f.value, o);
            ASSERT_TRUE(imported) << imported.problems.front().str();
            EXPECT_TRUE(imported.value->session == session) << "layer " << L;
        }
    }
}

// A block's W_O as read for a run (AttentionWeights::output_weights, the norm-weighted attention's)
// is its session's, in double: the weights kept as the folder holds them (widened by the products):
// F32 (GPT-2's c_proj as x·W, BERT's o_proj as x·Wᵀ), Llama's BF16; so are the query, key and
// value weights of nn.Linear layouts, in three parts.
TEST(ModelReference, ABlocksOutputWeightsAreItsSessionsWhateverTheirDtypeAndLayout) {
    for (const std::string name : {"gpt2", "bert", "llama"}) {
        SCOPED_TRACE(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, expected_of(name));
        const auto w = attnviz::model::read_attention<double>(m, 0);
        ASSERT_TRUE(w);
        EXPECT_EQ(w.value->W_O.view().floats.data != nullptr, name != "llama");
        EXPECT_EQ(w.value->W_O.view().bfloat16s.data != nullptr, name == "llama");
        EXPECT_EQ(w.value->W_qkv.view().floats.data != nullptr, name == "gpt2");  // c_attn; the others in parts
        for (const auto& part : w.value->W_qkv_parts) {                           // q_proj, k_proj, v_proj as they lie
            EXPECT_EQ(part.view().floats.data != nullptr, name == "bert");
            EXPECT_EQ(part.view().bfloat16s.data != nullptr, name == "llama");
        }
        EXPECT_EQ(w.value->output_weights(), attnviz::test::session_of(m, s, 0).params.W_O);
    }
}

TEST(ModelReference, TheSessionsCarryTheModelsOptions) {
    const RunState<double> llama = run_expected<double>(open_model("llama"), expected_of("llama"));
    const attnviz::core::Config& c = llama.layers[1].config;
    EXPECT_EQ(c.mask, attnviz::core::Mask::causal);
    EXPECT_TRUE(c.rope.on);
    EXPECT_EQ(c.rope.style, attnviz::core::Rope::Style::half);
    EXPECT_EQ(c.rope.base, 10000.0);
    EXPECT_EQ(c.kv_heads, 2);
    EXPECT_FALSE(c.biases);
    EXPECT_EQ(llama.tokens.front(), "#1");  // no labels given: the ids
    const ModelFolder qwen2_folder = open_model("qwen2");
    const RunState<double> qwen2 = run_expected<double>(qwen2_folder, expected_of("qwen2"));
    const attnviz::core::Session qwen2_layer0 = attnviz::test::session_of(qwen2_folder, qwen2, 0);
    EXPECT_TRUE(qwen2_layer0.config.biases);
    EXPECT_EQ(qwen2_layer0.config.kv_heads, 1);
    EXPECT_EQ(qwen2_layer0.config.rope.base, 1e6);
    EXPECT_TRUE(qwen2_layer0.config == qwen2.layers[0].config);  // the config the run used
    EXPECT_TRUE(qwen2_layer0.params.b_O.isZero());               // Qwen2 has no output bias
    const RunState<double> bert = run_expected<double>(open_model("bert"), expected_of("bert"));
    EXPECT_EQ(bert.layers[0].config.mask, attnviz::core::Mask::none);
    EXPECT_FALSE(bert.layers[0].config.rope.on);
}

}  // namespace

// The families' mechanisms as the run applies them, and each block's session recomputing its
// trace: the editor gets the block exactly as the model runs it.
TEST(ModelReference, TheNewFamiliesBlocksAreTheirSessions) {
    for (const std::string name :
         {"llama3", "mistral", "pythia", "neox-sequential", "gemma", "gemma2", "phi3", "olmo2"}) {
        SCOPED_TRACE(name);
        const ModelFolder m = open_model(name);
        const RunState<double> s = run_expected<double>(m, expected_of(name));
        for (int L = 0; L < static_cast<int>(s.layers.size()); ++L) {
            const attnviz::core::Session session = attnviz::test::session_of(m, s, L);
            EXPECT_TRUE(session.config == s.layers[L].config) << "layer " << L;
            const attnviz::core::Trace t = attnviz::core::forward<double>(session.config, session.params);
            for (int h = 0; h < session.config.heads; ++h)
                EXPECT_LE((t.heads[h].weights - s.layers[L].trace.heads[h].weights).cwiseAbs().maxCoeff(), 1e-12)
                    << "layer " << L << " head " << h;
            EXPECT_LE((t.output - s.layers[L].trace.output).cwiseAbs().maxCoeff(), 1e-12) << "layer " << L;
        }
    }
}

TEST(ModelReference, TheNewFamiliesMechanismsAreWhereTheirConfigsSay) {
    using attnviz::core::RopeScaling;
    const auto run = [](const std::string& name) { return run_expected<double>(open_model(name), expected_of(name)); };
    // Gemma 2: a window of 4 on layers 0 and 2, shorter than the 10 tokens (the keys 4 or more
    // before a query get no weight); none on layer 1; soft-capping at 0.5 that bites (scores beyond
    // the cap, pressed inside it); the scale √12.
    const RunState<double> g2 = run("gemma2");
    ASSERT_EQ(g2.token_ids.size(), 10u);
    for (int L = 0; L < 3; ++L) {
        const auto& c = g2.layers[L].config;
        EXPECT_EQ(c.window, L % 2 == 0 ? 4 : 0) << L;
        EXPECT_EQ(c.softcap, 0.5);
        EXPECT_EQ(c.scale.value(c.d_k), std::sqrt(12.0));
        EXPECT_EQ(c.d_k, 8);  // head_dim, apart from d_model / heads = 4
        const auto& head = g2.layers[L].trace.heads[0];
        EXPECT_EQ(head.weights(9, 5) == 0, L % 2 == 0) << L;
        EXPECT_GT(head.weights(9, 6), 0);
        double beyond = 0;
        for (const auto& h : g2.layers[L].trace.heads)
            beyond = std::max(beyond, h.scores.array().isFinite().select(h.scores.array().abs(), 0.0).maxCoeff());
        EXPECT_GT(beyond, 0.5) << "layer " << L << ": some score beyond the cap";
        EXPECT_LT(head.scores_capped.array().isFinite().select(head.scores_capped.array().abs(), 0.0).maxCoeff(), 0.5);
    }
    EXPECT_LT(g2.logits_last.cwiseAbs().maxCoeff(), 2.0);  // the final soft-cap
    // Mistral: the window on every layer; Llama 3: its RoPE scaling; Pythia and Phi-3: partial rotary.
    EXPECT_EQ(run("mistral").layers[1].config.window, 4);
    const RunState<double> llama3 = run("llama3");
    const RopeScaling& l3 = llama3.layers[0].config.rope.scaling;
    EXPECT_EQ(l3.kind, RopeScaling::Kind::llama3);
    EXPECT_EQ(l3.original_max_positions, 4);
    EXPECT_EQ(run("pythia").layers[0].config.rope.dims, 2);
    EXPECT_EQ(run("neox-sequential").layers[0].config.rope.dims, 2);
    const RunState<double> phi3 = run("phi3");
    EXPECT_EQ(phi3.layers[0].config.rope.dims, 2);
    EXPECT_EQ(phi3.layers[0].config.window, 6);
    EXPECT_EQ(phi3.layers[0].config.kv_heads, 2);
    // OLMo 2: q/k norms on every layer, with the config's eps; the attention's input is the stream
    // itself (no input norm): block 1's is block 0's output.
    const RunState<double> olmo2 = run("olmo2");
    for (const auto& layer : olmo2.layers) {
        EXPECT_TRUE(layer.config.qk_norm.on);
        EXPECT_EQ(layer.config.qk_norm.eps, 1e-6);
        ASSERT_EQ(layer.trace.q_rms.rows(), static_cast<Eigen::Index>(olmo2.token_ids.size()));
        EXPECT_GT(layer.trace.q_rms.maxCoeff(), 1.5);  // far from 1: the norm changes Q
    }
    EXPECT_EQ((olmo2.layers[1].input - olmo2.layers[0].output).cwiseAbs().maxCoeff(), 0.0);
}
