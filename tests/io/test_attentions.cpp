// Attention weights from any model (core/io/attentions.hpp): every layout of the exchange format in
// safetensors and .npy files made here, tokens from a file or the metadata, and every way a file
// can be wrong.
#include "core/io/attentions.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/splitmix.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using attnviz::test::all_text;

// A safetensors file of F64 tensors, with string metadata (test_support's writer).
std::string safetensors(const std::vector<Tensor>& tensors, const std::map<std::string, std::string>& metadata = {}) {
    return attnviz::test::safetensors_bytes(tensors, metadata);
}

// count rows of k random weights, each row summing to 1.
std::vector<double> distributions(std::uint64_t count, std::uint64_t k, std::uint64_t seed) {
    SplitMix64 random(seed);
    std::vector<double> v;
    for (std::uint64_t r = 0; r < count; ++r) {
        std::vector<double> row(k);
        double sum = 0;
        for (double& x : row) sum += x = random.uniform() + 0.01;
        for (double x : row) v.push_back(x / sum);
    }
    return v;
}

Result<Attentions> read(const std::string& bytes, const std::string& tokens = "", const std::string& label = "",
                        const std::string& name = "a.safetensors") {
    const Result<TensorFile> f = TensorFile::from_bytes(bytes, name);
    if (!f) return Result<Attentions>::fail(f.problems);
    return read_attentions(*f.value, tokens, label);
}

// Layer l, head h, row i, column j of values laid out layers × heads × q × k.
double at(const std::vector<double>& v, int heads, int q, int k, int l, int h, int i, int j) {
    return v[static_cast<size_t>(((l * heads + h) * q + i) * k + j)];
}

void expect_layers(const Attentions& a, const std::vector<double>& v, int layers, int heads, int q, int k) {
    ASSERT_EQ(a.layers.size(), static_cast<size_t>(layers));
    ASSERT_EQ(a.heads(), heads);
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const Matrix& w = a.layers[static_cast<size_t>(l)][static_cast<size_t>(h)];
            ASSERT_EQ(w.rows(), q);
            ASSERT_EQ(w.cols(), k);
            for (int i = 0; i < q; ++i)
                for (int j = 0; j < k; ++j) EXPECT_EQ(w(i, j), at(v, heads, q, k, l, h, i, j)) << l << h << i << j;
        }
}

TEST(Attentions, OneTensorPerLayerInEitherNamingWithOrWithoutABatchAxis) {
    const std::vector<double> v = distributions(3 * 2 * 4, 4, 1);  // 3 layers × 2 heads × 4 × 4
    for (const std::string prefix : {"layer_", "attentions."})
        for (const bool batch : {false, true}) {
            SCOPED_TRACE(prefix + (batch ? " batch" : ""));
            std::vector<Tensor> tensors;
            for (int l = 2; l >= 0; --l) {  // stored out of order: the numbers order them
                const auto from = v.begin() + l * 2 * 16;
                tensors.push_back({prefix + std::to_string(l),
                                   batch ? std::vector<std::uint64_t>{1, 2, 4, 4} : std::vector<std::uint64_t>{2, 4, 4},
                                   std::vector<double>(from, from + 2 * 16)});
            }
            const Result<Attentions> a = read(safetensors(tensors, {{"tokens", R"(["The", "cat", "sat", "."])"}}));
            ASSERT_TRUE(a) << all_text(a.problems);
            expect_layers(*a.value, v, 3, 2, 4, 4);
            EXPECT_EQ(a.value->query_tokens, (std::vector<std::string>{"The", "cat", "sat", "."}));
            EXPECT_EQ(a.value->key_tokens, a.value->query_tokens);
        }
}

TEST(Attentions, OneStackedTensorAsTorchStackGivesIt) {
    const std::vector<double> v = distributions(2 * 3 * 5, 5, 2);  // 2 layers × 3 heads × 5 × 5
    for (const bool batch : {false, true}) {
        const std::vector<std::uint64_t> shape = batch ? std::vector<std::uint64_t>{2, 1, 3, 5, 5}
                                                       : std::vector<std::uint64_t>{2, 3, 5, 5};
        const Result<Attentions> a = read(safetensors({{"attentions", shape, v}}));
        ASSERT_TRUE(a) << all_text(a.problems);
        expect_layers(*a.value, v, 2, 3, 5, 5);
        EXPECT_EQ(a.value->query_tokens, (std::vector<std::string>{"1", "2", "3", "4", "5"}));  // none given
        // A .npy holds one array, whatever its file is called.
        const Result<Attentions> npy = read(npy_bytes(shape, v), "", "", "bert.npy");
        ASSERT_TRUE(npy) << all_text(npy.problems);
        expect_layers(*npy.value, v, 2, 3, 5, 5);
    }
}

TEST(Attentions, CrossAttentionHasKeyTokensOfItsOwn) {
    const std::vector<double> v = distributions(2 * 3, 4, 3);  // 1 layer × 2 heads × 3 queries × 4 keys
    const std::string file = safetensors({{"layer_0", {2, 3, 4}, v}});
    const Result<Attentions> a = read(file, R"({"queries": ["a", "b", "c"], "keys": ["w", "x", "y", "z"]})", "t.json");
    ASSERT_TRUE(a) << all_text(a.problems);
    expect_layers(*a.value, v, 1, 2, 3, 4);
    EXPECT_EQ(a.value->key_tokens, (std::vector<std::string>{"w", "x", "y", "z"}));
    const Result<Attentions> one_list = read(file, R"(["a", "b", "c"])", "t.json");  // keys need their own
    ASSERT_FALSE(one_list);
    EXPECT_EQ(all_text(one_list.problems), "t.json: 3 query and 3 key tokens, but the weights are 3 × 4\n");
}

