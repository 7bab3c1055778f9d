// ModelFolder folders: config.json read for each model type, the weights found in one file or in shards,
// and every malformed or disagreeing config, index, shard and tensor refused with a message naming
// the file and the field or tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/model/model_folder.hpp"
#include "core/model/runtime.hpp"
#include "model_test_support.hpp"

namespace {

using attnviz::core::Result;
using attnviz::model::Architecture;
using attnviz::model::ModelConfig;
using attnviz::model::ModelFolder;
using attnviz::model::read_model_config;
using attnviz::model::read_weight_index;
using attnviz::test::models_dir;
using attnviz::test::ScratchFolder;
using attnviz::test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

::testing::AssertionResult has(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::string all_text(const attnviz::core::Problems& problems) {
    std::string s;
    for (const attnviz::core::Problem& p : problems) s += p.str() + "\n";
    return s;
}

// The problems of reading a config, one a line ("(read)" when it was accepted).
std::string config_refusal(const json& config) {
    const Result<ModelConfig> c = read_model_config(config.dump(), "config.json");
    return c ? "(read)" : all_text(c.problems);
}

json llama_config() {
    return {{"model_type", "llama"},    {"vocab_size", 100},       {"hidden_size", 32},       {"num_hidden_layers", 2},
            {"num_attention_heads", 4}, {"intermediate_size", 64}, {"num_key_value_heads", 2}};
}

// ---------------------------------------------------------------------------------------------
// config.json

TEST(ModelConfig, EachModelTypeMapsItsFieldNames) {
    const Result<ModelConfig> gpt2 = read_model_config(
        R"({"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12,
            "n_positions": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05})",
        "config.json");
    ASSERT_TRUE(gpt2) << all_text(gpt2.problems);
    const ModelConfig& g = *gpt2.value;
    EXPECT_EQ(g.d_model, 768);
    EXPECT_EQ(g.layers, 12);
    EXPECT_EQ(g.heads, 12);
    EXPECT_EQ(g.kv_heads, 12);
    EXPECT_EQ(g.d_k, 64);
    EXPECT_EQ(g.d_ff, 3072);  // n_inner null: 4·n_embd
    EXPECT_EQ(g.max_positions, 1024);
    EXPECT_EQ(g.activation, attnviz::model::Activation::gelu_new);
    EXPECT_TRUE(g.tie_word_embeddings);
    EXPECT_TRUE(g.causal() && g.pre_norm() && g.learned_positions() && !g.rms_norm() && !g.gated_mlp());

    const Result<ModelConfig> bert = read_model_config(
        R"({"model_type": "bert", "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
            "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12})",
        "config.json");
    ASSERT_TRUE(bert) << all_text(bert.problems);
    EXPECT_EQ(bert.value->norm_eps, 1e-12);
    EXPECT_EQ(bert.value->type_vocab_size, 2);
    EXPECT_TRUE(bert.value->encoder() && !bert.value->causal() && !bert.value->pre_norm() && !bert.value->final_norm());

    json llama = llama_config();
    llama.erase("num_key_value_heads");
    const Result<ModelConfig> l = read_model_config(llama.dump(), "config.json");
    ASSERT_TRUE(l) << all_text(l.problems);
    EXPECT_EQ(l.value->kv_heads, 4);  // absent: one per head
    EXPECT_EQ(l.value->d_k, 8);
    EXPECT_EQ(l.value->norm_eps, 1e-6);
    EXPECT_EQ(l.value->rope_theta, 10000);
    EXPECT_FALSE(l.value->tie_word_embeddings);
    EXPECT_FALSE(l.value->qkv_bias);
    EXPECT_TRUE(l.value->rms_norm() && l.value->gated_mlp() && !l.value->learned_positions());

    json qwen2 = llama_config();
    qwen2["model_type"] = "qwen2";
    qwen2["head_dim"] = 16;       // given: not d_model / heads
    qwen2["sliding_window"] = 8;  // not used without use_sliding_window
    const Result<ModelConfig> q = read_model_config(qwen2.dump(), "config.json");
    ASSERT_TRUE(q) << all_text(q.problems);
    EXPECT_TRUE(q.value->qkv_bias);
    EXPECT_FALSE(q.value->o_bias);
    EXPECT_EQ(q.value->d_k, 16);
    EXPECT_EQ(q.value->sliding_window, 0);

