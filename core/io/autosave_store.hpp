// Autosave and recovery of unsaved work.
//
// While a session has unsaved changes the app writes it every few seconds into the state
// directory ($XDG_STATE_HOME/attnviz, by default ~/.local/state/attnviz) as two files named by the
// instance: <id>.json (the session, a file attnviz opens like any other) and, once that is
// complete, <id>.meta.json (when, from which file, by which process). The instance holds an
// exclusive lock (flock) on <id>.lock for as long as it runs; the kernel releases it when the
// process ends in any way, so after a crash or `kill -9` the next start finds autosaves whose lock
// is free and offers them. A clean exit or a save removes the instance's files. Two running
// instances never share an id, and neither offers the other's autosave.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/session.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// $XDG_STATE_HOME/attnviz, else ~/.local/state/attnviz; "" when neither variable is set.
std::string default_autosave_dir();

// What an autosave holds, from its .meta.json.
struct AutosaveInfo {
    std::string id;             // "<pid>-<16 hex digits>"
    std::string session_path;   // <dir>/<id>.json
    std::string file;           // the session file the work came from ("" for a new session)
    std::int64_t saved_at = 0;  // seconds since the epoch
    std::int64_t pid = 0;
    std::string what;  // "n = 4, d_model = 8, 2 heads: I love attention …"
};

// "2026-11-23 14:05:09" in local time.
std::string local_time_text(std::int64_t seconds_since_epoch);

class AutosaveStore {
public:
    // Creates `dir` (mode 0700) and takes this instance's lock. When that fails (no directory, a
    // read-only disk) the store is disabled and problem() says why; the app runs on without it.
    // A `dir` that is a symbolic link or belongs to another user is refused the same way (its mode
    // is set through a descriptor that never follows a link). Autosave files are 0600.
    explicit AutosaveStore(std::string dir);
    ~AutosaveStore();  // keeps the files (clear() removes them)
    AutosaveStore(const AutosaveStore&) = delete;
    AutosaveStore& operator=(const AutosaveStore&) = delete;

    bool enabled() const { return lock_fd_ >= 0; }
    const std::string& problem() const { return problem_; }
    const std::string& id() const { return id_; }
    const std::string& dir() const { return dir_; }

    // Writes the session (the app runs this on its Worker: app/gui/state/autosave.hpp). `file` is
    // recorded as an absolute path (relative to the current folder when it is not one). May run on
    // another thread than the other functions, one write at a time.
    Problems save(const Session& session, const std::string& file);
    // The problems of the last finished write (empty when it succeeded).
    Problems last_problems() const;
    // Whether this instance's files exist (written and not cleared since).
    bool has_files() const { return has_files_; }
    // Removes this instance's autosave (after a save, or at a clean exit); no write may be running.
    void clear();

    // Autosaves of instances that are no longer running (their lock is free), newest first.
    // Unreadable or malformed ones are skipped.
    std::vector<AutosaveInfo> orphans() const;

    static Result<Session> load(const AutosaveInfo& info);
    // Removes an autosave's files, its lock included.
    static void discard(const AutosaveInfo& info);
    // Removes the lock files that instances which ended without an autosave left behind (a crash
    // or a kill before anything was autosaved): no autosave beside them and nobody holding them.
    void remove_stale_locks() const;

private:
    std::string path(const std::string& suffix) const { return dir_ + "/" + id_ + suffix; }

    std::string dir_, id_, problem_;
    int lock_fd_ = -1;
    std::atomic<bool> has_files_ = false;
    mutable std::mutex mutex_;  // guards problems_
    Problems problems_;
};

}  // namespace attnviz::core
