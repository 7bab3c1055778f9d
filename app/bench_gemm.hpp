// attnviz bench --gemm: the matrix products alone (core::product), at the shapes of a layer, in
// GFLOP/s, with the kernel that ran them (bench/compare-gemm puts OpenBLAS's beside them).
#pragma once

namespace attnviz::app {

// Times each product `reps` times after a warm-up on `threads` threads, and prints a table, or with
// `json` one JSON object: cpu, kernel, kernel_description, threads, reps, and rows of {m, d_in,
// d_out, dtype, weights, transposed, min_ms, median_ms, gflops}.
int bench_gemm(int reps, int threads, bool json);

}  // namespace attnviz::app
