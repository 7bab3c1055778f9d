#include "core/io/autosave_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>

#include "core/base/file_io.hpp"
#include "core/io/session_file.hpp"

namespace attnviz::core {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* meta_suffix = ".meta.json";
constexpr const char* lock_suffix = ".lock";

// A short description of a session for the recovery offer.
std::string describe(const Session& s) {
    const Config& c = s.config;
    std::string what = "n = " + std::to_string(c.n) + ", d_model = " + std::to_string(c.d_model) + ", " +
                       std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads");
    std::string tokens;
    for (size_t k = 0; k < s.tokens.size() && tokens.size() < 40; ++k) tokens += (k ? " " : "") + s.tokens[k];
    if (tokens.size() >= 40 || s.tokens.size() > 8) {
        size_t cut = std::min<size_t>(tokens.size(), 40);
        while (cut > 0 && cut < tokens.size() && (static_cast<unsigned char>(tokens[cut]) & 0xC0) == 0x80)
            --cut;  // not inside a character
        tokens = tokens.substr(0, cut) + " …";
    }
    return tokens.empty() ? what : what + ": " + tokens;
}

// Whether another process holds the lock at `path` (a missing lock file: nobody).
bool locked_by_someone(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    // Locks belong to an open file description: this one conflicts with every other, our own
    // instance's included (which is never asked about: orphans() skips its id).
    const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // releases the lock if it was taken
    return held;
}

// The state folder made private (0700) through a descriptor opened without following a link, so
// that no other folder is ever changed: "" or why it cannot hold autosaves (a symbolic link, a
// folder of another user, not a folder, a mode that cannot be set).
std::string make_private(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        struct stat st {};
        if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
            return dir +
                   ": is a symbolic link; autosaves are written only into a folder of your own (remove the link, "
                   "or set XDG_STATE_HOME to another folder)";
        return dir + ": cannot open the folder: " + std::strerror(err);
    }
    struct stat st {};
    std::string problem;
    if (::fstat(fd, &st) != 0)
        problem = dir + ": cannot read the folder: " + std::strerror(errno);
    else if (st.st_uid != ::geteuid())
        problem = dir + ": belongs to another user (uid " + std::to_string(st.st_uid) +
                  "); autosaves are written only into a folder of your own";
    else if ((st.st_mode & 07777) != 0700 && ::fchmod(fd, 0700) != 0)
        problem = dir + ": cannot make the folder private (mode 0700): " + std::strerror(errno);
    ::close(fd);
    return problem;
}

}  // namespace

std::string default_autosave_dir() {
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) return std::string(xdg) + "/attnviz";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/state/attnviz";
    return "";
}

std::string local_time_text(std::int64_t seconds) {
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    if (!::localtime_r(&t, &tm)) return "?";
    char buf[64];
    return std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) ? buf : "?";
}

AutosaveStore::AutosaveStore(std::string dir) : dir_(std::move(dir)) {
    if (dir_.empty()) {
        problem_ = "no state directory (neither XDG_STATE_HOME nor HOME is set)";
        return;
    }
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) {
        problem_ = dir_ + ": cannot create: " + ec.message();
        return;
    }
    problem_ = make_private(dir_);
    if (!problem_.empty()) return;
    id_ = std::to_string(::getpid()) + "-" + random_hex();
    const std::string lock = path(lock_suffix);
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        problem_ = lock + ": cannot create: " + std::strerror(errno);
        return;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        problem_ = lock + ": cannot lock: " + std::strerror(errno);
        ::close(fd);
        return;
    }
    lock_fd_ = fd;
}

AutosaveStore::~AutosaveStore() {
    if (lock_fd_ >= 0) {
        // The lock file goes with the instance; its autosave (if any is left) is then an orphan.
        std::error_code ec;
        if (!has_files_) fs::remove(path(lock_suffix), ec);
        ::close(lock_fd_);
    }
}

