// Tests of core/io/import.hpp: checkpoints PyTorch wrote in each convention's tensor names
// (tests/reference/generate.py) import into sessions whose trace matches PyTorch's weights and
// outputs; missing pieces and wrong shapes are refused with what is wrong.
#include "core/io/import.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/attention/forward.hpp"
#include "core/base/file_io.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using nlohmann::json;
using namespace attnviz::test;

const std::string dir = ATTNVIZ_GOLDEN_DIR "/../reference/checkpoints/";

std::string text_of(const std::string& path) {
    const Result<std::string> t = read_file(path);
    return t ? *t.value : std::string();
}

Tensor x_of(const std::string& name) {
    const Result<TensorFile> f = TensorFile::open(dir + name + "-x.npy");
    if (!f) return {};
    Result<Tensor> t = f.value->read(f.value->tensors().front().name);
    return t ? *t.value : Tensor{};
}

Matrix matrix_of(const json& rows) {
    Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
    for (size_t r = 0; r < rows.size(); ++r)
        for (size_t c = 0; c < rows[r].size(); ++c) m(r, c) = rows[r][c].get<double>();
    return m;
}

// Imports, computes and compares with PyTorch's result (from the same stored values, in float64).
void expect_matches_pytorch(const std::string& file, const std::string& name, ImportOptions options,
                            Convention convention) {
    SCOPED_TRACE(name);
    const Result<TensorFile> f = TensorFile::open(dir + file);
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<ImportedLayer> layer = import_layer(*f.value, options);
    ASSERT_TRUE(layer) << all_text(layer.problems);
    EXPECT_EQ(layer.value->convention, convention);
    const Session& s = layer.value->session;
    const Trace t = forward<double>(s.config, s.params);
    const json expected = json::parse(text_of(dir + "expected.json")).at(name);
    ASSERT_EQ(expected.at("weights").size(), t.heads.size());
    double worst = 0;
    for (size_t h = 0; h < t.heads.size(); ++h)
        worst = std::max(worst, (matrix_of(expected["weights"][h]) - t.heads[h].weights).cwiseAbs().maxCoeff());
    worst = std::max(worst, (matrix_of(expected["output"]) - t.output).cwiseAbs().maxCoeff());
    EXPECT_LT(worst, 1e-9);
}

TEST(Import, EachConventionMatchesPyTorch) {
    ImportOptions o;
    o.heads = 2;
    o.layer = 1;
    o.x = x_of("torch");
    expect_matches_pytorch("torch.safetensors", "torch", o, Convention::torch);

    o = {};
    o.heads = 3;
    o.token_ids = {3, 17, 0, 29, 8};  // X from the word-embedding table
    expect_matches_pytorch("bert.safetensors", "bert", o, Convention::bert);

    o = {};
    o.heads = 2;
    o.x = x_of("gpt2");
    o.convention = Convention::gpt2;
    expect_matches_pytorch("gpt2.safetensors", "gpt2", o, Convention::gpt2);

    o = {};
    o.config_json = text_of(dir + "llama/config.json");  // heads, K/V groups and rope_theta from it
    o.x = x_of("llama");
    expect_matches_pytorch("llama/model.safetensors", "llama", o, Convention::llama);
}

TEST(Import, TheSessionSaysWhatTheLayerHas) {
    const Result<TensorFile> f = TensorFile::open(dir + "llama/model.safetensors");
    ASSERT_TRUE(f);
    ImportOptions o;
    o.config_json = text_of(dir + "llama/config.json");
    o.tokens = {"a", "b", "c"};
    const Result<ImportedLayer> layer = import_layer(*f.value, o);
    ASSERT_TRUE(layer) << all_text(layer.problems);
    const Config& c = layer.value->session.config;
    EXPECT_EQ(c.heads, 4);
    EXPECT_EQ(c.kv_count(), 2);
    EXPECT_TRUE(c.rope.on);
    EXPECT_EQ(c.rope.base, 500000.0);
    EXPECT_EQ(c.mask, Mask::causal);
    EXPECT_FALSE(c.biases);
    EXPECT_EQ(layer.value->session.tokens, (std::vector<std::string>{"a", "b", "c"}));
    // No X given: a random one, and a note that says so.
    bool said = false;
    for (const std::string& n : layer.value->notes) said = said || contains(n, "X is random");
    EXPECT_TRUE(said);
}

