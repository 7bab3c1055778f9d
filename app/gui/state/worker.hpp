// Background work for the window: one thread that runs jobs off the UI thread so a frame never
// waits for a trace, a layer's numbers, a gradient, a desktop file dialog or an autosave.
//
// A job is a function of a Worker::Stop; jobs run one at a time, the highest priority first and,
// within a priority, in the order they were queued. What a job computes reaches the UI thread
// through its Job<T> handle, which the frame polls (ready(), take()): the worker thread never
// touches AppState or ImGui. Cancelling a handle (cancel(), assigning a newer job to it — the
// newer one supersedes it — or destroying it) means its result is never delivered: a queued job
// is dropped unrun, a running one sees stop.requested() and may stop early. post() queues a job
// without a handle (one that hands its results over itself, under its own lock).
//
// The thread starts with the first job and, by default, at a lower priority (see
// lower_thread_priority). The destructor drops what is queued, asks the running job to stop and
// joins, so an owner declares its Worker after every member the jobs read: the Worker then goes
// first and no job outlives what it reads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnviz::app {

// Makes the calling thread a background worker: it leaves a core to the UI thread (OpenMP) and, on
// Linux, yields the CPU to the window when they compete (nice worker_nice, scheduled as SCHED_IDLE),
// so long work does not stretch frames. A Worker's thread calls it first unless asked not to.
void lower_thread_priority();
// Whether Worker threads started from now on lower their priority (the default). A run of a fixed
// number of frames that is not a benchmark (a screenshot, --frames) turns it off before its first
// job: each of its frames waits for the workers, which idle-scheduled get almost no CPU while other
// processes keep the cores busy (a screenshot beside other tests then waited minutes).
void set_workers_lowered(bool lowered);
// The lowest priority: under a software renderer the window's frames are drawn by threads of their
// own (Mesa's llvmpipe), which a worker at nice 10 still delayed by up to 15 ms a frame; at 19, and
// idle-scheduled, they take the CPU as soon as they wake. The workers keep what the frames leave.
inline constexpr int worker_nice = 19;

// While it lives, OpenMP on the calling worker thread uses every core instead of the share
// lower_thread_priority leaves it: for a job the window waits for with nothing else to draw (a
// model's rerun after an edit), whose threads still yield to the window's when they compete.
class EveryCore {
public:
    EveryCore();
    ~EveryCore();
    EveryCore(const EveryCore&) = delete;
    EveryCore& operator=(const EveryCore&) = delete;

private:
    int threads_;  // the thread's OpenMP threads before
};

class Worker {
public:
    // Jobs of a higher priority run first (a queued job is never interrupted by one).
    enum class Priority { low = 0, normal = 1, high = 2, urgent = 3 };

    // What one job shares between its handle, the queue and the worker thread.
    struct Ticket {
        std::atomic<bool> cancelled = false;  // its result is not wanted (set by the UI thread or ~Worker)
        std::atomic<bool> done = false;       // it ran (or was dropped) and its result, if any, is in place
        std::mutex mutex;                     // with `finished`: waits for done
        std::condition_variable finished;
    };

    // Handed to a running job: whether its result is still wanted.
    class Stop {
    public:
        explicit Stop(const Ticket& ticket) : ticket_(ticket) {}
        bool requested() const { return ticket_.cancelled.load(); }

    private:
        const Ticket& ticket_;
    };

    // The UI thread's handle on one job and its result of type T (void: none).
    template <class T>
    class Job {
    public:
        Job() = default;
        ~Job() { cancel(); }
        Job(Job&& other) noexcept : slot_(std::move(other.slot_)) {}
        // The job held so far is superseded: cancelled, its result never delivered.
        Job& operator=(Job&& other) noexcept {
            if (this != &other) {
                cancel();
                slot_ = std::move(other.slot_);
            }
            return *this;
        }
        Job(const Job&) = delete;
        Job& operator=(const Job&) = delete;

