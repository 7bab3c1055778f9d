// The Worker's contract: jobs run by priority (first queued first within one), a result reaches the
// UI thread's poll through its handle, a cancelled or superseded job's result is never delivered (a
// queued one never runs, a running one is asked to stop), and a Worker destroyed while a job runs
// stops it, joins, and frees what the dropped jobs held.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "state/worker.hpp"

using attnviz::app::Worker;
using namespace std::chrono_literals;

namespace {

// A job that holds the worker until released, so that the next ones queue behind it.
struct Gate {
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();
    std::promise<void> entered;  // set once the gate job runs

    auto job() {
        return [this](const Worker::Stop&) {
            entered.set_value();
            opened.wait();
        };
    }
};

// Polls as a frame does until the handle is ready (at most ~10 s); false when it never got there.
template <class T>
bool poll_until_ready(const Worker::Job<T>& job) {
    for (int frame = 0; frame < 10000 && !job.ready(); ++frame) std::this_thread::sleep_for(1ms);
    return job.ready();
}

// Spins until stop is requested (at most ~10 s, so a broken Worker fails the test instead of hanging).
bool wait_for_stop(const Worker::Stop& stop) {
    for (int k = 0; k < 10000 && !stop.requested(); ++k) std::this_thread::sleep_for(1ms);
    return stop.requested();
}

}  // namespace

TEST(Worker, AResultReachesThePollOnceAndOnlyWhenFinished) {
    Worker worker;
    Gate gate;
    Worker::Job<void> held = worker.submit(gate.job());
    Worker::Job<int> job = worker.submit([](const Worker::Stop&) { return 6 * 7; });
    EXPECT_TRUE(job.valid());
    gate.entered.get_future().wait();
    EXPECT_FALSE(job.ready());  // queued behind the gate
    EXPECT_FALSE(job.take().has_value());
    EXPECT_TRUE(job.valid());  // polling before it is done takes nothing
    EXPECT_TRUE(worker.busy());
    gate.open.set_value();
    ASSERT_TRUE(poll_until_ready(job));
    const std::optional<int> result = job.take();
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(*result, 42);
    EXPECT_FALSE(job.valid());  // taken once
    EXPECT_FALSE(job.take().has_value());
    worker.wait();
    EXPECT_FALSE(worker.busy());
    EXPECT_TRUE(held.take());
}

TEST(Worker, JobsRunByPriorityThenInTheOrderQueued) {
    Worker worker;
    Gate gate;
    Worker::Job<void> held = worker.submit(gate.job());
    gate.entered.get_future().wait();
    std::mutex m;
    std::vector<std::string> ran;
    const auto job = [&](std::string name) {
        return [&, name](const Worker::Stop&) {
            std::lock_guard<std::mutex> lock(m);
            ran.push_back(name);
            return name;
        };
    };
    using P = Worker::Priority;
    Worker::Job<std::string> low = worker.submit(job("low"), P::low);
    Worker::Job<std::string> normal1 = worker.submit(job("normal 1"), P::normal);
    Worker::Job<std::string> urgent = worker.submit(job("urgent"), P::urgent);
    Worker::Job<std::string> normal2 = worker.submit(job("normal 2"), P::normal);
    Worker::Job<std::string> high = worker.submit(job("high"), P::high);
    gate.open.set_value();
    worker.wait();
    EXPECT_EQ(ran, (std::vector<std::string>{"urgent", "high", "normal 1", "normal 2", "low"}));
    EXPECT_EQ(low.take().value_or(""), "low");
    EXPECT_EQ(normal1.take().value_or(""), "normal 1");
    EXPECT_EQ(normal2.take().value_or(""), "normal 2");
    EXPECT_EQ(urgent.take().value_or(""), "urgent");
    EXPECT_EQ(high.take().value_or(""), "high");
}

