// Decoding with a KV cache gives the causal layer's output row by row (double, ≤ 1e-12) with
// biases, RoPE, K/V groups, a sliding window, soft-capping and without the output projection; each step's weights cover
// only the cache; the cache's bytes follow 2 · layers · kv_heads · d_k · bytes a token.
#include <gtest/gtest.h>

#include "core/attention/kv_cache.hpp"
#include "core/attention/presets.hpp"

using namespace attnviz::core;

namespace {

Session session_with(const std::function<void(Config&)>& change) {
    Config c = worked_example().config;
    c.n = 6;
    c.d_model = 8;
    c.heads = 4;
    c.d_k = c.d_v = 2;
    change(c);
    return random_session(c, 21);
}

}  // namespace

TEST(KvCache, DecodingGivesTheCausalLayersOutputRowByRow) {
    const std::vector<std::pair<const char*, std::function<void(Config&)>>> variants = {
        {"plain", [](Config&) {}},
        {"biases", [](Config& c) { c.biases = true; }},
        {"rope half", [](Config& c) { c.rope.on = true; }},
        {"rope interleaved, 2 of 4 columns",
         [](Config& c) {
             c.d_k = 4;
             c.rope.on = true;
             c.rope.style = Rope::Style::interleaved;
             c.rope.dims = 2;
         }},
        {"2 K/V groups", [](Config& c) { c.kv_heads = 2; }},
        {"no output projection", [](Config& c) { c.output_projection = false; }},
        {"mask none in the session", [](Config& c) { c.mask = Mask::none; }},
        {"Gemma 2's: a window of 3 keys, soft-capping at 0.5, Llama 3's RoPE",
         [](Config& c) {
             c.window = 3;
             c.softcap = 0.5;
             c.rope.on = true;
             c.rope.scaling = {RopeScaling::Kind::llama3, 8, 1, 4, 2};
         }},
        {"OLMo 2's q/k norms, 2 K/V groups, biases, RoPE",
         [](Config& c) {
             c.qk_norm = {true, 1e-6};
             c.kv_heads = 2;
             c.biases = true;
             c.rope.on = true;
         }},
    };
    for (const auto& [name, change] : variants) {
        const Session s = session_with(change);
        for (int prefill : {0, 2, 5}) {
            SCOPED_TRACE(std::string(name) + ", prefill " + std::to_string(prefill));
            const Result<KvCacheRun> run = kv_cache_decode(s, prefill);
            ASSERT_TRUE(run) << run.problems.front().str();
            ASSERT_EQ(run.value->steps.size(), static_cast<std::size_t>(6 - prefill));
            EXPECT_LE(run.value->max_difference, 1e-12);
            // The row each step is held against: the whole layer at once, under a causal mask.
            Config causal = s.config;
            causal.mask = Mask::causal;
            EXPECT_EQ(run.value->whole_output, forward<double>(causal, s.params).output);
            for (const KvCacheStep& step : run.value->steps) {
                EXPECT_LE((step.output - run.value->whole_output.row(step.token)).cwiseAbs().maxCoeff(), 1e-12);
                EXPECT_LE(step.difference, 1e-12);
                ASSERT_EQ(step.weights.size(), 4u);
                for (const Eigen::RowVectorXd& w : step.weights) {
                    EXPECT_EQ(w.size(), step.token + 1);  // the cache only: no later token
                    EXPECT_NEAR(w.sum(), 1.0, 1e-12);
                }
                EXPECT_EQ(step.k.size(), static_cast<std::size_t>(s.config.kv_count()));
            }
        }
    }
}

TEST(KvCache, DecodingUnderTheSoftmaxPlusOneGivesTheCausalLayersOutput) {
    for (const bool rope : {false, true}) {
        const Session s = session_with([&](Config& c) {
            c.softmax = Softmax::plus_one;
            c.rope.on = rope;
            c.kv_heads = 2;
            c.biases = true;
        });
        Config causal = s.config;
        causal.mask = Mask::causal;
        const Trace whole = forward<double>(causal, s.params);
        for (int prefill : {0, 3}) {
            SCOPED_TRACE(std::string(rope ? "rope" : "no rope") + ", prefill " + std::to_string(prefill));
            const Result<KvCacheRun> run = kv_cache_decode(s, prefill);
            ASSERT_TRUE(run) << run.problems.front().str();
            EXPECT_EQ(run.value->whole_output, whole.output);
            EXPECT_LE(run.value->max_difference, 1e-12);
            for (const KvCacheStep& step : run.value->steps)
                for (int h = 0; h < 4; ++h) {
                    // The step's weights are the causal layer's row t over keys 0 … t, summing to below 1.
                    const Eigen::RowVectorXd& w = step.weights[static_cast<std::size_t>(h)];
                    const auto want =
                        whole.heads[static_cast<std::size_t>(h)].weights.row(step.token).head(step.token + 1);
                    EXPECT_LE((w - want).cwiseAbs().maxCoeff(), 1e-12);
                    EXPECT_LT(w.sum(), 1.0);
                }
        }
    }
}

TEST(KvCache, ItsBytesFollowTheGroupsAndTheTokens) {
    // Llama 2 7B: 32 layers, 32 heads of 128, fp16, 4096 tokens: 2 GiB; Llama 3 8B's 8 K/V groups: a quarter.
    Config c;
    c.heads = 32;
    c.d_k = c.d_v = 128;
    EXPECT_EQ(kv_cache_bytes(c, 32, 4096, 2), std::int64_t{2} << 30);
    c.kv_heads = 8;
    EXPECT_EQ(kv_cache_bytes(c, 32, 4096, 2), std::int64_t{512} << 20);
    EXPECT_EQ(kv_cache_bytes(c, 32, 4096, 2, false), std::int64_t{2} << 30);
    // The step's own count: one layer, t + 1 tokens, in double.
    const Session s = session_with([](Config& c) { c.kv_heads = 2; });
    const Result<KvCacheRun> run = kv_cache_decode(s, 3);
    ASSERT_TRUE(run);
    EXPECT_EQ(run.value->steps.front().cache_bytes, 4 * 2 * (2 + 2) * 8);
}

TEST(KvCache, RefusesCrossAttentionAndAPrefillOutOfRange) {
    EXPECT_EQ(
        kv_cache_decode(session_with([](Config& c) { c.n_kv = 4, c.mask = Mask::none; }), 1).problems.front().path,
        "config.n_kv");
    const Session s = session_with([](Config&) {});
    EXPECT_EQ(kv_cache_decode(s, 6).problems.front().path, "prefill");
    EXPECT_EQ(kv_cache_decode(s, -1).problems.front().path, "prefill");
}
