#include "bench_command.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_gemm.hpp"
#include "bench_timing.hpp"
#include "cli_output.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "core/base/splitmix.hpp"
#include "core/model/backward.hpp"
#include "core/model/runtime.hpp"

namespace attnviz::app {

namespace {

template <class Scalar>
int run(const BenchOptions& o, const core::Config& c, int threads) {
    const core::Session s = core::random_session(c, 1);
    core::TraceT<Scalar> trace;  // reused across runs, as the app reuses its trace
    const Timing full = time_runs(o.reps, [&] { core::forward_into(trace, s.config, s.params); });
    const double flops = core::forward_flops(c);
    // One GEMM of the same run: X·W, (n×d_model)·(d_model×d_model), the layer's typical product.
    const core::MatrixT<Scalar> X = s.params.X.template cast<Scalar>();
    const core::MatrixT<Scalar> W = core::random_matrix(c.d_model, c.d_model, 1.0, 2).template cast<Scalar>();
    core::MatrixT<Scalar> Y(c.n, c.d_model);
    const Timing gemm = time_runs(o.reps, [&] { Y.noalias() = X * W; });
    const double gemm_gflops = 2.0 * c.n * c.d_model * c.d_model / (gemm.min_ms * 1e6);
    const double gflops = flops / (full.min_ms * 1e6);
    if (o.json) {
        const nlohmann::ordered_json out = {{"median_ms", full.median_ms},
                                            {"min_ms", full.min_ms},
                                            {"gflops", gflops},
                                            {"gemm_gflops", gemm_gflops},
                                            {"n", c.n},
                                            {"d_model", c.d_model},
                                            {"heads", c.heads},
                                            {"d_k", c.d_k},
                                            {"d_v", c.d_v},
                                            {"dtype", o.dtype},
                                            {"threads", threads},
                                            {"reps", o.reps}};
        std::cout << out.dump() << "\n";
    } else {
        std::printf("attnviz bench: n=%d d_model=%d heads=%d d_k=%d d_v=%d, %s, %d thread%s, %d runs\n", c.n, c.d_model,
                    c.heads, c.d_k, c.d_v, o.dtype.c_str(), threads, threads == 1 ? "" : "s", o.reps);
        std::printf("  full trace  median %9.3f ms  min %9.3f ms  %7.1f GFLOP/s\n", full.median_ms, full.min_ms,
                    gflops);
        std::printf("  one GEMM    (%dx%d)(%dx%d)  min %9.3f ms  %7.1f GFLOP/s\n", c.n, c.d_model, c.d_model, c.d_model,
                    gemm.min_ms, gemm_gflops);
    }
    return std::cout ? exit_ok : exit_io;
}

// The refusal of dimensions over the memory budget, in the dtype the trace is computed in: the
// inputs stay in double (the session), the intermediates are held in float or double.
core::Problems memory_problems(const core::Config& c, const BenchOptions& o) {
    const std::int64_t inputs = core::input_numbers(c), intermediates = core::total_numbers(c) - inputs;
    const std::int64_t need = inputs * std::int64_t{sizeof(double)} +
                              intermediates *
                                  static_cast<std::int64_t>(o.dtype == "float" ? sizeof(float) : sizeof(double));
    if (need <= o.memory_budget) return {};
    const std::string held = o.dtype == "float" ? "the inputs in double, every intermediate in float"
                                                : "the inputs and every intermediate in double";
    return {{"config", "these dimensions need " + core::format_bytes(need) + " (" + held +
                           "), over the memory budget of " + core::format_bytes(o.memory_budget) +
                           "; a larger budget can be set with --memory-budget"}};
}

// n token ids drawn uniformly from the vocabulary (a fixed seed: every run times the same ids).
std::vector<std::int32_t> random_ids(int n, int vocab_size) {
    core::SplitMix64 random(1);
    std::vector<std::int32_t> ids(static_cast<size_t>(n));
    for (std::int32_t& id : ids) id = static_cast<std::int32_t>(random.next() % static_cast<std::uint64_t>(vocab_size));
    return ids;
}

// Times the whole forward of the opened model (run_model_into): the embeddings, every block (its
// weights in the compute dtype, every head's weights kept), the final norm and the last position's
// logits. The run state is reused from one run to the next, as the app reuses its run's.
template <class Scalar>
int run_model(const BenchOptions& o, const model::ModelFolder& m, const std::vector<std::int32_t>& ids, int threads) {
    std::string failure;
    model::RunState<Scalar> state;
    const Timing full = time_runs(o.reps, [&] {
        if (!failure.empty()) return;
        const core::Problems p = model::run_model_into<Scalar>(state, m, ids, {}, o.memory_budget);
        if (!p.empty()) failure = p.front().str();
    });
    if (!failure.empty()) {
        std::cerr << "error: " << failure << "\n";
        return exit_invalid;
    }
    const model::ModelConfig& c = m.config();
    // The backward pass of the logit difference of tokens 0 and 1 at the last position, with
    // every weight's gradient, from the last forward's state.
    Timing backward;
    if (o.backward) {
        const model::Objective objective{model::Objective::Kind::difference, 0, 1};
        model::ModelGradients<Scalar> gradients;  // reused from one run to the next, as the run state is
        backward = time_runs(o.reps, [&] {
            if (!failure.empty()) return;
            const core::Problems p = model::model_gradients_into<Scalar>(gradients, m, state, objective, true);
            if (!p.empty()) failure = p.front().str();
        });
        if (!failure.empty()) {
            std::cerr << "error: " << failure << "\n";
            return exit_invalid;
        }
    }
    if (o.json) {
        nlohmann::ordered_json out = {{"median_ms", full.median_ms},
                                      {"min_ms", full.min_ms},
                                      {"model_type", model::to_string(c.architecture)},
                                      {"n", ids.size()},
                                      {"layers", c.layers},
                                      {"d_model", c.d_model},
                                      {"heads", c.heads},
                                      {"vocab_size", c.vocab_size},
                                      {"dtype", o.dtype},
                                      {"threads", threads},
                                      {"reps", o.reps}};
        if (o.backward) {
            out["backward_median_ms"] = backward.median_ms;
            out["backward_min_ms"] = backward.min_ms;
        }
        std::cout << out.dump() << "\n";
    } else {
        std::printf("attnviz bench: %s, %d layers, d_model=%d heads=%d vocab=%d, n=%zu, %s, %d thread%s, %d runs\n",
                    model::to_string(c.architecture), c.layers, c.d_model, c.heads, c.vocab_size, ids.size(),
                    o.dtype.c_str(), threads, threads == 1 ? "" : "s", o.reps);
        std::printf("  forward pass  median %9.3f ms  min %9.3f ms\n", full.median_ms, full.min_ms);
        if (o.backward)
            std::printf("  backward pass median %9.3f ms  min %9.3f ms  (%.2f x the forward)\n", backward.median_ms,
                        backward.min_ms, backward.min_ms / full.min_ms);
    }
    return std::cout ? exit_ok : exit_io;
}

// Sets the threads OpenMP and Eigen use (0: every core, with a warning for more than there are);
// the number used.
int use_threads(int wanted) {
    // More threads than cores share them by turns, and the times then mostly measure the waiting.
    if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0 && wanted > static_cast<int>(cores))
        std::cerr << "warning: --threads " << wanted << " is more than this machine's " << cores
                  << (cores == 1 ? " core" : " cores")
                  << ": the threads take turns, and the times are slower than with --threads " << cores << "\n";
    if (wanted > 0) omp_set_num_threads(wanted);
    const int threads = wanted > 0 ? wanted : omp_get_max_threads();
    Eigen::setNbThreads(threads);
    return threads;
}

int bench_model(const BenchOptions& o) {
    bool unreadable = false;
    // Opened once, outside the timing: the weights read into memory when they fit the budget.
    const core::Result<model::ModelFolder> m = model::ModelFolder::open(o.model, &unreadable, o.memory_budget);
    if (!m) {
        for (const core::Problem& p : m.problems) std::cerr << "error: " << p.str() << "\n";
        return unreadable ? exit_io : exit_invalid;
    }
    const std::vector<std::int32_t> ids = random_ids(o.n, std::max(m.value->config().vocab_size, 1));
    if (const core::Problems p = model::token_problems(m.value->config(), ids); !p.empty()) {
        for (const core::Problem& problem : p) std::cerr << "error: --n " << o.n << ": " << problem.str() << "\n";
        return exit_invalid;
    }
    const int threads = use_threads(o.threads);
    try {
        return o.dtype == "float" ? run_model<float>(o, *m.value, ids, threads)
                                  : run_model<double>(o, *m.value, ids, threads);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory for this model at n = " << o.n << "\n";
        return exit_io;
    }
}

}  // namespace