    json plain = llama_config();
    plain["rope_scaling"] = {{"rope_type", "default"}};
    EXPECT_TRUE(read_model_config(plain.dump(), "c"));

    json mistral = llama_config();
    mistral["model_type"] = "mistral";
    EXPECT_EQ(read_model_config(mistral.dump(), "c").value->sliding_window, 4096);  // MistralConfig's default
    mistral["sliding_window"] = nullptr;
    EXPECT_EQ(read_model_config(mistral.dump(), "c").value->sliding_window, 0);
}

TEST(ModelConfig, SizesThatAreZeroNegativeOrAbsurdAreRefused) {
    for (const auto& [field, value, part] : std::vector<std::tuple<std::string, json, std::string>>{
             {"hidden_size", 0, "config.json: hidden_size: expected a whole number from 1 to 8192, got 0"},
             {"hidden_size", -32, "hidden_size: expected a whole number from 1 to 8192, got -32"},
             {"hidden_size", 1e9, "hidden_size: expected a whole number"},
             {"hidden_size", "32", "hidden_size: expected a whole number from 1 to 8192, got the text \"32\""},
             {"num_hidden_layers", 100000, "num_hidden_layers: expected a whole number from 1 to 1024"},
             {"vocab_size", 0, "vocab_size: expected a whole number from 1 to 4000000, got 0"},
             {"intermediate_size", 32.5, "intermediate_size: expected a whole number"},
             {"num_attention_heads", 5, "num_attention_heads: 5 heads do not divide the width 32 (hidden_size)"},
             {"num_key_value_heads", 3, "num_key_value_heads: 3 K/V groups do not divide 4 heads"},
             {"head_dim", 7, "head_dim: RoPE needs an even number of columns from 2 on, got 7 of d_k = 7"},
             {"rms_norm_eps", 0, "rms_norm_eps: expected a number above 0 and at most 0.1, got 0"},
             {"rms_norm_eps", -1e-6, "rms_norm_eps: expected a number above 0"},
             {"rope_theta", 1, "rope_theta: expected a number above 1 and at most 1e+12, got 1"},
             {"rope_scaling", json{{"rope_type", "llama3"}, {"factor", 8}},
              "rope_scaling: low_freq_factor: missing (llama3 scaling needs it)"},
             {"rope_scaling", json{{"rope_type", "yarn"}, {"factor", 8}},
              "rope_scaling: rope_type: the text \"yarn\" is a RoPE scaling attnviz does not run"},
             {"rope_scaling", json{{"type", "linear"}, {"factor", 0.5}}, "rope_scaling: factor: missing or below 1"},
             {"rope_scaling", 3, "rope_scaling: expected an object with rope_type, got 3"},
             {"hidden_act", "tanh", "hidden_act: the text \"tanh\" is not an activation attnviz runs"},
             {"tie_word_embeddings", 1, "tie_word_embeddings: expected true or false, got 1"},
             {"model_type", "t5",
              "model_type: the text \"t5\" is not a model attnviz runs (gpt2, bert, roberta, "
              "llama, mistral, qwen2, gpt_neox, gemma, gemma2, phi3 or olmo2)"}}) {
        json c = llama_config();
        c[field] = value;
        EXPECT_TRUE(has(config_refusal(c), part)) << field;
    }
    json missing = llama_config();
    missing.erase("intermediate_size");
    EXPECT_TRUE(has(config_refusal(missing), "intermediate_size: missing (a whole number from 1 to 131072 is needed)"));
    missing.erase("model_type");
    EXPECT_TRUE(has(config_refusal(missing), "model_type: missing (gpt2, bert"));
    // Every problem at once.
    json two = llama_config();
    two["hidden_size"] = 0;
    two["num_hidden_layers"] = -1;
    EXPECT_EQ(read_model_config(two.dump(), "c").problems.size(), 2u);
}