// Each refusal names the file and what is wrong; `want` is part of the message.
void expect_refused(const Result<Attentions>& a, const std::string& want) {
    ASSERT_FALSE(a) << want;
    EXPECT_NE(all_text(a.problems).find(want), std::string::npos) << all_text(a.problems);
}

TEST(Attentions, EveryWrongFileIsRefusedWithWhereAndWhat) {
    const std::vector<double> v = distributions(2 * 3, 3, 4);  // 2 heads × 3 × 3
    expect_refused(read(safetensors({{"layer_0", {2, 3, 3}, v}, {"layer_2", {2, 3, 3}, v}})),
                   "a.safetensors: layer 1 is missing (the file has layer_0 … layer_2)");
    expect_refused(read(safetensors({{"layer_0", {2, 3, 3}, v}, {"layer_1", {1, 3, 6}, v}})),
                   "a.safetensors: layer_1: heads × q × k is 1 × 3 × 6, but layer 0's is 2 × 3 × 3");
    expect_refused(read(safetensors({{"layer_0", {6, 3}, v}})),
                   "a.safetensors: layer_0: shape 6 × 3: expected heads × q × k (or 1 × heads × q × k)");
    expect_refused(read(safetensors({{"attentions", {2, 3, 3}, v}})),
                   "shape 2 × 3 × 3: expected layers × heads × q × k");
    expect_refused(read(safetensors({{"weights", {2, 3, 3}, v}, {"bias", {2, 3, 3}, v}})),
                   "a.safetensors: no attentions: expected one tensor per layer");
    expect_refused(read(safetensors({{"layer_0", {2, 0, 3}, {}}})), "a size is 0");
    std::vector<double> negative = v;
    negative[3 * 3 + 3] = -0.25, negative[3 * 3 + 4] += 0.25;  // head 2, row 1: sums to 1 still
    expect_refused(read(safetensors({{"layer_0", {2, 3, 3}, negative}})),
                   "a.safetensors: layer 0, head 2, row 1: a negative weight (-0.25)");
    std::vector<double> scores = v;
    scores[2 * 3] += 0.5;  // head 1, row 2
    expect_refused(read(safetensors({{"layer_0", {2, 3, 3}, scores}})),
                   "layer 0, head 1, row 2: the weights sum to 1.5");
    const std::string good = safetensors({{"layer_0", {2, 3, 3}, v}});
    expect_refused(read(good, R"(["a", "b"])", "t.json"),
                   "t.json: 2 query and 2 key tokens, but the weights are 3 × 3");
    expect_refused(read(good, R"(["a", 2, "c"])", "t.json"), "t.json: tokens[1]: expected a string, got 2");
    expect_refused(read(good, R"({"queries": ["a"]})", "t.json"), "an object with \"queries\" and \"keys\"");
    expect_refused(read(good, "[\"a\", ", "t.json"), "t.json: ");
    expect_refused(read(good, "", "t.json"), "t.json: ");  // an empty tokens file is not "no tokens"
    expect_refused(read(safetensors({{"layer_0", {2, 3, 3}, v}}, {{"tokens", "[1, 2, 3]"}})),
                   "a.safetensors: metadata \"tokens\": tokens[0]: expected a string");
    const std::string truncated = good.substr(0, good.size() - 5);
    EXPECT_FALSE(read(truncated));
}

TEST(Attentions, OpenedFromPathsWithATokensFile) {
    const attnviz::test::TempDir dir("attentions");
    ASSERT_TRUE(dir.created());
    const std::vector<double> v = distributions(3, 3, 5);
    const std::string weights = (dir.path() / "w.safetensors").string(), tokens = (dir.path() / "t.json").string();
    std::ofstream(weights, std::ios::binary) << safetensors({{"attentions", {1, 1, 3, 3}, v}});
    std::ofstream(tokens) << R"(["x", "y", "z"])";
    const Result<Attentions> a = open_attentions(weights, tokens);
    ASSERT_TRUE(a) << all_text(a.problems);
    EXPECT_EQ(a.value->query_tokens, (std::vector<std::string>{"x", "y", "z"}));
    expect_refused(open_attentions(weights, (dir.path() / "none.json").string()), "none.json");
    expect_refused(open_attentions((dir.path() / "none.safetensors").string()), "none.safetensors");
}

// The file scripts/dump-attentions.py --torch-demo writes (ctest dump_attentions runs it and then
// this test with the file's path; alone, the test is skipped): a 2-layer nn.TransformerEncoder of 4
// heads on "the cat sat on the mat".
TEST(Attentions, WhatDumpAttentionsWritesIsRead) {
    const char* path = std::getenv("ATTNVIZ_DUMPED_ATTENTIONS");
    if (!path) GTEST_SKIP() << "run by ctest dump_attentions, which writes the file first";
    const Result<Attentions> a = open_attentions(path);
    ASSERT_TRUE(a) << all_text(a.problems);
    EXPECT_EQ(a.value->layers.size(), 2u);
    EXPECT_EQ(a.value->heads(), 4);
    EXPECT_EQ(a.value->query_tokens, (std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat"}));
    EXPECT_EQ(a.value->key_tokens, a.value->query_tokens);
    // Heads that differ: the weights were caught per head, not averaged.
    EXPECT_GT((a.value->layers[0][0] - a.value->layers[0][1]).cwiseAbs().maxCoeff(), 1e-3);
}

}  // namespace
}  // namespace attnviz::core
