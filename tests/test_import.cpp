// Tests of core/import.hpp: checkpoints PyTorch wrote in each convention's tensor names
// (tests/reference/generate.py) import into sessions whose trace matches PyTorch's weights and
// outputs; missing pieces and wrong shapes are refused with what is wrong.
#include "core/import.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/file_io.hpp"
#include "core/forward.hpp"
#include "test_support.hpp"

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

}  // namespace
}  // namespace attnviz::core
