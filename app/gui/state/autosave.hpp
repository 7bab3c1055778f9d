// When the explorer autosaves (core/io/autosave_store.hpp writes the files): while the session has unsaved
// changes, at most every `interval` seconds and only when it changed since the last autosave; once
// it is saved (or back to unmodified), the autosave is removed. An autosave that fails (a full
// disk, a folder that cannot be written, autosave off because the state folder was refused) is
// said in the status bar and Messages, once per cause, so the user knows to save.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/io/autosave_store.hpp"
#include "state/app_state.hpp"
#include "state/worker.hpp"

namespace attnviz::app {

inline constexpr double default_autosave_seconds = 5;

// This instance's autosave store (core::AutosaveStore), every write to it run by a Worker (a large
// session takes seconds to write as text), one at a time: the recovery window writes a restored
// session through it at once (save()), after the write in progress; clear() waits for it too.
class AutosaveWriter {
public:
    explicit AutosaveWriter(std::string dir) : store_(std::move(dir)) {}
    ~AutosaveWriter() { worker_.wait(); }  // a write in progress ends before the store does

    // Starts writing the session; false, writing nothing, while the previous write still runs (or
    // the store is off).
    bool save_async(core::Session session, std::string file);
    // Writes the session now, after the write in progress; its problems.
    core::Problems save(const core::Session& session, const std::string& file);
    bool busy() const { return write_.valid() && !write_.ready(); }
    // Waits for a write in progress.
    void wait() { write_.wait(); }
    // Removes this instance's autosave; waits for a write first.
    void clear() {
        wait();
        store_.clear();
    }

    bool enabled() const { return store_.enabled(); }
    const std::string& problem() const { return store_.problem(); }
    const std::string& id() const { return store_.id(); }
    core::Problems last_problems() const { return store_.last_problems(); }
    bool has_files() const { return store_.has_files(); }
    std::vector<core::AutosaveInfo> orphans() const { return store_.orphans(); }
    void remove_stale_locks() const { store_.remove_stale_locks(); }

private:
    core::AutosaveStore store_;
    Worker::Job<void> write_;    // the last write (its outcome is read through last_problems())
    Worker worker_{"autosave"};  // last: joined before the store it writes through goes
};

class Autosaver {
public:
    // dir "" or interval ≤ 0: off (nothing written, nothing offered). Lock files that ended
    // instances left without an autosave are removed.
    Autosaver(const std::string& dir, double interval_seconds);

    // Once a frame. Copies the session and writes it on the store's thread when due; reports a
    // write that failed (state.set_message) once per cause.
    void tick(AppState& state, std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
    // At a clean exit: the autosave is no longer needed (the user saved or chose not to).
    void finish() { store_.clear(); }

    AutosaveWriter& store() { return store_; }
    bool on() const { return interval_ > 0 && store_.enabled(); }

private:
    AutosaveWriter store_;
    double interval_;
    std::uint64_t written_revision_ = ~std::uint64_t{0};
    std::chrono::steady_clock::time_point last_write_{};
    bool checking_ = false;  // a write was started whose outcome has not been looked at
    std::string reported_;   // the cause of failure last reported ("" since a write succeeded)
};

}  // namespace attnviz::app
