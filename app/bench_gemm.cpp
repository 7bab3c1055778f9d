#include "bench_gemm.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "cli_output.hpp"
#include "core/attention/gemm.hpp"
#include "core/attention/presets.hpp"

namespace attnviz::app {

namespace {

// y = x·W (or x·Wᵀ): x m × d_in; W's values stored as `weights`.
struct Shape {
    int m, d_in, d_out;
    const char* dtype;    // the compute type: "float" or "double"
    const char* weights;  // "same" (the compute type), "bf16"
    bool transposed;      // W stored d_out × d_in (nn.Linear), else d_in × d_out (GPT-2's Conv1D)
};

// A layer's products (GPT-2 small: c_attn at n = 128 and 512, c_fc, c_proj, one head's Q·Kᵀ at
// n = 512) in float and double, and Llama-3.2-1B's MLP up-projection from BF16 weights.
std::vector<Shape> shapes() {
    std::vector<Shape> s;
    for (const char* dtype : {"float", "double"})
        for (const auto& [m, d_in, d_out] :
             {std::array{128, 768, 2304}, std::array{512, 768, 2304}, std::array{512, 768, 3072},
              std::array{512, 3072, 768}, std::array{512, 64, 512}})
            s.push_back({m, d_in, d_out, dtype, "same", false});
    s.push_back({128, 2048, 8192, "float", "same", true});
    s.push_back({128, 2048, 8192, "float", "bf16", true});
    return s;
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
            return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

template <class Scalar>
Timing time_product(const Shape& s, int reps) {
    using M = core::MatrixT<Scalar>;
    const M x = core::random_matrix(s.m, s.d_in, 1.0, 1).template cast<Scalar>();
    M y(s.m, s.d_out);
    const Eigen::Index rows = s.transposed ? s.d_out : s.d_in, cols = s.transposed ? s.d_in : s.d_out;
    const core::Matrix values = core::random_matrix(rows, cols, 0.05, 2);
    if (std::string(s.weights) == "bf16") {
        core::MatrixT<core::bfloat16> W(rows, cols);
        for (Eigen::Index i = 0; i < W.size(); ++i) {
            const float f = static_cast<float>(values.data()[i]);
            std::uint32_t bits;
            std::memcpy(&bits, &f, 4);
            W.data()[i] = core::bfloat16{static_cast<std::uint16_t>(bits >> 16)};
        }
        return time_runs(reps, [&] { core::product<Scalar, core::bfloat16>(x, core::view_of(W), s.transposed, y); });
    }
    const M W = values.template cast<Scalar>();
    return time_runs(reps, [&] { core::product<Scalar, Scalar>(x, core::view_of(W), s.transposed, y); });
}

}  // namespace

int bench_gemm(int reps, int threads, bool json) {
    const core::gemm::Kernel kernel = core::gemm::kernel();
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    if (!json)
        std::printf("attnviz bench --gemm: %s, %d thread%s, %d runs; kernel %s (%s)\n", cpu_name().c_str(), threads,
                    threads == 1 ? "" : "s", reps, core::gemm::name(kernel), core::gemm::description(kernel).c_str());
    for (const Shape& s : shapes()) {
        const bool single = std::string(s.dtype) == "float";
        const Timing t = single ? time_product<float>(s, reps) : time_product<double>(s, reps);
        const double gflops = 2.0 * s.m * s.d_in * s.d_out / (t.min_ms * 1e6);
        rows.push_back({{"m", s.m},
                        {"d_in", s.d_in},
                        {"d_out", s.d_out},
                        {"dtype", s.dtype},
                        {"weights", s.weights},
                        {"transposed", s.transposed},
                        {"min_ms", t.min_ms},
                        {"median_ms", t.median_ms},
                        {"gflops", gflops}});
        if (!json)
            std::printf("  %4d × %4d · %4d × %4d%s  %-6s weights %-4s  min %8.3f ms  %7.1f GFLOP/s\n", s.m, s.d_in,
                        s.transposed ? s.d_out : s.d_in, s.transposed ? s.d_in : s.d_out, s.transposed ? "ᵀ" : " ",
                        s.dtype, s.weights, t.min_ms, gflops);
    }
    if (json) {
        const nlohmann::ordered_json out = {{"cpu", cpu_name()},
                                            {"kernel", core::gemm::name(kernel)},
                                            {"kernel_description", core::gemm::description(kernel)},
                                            {"threads", threads},
                                            {"reps", reps},
                                            {"rows", rows}};
        std::cout << out.dump() << "\n";
    }
    return std::cout ? exit_ok : exit_io;
}

}  // namespace attnviz::app
