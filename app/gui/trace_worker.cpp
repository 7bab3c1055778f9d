#include "trace_worker.hpp"

#include <omp.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
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
    } catch (const std::bad_alloc&) {
        s->trace = core::Trace{};
        s->out_of_memory = true;
    }
    s->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    s->session = std::move(session);
    return s;
}

TraceWorker::TraceWorker() : thread_([this] { run(); }) {}

TraceWorker::~TraceWorker() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        pending_.reset();
    }
    changed_.notify_all();
    thread_.join();
}

void TraceWorker::request(core::Session session, std::uint64_t generation, core::Trace reuse) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // The newest request wins; it keeps the buffers the dropped one was lent.
        if (pending_ && reuse.heads.empty()) reuse = std::move(pending_->reuse);
        pending_ = Request{std::move(session), generation, std::move(reuse)};
    }
    changed_.notify_all();
}

std::shared_ptr<Snapshot> TraceWorker::take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(finished_);
}

void TraceWorker::wait() const {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !running_ && !pending_; });
}

bool TraceWorker::idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return !running_ && !pending_ && !finished_;
}

void lower_thread_priority() {
    // A core left to the UI thread, so frames keep their pace while the worker computes.
    if (omp_get_num_procs() > 1) omp_set_num_threads(std::max(1, omp_get_num_procs() - 1));
#if defined(__linux__)
    // On Linux a nice value belongs to one thread: the worker yields the CPU to the window (and to a
    // software renderer's threads) when they compete, so a long trace does not stretch frames.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
}

void TraceWorker::run() {
    lower_thread_priority();
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        changed_.wait(lock, [this] { return stop_ || pending_.has_value(); });
        if (stop_) return;
        Request request = std::move(*pending_);
        pending_.reset();
        running_ = true;
        lock.unlock();
        std::shared_ptr<Snapshot> done = compute_snapshot(std::move(request.session), request.generation,
                                                          &request.reuse);
        lock.lock();
        running_ = false;
        if (!finished_ || finished_->generation < done->generation) finished_ = std::move(done);
        changed_.notify_all();
    }
}

}  // namespace attnviz::app
