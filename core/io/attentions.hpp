// Attention weights from any model: the exchange format of Hugging Face's `outputs.attentions`
// (one array per layer, heads × queries × keys) with its tokens, read from a tensor file. Weights
// only: there is no X and there are no projections to edit.
//
// Layouts (tensors.hpp reads the files: .npz, .safetensors, .npy):
//   one tensor per layer   layer_0, layer_1, …  or  attentions.0, attentions.1, …
//                          each heads × q × k, or 1 × heads × q × k (a batch of one)
//   one stacked tensor     attentions (or a file's only tensor)
//                          layers × heads × q × k, or layers × 1 × heads × q × k (torch.stack of them)
// q ≠ k is allowed (cross-attention: the keys have tokens of their own).
// Tokens: a JSON list (queries and keys alike) or {"queries": [...], "keys": [...]}, from a file
// given beside, else from the safetensors metadata entry "tokens"; without either, "1", "2", ….
#pragma once

#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/io/tensors.hpp"

namespace attnviz::core {

struct Attentions {
    std::vector<std::vector<Matrix>> layers;  // [layer][head]: q × k, every row a distribution
    std::vector<std::string> query_tokens;    // q labels
    std::vector<std::string> key_tokens;      // k labels
    int heads() const { return layers.empty() ? 0 : static_cast<int>(layers.front().size()); }
};

// How far a row's sum may be from 1 (weights saved in half precision are this close).
inline constexpr double attention_row_tolerance = 1e-3;
// The most layers a file may hold.
inline constexpr int max_attention_layers = 1024;

// The attentions of an opened tensor file, with tokens from `tokens_json`, a tokens file's text
// whose messages name `tokens_label` (with tokens_label "" there is no tokens file). Refused with a problem naming the
// file (and the layer, head and row): no layout above, layers whose shapes differ, a row with a negative weight or a
// sum farther than attention_row_tolerance from 1, tokens that are not a list of strings or whose count is not q (or
// k), more than max_attention_layers layers or Limits::max_n tokens.
Result<Attentions> read_attentions(const TensorFile& file, const std::string& tokens_json,
                                   const std::string& tokens_label);

// A session's one layer as attentions: its heads' weights (n × kv_len) from the trace, its tokens
// (the kv_tokens as keys under cross-attention).
Attentions attentions_of(const Session& session, const Trace& trace);

// The same from paths; tokens_path "" for none.
Result<Attentions> open_attentions(const std::string& path, const std::string& tokens_path = "");

}  // namespace attnviz::core
