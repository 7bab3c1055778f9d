// Recompute off the UI thread. A Snapshot is an immutable pair of a session and its trace; the UI
// draws the newest snapshot while the worker computes the next one. The newest request wins: a
// request not yet started is replaced by a newer one, so a drag at n = 1024 never queues work.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/attention/forward.hpp"
#include "core/attention/session.hpp"

namespace attnviz::app {

struct Snapshot {
    core::Session session;         // the inputs the trace was computed from
    core::Trace trace;             // every intermediate of exactly that session
    std::uint64_t generation = 0;  // increases with every request; caches key on it
    double compute_ms = 0;         // how long the trace took
    bool out_of_memory = false;    // the trace did not fit (trace is then empty)
};

// Computes a snapshot now, on this thread (bad_alloc is reported in out_of_memory). `reuse`, when
// given, lends its buffers to the new trace (a trace of the same size then allocates nothing).
std::shared_ptr<Snapshot> compute_snapshot(core::Session session, std::uint64_t generation,
                                           core::Trace* reuse = nullptr);

// Makes the calling thread a background worker: it leaves a core to the UI thread (OpenMP) and, on
// Linux, yields the CPU to the window when they compete (nice 10), so long work does not stretch
// frames. The trace worker, the model view's and the gradient view's threads call it first.
void lower_thread_priority();

class TraceWorker {
public:
    TraceWorker();
    ~TraceWorker();  // stops and joins (a running computation finishes first)
    TraceWorker(const TraceWorker&) = delete;
    TraceWorker& operator=(const TraceWorker&) = delete;

    // Asks for the snapshot of `session`; a request that has not started yet is dropped for it.
    // `reuse` lends the buffers of an earlier trace (see compute_snapshot).
    void request(core::Session session, std::uint64_t generation, core::Trace reuse = {});
    // The newest finished snapshot not taken yet, or nullptr.
    std::shared_ptr<Snapshot> take();
    // Blocks until no request is waiting or being computed.
    void wait() const;
    // Nothing waiting, being computed or finished and not taken: a request now starts at once.
    bool idle() const;

private:
    void run();

    struct Request {
        core::Session session;
        std::uint64_t generation;
        core::Trace reuse;
    };
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::optional<Request> pending_;
    std::shared_ptr<Snapshot> finished_;
    bool running_ = false;
    bool stop_ = false;
    std::thread thread_;  // last: starts after every member it reads
};

}  // namespace attnviz::app