        // A job is held whose result has not been taken (as std::future::valid).
        bool valid() const { return slot_ != nullptr; }
        // It finished: take() now gives its result at once.
        bool ready() const { return slot_ && slot_->done.load(); }
        // Its result once it finished (nullopt before; rethrows what the job threw); the handle is
        // then empty. For T = void: true once it finished.
        auto take() {
            if constexpr (std::is_void_v<T>) {
                if (!ready()) return false;
                std::shared_ptr<Slot> slot = std::move(slot_);
                if (slot->error) std::rethrow_exception(slot->error);
                return true;
            } else {
                if (!ready()) return std::optional<T>();
                std::shared_ptr<Slot> slot = std::move(slot_);
                if (slot->error) std::rethrow_exception(slot->error);
                return std::move(slot->value);
            }
        }
        // Blocks until the job finished (or was dropped).
        void wait() const {
            if (!slot_) return;
            std::unique_lock<std::mutex> lock(slot_->mutex);
            slot_->finished.wait(lock, [this] { return slot_->done.load(); });
        }
        // Its result is never delivered; the handle is then empty.
        void cancel() {
            if (slot_) slot_->cancelled = true;
            slot_.reset();
        }

    private:
        friend class Worker;
        struct Slot : Ticket {
            std::conditional_t<std::is_void_v<T>, bool, std::optional<T>> value{};
            std::exception_ptr error;
        };
        std::shared_ptr<Slot> slot_;
    };

    // name: the thread's, as a debugger or profiler lists it (at most 15 bytes kept). lowered: the
    // thread runs at a lower priority (lower_thread_priority); a thread that only waits for a child
    // process (the desktop file dialog) need not.
    explicit Worker(const char* name = "worker", bool lowered = true) : name_(name), lowered_(lowered) {}
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Queues `job` (a function of const Stop&) and returns the handle its result comes back by.
    template <class F>
    auto submit(F job, Priority priority = Priority::normal) {
        using T = std::invoke_result_t<F&, const Stop&>;
        Job<T> handle;
        auto slot = std::make_shared<typename Job<T>::Slot>();
        handle.slot_ = slot;
        enqueue(slot, priority, [slot, job = std::move(job)]() mutable {
            try {
                if constexpr (std::is_void_v<T>) {
                    job(Stop(*slot));
                    slot->value = true;
                } else {
                    auto value = job(Stop(*slot));
                    if (!slot->cancelled) slot->value.emplace(std::move(value));
                }
            } catch (...) {
                slot->error = std::current_exception();
            }
            finish(*slot);
        });
        return handle;
    }
    // Queues a job with no handle: it runs unless the Worker ends first. It hands its results over
    // itself and catches what it throws (an exception that escapes is dropped with the job).
    void post(std::function<void(const Stop&)> job, Priority priority = Priority::normal);

    // Something is queued or running.
    bool busy() const;
    // Blocks until nothing is queued or running (tests, screenshots, a planned exit).
    void wait() const;

private:
    struct Entry {
        Priority priority;
        std::uint64_t order;             // ties: first queued, first run
        std::shared_ptr<Ticket> ticket;  // cancelled: dropped unrun
        std::function<void()> run;       // sets the ticket done itself
    };
    void enqueue(std::shared_ptr<Ticket> ticket, Priority priority, std::function<void()> run);
    void run();
    // Marks a job done and wakes whoever waits on it.
    static void finish(Ticket& ticket);

    const char* const name_;
    const bool lowered_;
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;  // a job queued or finished, or the end
    std::vector<Entry> queue_;                 // a heap: the next job to run in front
    std::shared_ptr<Ticket> running_;          // the job being run, or null
    std::uint64_t queued_ = 0;
    bool stop_ = false;
    std::thread thread_;  // last: started (by the first job) after every member it reads
};

}  // namespace attnviz::app
