// The forward trace at growing sizes, in double and float.
// Run: build/bench/attnviz_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"

namespace {

using namespace attnviz::core;

// args: n, d_model, heads (d_k = d_v = d_model / heads)
template <class Scalar>
void BM_forward(benchmark::State& state) {
    Config c;
    c.n = static_cast<int>(state.range(0));
    c.d_model = static_cast<int>(state.range(1));
    c.heads = static_cast<int>(state.range(2));
    c.d_k = c.d_v = c.d_model / c.heads;
    const Session s = random_session(c, 1);
    for (auto _ : state) {
        TraceT<Scalar> t = forward<Scalar>(s.config, s.params);
        benchmark::DoNotOptimize(t.output.data());
    }
    state.counters["n"] = c.n;
}

void sizes(benchmark::internal::Benchmark* b) {
    b->Args({2, 4, 2})->Args({16, 64, 4})->Args({128, 256, 8})->Args({512, 512, 8})->Args({1024, 768, 12});
    b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_forward<double>)->Apply(sizes);
BENCHMARK(BM_forward<float>)->Apply(sizes);

BENCHMARK_MAIN();
