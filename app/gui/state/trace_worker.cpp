#include "state/trace_worker.hpp"

#include <chrono>
#include <new>

namespace attnviz::app {

std::shared_ptr<Snapshot> compute_snapshot(core::Session session, std::uint64_t generation, core::Trace* reuse) {
    auto s = std::make_shared<Snapshot>();
    s->generation = generation;
    if (reuse) s->trace = std::move(*reuse);
    const auto start = std::chrono::steady_clock::now();
    try {
        core::forward_into(s->trace, session.config, session.params);
        s->head_summaries.resize(s->trace.heads.size());
#pragma omp parallel for schedule(dynamic)
        for (std::size_t h = 0; h < s->trace.heads.size(); ++h)
            s->head_summaries[h] = core::summarize_head(s->trace.heads[h].weights);
    } catch (const std::bad_alloc&) {
        s->trace = core::Trace{};
        s->head_summaries.clear();
        s->out_of_memory = true;
    }
    s->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    s->session = std::move(session);
    return s;
}

void TraceWorker::request(core::SessionPatch session, std::uint64_t generation, core::Trace reuse) {
    bool waiting;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // The newest request wins; it keeps the buffers the dropped one was lent.
        waiting = pending_.has_value();
        if (waiting && reuse.heads.empty()) reuse = std::move(pending_->reuse);
        pending_ = Request{std::move(session), generation, std::move(reuse)};
    }
    // A job is queued per request that found none waiting: it computes whichever is newest then.
    if (!waiting) worker_.post([this](const Worker::Stop&) { compute_pending(); });
}

std::shared_ptr<Snapshot> TraceWorker::take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(finished_);
}

void TraceWorker::wait() const { worker_.wait(); }

bool TraceWorker::idle() const {
    if (worker_.busy()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return !pending_ && !finished_;
}

void TraceWorker::compute_pending() {
    std::optional<Request> request;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        request.swap(pending_);
    }
    if (!request) return;
    core::Session session = request->session.make();
    core::Trace reuse = std::move(request->reuse);
    const std::uint64_t generation = request->generation;
    request.reset();  // the patch's base (an earlier snapshot's session) is let go before this one is shown
    std::shared_ptr<Snapshot> done = compute_snapshot(std::move(session), generation, &reuse);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_ || finished_->generation < done->generation) finished_ = std::move(done);
}

}  // namespace attnviz::app
