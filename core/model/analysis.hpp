// What the model view shows of a run besides each layer's attention: the next-token prediction at a
// temperature, the logit lens, attention rollout and the residual stream's norms. Each is computed
// from a RunState (runtime.hpp); the lens reads the final norm and the LM head from the folder.
//
//   top tokens   p = softmax(logits / T), the k largest, ties by id                       (k entries)
//   residual     ‖x_l[i]‖ for the stream entering block l (l = 0: the embeddings) and the
//   norms        last block's output (l = L)                                            ((L+1) × n)
//   rollout      Ã_l = ½·mean_h A_l + ½·I, rows renormalised; R_l = Ã_l ⋯ Ã_1            (L of n × n)
//                (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers")
//   logit lens   for the same L+1 streams, the top token of final_norm(x_l[i]) · W_Uᵀ and its
//                probability (nostalgebraist 2020); row L is the model's own prediction ((L+1) × n)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/problem.hpp"
#include "core/model/model_folder.hpp"
#include "core/model/runtime.hpp"

namespace attnviz::model {

struct TopToken {
    std::int32_t id = 0;
    double p = 0;  // softmax(logits / temperature)[id]
};

// The k most likely tokens of `logits` at `temperature` (> 0; 1 is the model's own distribution),
// most likely first, equal probabilities by id. Computed in double.
std::vector<TopToken> top_tokens(const Eigen::Ref<const Eigen::RowVectorXd>& logits, int k, double temperature = 1);

// The residual stream's norm per stream and position: (L+1) × n.
template <class Scalar>
core::Matrix residual_norms(const RunState<Scalar>& state);

// Attention rollout after each block: R[l] (n × n) is Ã_l ⋯ Ã_0 for 0-based blocks, row i how much
// of position i after block l comes from each input position; every row sums to 1.
template <class Scalar>
std::vector<core::Matrix> attention_rollout(const RunState<Scalar>& state);

// Block `layer`'s norm-weighted attention as the model view draws it, from the run's own trace: per
// head α_ij·‖f_h(x_j)‖ with f_h(x_j) = V⁽ʰ⁾_j·W_O⁽ʰ⁾ (V with its bias, as the trace has it; W_O⁽ʰ⁾ the
// rows h·d_v … of the block's edited session's W_O, or the folder's; V alone without an output
// projection), each query row divided by its sum (core::norm_weighted_rows): what core::norm_weighted
// gives for the block's session. h matrices of n × n; refused when the block's W_O cannot be read.
template <class Scalar>
core::Result<std::vector<core::Matrix>> norm_weighted_block(const ModelFolder& model, const RunState<Scalar>& state,
                                                            int layer);

struct LogitLens {
    Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> ids;  // (L+1) × n
    core::Matrix p;                                                                    // (L+1) × n
};

// The logit lens of a whole run (every block run). Refused for a model without an LM head (BERT,
// RoBERTa) or a run of only the first blocks, and when the folder's tensors cannot be read. It
// reads the whole LM head for (L+1)·n rows (GPT-2 small at n = 128: 1664 × 50257 logits): `stopped`,
// when given, is asked between blocks of it and ends the work early when it says so (a problem then).
template <class Scalar>
core::Result<LogitLens> logit_lens(const ModelFolder& model, const RunState<Scalar>& state,
                                   const std::function<bool()>& stopped = {});

extern template core::Matrix residual_norms<float>(const RunState<float>&);
extern template core::Matrix residual_norms<double>(const RunState<double>&);
extern template std::vector<core::Matrix> attention_rollout<float>(const RunState<float>&);
extern template std::vector<core::Matrix> attention_rollout<double>(const RunState<double>&);
extern template core::Result<std::vector<core::Matrix>> norm_weighted_block<float>(const ModelFolder&,
                                                                                   const RunState<float>&, int);
extern template core::Result<std::vector<core::Matrix>> norm_weighted_block<double>(const ModelFolder&,
                                                                                    const RunState<double>&, int);
extern template core::Result<LogitLens> logit_lens<float>(const ModelFolder&, const RunState<float>&,
                                                          const std::function<bool()>&);
extern template core::Result<LogitLens> logit_lens<double>(const ModelFolder&, const RunState<double>&,
                                                           const std::function<bool()>&);

}  // namespace attnviz::model