TEST(Import, IncompleteOrMisfittingCheckpointsAreRefused) {
    const Result<TensorFile> gpt2 = TensorFile::open(dir + "gpt2.safetensors");
    ASSERT_TRUE(gpt2);
    ImportOptions o;
    Result<ImportedLayer> r = import_layer(*gpt2.value, o);  // no head count anywhere
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "--heads")) << all_text(r.problems);
    o.heads = 3;  // 8 columns are not 3 heads
    r = import_layer(*gpt2.value, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "3 heads do not divide")) << all_text(r.problems);
    o.heads = 2;
    o.layer = 4;  // no such layer
    r = import_layer(*gpt2.value, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "no attention layer 4")) << all_text(r.problems);
    o.layer = 0;
    o.convention = Convention::bert;  // the wrong convention: its tensors are missing
    r = import_layer(*gpt2.value, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "encoder.layer.0.attention.self.query.weight: missing"))
        << all_text(r.problems);
    o.convention.reset();
    o.x = x_of("torch");  // 4 × 8 fits; a 4 × 12 X would not
    o.x->shape = {2, 16};
    r = import_layer(*gpt2.value, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "--x")) << all_text(r.problems);
    o.x.reset();
    o.token_ids = {1};  // gpt2's file here has no embedding table
    r = import_layer(*gpt2.value, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "token-embedding table")) << all_text(r.problems);
    const Result<TensorFile> bert = TensorFile::open(dir + "bert.safetensors");
    ASSERT_TRUE(bert);
    ImportOptions b;
    b.heads = 3;
    b.token_ids = {3, 30};  // the table has 30 rows
    r = import_layer(*bert.value, b);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "id 30 is outside")) << all_text(r.problems);
    const Result<TensorFile> llama = TensorFile::open(dir + "llama/model.safetensors");
    ASSERT_TRUE(llama);
    ImportOptions l;
    l.heads = 4;
    l.kv_heads = 4;  // the key projection holds 2 groups
    r = import_layer(*llama.value, l);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "--kv-heads")) << all_text(r.problems);
}

// A llama layer of d_model = 8 and 2 heads of d_k = 4 whose tensors have these shapes ([rows,
// cols] as nn.Linear stores them), every value 0.1.
TensorFile llama_of_shapes(const std::vector<std::vector<std::uint64_t>>& qkvo) {
    std::vector<Tensor> tensors;
    const char* names[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
    for (size_t k = 0; k < 4; ++k) {
        Tensor t;
        t.name = std::string("model.layers.0.self_attn.") + names[k] + ".weight";
        t.shape = qkvo[k];
        t.values.assign(static_cast<size_t>(t.shape[0] * t.shape[1]), 0.1);
        tensors.push_back(std::move(t));
    }
    Result<TensorFile> f = TensorFile::from_bytes(safetensors_bytes(tensors), "zero.safetensors");
    EXPECT_TRUE(f) << all_text(f.problems);
    return f ? std::move(*f.value) : TensorFile{};
}

TEST(Import, AnExtentOfZeroIsRefusedNamingTheFileAndTensor) {
    // The query projection with 0 rows made d_k = 0, which passed the check that heads divide its
    // columns and then divided the key projection's columns by zero (SIGFPE).
    const TensorFile zero_q = llama_of_shapes({{0, 8}, {4, 8}, {4, 8}, {8, 0}});
    ImportOptions o;
    o.heads = 2;
    Result<ImportedLayer> r = import_layer(zero_q, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(
        contains(all_text(r.problems),
                 "zero.safetensors: model.layers.0.self_attn.q_proj.weight: its shape [0, 8] has an extent of 0"))
        << all_text(r.problems);
    // The model view imports each layer through import_layer_of_several: the same refusal.
    r = import_layer_of_several(zero_q, o, 0);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "q_proj.weight: its shape [0, 8] has an extent of 0"))
        << all_text(r.problems);
    // Any one of them: the key projection without rows, the output projection without columns.
    for (const auto& shapes : {std::vector<std::vector<std::uint64_t>>{{8, 8}, {0, 8}, {8, 8}, {8, 8}},
                               std::vector<std::vector<std::uint64_t>>{{8, 8}, {8, 8}, {8, 8}, {8, 0}},
                               std::vector<std::vector<std::uint64_t>>{{8, 0}, {8, 0}, {8, 0}, {0, 0}}}) {
        r = import_layer(llama_of_shapes(shapes), o);
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(all_text(r.problems), "has an extent of 0")) << all_text(r.problems);
    }
    ASSERT_TRUE(import_layer(llama_of_shapes({{8, 8}, {8, 8}, {8, 8}, {8, 8}}), o));  // the same layer, whole
}

