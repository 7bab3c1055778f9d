#include "core/base/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <new>
#include <random>
#include <set>
#include <utility>

namespace attnviz::core {

namespace {

std::string reason(int err) { return std::strerror(err); }

// Closes a descriptor when it goes out of scope (unless released).
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    // Closes now and returns close()'s result (0, or -1 with errno).
    int close() {
        const int fd = fd_;
        fd_ = -1;
        return ::close(fd);
    }

private:
    int fd_;
};

// The directory part of a path and its last component, split at the last '/':
// "a/b" → ("a", "b"), "b" → (".", "b"), "/b" → ("/", "b"), "a/" → ("a", "").
std::string dir_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}
std::string name_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Writes all of `text` to `fd`, retrying short writes and EINTR. 0, or the errno of the failure.
int write_all(int fd, std::string_view text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return 0;
}

// write_all with SIGPIPE blocked, so a reader that goes away gives EPIPE instead of killing the
// program; a SIGPIPE raised by this write is taken off the pending set before the mask is restored.
int write_all_no_sigpipe(int fd, std::string_view text) {
    sigset_t pipe_set, old_mask, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    const int err = write_all(fd, text);
    if (err == EPIPE && !was_pending) {
        const timespec zero{0, 0};
        while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return err;
}

// Writes what `produce` gives to `fd` with `write` (write_all or write_all_no_sigpipe), piece by
// piece. 0, or the errno of the first failure (the producer is told to stop).
int write_pieces(int fd, const TextProducer& produce, int (*write)(int, std::string_view)) {
    int err = 0;
    produce([&](std::string_view piece) {
        if (err == 0) err = write(fd, piece);
        return err == 0;
    });
    return err;
}

// The path a chain of symbolic links ends at (the path itself when it is not a link), or a problem
// message. Relative links are relative to the directory of the link. The final path need not exist.
struct Resolved {
    std::string path;
    std::string error;       // non-empty on failure
    bool by_kernel = false;  // `path` is a link only the kernel can follow (see below)
};
Resolved follow_links(const std::string& path, uid_t user) {
    constexpr int max_links = 40;  // as the kernel's own limit (MAXSYMLINKS)
    std::string current = path;
    std::set<std::pair<dev_t, ino_t>> seen;  // the links passed, to tell a loop from a long chain
    for (int hops = 0;; ++hops) {
        struct stat st {};
        if (::lstat(current.c_str(), &st) != 0) {
            if (errno == ENOENT) return {current, "", false};  // a new file (or the end of a dangling link)
            return {"", "cannot write: " + reason(errno), false};
        }
        if (!S_ISLNK(st.st_mode)) return {current, "", false};
        // As the kernel's fs.protected_symlinks: a link another user planted in a sticky,
        // world-writable folder (/tmp) is not followed, whatever that setting is here.
        struct stat dir {};
        if (::stat(dir_of(current).c_str(), &dir) != 0) return {"", "cannot write: " + reason(errno), false};
        if (!may_follow_link(st.st_uid, dir.st_uid, dir.st_mode, user))
            return {"",
                    (current == path ? std::string("is") : current + " is") +
                        " a symbolic link in a sticky, world-writable folder (" + dir_of(current) +
                        ") owned by neither you nor the folder's owner (uid " + std::to_string(st.st_uid) +
                        "): it is not followed, as Linux's fs.protected_symlinks refuses it; nothing was written",
                    false};
        if (!seen.insert({st.st_dev, st.st_ino}).second)
            return {"", "is a loop of symbolic links (" + current + " leads back to itself); nothing was written",
                    false};
        if (hops == max_links) return {"", "leads through more than 40 symbolic links; nothing was written", false};
        std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
        for (;;) {
            const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
            if (n < 0) return {"", "cannot read the symbolic link " + current + ": " + reason(errno), false};
            if (static_cast<std::size_t>(n) < target.size()) {
                target.resize(static_cast<std::size_t>(n));
                break;
            }
            target.resize(target.size() * 2);  // the link grew meanwhile
        }
        if (target.empty()) return {"", "is an empty symbolic link; nothing was written", false};
        const std::string next = target.front() == '/' ? target : dir_of(current) + "/" + target;
        // The links in /proc/<pid>/fd (behind /dev/stdout) name a pipe or socket as "pipe:[123]", not a
        // path; the kernel still opens them. When the text leads nowhere but the kernel reaches
        // something that is not a regular file or directory, let the kernel follow the link.
        struct stat via_kernel {};
        if (target.front() != '/' && ::lstat(next.c_str(), &st) != 0 && errno == ENOENT &&
            ::stat(current.c_str(), &via_kernel) == 0 && !S_ISREG(via_kernel.st_mode) && !S_ISDIR(via_kernel.st_mode))
            return {current, "", true};
        current = next;
    }
}

// Writes to a character device or a FIFO that is already there, without creating or truncating.
// `follow`: `path` is a link the kernel is to follow (Resolved::by_kernel).
std::string write_special(const std::string& path, bool fifo, bool follow, const TextProducer& produce) {
    // O_NONBLOCK: a FIFO without a reader fails with ENXIO at once instead of waiting for one.
    const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0) | (follow ? 0 : O_NOFOLLOW);
    Fd fd(::open(path.c_str(), flags));
    if (fd.get() < 0) {
        if (fifo && errno == ENXIO) return "is a pipe (FIFO) with no reader; nothing was written";
        return "cannot write: " + reason(errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return "cannot write: " + reason(errno);
    if (fifo ? !S_ISFIFO(st.st_mode) : !S_ISCHR(st.st_mode))
        return "was replaced while being written; nothing was written";
    if (fifo) {
        // A reader is there: write normally, waiting for it to take the data.
        const int fl = ::fcntl(fd.get(), F_GETFL);
        if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) < 0) return "cannot write: " + reason(errno);
    }
    if (const int err = write_pieces(fd.get(), produce, write_all_no_sigpipe)) return "cannot write: " + reason(err);
    if (fd.close() != 0) return "cannot write: " + reason(errno);
    return "";
}