TEST(ModelConfig, OptionsOfOtherModelsAreRefused) {
    const json gpt2 = {{"model_type", "gpt2"},
                       {"vocab_size", 10},
                       {"n_embd", 8},
                       {"n_layer", 1},
                       {"n_head", 2},
                       {"n_positions", 8},
                       {"scale_attn_by_inverse_layer_idx", true}};
    EXPECT_TRUE(has(config_refusal(gpt2),
                    "scale_attn_by_inverse_layer_idx: true: scaling attention by the layer's "
                    "index is not supported"));
    const json bert = {{"model_type", "bert"},
                       {"vocab_size", 10},
                       {"hidden_size", 8},
                       {"num_hidden_layers", 1},
                       {"num_attention_heads", 2},
                       {"intermediate_size", 16},
                       {"max_position_embeddings", 8},
                       {"position_embedding_type", "relative_key"}};
    EXPECT_TRUE(has(config_refusal(bert),
                    "position_embedding_type: the text \"relative_key\": position embeddings "
                    "other than absolute ones is not supported"));
    json roberta = bert;
    roberta.erase("position_embedding_type");
    roberta["model_type"] = "roberta";
    roberta["max_position_embeddings"] = 2;  // pad_token_id 1 by default: the first position is 2
    EXPECT_TRUE(has(config_refusal(roberta), "max_position_embeddings: 2 leaves no position for a token"));
}

TEST(ModelConfig, TextThatIsNotAConfigIsRefused) {
    EXPECT_TRUE(has(all_text(read_model_config("{\"model_type\": ", "D/config.json").problems),
                    "D/config.json: the JSON ends too early"));
    EXPECT_TRUE(has(all_text(read_model_config("[1, 2]", "D/config.json").problems),
                    "D/config.json: expected a JSON object, got an array"));
}

// ---------------------------------------------------------------------------------------------
// model.safetensors.index.json

TEST(WeightIndex, ReadsTheShardOfEachTensor) {
    const Result<attnviz::model::WeightIndex> index = read_weight_index(
        R"({"metadata": {"total_size": 12}, "weight_map": {"a.weight": "m-2.safetensors", "b": "m-1.safetensors",
            "c": "m-2.safetensors"}})",
        "index.json");
    ASSERT_TRUE(index) << all_text(index.problems);
    EXPECT_EQ(index.value->weight_map.at("a.weight"), "m-2.safetensors");
    EXPECT_EQ(index.value->shards, (std::vector<std::string>{"m-1.safetensors", "m-2.safetensors"}));
}

TEST(WeightIndex, MalformedIndexesAreRefused) {
    for (const auto& [text, part] : std::vector<std::pair<std::string, std::string>>{
             {"[]", "index.json: expected a JSON object, got an array"},
             {"{\"metadata\": {}}", "index.json: weight_map: missing"},
             {"{\"weight_map\": {}}", "index.json: weight_map: expected an object of tensor names"},
             {"{\"weight_map\": [\"a\"]}", "index.json: weight_map: expected an object"},
             {R"({"weight_map": {"a": 3}})", "index.json: weight_map.a: expected a shard's file name, got 3"},
             {R"({"weight_map": {"a": "../x.safetensors"}})",
              "index.json: weight_map.a: the text \"../x.safetensors\" is not a plain file name"},
             {R"({"weight_map": {"a": "/etc/passwd"}})", "is not a plain file name"},
             {R"({"weight_map": {"a": ".."}})", "index.json: weight_map.a: \"..\" is not a file name"},
             {R"({"weight_map": {"a": ""}})", "index.json: weight_map.a: an empty file name"},
             {R"({"weight_map": {"a": "x", "a": "y"}})", "index.json: weight_map.a: given twice"},
             {R"({"weight_map": {"a": "x"})", "index.json: the JSON ends too early"}}) {
        const Result<attnviz::model::WeightIndex> index = read_weight_index(text, "index.json");
        ASSERT_FALSE(index) << text;
        EXPECT_TRUE(has(all_text(index.problems), part)) << text;
    }
}

// ---------------------------------------------------------------------------------------------
// Folders

// The header of a safetensors file as JSON, and the file with a new header (same data).
json header_of(const fs::path& file) {
    const std::string bytes = slurp(file);
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    return json::parse(bytes.substr(8, n));
}
void rewrite_header(const fs::path& file, const json& header) {
    const std::string bytes = slurp(file);
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    const std::string text = header.dump();
    std::uint64_t m = text.size();
    std::string out(8, '\0');
    std::memcpy(out.data(), &m, 8);
    std::ofstream(file, std::ios::binary) << out << text << bytes.substr(8 + n);
}

