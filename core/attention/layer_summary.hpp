// What the model view keeps of a layer: per head its summary (core/attention/head_summary.hpp) and a small
// thumbnail of its weights, so that a grid of layers × heads (BERT-base: 12 × 12 at n = 512) costs
// 144 matrices of at most 64×64 instead of 144 of 512×512.
//
//   weights   n × kv_len (queries × keys), each row summing to 1
//   thumbnail rows × cols with rows = min(n, side), cols = min(kv_len, side): block r of rows covers
//             queries [⌊r·n/rows⌋, ⌊(r+1)·n/rows⌋), block c of columns keys likewise; each cell holds
//             the MEAN weight of its block (Pooling::mean, as the heatmaps' textures and exported
//             figures pool weights): a uniform head stays uniform, a one-hot row still adds 1/cells
//             to its block. A matrix within side × side is kept as it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/head_analysis.hpp"
#include "core/attention/head_summary.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/attention/pooling.hpp"
#include "core/attention/session.hpp"

namespace attnviz::core {

// The largest side of a thumbnail.
inline constexpr int thumbnail_side = 64;
// A thumbnail's colour range reaches at least this many times the weight of even attention (1/keys).
inline constexpr double even_headroom = 8;

struct HeadThumbnail {
    Matrix cells;         // rows × cols as above
    int n = 0, keys = 0;  // the shape of the weights it shrinks (its aspect when drawn)
    // The top of a colour range (from 0) for this head alone: the 99th percentile of its cells
    // (nearest rank), so that one bright corner (query 0 of a causal head attends only to key 0)
    // does not darken the rest; but at least min(1, even_headroom / keys), eight times the weight of
    // even attention, so that a head spreading its attention evenly looks even (an eighth of the way
    // up the colormap, in one colour at every n) rather than showing its small differences at full
    // contrast, while a sharp head (mean weights of its blocks far above 8/keys) takes its own top.
    // 0 for an empty matrix.
    double high = 0;
};

// A head's weights shrunk to at most side × side, each cell the mean weight of its block.
HeadThumbnail thumbnail(const Matrix& weights, int side = thumbnail_side);

// One layer: per head its summary, its thumbnail and its sink (h of each).
struct LayerSummary {
    std::vector<HeadSummary> heads;
    std::vector<HeadThumbnail> thumbnails;
    std::vector<Sink> sinks;  // core/attention/head_analysis.hpp
    // Per head a thumbnail of its norm-weighted attention, each query row divided by its sum
    // (norm_weighted_rows); empty for weights alone (no V, no W_O to weigh them by).
    std::vector<HeadThumbnail> norm_thumbnails;
};

// From a trace's weights, with its norm-weighted thumbnails.
LayerSummary summarize_layer(const Config& config, const Params& params, const Trace& trace, int side = thumbnail_side);
// From a trace's weights alone.
LayerSummary summarize_layer(const Trace& trace, int side = thumbnail_side);
// From weights alone (h matrices).
LayerSummary summarize_layer(const std::vector<const Matrix*>& weights, int side = thumbnail_side);
// Computes the session's trace (which is then dropped) and summarizes it, norm-weighted thumbnails
// included. Precondition: the session is valid.
LayerSummary summarize_session(const Session& session, int side = thumbnail_side);

// What the model view sorts and highlights heads by.
enum class HeadKey { none, entropy, distance, first_share, diagonal_share };
inline constexpr HeadKey all_head_keys[] = {HeadKey::none, HeadKey::entropy, HeadKey::distance, HeadKey::first_share,
                                            HeadKey::diagonal_share};
double key_value(const HeadSummary& s, HeadKey key);

// Its name in the app's menu ("diagonal share"), on the command line ("diagonal": none, entropy,
// distance, first, diagonal; nullopt for another), and a head's value as the view prints it
// ("0.83", "42%").
const char* head_key_name(HeadKey key);
std::optional<HeadKey> head_key_from_name(const std::string& name);
std::string head_key_text(const HeadSummary& summary, HeadKey key);

// The order to show a layer's heads in: head indices by the key's value, largest first (smallest
// first with `ascending`); ties, and HeadKey::none, keep the heads' own order.
std::vector<int> head_order(const std::vector<HeadSummary>& heads, HeadKey key, bool ascending = false);

// The `count` heads of the whole model (layer, head) that come first in that order across every
// layer: e.g. the 5 heads with the largest diagonal share. Empty for HeadKey::none.
struct HeadRef {
    int layer = 0, head = 0;
    bool operator==(const HeadRef&) const = default;
};
std::vector<HeadRef> top_heads(const std::vector<const LayerSummary*>& layers, HeadKey key, int count,
                               bool ascending = false);

}  // namespace attnviz::core
