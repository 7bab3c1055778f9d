// What one head does to a model's prediction: head h of block L ablated, the blocks from L on run
// again (rerun_from, runtime.hpp), and the run compared with the one it came from. Shared by
// `attnviz analyze MODEL` and the attention lab's Ablation view in model mode.
//
//   zero ablation   Z⁽ʰ⁾ → 0: rows h·d_v … (h+1)·d_v − 1 of the block's W_O zeroed
//   mean ablation   every row of Z⁽ʰ⁾ → its mean row z̄ (over the n queries, from the block's trace):
//                   those rows of W_O zeroed and z̄·W_O⁽ʰ⁾ added to b_O (the biases turned on, the
//                   others 0 where the block had none), so every query gets z̄·W_O⁽ʰ⁾
//   next token      p = softmax(logits_last) before, q after; KL(p ‖ q) = Σ_i p_i·(ln p_i − ln q_i)
//                   in nats, and the k most likely tokens of each (causal LMs only)
//   later layers    per block l ≥ L: ‖x'_l − x_l‖_F of the residual stream after block l (n×d_model)
//                   and √Σ_h ‖A'_h − A_h‖²_F of its attention weights (0 for block L itself)
#pragma once

#include <vector>

#include "core/attention/head_analysis.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/model/analysis.hpp"
#include "core/model/model_folder.hpp"
#include "core/model/runtime.hpp"

namespace attnviz::model {

// softmax(logits) in double: the next-token distribution (1×vocab).
Eigen::RowVectorXd next_token_distribution(const Eigen::Ref<const Eigen::RowVectorXd>& logits);

// KL(p ‖ q) in nats over distributions of the same size; a q_i of 0 where p_i is not counts as
// 1e-300 (a very large divergence, not ∞).
double kl_divergence(const Eigen::Ref<const Eigen::RowVectorXd>& p, const Eigen::Ref<const Eigen::RowVectorXd>& q);

// `session` (a block's attention) with head `head`'s Z replaced as above; `Z_mean` (1×d_v) is the
// head's mean row of Z, read for mean ablation only. Refused without the output projection (a K/V
// group's shared W_V cannot silence one head) and for a head out of range.
core::Result<core::Session> ablated_session(const core::Session& session, int head, core::Ablation how,
                                            const Eigen::RowVectorXd& Z_mean);

struct HeadEffect {
    int layer = 0;
    int head = 0;
    core::Ablation how = core::Ablation::zero;
    bool next_token = false;             // a causal LM: kl and the tops are set
    double kl = 0;                       // KL(p_before ‖ p_after), nats
    std::vector<TopToken> top_before;    // k, most likely first
    std::vector<TopToken> top_after;     // k
    std::vector<double> residual_delta;  // per block from `layer` on: ‖Δ stream after it‖_F
    std::vector<double> weights_delta;   // per block from `layer` on: √Σ_h ‖ΔA_h‖²_F
};

// Head `head` of block `layer` of `run` (a run of every block) ablated `how`, the blocks from
// `layer` on rerun on a copy (`run` is not changed), the effect measured with the k most likely
// tokens. Refused as ablated_session and rerun_from refuse.
template <class Scalar>
core::Result<HeadEffect> head_effect(const ModelFolder& model, const RunState<Scalar>& run, int layer, int head,
                                     core::Ablation how, int k = 5);

extern template core::Result<HeadEffect> head_effect<float>(const ModelFolder&, const RunState<float>&, int, int,
                                                            core::Ablation, int);
extern template core::Result<HeadEffect> head_effect<double>(const ModelFolder&, const RunState<double>&, int, int,
                                                             core::Ablation, int);

}  // namespace attnviz::model
