// Head detectors over a whole model: what kind of head each one is, from its attention weights A
// (n×n) on a probe sequence and its OV circuit. The probe is `half` random token ids repeated once
// (2·half tokens; half = 50, or fewer where the model's position table is shorter), drawn from a
// seed by splitmix64 (id k = splitmix64(seed + k·0x9E3779B97F4A7C15) mod vocab_size), so any
// language gives the same ids. For head [layer][head]:
//   previous_token   mean over i ≥ 1 of A[i][i − 1]
//   induction        mean over the second half's i of A[i][f(i) + 1], f(i) the first position of
//                    token i's id: the token that followed it the first time (Olsson et al. 2022)
//   duplicate_token  mean over the i whose id came before of their weight on those earlier positions
//   sink             mean over i of A[i][0]: the share on token 0
//   diagonal         mean over i of A[i][i]
//   copying          the OV circuit's Σ Re λ / Σ |λ| in token space (circuits.hpp: copying_scores)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"
#include "core/model/model_folder.hpp"

namespace attnviz::model {

// The probe's ids: `half` from the seed, then the same again.
std::vector<std::int32_t> induction_probe(int vocab_size, std::uint64_t seed, int half);
// The probe's half for a model: 50, or half its learned position table when that is shorter.
int probe_half(const ModelConfig& config);

struct PatternScores {
    double previous_token = 0, induction = 0, duplicate_token = 0, sink = 0, diagonal = 0;
};
// One head's scores of its weights A (n×n) on the probe `ids` (n, its halves equal).
PatternScores pattern_scores(const core::Matrix& A, const std::vector<std::int32_t>& ids);

struct HeadDetection {
    std::vector<std::int32_t> probe;  // 2·half ids
    // layers × heads each
    core::Matrix previous_token, induction, duplicate_token, sink, diagonal, copying;
    std::vector<std::vector<core::Matrix>> patterns;  // [layer][head]: A on the probe
};

// Every head of the model. Refused: what run_model refuses, a tensor that cannot be read, a stop
// asked for by `stopped` (asked between layers).
core::Result<HeadDetection> detect_heads(const ModelFolder& model, std::uint64_t seed,
                                         const std::function<bool()>& stopped = {});

}  // namespace attnviz::model