// The one-line problems of opening a folder ("(opened)" when it opens).
std::string refusal(const fs::path& folder, bool* unreadable = nullptr) {
    const Result<ModelFolder> m = ModelFolder::open(folder.string(), unreadable);
    return m ? "(opened)" : all_text(m.problems);
}

TEST(ModelFolder, OpensOneFileOrShards) {
    const Result<ModelFolder> gpt2 = ModelFolder::open((models_dir / "gpt2").string());
    ASSERT_TRUE(gpt2) << all_text(gpt2.problems);
    EXPECT_EQ(gpt2.value->names().token_embeddings, "transformer.wte.weight");  // the prefix found
    EXPECT_EQ(gpt2.value->names().lm_head, "transformer.wte.weight");
    EXPECT_TRUE(gpt2.value->conv1d());
    const Result<ModelFolder> bert = ModelFolder::open((models_dir / "bert").string());
    ASSERT_TRUE(bert) << all_text(bert.problems);
    EXPECT_EQ(bert.value->names().blocks[1].norm_mlp_w, "bert.encoder.layer.1.output.LayerNorm.gamma");
    const Result<ModelFolder> llama = ModelFolder::open((models_dir / "llama").string());
    ASSERT_TRUE(llama) << all_text(llama.problems);
    EXPECT_EQ(llama.value->weights().file_of("lm_head.weight").label(),
              (models_dir / "llama/model-00002-of-00002.safetensors").string());
    EXPECT_EQ(llama.value->weights().file_of("model.layers.1.self_attn.q_proj.weight").label(),
              (models_dir / "llama/model-00001-of-00002.safetensors").string());
    EXPECT_EQ(llama.value->weights().find("model.layers.1.self_attn.k_proj.weight")->dtype, "BF16");
}

TEST(ModelFolder, MissingFoldersAndFilesAreRefused) {
    ScratchFolder s;
    bool unreadable = false;
    EXPECT_TRUE(has(refusal(s.path / "nothing", &unreadable), "nothing: no such folder"));
    EXPECT_TRUE(unreadable);
    EXPECT_TRUE(has(refusal(s.path, &unreadable), ": no config.json: not a model folder"));
    EXPECT_FALSE(unreadable);
    s.write(s.path / "file", "x");
    EXPECT_TRUE(has(refusal(s.path / "file"), "file: not a folder"));
    s.write(s.path / "config.json", slurp(models_dir / "gpt2/config.json"));
    EXPECT_TRUE(has(refusal(s.path), "no weights: neither model.safetensors nor model.safetensors.index.json"));
}

TEST(ModelFolder, OnlyPytorchBinIsRefusedWithHowToConvertIt) {
    ScratchFolder s;
    s.write(s.path / "config.json", slurp(models_dir / "gpt2/config.json"));
    s.write(s.path / "pytorch_model.bin", "PK");
    const std::string text = refusal(s.path);
    EXPECT_TRUE(has(text, s.path.string() + ": only PyTorch's pytorch_model.bin is here, which attnviz does not read"));
    EXPECT_TRUE(has(text, "from safetensors.torch import save_file"));
    EXPECT_TRUE(has(text, "save_file({k: v.clone() for f in sorted(glob.glob(\"" + s.path.string() +
                              "/pytorch_model*.bin\")) for k, v in torch.load(f, map_location=\"cpu\").items()}, \"" +
                              s.path.string() + "/model.safetensors\""));
}

TEST(ModelFolder, AMissingTensorIsRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("gpt2");
    json h = header_of(dir / "model.safetensors");
    // Renamed rather than dropped: its bytes still belong to a tensor, as a safetensors file's must.
    h["unused.c_fc.bias"] = h["transformer.h.1.mlp.c_fc.bias"];
    h.erase("transformer.h.1.mlp.c_fc.bias");
    rewrite_header(dir / "model.safetensors", h);
    EXPECT_TRUE(has(refusal(dir), (dir / "model.safetensors").string() +
                                      ": transformer.h.1.mlp.c_fc.bias: missing (a gpt2 model of 2 layers needs it)"));
    // A config asking for more layers than the weights hold.
    json config = json::parse(slurp(models_dir / "bert/config.json"));
    const fs::path bert = s.copy_of("bert");
    config["num_hidden_layers"] = 3;
    s.write(bert / "config.json", config.dump());
    EXPECT_TRUE(has(refusal(bert), "bert.encoder.layer.2.attention.self.query.weight: missing"));
}

