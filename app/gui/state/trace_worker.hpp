// Recompute off the UI thread. A Snapshot is an immutable pair of a session and its trace; the UI
// draws the newest snapshot while the worker computes the next one. The newest request wins: a
// request not yet started is replaced by a newer one, so a drag at n = 1024 never queues work. A
// request that has started runs to its end (the forward pass has no point to stop at) and is
// shown while the newer one computes, unless that one finished first.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/head_summary.hpp"
#include "core/attention/session.hpp"
#include "core/attention/session_patch.hpp"
#include "state/worker.hpp"

namespace attnviz::app {

struct Snapshot {
    core::Session session;  // the inputs the trace was computed from
    core::Trace trace;      // every intermediate of exactly that session
    // Each head's summary of its weights (the heads panel's numbers), made with the trace on the
    // worker: at n = 1024 they took a frame 60–100 ms.
    std::vector<core::HeadSummary> head_summaries;
    std::uint64_t generation = 0;  // increases with every request; caches key on it
    double compute_ms = 0;         // how long the trace took
    bool out_of_memory = false;    // the trace did not fit (trace is then empty)
};

// Computes a snapshot now, on this thread (bad_alloc is reported in out_of_memory). `reuse`, when
// given, lends its buffers to the new trace (a trace of the same size then allocates nothing).
std::shared_ptr<Snapshot> compute_snapshot(core::Session session, std::uint64_t generation,
                                           core::Trace* reuse = nullptr);

class TraceWorker {
public:
    TraceWorker() = default;
    ~TraceWorker() = default;  // the worker goes first: drops the request waiting, joins a running one
    TraceWorker(const TraceWorker&) = delete;
    TraceWorker& operator=(const TraceWorker&) = delete;

    // Asks for the snapshot of `session` (made whole on the worker: the caller copies only what
    // changed since the session of its patch's base); a request that has not started yet is
    // dropped for it. `reuse` lends the buffers of an earlier trace (see compute_snapshot).
    void request(core::SessionPatch session, std::uint64_t generation, core::Trace reuse = {});
    // The newest finished snapshot not taken yet, or nullptr.
    std::shared_ptr<Snapshot> take();
    // Blocks until no request is waiting or being computed.
    void wait() const;
    // Nothing waiting, being computed or finished and not taken: a request now starts at once.
    bool idle() const;

private:
    void compute_pending();  // on the worker: the newest request, if still waiting

    struct Request {
        core::SessionPatch session;
        std::uint64_t generation;
        core::Trace reuse;
    };
    mutable std::mutex mutex_;  // guards pending_ and finished_
    std::optional<Request> pending_;
    std::shared_ptr<Snapshot> finished_;
    Worker worker_{"trace"};  // last: destroyed (joined) before the members its jobs read
};

}  // namespace attnviz::app
