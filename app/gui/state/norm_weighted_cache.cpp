#include "state/norm_weighted_cache.hpp"

#include <algorithm>

#include "core/attention/forward.hpp"
#include "core/attention/head_analysis.hpp"

namespace attnviz::app {

NormWeighted compute_norm_weighted(std::shared_ptr<const Snapshot> snapshot) {
    const Snapshot& s = *snapshot;
    const core::Config& c = s.session.config;
    NormWeighted out;
    out.generation = s.generation;
    for (int h = 0; h < static_cast<int>(s.trace.heads.size()); ++h) {
        out.heads.push_back(core::norm_weighted(c, s.session.params, s.trace, h));
        out.rows.push_back(core::norm_weighted_rows(out.heads.back()));
        if (out.heads.back().size() > 0) out.top = std::max(out.top, out.heads.back().maxCoeff());
        out.value_norms.push_back(core::value_outputs(c, s.session.params, s.trace, h).rowwise().norm());
    }
    out.snapshot = std::move(snapshot);
    return out;
}

namespace {

// Whether numbers fit a trace: as many heads, each of its weights' shape.
bool fits(const NormWeighted& r, const core::Trace& t) {
    if (r.heads.size() != t.heads.size()) return false;
    for (std::size_t h = 0; h < r.heads.size(); ++h)
        if (r.heads[h].rows() != t.heads[h].weights.rows() || r.heads[h].cols() != t.heads[h].weights.cols())
            return false;
    return true;
}

}  // namespace

const NormWeighted* NormWeightedCache::get(const AppState& state) {
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    if (job_.ready())
        if (std::optional<NormWeighted> done = job_.take()) result_ = std::move(*done);
    const bool current = result_ && result_->generation == shown->generation;
    if (!current && !shown->trace.heads.empty() && !shown->out_of_memory &&
        !(job_.valid() && job_generation_ == shown->generation)) {
        if (core::forward_flops(shown->session.config) <= state.sync_limit()) {
            job_.cancel();
            result_ = compute_norm_weighted(shown);
        } else {
            job_ = worker_.submit([shown](const Worker::Stop&) { return compute_norm_weighted(shown); });
            job_generation_ = shown->generation;
        }
    }
    return result_ && fits(*result_, shown->trace) ? &*result_ : nullptr;
}

}  // namespace attnviz::app