TEST(ModelFolder, ShapesThatDisagreeWithTheConfigAreRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("gpt2");
    json h = header_of(dir / "model.safetensors");
    h["transformer.h.0.mlp.c_fc.weight"]["shape"] = {64, 16};  // the same bytes, transposed
    rewrite_header(dir / "model.safetensors", h);
    EXPECT_TRUE(has(refusal(dir), (dir / "model.safetensors").string() +
                                      ": transformer.h.0.mlp.c_fc.weight: expected [16, 64] (d_model × d_ff from "
                                      "config.json), got [64, 16]"));
    // The config's sizes against the weights: a vocabulary of another size.
    const fs::path llama = s.copy_of("llama");
    json config = json::parse(slurp(llama / "config.json"));
    config["vocab_size"] = 500;
    s.write(llama / "config.json", config.dump());
    const std::string text = refusal(llama);
    EXPECT_TRUE(has(text,
                    "model-00001-of-00002.safetensors: model.embed_tokens.weight: expected [500, 16] "
                    "(vocab_size × d_model from config.json), got [442, 16]"));
    EXPECT_TRUE(has(text, "model-00002-of-00002.safetensors: lm_head.weight: expected [500, 16]"));
}

// OLMo 2's q/k norms are weights of the family: missing, or of the wrong size, the folder is refused.
TEST(ModelFolder, OlmoTwosQkNormsMissingOrMisshapenAreRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("olmo2");
    json h = header_of(dir / "model.safetensors");
    h["unused.k_norm"] = h["model.layers.1.self_attn.k_norm.weight"];
    h.erase("model.layers.1.self_attn.k_norm.weight");
    h["model.layers.0.self_attn.q_norm.weight"]["shape"] = {8, 2};  // the same 16 values as a matrix
    rewrite_header(dir / "model.safetensors", h);
    const std::string text = refusal(dir);
    EXPECT_TRUE(has(text, "model.layers.1.self_attn.k_norm.weight: missing (a olmo2 model of 2 layers needs it)"))
        << text;
    EXPECT_TRUE(has(text,
                    "model.layers.0.self_attn.q_norm.weight: expected [16] (heads·d_k from config.json), got "
                    "[8, 2]"))
        << text;
}

TEST(ModelFolder, ADtypeThatIsNotAFloatIsRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("qwen2");
    json h = header_of(dir / "model.safetensors");
    h["model.layers.1.self_attn.q_proj.bias"]["dtype"] = "I32";  // 4 bytes an element, as F32
    rewrite_header(dir / "model.safetensors", h);
    EXPECT_TRUE(has(refusal(dir),
                    ": model.layers.1.self_attn.q_proj.bias: dtype I32: attnviz reads weights stored "
                    "as F32, F16, BF16 or F64"));
}

