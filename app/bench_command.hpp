// attnviz bench: times the full forward trace on random weights, next to one GEMM of the same run,
// so the figures can be compared across machines and against PyTorch (bench/compare); with a model
// folder, the model's whole forward pass on random token ids (bench/compare-model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention/config.hpp"

namespace attnviz::app {

struct BenchOptions {
    int n = 512;
    int d_model = 768;
    int heads = 12;
    std::optional<int> d_k, d_v;  // default d_model / heads
    std::string dtype = "float";  // "float" or "double"
    int reps = 10;
    int threads = 0;  // 0: every core
    bool json = false;
    std::int64_t memory_budget = core::default_memory_budget;
    std::string model;      // a model folder: time its forward pass instead (n, dtype, reps, threads, json apply)
    bool gemm = false;      // time the products alone at a layer's shapes instead (reps, threads, json apply)
    bool backward = false;  // with a model: time its whole backward pass too
};

// Prints a short table (median, min, GFLOP/s), or with `json` exactly one JSON object on stdout:
// median_ms, min_ms, gflops, gemm_gflops, n, d_model, heads, d_k, d_v, dtype, threads, reps.
// With a model: median_ms, min_ms, model_type, n, layers, d_model, heads, vocab_size, dtype,
// threads, reps, for the whole forward pass (embeddings, every block, the final norm and, for a
// causal LM, the last position's logits) on n random token ids; with `backward` also
// backward_median_ms and backward_min_ms, the whole backward pass (core/model/backward.hpp) of
// logit[0] − logit[1] at the last position with every weight's gradient. With `gemm`: bench_gemm.hpp.
int bench_command(const BenchOptions& options);

}  // namespace attnviz::app