TEST(Import, CountsAndSizesBelowOneAreRefusedNamingWhereTheyCameFrom) {
    const TensorFile f = llama_of_shapes({{8, 8}, {4, 8}, {4, 8}, {8, 8}});  // 2 heads, 1 K/V group
    const auto refused = [&](const ImportOptions& o, const std::string& says) {
        const Result<ImportedLayer> r = import_layer(f, o);
        ASSERT_FALSE(r) << says;
        EXPECT_TRUE(contains(all_text(r.problems), says)) << all_text(r.problems);
    };
    ImportOptions o;
    o.heads = 2;
    ASSERT_TRUE(import_layer(f, o));
    o.heads = 0;
    refused(o, "--heads: must be at least 1, got 0");
    o.heads = -2;
    refused(o, "--heads: must be at least 1, got -2");
    o.heads = 2;
    o.kv_heads = 0;
    refused(o, "--kv-heads: must be at least 1, got 0");
    o.kv_heads.reset();
    o.rope_base = -1;
    refused(o, "--rope-base: must be a number above 1");
    o.rope_base.reset();
    // From a config.json: named by its path and key, even where --heads makes it unneeded.
    o.config_label = "/m/config.json";
    o.config_json = R"({"num_attention_heads": 0})";
    refused(o, "/m/config.json: num_attention_heads: the number of heads must be from 1 to 256, got 0");
    o.heads.reset();
    refused(o, "/m/config.json: num_attention_heads: the number of heads must be from 1 to 256, got 0");
    o.config_json = R"({"num_attention_heads": 2, "num_key_value_heads": -1})";
    refused(o, "/m/config.json: num_key_value_heads: the number of K/V heads must be from 1 to 256, got -1");
    o.config_json = R"({"num_attention_heads": 2, "hidden_size": 0})";
    refused(o, "/m/config.json: hidden_size: d_model must be from 1 to 8192, got 0");
    o.config_json = R"({"num_attention_heads": 2, "head_dim": 0})";
    refused(o, "/m/config.json: head_dim: d_k must be from 1 to 8192, got 0");
    o.config_json = R"({"n_head": 2.5})";
    refused(o, "/m/config.json: n_head: expected the number of heads, a whole number, got 2.5");
    o.config_json = R"({"num_attention_heads": 2, "rope_theta": 0})";
    refused(o, "/m/config.json: rope_theta: RoPE's base must be a number above 1");
    // Sizes that are valid but not this layer's: the config of another model.
    o.config_json = R"({"num_attention_heads": 2, "hidden_size": 16})";
    refused(o, "/m/config.json: hidden_size: 16, but the layer's weights are 8 wide");
    o.config_json = R"({"num_attention_heads": 2, "head_dim": 8})";
    refused(o, "/m/config.json: head_dim: 8, but 2 heads of the 8 query columns are 4 wide");
    o.config_json = R"({"num_attention_heads": 2, "num_key_value_heads": 2})";
    refused(o, "/m/config.json: num_key_value_heads: 2, but the key projection holds 1 groups");
    o.config_json = R"({"num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 8, "head_dim": 4,
                        "sliding_window": null})";
    const Result<ImportedLayer> fine = import_layer(f, o);
    ASSERT_TRUE(fine) << all_text(fine.problems);
    EXPECT_EQ(fine.value->session.config.heads, 2);
    EXPECT_EQ(fine.value->session.config.kv_heads, 1);
    // The same keys in export-layer.py's metadata are named as the file's.
    std::vector<Tensor> tensors;
    for (const TensorInfo& info : f.tensors()) tensors.push_back(*f.read(info.name).value);
    const Result<TensorFile> with_metadata =
        TensorFile::from_bytes(safetensors_bytes(tensors, {{"num_attention_heads", "0"}}), "m.safetensors");
    ASSERT_TRUE(with_metadata);
    const Result<ImportedLayer> r = import_layer(*with_metadata.value, {});
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(all_text(r.problems), "m.safetensors: __metadata__.num_attention_heads: the number of heads"))
        << all_text(r.problems);
    // An X of no rows.
    o = {};
    o.heads = 2;
    o.x = Tensor{"X", {0, 8}, {}};
    refused(o, "--x: X has 0 rows");
}

