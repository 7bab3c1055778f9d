// The KV cache, step by step: how a decoder generates. The first `prefill` tokens are run at once
// (their keys and values fill the cache); then each step decodes one token t: its query row
// q_t = x_t·W_Q (+ b_Q, RoPE at position t), its key and value rows appended to the cache, its
// weights softmax(q_t·K_cacheᵀ / s) (the session's softmax) over the t + 1 cached keys only (no mask is needed: the
// cache holds no later token), z_t = weights·V_cache per head, and its output row concat(z_t)·W_O (+ b_O). That row
// equals row t of the whole layer computed at once under a causal mask; the difference is kept to show it.
//
// The cache holds per layer and token a key and a value row per K/V group:
//   bytes = tokens · kv_heads · (d_k + d_v) · bytes per value   (2 · kv_heads · d_k · bytes when d_v = d_k)
// so grouped-query attention (kv_heads < heads) divides it by the group size.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

struct KvCacheStep {
    int token = 0;                            // t, from prefill on
    std::vector<Eigen::RowVectorXd> q;        // per head: its query row (1 × d_k, rotated with RoPE)
    std::vector<Eigen::RowVectorXd> k;        // per K/V group: the key row appended (1 × d_k)
    std::vector<Eigen::RowVectorXd> v;        // per K/V group: the value row appended (1 × d_v)
    std::vector<Eigen::RowVectorXd> weights;  // per head: 1 × (t + 1), over the cache
    Eigen::RowVectorXd output;                // 1 × output width
    double difference = 0;                    // max |output − row t of the causal layer's output|
    std::int64_t cache_bytes = 0;             // the cache after this step, in double (this layer)
};

struct KvCacheRun {
    int prefill = 0;
    std::vector<KvCacheStep> steps;  // tokens prefill … n − 1
    double max_difference = 0;       // over every step
    Matrix whole_output;             // n × output width: the whole layer at once under a causal mask
};

// The layer's decode of tokens prefill … n − 1 after a prefill of `prefill` tokens (0 … n − 1).
// Refused: cross-attention (its keys come from another sequence, not from the tokens decoded),
// prefill out of range. The session's own mask is not used: decoding is causal.
Result<KvCacheRun> kv_cache_decode(const Session& session, int prefill);

// The bytes a KV cache holds for `tokens` tokens of a model of `layers` such layers, with K/V
// groups (config.kv_count()) or, with `grouped` false, one K and V per head.
std::int64_t kv_cache_bytes(const Config& config, int layers, std::int64_t tokens, int bytes_per_value,
                            bool grouped = true);

}  // namespace attnviz::core
