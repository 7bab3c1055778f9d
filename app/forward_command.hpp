// attnviz forward: a model folder's whole forward pass on a text or token ids, every layer's
// attention weights, the hidden state and the next-token prediction as JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/session.hpp"
#include "core/model/runtime.hpp"
#include "core/model/tokenizer.hpp"

namespace attnviz::app {

struct ForwardOptions {
    std::string model;                // a model folder (config.json, model.safetensors or shards, a tokenizer)
    std::optional<std::string> text;  // --text: tokenized with the tokenizer's default special tokens
    std::string token_ids;            // --token-ids: "1,2,3" (the tokenizer then only labels them)
    std::string dtype = "float";      // float or double
    int top = 10;                     // how many of the most likely next tokens
    std::string out_path;             // written atomically
    std::int64_t memory_budget = 0;
};

// "1,2,3" (spaces around each id allowed) as token ids; refused: an item that is not an id.
core::Result<std::vector<std::int32_t>> parse_ids(const std::string& text);

// Writes {"format": "attnviz-forward", "model_type", "dtype", "token_ids", "tokens", "layers":
// [{"weights": heads × n × n}, …], "hidden": n × d_model, and for causal LMs "logits_last":
// [vocab_size] and "top": [{"id", "token", "p"}, …]} to out_path. Exit 2 with "error: …" for a
// folder, config, weights or tokenizer that is refused, or text or ids the model cannot take; 1
// for a file that cannot be read or written. Nothing is written then.
int forward_command(const ForwardOptions& options);

// `attnviz import` of a model folder: the attention sessions of the forward pass (run in double)
// on a text or token ids (`options.text` or `options.token_ids`; model, memory_budget used too),
// each what a one-layer import gives with the block's true input as X. `layer_spec` chooses the
// blocks (core::select_layers: "2", "all", "0-3"); the pass stops after the last one chosen. The
// exit code (forward_command's, errors reported); when it is 0, `layers` holds the chosen blocks
// and `sessions` one session per block run (index = block).
int model_sessions(const ForwardOptions& options, const std::string& layer_spec, std::vector<int>& layers,
                   std::vector<core::Session>& sessions);

// The whole forward pass (in Scalar: double, or float) of the options' model on their text or token
// ids, handed to `use` with each token id's text (the tokenizer's piece, or "#id" without one) and
// the tokenizer (null without one); the exit code: forward_command's for a failure (reported), else
// what `use` returns.
template <class Scalar = double>
using ModelRunUse =
    std::function<int(const model::ModelFolder& model, model::RunState<Scalar>& state,
                      const std::function<std::string(std::int32_t)>& token_text, const model::Tokenizer* tokenizer)>;
template <class Scalar = double>
int with_model_run(const ForwardOptions& options, const ModelRunUse<Scalar>& use);
extern template int with_model_run<float>(const ForwardOptions&, const ModelRunUse<float>&);
extern template int with_model_run<double>(const ForwardOptions&, const ModelRunUse<double>&);

}  // namespace attnviz::app
