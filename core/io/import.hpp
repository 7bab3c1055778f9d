// One attention layer of a checkpoint as a session: the weights of a PyTorch, BERT, GPT-2 or Llama
// layer, found by their tensor names (with any prefix before them), split into heads as those
// models compute them, with biases, K/V groups and RoPE as the convention has them.
//
//   torch  [layers.{L}.self_attn.]in_proj_weight (3·d_model × d_model, rows Q, K, V; y = x·Wᵀ),
//          in_proj_bias, out_proj.weight, out_proj.bias             (nn.MultiheadAttention)
//   bert   encoder.layer.{L}.attention.self.{query,key,value}.{weight,bias} (y = x·Wᵀ + b),
//          encoder.layer.{L}.attention.output.dense.{weight,bias}
//   gpt2   h.{L}.attn.c_attn.{weight,bias} (Conv1D: y = x·W + b, columns Q, K, V),
//          h.{L}.attn.c_proj.{weight,bias}; causal
//   llama  model.layers.{L}.self_attn.{q,k,v,o}_proj.weight (y = x·Wᵀ, no biases; k and v have
//          kv_heads·d_k rows); RoPE on rotate_half pairs; causal
// Head h of a projection is its columns h·d_k … (h+1)·d_k − 1 (as x·W).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/io/tensors.hpp"

namespace attnviz::core {

enum class Convention { torch, bert, gpt2, llama };
const char* to_string(Convention c);
std::optional<Convention> convention_from_name(const std::string& name);

struct ImportOptions {
    std::optional<Convention> convention;      // nullopt: the one whose tensor names the file has
    std::optional<int> layer;                  // else the file's metadata "layer" (export-layer.py), else 0
    std::optional<int> heads, kv_heads;        // else from the model's config.json
    std::optional<double> rope_base;           // else config.json's rope_theta, else 10000
    std::string config_json;                   // the text of a Hugging Face config.json, "" when none
    std::string config_label = "config.json";  // its path, for messages about its values
    std::optional<Tensor> x;                   // n × d_model, the hidden states entering the layer
    std::vector<std::int64_t> token_ids;       // rows of the checkpoint's token-embedding table as X
    std::vector<std::string> tokens;           // labels of X's rows
    std::uint64_t seed = 1;                    // for a random X when none is given
    int random_n = 8;                          // its rows
};

struct ImportedLayer {
    Session session;
    Convention convention;
    std::vector<std::string> notes;  // what the user should know: the convention picked, a random X …
};

// The layer as a session, or the problems (each "FILE: TENSOR: problem" or an option's name).
// X, unless given (options.x, options.token_ids): the file's tensor "X.L" (the hidden states
// entering layer L, as `export-layer.py --layer all` writes them), else its "X", else random.
Result<ImportedLayer> import_layer(const TensorFile& file, const ImportOptions& options);

// The attention layers a checkpoint holds in a convention: the L of every tensor its query
// projection is named by (layers.L.self_attn.in_proj_weight, encoder.layer.L.attention.self.query.weight,
// h.L.attn.c_attn.weight, layers.L.self_attn.q_proj.weight, with any prefix; torch's bare
// in_proj_weight is layer 0), ascending, each once.
std::vector<int> checkpoint_layers(const TensorFile& file, Convention convention);

struct LayerListing {
    Convention convention;
    std::vector<int> layers;  // ascending, never empty
};
// The convention (given, or the first of torch, bert, gpt2, llama the file has layers of) and its
// layers; refused when there are none.
Result<LayerListing> list_layers(const TensorFile& file, std::optional<Convention> convention);

// The layers `spec` names among `available` (ascending, each once): "all", a layer "3", a range
// "2-5" (both ends included), or a list of them "0,2,4-6". Refused (path "--layer"): text that is
// none of these, a range that runs backwards, a layer the checkpoint does not hold.
Result<std::vector<int>> select_layers(const std::string& spec, const std::vector<int>& available);

// Layer L when several are imported with the same options (`attnviz import --layer all`, the model
// view): import_layer with options.layer = L, plus a note when X is not the hidden states entering
// layer L: an X given, made of token embeddings or random is the same for every layer, and for
// L > 0 the model's own input to the layer would differ.
Result<ImportedLayer> import_layer_of_several(const TensorFile& file, const ImportOptions& options, int layer);
// Every layer of `layers`, in order; the first layer that does not import fails the whole.
Result<std::vector<ImportedLayer>> import_layers(const TensorFile& file, const ImportOptions& options,
                                                 const std::vector<int>& layers);

// What importing a layer of `file` with `options` would make, found from the tensors' names and
// shapes, config.json (options.config_json) and the file's metadata alone, without reading a
// weight: what the import dialog shows before importing. Refused as list_layers refuses.
struct ImportPreview {
    Convention convention;
    std::vector<int> layers;          // the attention layers the file holds in that convention
    int layer = 0;                    // the one imported: options.layer, the metadata's "layer", or 0
    int d_model = 0;                  // of that layer's query projection (0: not found)
    std::optional<int> heads;         // given, or config.json's (or the metadata's); none: to be given
    std::optional<int> kv_groups;     // what the key projection's shape makes of those heads
    std::optional<double> rope_base;  // llama: given, or rope_theta, or 10000
    bool x_random = false;            // no X given, no token ids, no X in the file: a random X
    std::string x;                    // where X comes from, in words
};
Result<ImportPreview> preview_import(const TensorFile& file, const ImportOptions& options);

}  // namespace attnviz::core