// Replaces the regular file (or creates the file) at `path` through a temporary file beside it.
// `old` is the existing file's status, or null for a new file.
std::string replace_atomically(const std::string& path, const struct stat* old, FileMode mode,
                               const TextProducer& produce) {
    if (name_of(path).empty()) return "ends with '/', so it names a directory, not a file";
    std::string tmp;
    int raw = -1;
    for (int attempt = 0; attempt < 8; ++attempt) {
        tmp = temp_path_beside(path);
        raw = create_exclusive(tmp, mode == FileMode::owner_only ? 0600 : 0666);
        if (raw >= 0 || errno != EEXIST) break;
    }
    if (raw < 0) return "cannot write: " + reason(errno);
    Fd fd(raw);
    const auto fail = [&](const std::string& what, int err) {
        ::unlink(tmp.c_str());
        return what + reason(err);
    };
    if (mode == FileMode::owner_only) {
        // Exactly 0600, whatever the umask or an older file had.
        if (::fchmod(fd.get(), 0600) != 0) return fail("cannot make the file private: ", errno);
    } else if (old != nullptr) {
        // The owner first (as root only; failing is fine), then the mode, which chown may have reduced.
        if (::geteuid() == 0 && (old->st_uid != ::geteuid() || old->st_gid != ::getegid()))
            (void)!::fchown(fd.get(), old->st_uid, old->st_gid);
        if (::fchmod(fd.get(), old->st_mode & 07777) != 0) return fail("cannot keep the file's permissions: ", errno);
    }
    if (const int err = write_pieces(fd.get(), produce, write_all)) return fail("cannot write: ", err);
    if (::fsync(fd.get()) != 0) return fail("cannot write: ", errno);
    if (fd.close() != 0) return fail("cannot write: ", errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot replace the file: ", errno);
    // Make the rename itself durable. The new file is in place whatever this gives, and some file
    // systems cannot sync a directory, so a failure here is not reported.
    Fd dir(::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() >= 0) (void)::fsync(dir.get());
    return "";
}

// What a file of this type is, for the refusal message ("a directory", ...).
const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

}  // namespace

std::string random_hex() {
    std::uint64_t bits = 0;
    if (::getrandom(&bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits)) {
        std::random_device rd;
        bits = (std::uint64_t{rd()} << 32) ^ rd();
    }
    static const char hex[] = "0123456789abcdef";
    std::string digits(16, '0');
    for (int i = 15; i >= 0; --i, bits >>= 4) digits[static_cast<std::size_t>(i)] = hex[bits & 0xF];
    return digits;
}

std::string temp_path_beside(const std::string& path) {
    const std::string suffix = random_hex();
    // Keep the whole name within NAME_MAX (255) for any name the target itself may have.
    const std::string name = name_of(path).substr(0, 200);
    const std::string dir = dir_of(path);
    return (dir == "/" ? "/" : dir + "/") + "." + name + ".tmp-" + suffix;
}

std::string canonical_path(const std::string& path) {
    if (path.empty()) return path;
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    if (ec) return path;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
    return (ec ? absolute.lexically_normal() : canonical).string();
}

bool may_follow_link(uid_t link_owner, uid_t dir_owner, mode_t dir_mode, uid_t user) {
    const bool sticky_world_writable = (dir_mode & S_ISVTX) != 0 && (dir_mode & S_IWOTH) != 0;
    return !sticky_world_writable || link_owner == dir_owner || link_owner == user;
}