TEST(Import, AGiantTensorIsRefusedFromItsHeaderBeforeAnyOfItIsRead) {
    // A query projection of 16384 × 8192 doubles (1 GiB, a sparse file here) beside small ones: once
    // read whole (and inflated, in an .npz) before the shapes were found not to fit.
    TempDir dir("import_giant");
    ASSERT_TRUE(dir.created());
    std::vector<Tensor> small;
    for (const char* name : {"k_proj", "v_proj", "o_proj"})
        small.push_back({std::string("layers.0.self_attn.") + name + ".weight", {8, 8}, std::vector<double>(64, 0.5)});
    const std::string tail = safetensors_bytes(small);  // only to take its data section
    std::string header = R"({"layers.0.self_attn.q_proj.weight": {"dtype": "F64", "shape": [16384, 8192],
                                 "data_offsets": [0, 1073741824]})";
    const std::uint64_t giant = std::uint64_t{1} << 30;
    for (size_t k = 0; k < small.size(); ++k)
        header += ", \"" + small[k].name + "\": {\"dtype\": \"F64\", \"shape\": [8, 8], \"data_offsets\": [" +
                  std::to_string(giant + 512 * k) + ", " + std::to_string(giant + 512 * (k + 1)) + "]}";
    header += "}";
    std::string head(8, '\0');
    for (int k = 0; k < 8; ++k) head[static_cast<size_t>(k)] = static_cast<char>((header.size() >> (8 * k)) & 0xff);
    const std::string path = (dir.path() / "giant.safetensors").string();
    {
        std::ofstream out(path, std::ios::binary);
        out << head << header;
        out.seekp(static_cast<std::streamoff>(8 + header.size() + giant));
        out << tail.substr(tail.size() - 3 * 512);
    }
    const Result<TensorFile> f = TensorFile::open(path);
    ASSERT_TRUE(f) << all_text(f.problems);
    ImportOptions o;
    o.heads = 2;
    const Result<ImportedLayer> r = import_layer(*f.value, o);
    ASSERT_FALSE(r);
    EXPECT_EQ(all_text(r.problems), path +
                                        ": the layer's tensors hold more than 134217728 numbers, the limit of a "
                                        "session's inputs; nothing of them was read\n");
}

