#include "core/model/head_detectors.hpp"

#include <algorithm>
#include <map>

#include "core/model/circuits.hpp"
#include "core/model/runtime.hpp"

namespace attnviz::model {

std::vector<std::int32_t> induction_probe(int vocab_size, std::uint64_t seed, int half) {
    std::vector<std::int32_t> ids;
    for (int k = 0; k < half; ++k) {
        std::uint64_t z = seed + static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull;  // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        ids.push_back(static_cast<std::int32_t>(z % static_cast<std::uint64_t>(vocab_size)));
    }
    ids.insert(ids.end(), ids.begin(), ids.end());
    return ids;
}

int probe_half(const ModelConfig& c) {
    return c.learned_positions() ? std::max(1, std::min(50, c.max_positions / 2)) : 50;
}

PatternScores pattern_scores(const core::Matrix& A, const std::vector<std::int32_t>& ids) {
    PatternScores s;
    const auto n = static_cast<Eigen::Index>(ids.size());
    const Eigen::Index half = n / 2;
    std::map<std::int32_t, Eigen::Index> first;
    for (Eigen::Index i = 0; i < n; ++i) first.emplace(ids[static_cast<size_t>(i)], i);
    double duplicates = 0;
    int with_earlier = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        if (i >= 1) s.previous_token += A(i, i - 1) / static_cast<double>(n - 1);
        if (i >= half) s.induction += A(i, first[ids[static_cast<size_t>(i)]] + 1) / static_cast<double>(n - half);
        double earlier = 0;
        bool seen = false;
        for (Eigen::Index j = 0; j < i; ++j)
            if (ids[static_cast<size_t>(j)] == ids[static_cast<size_t>(i)]) {
                earlier += A(i, j);
                seen = true;
            }
        if (seen) {
            duplicates += earlier;
            ++with_earlier;
        }
        s.sink += A(i, 0) / static_cast<double>(n);
        s.diagonal += A(i, i) / static_cast<double>(n);
    }
    s.duplicate_token = with_earlier ? duplicates / with_earlier : 0.0;
    return s;
}

core::Result<HeadDetection> detect_heads(const ModelFolder& model, std::uint64_t seed,
                                         const std::function<bool()>& stopped) {
    using R = core::Result<HeadDetection>;
    const ModelConfig& c = model.config();
    HeadDetection d;
    d.probe = induction_probe(c.vocab_size, seed, probe_half(c));
    core::Result<RunState<double>> run =
        run_model<double>(model, d.probe, {}, core::default_memory_budget, -1,
                          [&](const RunState<double>&, int) { return !stopped || !stopped(); });
    if (!run) return R::fail(std::move(run.problems));
    for (core::Matrix* m : {&d.previous_token, &d.induction, &d.duplicate_token, &d.sink, &d.diagonal, &d.copying})
        *m = core::Matrix::Zero(c.layers, c.heads);
    for (int L = 0; L < c.layers; ++L) {
        std::vector<core::Matrix>& patterns = d.patterns.emplace_back();
        const auto& heads = run.value->layers[static_cast<size_t>(L)].trace.heads;
        for (int h = 0; h < c.heads; ++h) {
            patterns.push_back(heads[static_cast<size_t>(h)].weights);
            const PatternScores s = pattern_scores(patterns.back(), d.probe);
            d.previous_token(L, h) = s.previous_token;
            d.induction(L, h) = s.induction;
            d.duplicate_token(L, h) = s.duplicate_token;
            d.sink(L, h) = s.sink;
            d.diagonal(L, h) = s.diagonal;
        }
        core::Result<std::vector<double>> copying = copying_scores(model, L, stopped);
        if (!copying) return R::fail(std::move(copying.problems));
        for (int h = 0; h < c.heads; ++h) d.copying(L, h) = (*copying.value)[static_cast<size_t>(h)];
    }
    return R::ok(std::move(d));
}

}  // namespace attnviz::model
