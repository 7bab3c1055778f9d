// Activation patching: which pieces of the model carry what makes a clean sentence's prediction
// differ from a corrupted one's. Two runs of as many tokens; diff = logit[target] − logit[versus]
// at the last position (or logit[target] alone). Each entry runs the corrupted sentence with one
// piece taken from the clean run, from the corrupted run's cache: only the blocks after the patch
// run again, and reports
//   (diff − corrupt_diff) / (clean_diff − corrupt_diff)
// (1: the piece restores the clean prediction, 0: it does nothing). The pieces:
//   heads     [layer][head]      that head's z at every position: the attention's output becomes
//                                corrupt output + (z_clean − z_corrupt)·W_O,h
//   residual  [layer][position]  the residual stream entering that block at that position
//   attention [layer][head]      that head's attention weights: z = A_clean·V_corrupt
#pragma once

#include <functional>

#include "core/attention/matrix_types.hpp"
#include "core/model/backward.hpp"

namespace attnviz::model {

struct Patching {
    Objective objective;
    double clean_diff = 0, corrupt_diff = 0;
    core::Matrix heads;      // layers × heads
    core::Matrix residual;   // layers × n
    core::Matrix attention;  // layers × heads
};

// Called after each patched run with how many are done and how many there are; false stops.
using PatchingProgress = std::function<bool(int done, int total)>;

// Refused: runs of different token counts (naming both), runs that are not whole (no logits),
// the mean loss, a target or versus outside the vocabulary, runs whose diffs are equal (nothing
// to restore), a stop asked for by `progress`, a tensor that cannot be read.
template <class Scalar>
core::Result<Patching> patch(const ModelFolder& model, const RunState<Scalar>& clean, const RunState<Scalar>& corrupt,
                             const Objective& objective, const PatchingProgress& progress = {});

extern template core::Result<Patching> patch<float>(const ModelFolder&, const RunState<float>&, const RunState<float>&,
                                                    const Objective&, const PatchingProgress&);
extern template core::Result<Patching> patch<double>(const ModelFolder&, const RunState<double>&,
                                                     const RunState<double>&, const Objective&,
                                                     const PatchingProgress&);

}  // namespace attnviz::model
