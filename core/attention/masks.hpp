// Ready-made custom masks (n queries × m keys of 0/1, 1 = may attend): the patterns real models
// and papers use, as starting points for the mask editor and `config.mask = "custom"`.
#pragma once

#include <string>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// Padding: the last `padded` keys are padding tokens no query may attend to (a batch of sequences
// of unequal length pads the shorter ones). 0 ≤ padded < m.
Result<Matrix> padding_mask(int n, int m, int padded);

// A sliding window of `width` keys: query i attends to key j when |i − j| < width (Longformer's
// local attention), or, `causal`, when 0 ≤ i − j < width (Mistral's sliding-window attention: the
// query and the width − 1 keys before it). width ≥ 1.
Result<Matrix> sliding_window_mask(int n, int m, int width, bool causal);

// Block-diagonal segments: the tokens are cut into consecutive segments of the given lengths
// (several documents packed into one sequence), and a query attends only to the keys of its own
// segment. Needs n = m and the lengths (each ≥ 1) to add up to n.
Result<Matrix> block_mask(int n, int m, const std::vector<int>& lengths);
// "3,2,3" → {3, 2, 3}; a problem names what is not a whole number ≥ 1.
Result<std::vector<int>> parse_lengths(const std::string& text);

}  // namespace attnviz::core
