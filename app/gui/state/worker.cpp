#include "state/worker.hpp"

#include <omp.h>
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <string>

namespace attnviz::app {

namespace {

std::atomic<bool> workers_lowered{true};

// The heap's order: the entry that runs next compares greatest (highest priority, then first queued).
struct RunsLater {
    template <class Entry>
    bool operator()(const Entry& a, const Entry& b) const {
        return a.priority != b.priority ? a.priority < b.priority : a.order > b.order;
    }
};

}  // namespace

void lower_thread_priority() {
    // A core left to the UI thread, so frames keep their pace while the worker computes.
    if (omp_get_num_procs() > 1) omp_set_num_threads(std::max(1, omp_get_num_procs() - 1));
#if defined(__linux__)
    // On Linux a nice value and a scheduling policy belong to one thread (and pass to the threads it
    // starts, its OpenMP team's): the worker yields the CPU to the window (and to a software
    // renderer's threads) when they compete, so a long trace does not stretch frames. The idle
    // policy also takes away the head start a thread waking after a wait has over the others.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), worker_nice);
    sched_param idle{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
#endif
}

void set_workers_lowered(bool lowered) { workers_lowered = lowered; }

EveryCore::EveryCore() : threads_(omp_get_max_threads()) { omp_set_num_threads(omp_get_num_procs()); }

EveryCore::~EveryCore() { omp_set_num_threads(threads_); }

Worker::~Worker() {
    std::vector<Entry> dropped;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        dropped.swap(queue_);
        if (running_) running_->cancelled = true;
    }
    changed_.notify_all();
    for (Entry& e : dropped) {
        e.ticket->cancelled = true;
        finish(*e.ticket);
    }
    if (thread_.joinable()) thread_.join();
}

void Worker::finish(Ticket& ticket) {
    {
        std::lock_guard<std::mutex> lock(ticket.mutex);
        ticket.done = true;
    }
    ticket.finished.notify_all();
}

void Worker::post(std::function<void(const Stop&)> job, Priority priority) {
    auto ticket = std::make_shared<Ticket>();
    enqueue(ticket, priority, [ticket, job = std::move(job)] {
        try {
            job(Stop(*ticket));
        } catch (...) {
            // Documented: a posted job catches what it means to report; the rest ends it.
        }
        finish(*ticket);
    });
}

void Worker::enqueue(std::shared_ptr<Ticket> ticket, Priority priority, std::function<void()> run) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) {  // a job posted by the last one while the Worker ends: never run
            ticket->cancelled = true;
        } else {
            queue_.push_back({priority, queued_++, ticket, std::move(run)});
            std::push_heap(queue_.begin(), queue_.end(), RunsLater{});
            if (!thread_.joinable()) thread_ = std::thread([this] { this->run(); });
            ticket.reset();
        }
    }
    if (ticket) {
        finish(*ticket);
        return;
    }
    changed_.notify_all();
}

bool Worker::busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return running_ || !queue_.empty();
}

void Worker::wait() const {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !running_ && queue_.empty(); });
}

void Worker::run() {
#if defined(__linux__)
    const std::string name = std::string(name_).substr(0, 15);
    pthread_setname_np(pthread_self(), name.c_str());
#endif
    if (lowered_ && workers_lowered) lower_thread_priority();
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        changed_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        std::pop_heap(queue_.begin(), queue_.end(), RunsLater{});
        Entry entry = std::move(queue_.back());
        queue_.pop_back();
        if (entry.ticket->cancelled) {  // superseded or cancelled while queued: dropped unrun
            lock.unlock();
            finish(*entry.ticket);
            entry = {};
            lock.lock();
            changed_.notify_all();
            continue;
        }
        running_ = entry.ticket;
        lock.unlock();
        entry.run();
        entry = {};  // what the job captured goes on this thread, before it counts as finished
        lock.lock();
        running_.reset();
        changed_.notify_all();
    }
}

}  // namespace attnviz::app