TEST(Worker, ASupersededJobWhileQueuedNeverRunsAndTheNewestIsDelivered) {
    Worker worker;
    Gate gate;
    Worker::Job<void> held = worker.submit(gate.job());
    gate.entered.get_future().wait();
    std::atomic<int> runs = 0;
    Worker::Job<int> latest = worker.submit([&](const Worker::Stop&) { return ++runs, 1; });
    latest = worker.submit([&](const Worker::Stop&) { return ++runs, 2; });  // supersedes the first
    latest = worker.submit([&](const Worker::Stop&) { return ++runs, 3; });
    gate.open.set_value();
    worker.wait();
    EXPECT_EQ(runs.load(), 1);
    EXPECT_EQ(latest.take().value_or(0), 3);
}

TEST(Worker, ACancelledRunningJobIsAskedToStopAndItsResultIsDropped) {
    Worker worker;
    std::promise<void> started;
    std::atomic<bool> saw_stop = false;
    Worker::Job<int> job = worker.submit([&](const Worker::Stop& stop) {
        started.set_value();
        saw_stop = wait_for_stop(stop);
        return 1;
    });
    started.get_future().wait();
    job.cancel();
    EXPECT_FALSE(job.valid());
    worker.wait();
    EXPECT_TRUE(saw_stop.load());
    EXPECT_FALSE(job.ready());
    EXPECT_FALSE(job.take().has_value());
    // The Worker goes on with the next job.
    Worker::Job<int> next = worker.submit([](const Worker::Stop& stop) { return stop.requested() ? -1 : 2; });
    ASSERT_TRUE(poll_until_ready(next));
    EXPECT_EQ(next.take().value_or(0), 2);
}

TEST(Worker, ADestroyedHandleCancelsItsJob) {
    Worker worker;
    Gate gate;
    Worker::Job<void> held = worker.submit(gate.job());
    gate.entered.get_future().wait();
    std::atomic<bool> ran = false;
    {
        Worker::Job<void> dropped = worker.submit([&](const Worker::Stop&) { ran = true; });
    }
    gate.open.set_value();
    worker.wait();
    EXPECT_FALSE(ran.load());
}

TEST(Worker, WhatAJobThrowsIsRethrownByTake) {
    Worker worker;
    Worker::Job<int> job = worker.submit([](const Worker::Stop&) -> int { throw std::runtime_error("no room"); });
    job.wait();
    ASSERT_TRUE(job.ready());
    EXPECT_THROW(job.take(), std::runtime_error);
    // The thread survives it.
    Worker::Job<int> next = worker.submit([](const Worker::Stop&) { return 5; });
    next.wait();
    EXPECT_EQ(next.take().value_or(0), 5);
}

TEST(Worker, PostedJobsRunInOrderAndWaitSeesThemAll) {
    Worker worker;
    std::vector<int> ran;  // written by the worker only, read after wait()
    for (int k = 0; k < 5; ++k) worker.post([&ran, k](const Worker::Stop&) { ran.push_back(k); });
    // A posted job may queue more (as a checkpoint's listing queues its layers); one that throws
    // ends alone.
    worker.post([&](const Worker::Stop&) {
        worker.post([&ran](const Worker::Stop&) { ran.push_back(6); }, Worker::Priority::high);
        throw std::runtime_error("ignored");
    });
    worker.wait();
    EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4, 6}));
    EXPECT_FALSE(worker.busy());
}

// The gradient view's use: a value type with no default constructor, computed off the UI thread.
TEST(Worker, AJobReturnsAValueOfAnyMovableType) {
    struct Gradient {
        explicit Gradient(std::vector<double> v) : values(std::move(v)) {}
        std::vector<double> values;
    };
    Worker worker;
    Worker::Job<std::unique_ptr<Gradient>> job = worker.submit([](const Worker::Stop&) {
        return std::make_unique<Gradient>(std::vector<double>{1, 2, 3});
    });
    ASSERT_TRUE(poll_until_ready(job));
    std::optional<std::unique_ptr<Gradient>> g = job.take();
    ASSERT_TRUE(g && *g);
    EXPECT_EQ((*g)->values, (std::vector<double>{1, 2, 3}));
}