TEST(Import, TheLayersACheckpointHolds) {
    // Each reference checkpoint holds one attention layer; torch's is layer 1 beside a layer 0 that
    // has no attention (layers.0.linear1.weight), which is not listed.
    const std::pair<const char*, std::pair<Convention, std::vector<int>>> cases[] = {
        {"torch.safetensors", {Convention::torch, {1}}},
        {"bert.safetensors", {Convention::bert, {0}}},
        {"gpt2.safetensors", {Convention::gpt2, {0}}},
        {"llama/model.safetensors", {Convention::llama, {0}}}};
    for (const auto& [file, expected] : cases) {
        SCOPED_TRACE(file);
        const Result<TensorFile> f = TensorFile::open(dir + file);
        ASSERT_TRUE(f) << all_text(f.problems);
        const Result<LayerListing> listed = list_layers(*f.value, std::nullopt);
        ASSERT_TRUE(listed) << all_text(listed.problems);
        EXPECT_EQ(listed.value->convention, expected.first);
        EXPECT_EQ(listed.value->layers, expected.second);
    }
    // A stack of three GPT-2 layers, with other tensors named like layers that are not.
    const std::vector<Tensor> decoys = {{"h.7.mlp.c_fc.weight", {1}, {0.5}},
                                        {"h.07.attn.c_attn.weight", {1}, {0.5}},   // a leading zero: no layer
                                        {"xh.5.attn.c_attn.weight", {1}, {0.5}}};  // "h." not at a dot
    const Result<TensorFile> f = TensorFile::from_bytes(test::stacked_gpt2(dir + "gpt2.safetensors", 3, decoys),
                                                        "three.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    EXPECT_EQ(checkpoint_layers(*f.value, Convention::gpt2), (std::vector<int>{0, 1, 2}));
    EXPECT_TRUE(checkpoint_layers(*f.value, Convention::bert).empty());
    const Result<LayerListing> bert = list_layers(*f.value, Convention::bert);
    ASSERT_FALSE(bert);
    EXPECT_TRUE(contains(all_text(bert.problems), "no attention layer of the bert convention"))
        << all_text(bert.problems);
}

TEST(Import, LayerSelections) {
    const std::vector<int> available = {0, 1, 2, 3, 5};
    auto chosen = [&](const std::string& spec) {
        const Result<std::vector<int>> r = select_layers(spec, available);
        EXPECT_TRUE(r) << spec << ": " << all_text(r.problems);
        return r ? *r.value : std::vector<int>{};
    };
    EXPECT_EQ(chosen("all"), available);
    EXPECT_EQ(chosen("3"), (std::vector<int>{3}));
    EXPECT_EQ(chosen("1-3"), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(chosen(" 5, 0 ,2-3,3"), (std::vector<int>{0, 2, 3, 5}));  // ascending, each once
    const std::pair<const char*, const char*> refused[] = {
        {"4", "layer 4 is not in the checkpoint (its layers: 0, 1, 2, 3, 5)"},
        {"3-5", "layer 4 is not in the checkpoint"},
        {"3-1", "the range 3-1 runs backwards"},
        {"", "\"\" is not a layer"},
        {"x", "\"x\" is not a layer"},
        {"1-", "\"1-\" is not a layer"},
        {"-1", "\"-1\" is not a layer"},
        {"1,,2", "\"\" is not a layer"},
        {"1.5", "\"1.5\" is not a layer"},
        {"9999999", "is not a layer"}};
    for (const auto& [spec, message] : refused) {
        SCOPED_TRACE(spec);
        const Result<std::vector<int>> r = select_layers(spec, available);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.problems.front().path, "--layer");
        EXPECT_TRUE(contains(all_text(r.problems), message)) << all_text(r.problems);
    }
    const Result<std::vector<int>> contiguous = select_layers("12", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    ASSERT_FALSE(contiguous);
    EXPECT_TRUE(contains(all_text(contiguous.problems), "its layers: 0-11")) << all_text(contiguous.problems);
}

TEST(Import, EveryLayerImportsAsItsOwnImportWould) {
    // Layer 1 carries its own X (as export-layer.py --layer all writes it); the others have none.
    const Tensor x1{"X.1", {3, 8}, std::vector<double>(24, 0.25)};
    const Result<TensorFile> f = TensorFile::from_bytes(test::stacked_gpt2(dir + "gpt2.safetensors", 3, {x1}),
                                                        "three.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<TensorFile> one = TensorFile::open(dir + "gpt2.safetensors");
    ASSERT_TRUE(one);
    ImportOptions o;
    o.heads = 2;
    const Result<std::vector<ImportedLayer>> all = import_layers(*f.value, o, {0, 1, 2});
    ASSERT_TRUE(all) << all_text(all.problems);
    ASSERT_EQ(all.value->size(), 3u);
    for (int l = 0; l < 3; ++l) {
        SCOPED_TRACE(l);
        ImportOptions single = o;
        single.layer = l;
        const Result<ImportedLayer> alone = import_layer(*f.value, single);
        ASSERT_TRUE(alone) << all_text(alone.problems);
        const Session& s = (*all.value)[static_cast<size_t>(l)].session;
        EXPECT_EQ(s, alone.value->session);
        // The weights are the reference layer's times (1 + l/2): Q of head 2 is columns 4..7 of c_attn.
        const Result<Tensor> c_attn = one.value->read("h.0.attn.c_attn.weight");
        ASSERT_TRUE(c_attn);
        for (int r = 0; r < 8; ++r)
            for (int c = 0; c < 4; ++c)
                EXPECT_EQ(s.params.heads[1].W_Q(r, c),
                          c_attn.value->values[static_cast<size_t>(r * 24 + 4 + c)] * (1 + l / 2.0));
    }
    // X: layer 1's own; layers 0 and 2 the same random one, and layer 2 says it is not its input.
    const Session& s1 = (*all.value)[1].session;
    EXPECT_EQ(s1.config.n, 3);
    EXPECT_EQ(s1.params.X, Matrix::Constant(3, 8, 0.25));
    EXPECT_EQ((*all.value)[0].session.params.X, (*all.value)[2].session.params.X);
    auto noted = [&](int l, const std::string& text) {
        for (const std::string& n : (*all.value)[static_cast<size_t>(l)].notes)
            if (contains(n, text)) return true;
        return false;
    };
    EXPECT_TRUE(noted(1, "X: the file's tensor X.1"));
    EXPECT_FALSE(noted(1, "not the hidden states"));
    EXPECT_FALSE(noted(0, "not the hidden states"));  // layer 0's input is what a model is given
    EXPECT_TRUE(noted(2, "X of layer 2 is not the hidden states entering it: every layer is given the same X"));

    // A layer that does not import (4: not in the file) fails the whole, naming it.
    const Result<std::vector<ImportedLayer>> missing = import_layers(*f.value, o, {0, 4});
    ASSERT_FALSE(missing);
    EXPECT_TRUE(contains(all_text(missing.problems), "no attention layer 4")) << all_text(missing.problems);
}

TEST(Import, AnExportedLayersXSaysWhichLayerItEnters) {
    // export-layer.py --layer 1 writes X (the input of layer 1) and "layer": "1"; importing layer 0
    // of such a file says that X is not layer 0's.
    const Tensor x{"X", {2, 8}, std::vector<double>(16, 0.5)};
    const Result<TensorFile> f = TensorFile::from_bytes(
        test::stacked_gpt2(dir + "gpt2.safetensors", 2, {x}, {{"layer", "1"}, {"n_head", "2"}}), "two.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    ImportOptions o;
    Result<ImportedLayer> r = import_layer(*f.value, o);  // the metadata's layer 1
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->notes.back(), "X: the file's tensor X");
    o.layer = 0;
    r = import_layer(*f.value, o);
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->notes.back(), "X: the file's tensor X, the hidden states entering layer 1, not layer 0");
}

}  // namespace
}  // namespace attnviz::core

