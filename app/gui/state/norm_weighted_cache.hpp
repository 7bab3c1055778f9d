// The norm-weighted attention of every head of the shown snapshot (core::norm_weighted: α_ij·‖f_h(x_j)‖),
// for the views that switch between "weights | norm-weighted" (the heads panel, the head view).
// Computed once per snapshot: at once while the session is small, else on a worker, the previous
// snapshot's numbers staying on screen meanwhile where they have the shape of the new (never per frame).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "state/app_state.hpp"
#include "state/worker.hpp"

namespace attnviz::app {

// One snapshot's numbers, per head.
struct NormWeighted {
    std::shared_ptr<const Snapshot> snapshot;  // what they were computed from (its weights α_ij)
    std::uint64_t generation = 0;              // of that snapshot
    std::vector<core::Matrix> heads;           // α_ij·‖f_h(x_j)‖, n×m (masked: 0)
    std::vector<core::Matrix> rows;            // the same, each query row divided by its sum (core::norm_weighted_rows)
    std::vector<Eigen::VectorXd> value_norms;  // ‖f_h(x_j)‖, m
    double top = 0;                            // the largest value of every head (0 when none is positive)
};

NormWeighted compute_norm_weighted(std::shared_ptr<const Snapshot> snapshot);

class NormWeightedCache {
public:
    // The shown snapshot's numbers (or, while they are computed, the previous snapshot's when they
    // have its shape); null while none fits. Starts the work when it is not done or on its way.
    const NormWeighted* get(const AppState& state);
    bool busy() const { return job_.valid(); }
    void wait() const { job_.wait(); }  // tests, screenshots: the next get() has the numbers

private:
    std::optional<NormWeighted> result_;
    Worker::Job<NormWeighted> job_;
    std::uint64_t job_generation_ = 0;
    Worker worker_{"norm-weighted"};  // last: joined before the members above go
};

}  // namespace attnviz::app