int create_exclusive(const std::string& path, mode_t mode) {
    int fd;
    do fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

namespace {
constexpr std::string_view over_limit_words = " bytes, over the limit of ";
}

bool is_over_limit(const Problems& problems) {
    return problems.size() == 1 && problems.front().message.rfind("is ", 0) == 0 &&
           problems.front().message.find(over_limit_words) != std::string::npos;
}

Result<std::string> read_file(const std::string& path) {
    return read_file(path, max_read_bytes, "a file attnviz reads");
}

Result<std::string> read_file(const std::string& path, std::uintmax_t limit, std::string_view what) {
    using R = Result<std::string>;
    limit = std::min(limit, max_read_bytes);
    if (path.empty()) return R::fail({{path, "no file name given"}});
    // Check the type before opening, since opening a device or FIFO can block or have effects.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return R::fail({{path, "cannot open: " + reason(errno)}});
    if (S_ISDIR(st.st_mode)) return R::fail({{path, "is a directory, not a file"}});
    if (!S_ISREG(st.st_mode)) return R::fail({{path, "is not a regular file"}});
    // O_NONBLOCK: should a FIFO be swapped in after the stat, the open does not wait for a writer.
    Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (fd.get() < 0) return R::fail({{path, "cannot open: " + reason(errno)}});
    if (::fstat(fd.get(), &st) != 0) return R::fail({{path, "cannot read: " + reason(errno)}});
    if (S_ISDIR(st.st_mode)) return R::fail({{path, "is a directory, not a file"}});
    if (!S_ISREG(st.st_mode)) return R::fail({{path, "is not a regular file"}});
    const auto too_big = [&](std::uintmax_t size) {
        return R::fail({{path, "is " + std::to_string(size) + std::string(over_limit_words) + std::to_string(limit) +
                                   " for " + std::string(what)}});
    };
    const auto size = static_cast<std::uintmax_t>(st.st_size);
    if (size > limit) return too_big(size);
    try {
        // Read to the end rather than trusting the size: the file may change meanwhile, and some
        // (in /proc, say) report 0. One byte past the limit is enough to know it is over.
        std::string text;
        text.resize(static_cast<std::size_t>(size) + 1);
        std::size_t got = 0;
        for (;;) {
            if (got == text.size()) {
                if (text.size() > limit) return too_big(text.size());
                text.resize(std::min<std::size_t>(text.size() * 2 + 4096, limit + 1));
            }
            const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
            if (n < 0) {
                if (errno == EINTR) continue;
                return R::fail({{path, "cannot read: " + reason(errno)}});
            }
            if (n == 0) break;
            got += static_cast<std::size_t>(n);
        }
        if (got > limit) return too_big(got);
        text.resize(got);
        return R::ok(std::move(text));
    } catch (const std::bad_alloc&) {
        return R::fail({{path, "there is not enough memory to read it"}});
    }
}

Problems write_file_atomic(const std::string& path, const std::string& text, FileMode mode) {
    return write_file_atomic(
        path, [&text](const TextSink& sink) { sink(text); }, mode);
}

Problems write_file_atomic(const std::string& path, const TextProducer& text, FileMode mode) {
    if (path.empty()) return {{path, "no file name given"}};
    const Resolved target = follow_links(path, ::geteuid());
    if (!target.error.empty()) return {{path, target.error}};
    // When `path` is a link, say where it led.
    const auto problem = [&](const std::string& message) -> Problems {
        if (message.empty()) return {};
        if (target.path == path) return {{path, message}};
        return {{path, message + " (the link leads to " + target.path + ")"}};
    };

    struct stat st {};
    if ((target.by_kernel ? ::stat(target.path.c_str(), &st) : ::lstat(target.path.c_str(), &st)) != 0) {
        if (errno != ENOENT) return problem("cannot write: " + reason(errno));
        return problem(replace_atomically(target.path, nullptr, mode, text));
    }
    if (S_ISREG(st.st_mode)) {
        // access() says yes to root for any file, so a file with no write bit at all is read-only too.
        if ((st.st_mode & 0222) == 0 || ::faccessat(AT_FDCWD, target.path.c_str(), W_OK, AT_EACCESS) != 0)
            return problem("is read-only; nothing was written");
        return problem(replace_atomically(target.path, &st, mode, text));
    }
    if (S_ISCHR(st.st_mode)) return problem(write_special(target.path, false, target.by_kernel, text));
    if (S_ISFIFO(st.st_mode)) return problem(write_special(target.path, true, target.by_kernel, text));
    if (S_ISDIR(st.st_mode)) return problem("is a directory, not a file");
    return problem(std::string("is ") + kind_of(st.st_mode) + ", not a file; nothing was written");
}

}  // namespace attnviz::core
