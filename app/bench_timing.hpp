// Timing a piece of work for attnviz bench: one warm-up run, then `reps` timed runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace attnviz::app {

struct Timing {
    double median_ms = 0, min_ms = 0;
};

// Runs `work` once to warm up, then `reps` times; the median and the fastest run.
template <class Work>
Timing time_runs(int reps, Work work) {
    using Clock = std::chrono::steady_clock;
    work();
    std::vector<double> ms;
    for (int k = 0; k < reps; ++k) {
        const auto start = Clock::now();
        work();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    const size_t mid = ms.size() / 2;
    return {ms.size() % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2, ms.front()};
}

}  // namespace attnviz::app