TEST(Worker, DestroyingItWhileAJobRunsStopsTheJobJoinsAndFreesWhatWasQueued) {
    auto held_by_queued = std::make_shared<int>(7);
    std::weak_ptr<int> watch = held_by_queued;
    std::atomic<bool> saw_stop = false, queued_ran = false;
    Worker::Job<int> running_job, queued_job;
    {
        std::promise<void> started;  // before the Worker: outlives its jobs
        Worker worker;
        running_job = worker.submit([&](const Worker::Stop& stop) {
            started.set_value();
            saw_stop = wait_for_stop(stop);
            return 1;
        });
        queued_job = worker.submit([&, held = std::move(held_by_queued)](const Worker::Stop&) {
            queued_ran = true;
            return *held;
        });
        worker.post([&, held = watch.lock()](const Worker::Stop&) { queued_ran = true; });
        started.get_future().wait();
    }  // the Worker ends here, with one job running and two queued
    EXPECT_TRUE(saw_stop.load());
    EXPECT_FALSE(queued_ran.load());
    EXPECT_TRUE(watch.expired());  // what the dropped jobs captured is freed
    // Their handles see them finished, with nothing to deliver.
    EXPECT_TRUE(running_job.ready());
    EXPECT_FALSE(running_job.take().has_value());
    EXPECT_TRUE(queued_job.ready());
    EXPECT_FALSE(queued_job.take().has_value());
}

TEST(Worker, AnIdleWorkerEndsAtOnceAndOneNeverUsedStartsNoThread) {
    { Worker never_used; }
    Worker worker;
    Worker::Job<int> job = worker.submit([](const Worker::Stop&) { return 1; });
    job.wait();
    EXPECT_EQ(job.take().value_or(0), 1);
}

#if defined(__linux__)
// A job runs at the lowest priority, idle-scheduled (the window's threads, a software renderer's
// included, come first); a Worker made not lowered, or started after set_workers_lowered(false),
// runs as its creator does.
TEST(Worker, ItsThreadRunsAtTheLowestPriorityUnlessAskedNot) {
    // This thread's nice value, and whether it is idle-scheduled.
    const auto priority_of_this_thread = [] {
        errno = 0;
        const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
        int policy = -1;
        sched_param param{};
        pthread_getschedparam(pthread_self(), &policy, &param);
        return std::pair<int, bool>(nice, policy == SCHED_IDLE);
    };
    const std::pair<int, bool> creator = priority_of_this_thread();
    ASSERT_LT(creator.first, attnviz::app::worker_nice) << "the test runs at the lowest priority already";
    ASSERT_FALSE(creator.second) << "the test runs idle-scheduled already";
    Worker lowered("lowered");
    Worker::Job<std::pair<int, bool>> job =
        lowered.submit([&](const Worker::Stop&) { return priority_of_this_thread(); });
    job.wait();
    EXPECT_EQ(job.take(), std::make_optional(std::pair<int, bool>(attnviz::app::worker_nice, true)));
    Worker as_creator("as creator", false);
    job = as_creator.submit([&](const Worker::Stop&) { return priority_of_this_thread(); });
    job.wait();
    EXPECT_EQ(job.take(), std::make_optional(creator));
    EXPECT_EQ(priority_of_this_thread(), creator);  // the workers' threads only
    // A screenshot's workers (set_workers_lowered(false) before they start) keep their creator's.
    attnviz::app::set_workers_lowered(false);
    Worker for_screenshot("screenshot");
    job = for_screenshot.submit([&](const Worker::Stop&) { return priority_of_this_thread(); });
    job.wait();
    attnviz::app::set_workers_lowered(true);
    EXPECT_EQ(job.take(), std::make_optional(creator));
}
#endif
