#include "core/attention/layer_summary.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace attnviz::core {

HeadThumbnail thumbnail(const Matrix& w, int side) {
    HeadThumbnail t;
    t.n = static_cast<int>(w.rows());
    t.keys = static_cast<int>(w.cols());
    side = std::max(side, 1);
    const Eigen::Index rows = std::min<Eigen::Index>(w.rows(), side), cols = std::min<Eigen::Index>(w.cols(), side);
    if (rows == w.rows() && cols == w.cols()) {
        t.cells = w;
    } else {
        // Block of each query row and key column: ⌊k·blocks/count⌋ is the block whose range
        // [⌊b·count/blocks⌋, ⌊(b+1)·count/blocks⌋) holds k.
        auto block_of = [](Eigen::Index count, Eigen::Index blocks) {
            std::vector<Eigen::Index> of(static_cast<size_t>(count));
            for (Eigen::Index b = 0; b < blocks; ++b)
                for (Eigen::Index k = b * count / blocks; k < (b + 1) * count / blocks; ++k)
                    of[static_cast<size_t>(k)] = b;
            return of;
        };
        const std::vector<Eigen::Index> row_block = block_of(w.rows(), rows), col_block = block_of(w.cols(), cols);
        // Each cell the mean weight of its block (pooling_for weights: see core/attention/pooling.hpp).
        std::vector<BlockPool> pools(static_cast<size_t>(rows * cols));
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
            BlockPool* out = pools.data() + row_block[static_cast<size_t>(i)] * cols;
            for (Eigen::Index j = 0; j < w.cols(); ++j)
                out[col_block[static_cast<size_t>(j)]].add(Pooling::mean, w(i, j));
        }
        t.cells.resize(rows, cols);
        for (Eigen::Index k = 0; k < t.cells.size(); ++k)
            t.cells.data()[k] = pools[static_cast<size_t>(k)].result(Pooling::mean);
    }
    if (t.cells.size() > 0) {
        std::vector<double> sorted(t.cells.data(), t.cells.data() + t.cells.size());
        // Nearest rank: the smallest value with at least 99% of the cells at or below it.
        const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(sorted.size())));
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank - 1), sorted.end());
        t.high = std::max(sorted[rank - 1], std::min(1.0, even_headroom / static_cast<double>(t.keys)));
    }
    return t;
}

LayerSummary summarize_layer(const std::vector<const Matrix*>& weights, int side) {
    LayerSummary s;
    for (const Matrix* w : weights) {
        s.heads.push_back(summarize_head(*w));
        s.thumbnails.push_back(thumbnail(*w, side));
        s.sinks.push_back(sink(*w));
    }
    return s;
}

LayerSummary summarize_layer(const Config& config, const Params& params, const Trace& trace, int side) {
    LayerSummary s = summarize_layer(trace, side);
    for (int h = 0; h < static_cast<int>(trace.heads.size()); ++h)
        s.norm_thumbnails.push_back(thumbnail(norm_weighted_rows(norm_weighted(config, params, trace, h)), side));
    return s;
}

LayerSummary summarize_layer(const Trace& trace, int side) {
    std::vector<const Matrix*> weights;
    for (const HeadTrace& head : trace.heads) weights.push_back(&head.weights);
    return summarize_layer(weights, side);
}

LayerSummary summarize_session(const Session& session, int side) {
    return summarize_layer(session.config, session.params, forward<double>(session.config, session.params), side);
}

double key_value(const HeadSummary& s, HeadKey key) {
    switch (key) {
        case HeadKey::none: return 0;
        case HeadKey::entropy: return s.mean_entropy;
        case HeadKey::distance: return s.mean_distance;
        case HeadKey::first_share: return s.first_share;
        case HeadKey::diagonal_share: return s.diagonal_share;
    }
    return 0;
}

std::vector<int> head_order(const std::vector<HeadSummary>& heads, HeadKey key, bool ascending) {
    std::vector<int> order(heads.size());
    std::iota(order.begin(), order.end(), 0);
    if (key == HeadKey::none) return order;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const double va = key_value(heads[static_cast<size_t>(a)], key);
        const double vb = key_value(heads[static_cast<size_t>(b)], key);
        return ascending ? va < vb : va > vb;
    });
    return order;
}

std::vector<HeadRef> top_heads(const std::vector<const LayerSummary*>& layers, HeadKey key, int count, bool ascending) {
    std::vector<HeadRef> all;
    if (key == HeadKey::none || count <= 0) return all;
    for (size_t l = 0; l < layers.size(); ++l)
        if (layers[l])
            for (size_t h = 0; h < layers[l]->heads.size(); ++h)
                all.push_back({static_cast<int>(l), static_cast<int>(h)});
    auto value = [&](const HeadRef& r) {
        return key_value(layers[static_cast<size_t>(r.layer)]->heads[static_cast<size_t>(r.head)], key);
    };
    std::stable_sort(all.begin(), all.end(), [&](const HeadRef& a, const HeadRef& b) {
        return ascending ? value(a) < value(b) : value(a) > value(b);
    });
    if (all.size() > static_cast<size_t>(count)) all.resize(static_cast<size_t>(count));
    return all;
}

const char* head_key_name(HeadKey key) {
    switch (key) {
        case HeadKey::none: return "none";
        case HeadKey::entropy: return "entropy H";
        case HeadKey::distance: return "distance |i-j|";
        case HeadKey::first_share: return "first-token share";
        case HeadKey::diagonal_share: return "diagonal share";
    }
    return "none";
}

std::optional<HeadKey> head_key_from_name(const std::string& name) {
    constexpr const char* names[] = {"none", "entropy", "distance", "first", "diagonal"};
    for (size_t k = 0; k < std::size(all_head_keys); ++k)
        if (name == names[k]) return all_head_keys[k];
    return std::nullopt;
}

std::string head_key_text(const HeadSummary& s, HeadKey key) {
    char buf[32];
    switch (key) {
        case HeadKey::none:
        case HeadKey::entropy: std::snprintf(buf, sizeof buf, "%.2g", s.mean_entropy); break;
        case HeadKey::distance: std::snprintf(buf, sizeof buf, "%.2g", s.mean_distance); break;
        case HeadKey::first_share: std::snprintf(buf, sizeof buf, "%.0f%%", s.first_share * 100); break;
        case HeadKey::diagonal_share: std::snprintf(buf, sizeof buf, "%.0f%%", s.diagonal_share * 100); break;
    }
    return buf;
}

}  // namespace attnviz::core