namespace attnviz::core {
namespace {

// The preview (what the import dialog shows first) agrees with what the import then makes: the
// convention, d_model, the heads, the K/V groups, the RoPE base and whether X is random.
TEST(ImportPreview, SaysWhatTheImportWillMake) {
    struct Case {
        std::string file;
        ImportOptions options;
    };
    ImportOptions torch, bert, gpt2, llama;
    torch.heads = 2;
    torch.layer = 1;
    bert.heads = 3;
    bert.token_ids = {3, 17};
    gpt2.heads = 2;
    llama.config_json = text_of(dir + "llama/config.json");
    for (const Case& c : {Case{"torch.safetensors", torch}, Case{"bert.safetensors", bert},
                          Case{"gpt2.safetensors", gpt2}, Case{"llama/model.safetensors", llama}}) {
        SCOPED_TRACE(c.file);
        const Result<TensorFile> f = TensorFile::open(dir + c.file);
        ASSERT_TRUE(f);
        const Result<ImportPreview> p = preview_import(*f.value, c.options);
        ASSERT_TRUE(p) << all_text(p.problems);
        const Result<ImportedLayer> made = import_layer(*f.value, c.options);
        ASSERT_TRUE(made) << all_text(made.problems);
        const Config& cf = made.value->session.config;
        EXPECT_EQ(p.value->convention, made.value->convention);
        EXPECT_EQ(p.value->d_model, cf.d_model);
        EXPECT_EQ(p.value->heads, cf.heads);
        EXPECT_EQ(p.value->kv_groups, cf.kv_count());
        EXPECT_EQ(p.value->rope_base.has_value(), cf.rope.on);
        if (cf.rope.on) {
            EXPECT_EQ(*p.value->rope_base, cf.rope.base);
        }
        bool random = false;
        for (const std::string& n : made.value->notes) random = random || contains(n, "X is random");
        EXPECT_EQ(p.value->x_random, random) << p.value->x;
        EXPECT_FALSE(p.value->layers.empty());
    }
    // Without heads (no config.json, none given): said, not guessed; the K/V groups need them.
    const Result<TensorFile> f = TensorFile::open(dir + "gpt2.safetensors");
    ASSERT_TRUE(f);
    const Result<ImportPreview> p = preview_import(*f.value, {});
    ASSERT_TRUE(p);
    EXPECT_FALSE(p.value->heads);
    EXPECT_FALSE(p.value->kv_groups);
    EXPECT_EQ(p.value->convention, Convention::gpt2);
    // A file with no attention layer is refused as list_layers refuses it.
    const Result<TensorFile> x = TensorFile::open(dir + "gpt2-x.npy");
    ASSERT_TRUE(x);
    EXPECT_FALSE(preview_import(*x.value, {}));
}

}  // namespace
}  // namespace attnviz::core