TEST(ModelFolder, AnIndexNamingAMissingShardOrMisplacingATensorIsRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("llama");
    fs::remove(dir / "model-00002-of-00002.safetensors");
    bool unreadable = true;
    EXPECT_TRUE(has(refusal(dir, &unreadable),
                    (dir / "model.safetensors.index.json").string() +
                        ": names the shard \"model-00002-of-00002.safetensors\", which is not in the folder"));
    EXPECT_FALSE(unreadable);  // a folder that lies, not a file that cannot be read

    const fs::path moved = s.path / "moved";
    fs::create_directories(moved);
    for (const char* f : {"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
        fs::copy_file(models_dir / "llama" / f, moved / f);
    json index = json::parse(slurp(models_dir / "llama/model.safetensors.index.json"));
    index["weight_map"]["lm_head.weight"] = "model-00001-of-00002.safetensors";
    s.write(moved / "model.safetensors.index.json", index.dump());
    EXPECT_TRUE(has(refusal(moved), (moved / "model-00001-of-00002.safetensors").string() +
                                        ": lm_head.weight: the index places it in this shard, which does not hold it"));

    index["weight_map"]["lm_head.weight"] = "../model-00002-of-00002.safetensors";
    s.write(moved / "model.safetensors.index.json", index.dump());
    EXPECT_TRUE(has(refusal(moved),
                    "weight_map[\"lm_head.weight\"]: the text \"../model-00002-of-00002.safetensors\" "
                    "is not a plain file name"));
    s.write(moved / "model.safetensors.index.json", "{\"weight_map\": ");
    EXPECT_TRUE(has(refusal(moved), "model.safetensors.index.json: the JSON ends too early"));
}

TEST(ModelFolder, ATruncatedShardIsRefused) {
    ScratchFolder s;
    const fs::path dir = s.copy_of("llama");
    const std::string bytes = slurp(dir / "model-00002-of-00002.safetensors");
    s.write(dir / "model-00002-of-00002.safetensors", bytes.substr(0, bytes.size() / 2));
    EXPECT_TRUE(has(refusal(dir), (dir / "model-00002-of-00002.safetensors").string() + ": "));
}

// ---------------------------------------------------------------------------------------------
// The tokens a model can run

TEST(ModelTokens, IdsAndLengthsTheModelCannotRunAreRefused) {
    const Result<ModelFolder> gpt2 = ModelFolder::open((models_dir / "gpt2").string());
    ASSERT_TRUE(gpt2);
    const ModelConfig& c = gpt2.value->config();
    EXPECT_TRUE(attnviz::model::token_problems(c, {0, 401}).empty());
    EXPECT_TRUE(has(all_text(attnviz::model::token_problems(c, {})), "no tokens"));
    EXPECT_TRUE(has(all_text(attnviz::model::token_problems(c, {5, 402})),
                    "token id 402 (token 2) is outside the vocabulary of 402 ids"));
    EXPECT_TRUE(has(all_text(attnviz::model::token_problems(c, {-1})), "token id -1 (token 1) is outside"));
    EXPECT_TRUE(attnviz::model::token_problems(c, std::vector<std::int32_t>(32, 7)).empty());
    EXPECT_TRUE(has(all_text(attnviz::model::token_problems(c, std::vector<std::int32_t>(33, 7))),
                    "33 tokens need position 32, beyond the model's position table of 32"));
    // RoBERTa: 24 positions, the first token's is pad_token_id + 1 = 2; the pad token (1) takes 1.
    const Result<ModelFolder> roberta = ModelFolder::open((models_dir / "roberta").string());
    ASSERT_TRUE(roberta);
    EXPECT_TRUE(attnviz::model::token_problems(roberta.value->config(), std::vector<std::int32_t>(22, 7)).empty());
    EXPECT_TRUE(has(all_text(attnviz::model::token_problems(roberta.value->config(), std::vector<std::int32_t>(23, 7))),
                    "RoBERTa's positions start at pad_token_id + 1 = 2"));
    std::vector<std::int32_t> padded(22, 7);
    padded.insert(padded.end(), 5, 1);
    EXPECT_TRUE(attnviz::model::token_problems(roberta.value->config(), padded).empty());
    // A sliding window shorter than the sequence runs (the window is the attention's: forward.hpp).
    ModelConfig windowed = c;
    windowed.sliding_window = 4;
    EXPECT_TRUE(attnviz::model::token_problems(windowed, {1, 2, 3, 4, 5}).empty());
}

TEST(ModelTokens, ARunOverTheMemoryBudgetIsRefused) {
    const Result<ModelFolder> gpt2 = ModelFolder::open((models_dir / "gpt2").string());
    ASSERT_TRUE(gpt2);
    const std::int64_t need = attnviz::model::run_bytes(gpt2.value->config(), 4, 8);
    EXPECT_GT(need, 0);
    EXPECT_TRUE(attnviz::model::run_model<double>(*gpt2.value, {1, 2, 3, 4}, {}, need));
    const auto over = attnviz::model::run_model<double>(*gpt2.value, {1, 2, 3, 4}, {}, need - 1);
    ASSERT_FALSE(over);
    EXPECT_TRUE(has(all_text(over.problems), "4 tokens through this model need about"));
}

}  // namespace

// The new families' impossible values are refused, naming the field and the file.
TEST(ModelConfig, TheNewFamiliesImpossibleValuesAreRefused) {
    const json neox = {{"model_type", "gpt_neox"}, {"vocab_size", 100},
                       {"hidden_size", 32},        {"num_hidden_layers", 2},
                       {"num_attention_heads", 4}, {"intermediate_size", 64},
                       {"rotary_pct", 0.5},        {"use_parallel_residual", true}};
    const json gemma2 = {{"model_type", "gemma2"},
                         {"vocab_size", 100},
                         {"hidden_size", 32},
                         {"num_hidden_layers", 2},
                         {"num_attention_heads", 4},
                         {"intermediate_size", 64},
                         {"head_dim", 16},
                         {"query_pre_attn_scalar", 16},
                         {"attn_logit_softcapping", 50.0},
                         {"final_logit_softcapping", 30.0},
                         {"sliding_window", 8}};
    EXPECT_EQ(config_refusal(neox), "(read)");
    EXPECT_EQ(config_refusal(gemma2), "(read)");
    const Result<ModelConfig> g = read_model_config(gemma2.dump(), "config.json");
    ASSERT_TRUE(g);
    EXPECT_EQ(g.value->d_k, 16);  // head_dim apart from d_model / heads = 8
    EXPECT_TRUE(g.value->windowed_layer(0) && !g.value->windowed_layer(1) && g.value->windowed_layer(2));
    EXPECT_TRUE(g.value->norm_plus_one && g.value->sandwich_norms && g.value->rms_norm());
    EXPECT_EQ(g.value->activation, attnviz::model::Activation::gelu_new);
    // OLMo 2: q/k norms with the config's eps, no input norms, the sandwich's outer norms.
    const json olmo2 = {{"model_type", "olmo2"},   {"vocab_size", 100},        {"hidden_size", 32},
                        {"num_hidden_layers", 2},  {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                        {"intermediate_size", 64}, {"rms_norm_eps", 1e-6},     {"rope_theta", 500000.0}};
    const Result<ModelConfig> o = read_model_config(olmo2.dump(), "config.json");
    ASSERT_TRUE(o);
    EXPECT_TRUE(o.value->qk_norm && !o.value->input_norms && o.value->sandwich_norms && o.value->rms_norm());
    EXPECT_EQ(o.value->norm_eps, 1e-6);
    json no_eps = olmo2;
    no_eps["rms_norm_eps"] = 0;
    EXPECT_TRUE(has(config_refusal(no_eps), "rms_norm_eps: expected a number above 0")) << config_refusal(no_eps);
    const Result<ModelConfig> n = read_model_config(neox.dump(), "config.json");
    ASSERT_TRUE(n);
    EXPECT_TRUE(n.value->parallel_residual && n.value->rope() && !n.value->rms_norm() && !n.value->gated_mlp());
    EXPECT_EQ(n.value->rope_dims, 4);  // half of d_k = 8
    for (const auto& [base, field, value, part] : std::vector<std::tuple<json, std::string, json, std::string>>{
             {neox, "rotary_pct", 0, "config.json: rotary_pct: expected a number above 0 and at most 1, got 0"},
             {neox, "rotary_pct", 1.5, "rotary_pct: expected a number above 0 and at most 1, got 1.5"},
             {neox, "rotary_pct", 0.1, "rotary_pct: RoPE needs an even number of columns from 2 on, got 0 of d_k = 8"},
             {neox, "use_parallel_residual", "yes", "use_parallel_residual: expected true or false"},
             {gemma2, "attn_logit_softcapping", 0, "attn_logit_softcapping: expected a number above 0"},
             {gemma2, "final_logit_softcapping", -30, "final_logit_softcapping: expected a number above 0"},
             {gemma2, "sliding_window", 0, "sliding_window: expected a whole number from 1"},
             {gemma2, "head_dim", 7, "head_dim: RoPE needs an even number of columns from 2 on, got 7"},
             {gemma2, "query_pre_attn_scalar", 0, "query_pre_attn_scalar: expected a number above 0"},
             {gemma2, "rope_scaling", json{{"rope_type", "longrope"}},
              "rope_scaling: rope_type: the text \"longrope\" is a RoPE scaling attnviz does not run"}}) {
        json c = base;
        c[field] = value;
        EXPECT_TRUE(has(config_refusal(c), part)) << field << ": " << config_refusal(c);
    }
}