Problems AutosaveStore::save(const Session& session, const std::string& file) {
    if (!enabled()) return {{"", problem_}};
    Problems problems;
    try {
        // The session first: a .meta.json always names a complete session file.
        problems = write_file_atomic(path(".json"), write_session(session), FileMode::owner_only);
        if (problems.empty()) {
            // The file as an absolute path: the record is read by another process, in another folder.
            const json meta = {{"format", "attnviz-autosave"},
                               {"version", 1},
                               {"pid", static_cast<std::int64_t>(::getpid())},
                               {"saved_at", static_cast<std::int64_t>(std::time(nullptr))},
                               {"file", canonical_path(file)},
                               {"what", describe(session)}};
            problems = write_file_atomic(path(meta_suffix),
                                         meta.dump(1, ' ', false, json::error_handler_t::replace) + "\n",
                                         FileMode::owner_only);
        }
    } catch (const std::bad_alloc&) {
        problems = {{"", "out of memory while writing the autosave"}};
    }
    if (problems.empty()) has_files_ = true;
    std::lock_guard<std::mutex> hold(mutex_);
    problems_ = problems;
    return problems;
}

Problems AutosaveStore::last_problems() const {
    std::lock_guard<std::mutex> hold(mutex_);
    return problems_;
}

void AutosaveStore::clear() {
    if (!enabled()) return;
    std::error_code ec;
    fs::remove(path(meta_suffix), ec);  // the meta first: a session file alone is never offered
    fs::remove(path(".json"), ec);
    has_files_ = false;
}

std::vector<AutosaveInfo> AutosaveStore::orphans() const {
    std::vector<AutosaveInfo> found;
    std::error_code ec;
    if (dir_.empty()) return found;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const size_t suffix_len = std::strlen(meta_suffix);
        if (name.size() <= suffix_len || name.compare(name.size() - suffix_len, suffix_len, meta_suffix) != 0) continue;
        AutosaveInfo info;
        info.id = name.substr(0, name.size() - suffix_len);
        if (info.id == id_) continue;
        if (locked_by_someone(dir_ + "/" + info.id + lock_suffix)) continue;  // that instance still runs
        const Result<std::string> text = read_file(it->path().string());
        if (!text || text.value->size() > (1 << 16)) continue;
        const json meta = json::parse(*text.value, nullptr, false);
        if (!meta.is_object() || meta.value("format", "") != "attnviz-autosave") continue;
        info.session_path = dir_ + "/" + info.id + ".json";
        if (!fs::is_regular_file(info.session_path, ec)) continue;
        const auto text_of = [&](const char* key) {
            const auto v = meta.find(key);
            return v != meta.end() && v->is_string() ? v->get<std::string>() : std::string();
        };
        const auto number_of = [&](const char* key) {
            const auto v = meta.find(key);
            return v != meta.end() && v->is_number_integer() ? v->get<std::int64_t>() : std::int64_t{0};
        };
        info.file = text_of("file");
        info.what = text_of("what");
        info.saved_at = number_of("saved_at");
        info.pid = number_of("pid");
        found.push_back(std::move(info));
    }
    std::sort(found.begin(), found.end(),
              [](const AutosaveInfo& a, const AutosaveInfo& b) { return a.saved_at > b.saved_at; });
    return found;
}

Result<Session> AutosaveStore::load(const AutosaveInfo& info) {
    const Result<std::string> text = read_file(info.session_path);
    if (!text) return Result<Session>::fail(text.problems);
    Result<Session> session = parse_session(*text.value);
    for (Problem& p : session.problems) p.path = info.session_path + (p.path.empty() ? "" : ": " + p.path);
    return session;
}

void AutosaveStore::remove_stale_locks() const {
    std::error_code ec;
    if (!enabled()) return;
    const size_t suffix_len = std::strlen(lock_suffix);
    std::vector<std::string> stale;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= suffix_len || name.compare(name.size() - suffix_len, suffix_len, lock_suffix) != 0) continue;
        const std::string id = name.substr(0, name.size() - suffix_len);
        std::error_code missing;
        if (id == id_ || fs::exists(dir_ + "/" + id + meta_suffix, missing) ||
            fs::exists(dir_ + "/" + id + ".json", missing))
            continue;  // ours, or an autosave's (discard() removes it with the autosave)
        // A lock a starting instance has just created is not locked yet: only old ones go.
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || std::time(nullptr) - st.st_mtime < 60)
            continue;
        if (!locked_by_someone(it->path().string())) stale.push_back(it->path().string());
    }
    for (const std::string& path : stale) fs::remove(path, ec);
}

void AutosaveStore::discard(const AutosaveInfo& info) {
    const std::string base = info.session_path.substr(0, info.session_path.size() - std::strlen(".json"));
    std::error_code ec;
    fs::remove(base + meta_suffix, ec);
    fs::remove(base + ".json", ec);
    fs::remove(base + lock_suffix, ec);
}

}  // namespace attnviz::core