int bench_command(const BenchOptions& o) {
    if (!dtype_valid(o.dtype)) return exit_invalid;
    if (o.reps < 1) {
        std::cerr << "error: --reps must be at least 1\n";
        return exit_invalid;
    }
    if (!o.model.empty()) return bench_model(o);
    if (o.gemm) return bench_gemm(o.reps, use_threads(o.threads), o.json);
    core::Config c;
    c.n = o.n;
    c.d_model = o.d_model;
    c.heads = o.heads;
    if ((!o.d_k || !o.d_v) && (c.heads < 1 || c.d_model % c.heads != 0)) {
        std::cerr << "error: --d-model " << c.d_model << " is not divisible by --heads " << c.heads
                  << "; give --d-k and --d-v\n";
        return exit_invalid;
    }
    c.d_k = o.d_k.value_or(c.heads > 0 ? c.d_model / c.heads : 1);
    c.d_v = o.d_v.value_or(c.heads > 0 ? c.d_model / c.heads : 1);
    core::Problems problems = core::validate(c);
    if (problems.empty()) problems = memory_problems(c, o);
    if (!problems.empty()) {
        for (const core::Problem& p : problems) std::cerr << "error: " << p.str() << "\n";
        return exit_invalid;
    }
    const int threads = use_threads(o.threads);
    try {
        return o.dtype == "float" ? run<float>(o, c, threads) : run<double>(o, c, threads);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory for these dimensions\n";
        return exit_io;
    }
}

}  // namespace attnviz::app
