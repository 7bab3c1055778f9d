// The head view's state (HeadViewPanel): the user's choices, its caches and what the last frame showed.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/head_view.hpp"
#include "state/norm_weighted_cache.hpp"

namespace attnviz::app {

struct HeadViewPanel {
    // The user's choices.
    std::vector<char> hidden;  // per head: its lines left out (heads beyond the vector are shown)
    // Lines below are not drawn. Unset: 0.02 (at 2 % opacity a line is hardly seen), or the uniform
    // weight 1/n_keys when that is smaller (at large n every weight is small).
    std::optional<float> min_weight;
    // Opacity = weight ÷ the 99th percentile of the weights drawn (so lines stay visible when every
    // weight is small), else opacity = weight. Unset: scaled from 16 keys on, as the heatmaps'
    // colours are.
    std::optional<bool> scaled_opacity;
    // Each head's query keeps only its k strongest keys (0: all). Unset: all below 64 keys, else 3
    // (more lines than that only blur into one another in a column of hundreds of tokens).
    std::optional<int> top_k;
    bool mean = false;               // the selection's mean instead of its sum
    std::vector<int> queries, keys;  // the selected tokens (of those shown), ascending
    // The layer shown (of the opened attentions, or of a model's blocks). Unset: the first layer,
    // or in model mode the session being edited.
    std::optional<int> layer;
    bool heads_mean = false;     // the lines of the mean of the heads shown, in one colour
    bool hide_special = false;   // special tokens left out, each row renormalised over the keys left
    bool norm_weighted = false;  // the session's norm-weighted attention, rows normalised, instead of its weights

    // What the weights shown are: the session's (0), a model's block (1) or opened attentions' (2),
    // their version (the snapshot's generation, the run's or the file's serial), the layer, and
    // whether special tokens are hidden. The caches below are keyed on it.
    struct WeightsKey {
        int source = -1;
        std::uint64_t version = 0;
        int layer = 0;
        bool hide_special = false;
        bool norm_weighted = false;
        bool operator==(const WeightsKey&) const = default;
    };
    // A model block's weights in double (its run keeps them in float), for the layer shown.
    std::vector<core::Matrix> block_weights;
    WeightsKey block_of;
    // The tokens kept when special ones are hidden (whether or not they are), and the weights over
    // them, each row renormalised, with their labels.
    core::KeptTokens ordinary;
    WeightsKey ordinary_of;
    std::vector<core::Matrix> renormalised;
    std::vector<std::string> kept_queries, kept_keys;
    WeightsKey renormalised_of;
    // The mean of the heads shown.
    core::Matrix heads_mean_weights;
    WeightsKey heads_mean_of;
    std::vector<char> heads_mean_hidden;
    NormWeightedCache norm;  // the session's norm-weighted attention, once per snapshot

    // What the last frame showed (the tests read it).
    int hovered_query = -1, hovered_key = -1;  // the token under the pointer
    core::HeadLines lines;                     // the lines drawn (of the mean: head 0)
    double opacity_of_1 = 1;                   // the weight drawn opaque (1, or the scaled reference)
    std::vector<std::size_t> drawn;            // how many lines of each head (or of the mean) were drawn
    // The selection's attention, the shown heads averaged: what the selected queries attend to
    // (n_keys values) and how much of each query's attention goes to the selected keys (n values);
    // empty when nothing is selected on that side. Per head too (empty for a hidden head).
    Eigen::VectorXd of_queries, to_keys;
    std::vector<Eigen::VectorXd> of_queries_per_head, to_keys_per_head;

    // The lines are recomputed only when what they depend on changes.
    struct LinesKey {
        WeightsKey weights;
        bool mean = false;
        std::vector<char> hidden;
        float min_weight = -1;
        int top_k = -1;
        std::vector<int> queries, keys;
        bool operator==(const LinesKey&) const = default;
    } lines_of;
    core::HeadLines whole_lines;  // the lines of no token in particular, kept while the pointer is on one
    LinesKey whole_of;
    // The picture many lines are painted into: its version, and what it was painted from.
    std::uint64_t painted_version = 0;
    LinesKey painted_of;
    double painted_opacity = 0;
};

}  // namespace attnviz::app
