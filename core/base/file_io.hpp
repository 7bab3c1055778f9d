// Whole-file reads and all-or-nothing writes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "core/base/problem.hpp"

namespace attnviz::core {

// Files larger than this are refused rather than read (a session at the size limits is far smaller).
inline constexpr std::uintmax_t max_read_bytes = std::uintmax_t{1} << 30;  // 1 GiB

// The file's bytes, or a problem naming the path and the system's reason. Directories, devices,
// FIFOs and files over max_read_bytes are refused (checked on the opened file, so nothing can be
// swapped in between the check and the read).
Result<std::string> read_file(const std::string& path);

// read_file with a reader's own limit: a file over `limit` bytes is refused by its size before any
// of it is read ("is N bytes, over the limit of L for <what>"), so a huge file costs no memory.
Result<std::string> read_file(const std::string& path, std::uintmax_t limit, std::string_view what);

// Whether read_file's problems are its refusal of a file over the limit: the file is there and could
// be read, it is only too large (a reader may report that as malformed input, not as unreadable).
bool is_over_limit(const Problems& problems);

// Who may read a written file: `usual`, a new file gets 0666 & ~umask and a replaced one keeps its
// mode (and owner); `owner_only`, it is 0600 whatever was there (autosaves: unsaved work is private).
enum class FileMode { usual, owner_only };

// Writes `text` to `path` so that a reader never sees a partial file and a failure leaves any old
// file untouched. Returns the problems (empty on success, else one naming `path`).
//  - A regular file (or a new one) is replaced atomically: a temporary file with an unpredictable
//    name is created exclusively beside it (create_exclusive), given its mode (FileMode), written,
//    fsynced, renamed over the target, and the directory is fsynced.
//  - A symbolic link is written through: the chain is followed (at most 40 links, loops refused)
//    and the file it finally names is replaced as above; the link stays a link. A dangling link
//    creates the file it names. A link that Linux's fs.protected_symlinks would not follow (see
//    may_follow_link) is refused, whatever that setting is on this machine.
//  - A character device (e.g. /dev/null) or a FIFO with a reader is written to directly; a FIFO
//    with no reader, a directory, a block device or a socket is refused. Nothing is ever created in
//    place of a device node.
//  - A file without write permission (or, even for root, without any write bit) is refused as
//    read-only and left alone.
Problems write_file_atomic(const std::string& path, const std::string& text, FileMode mode = FileMode::usual);

// A file's text in pieces, so a large file (a trace) is never held whole: the producer calls the
// sink with each piece in order; the sink returns false once writing failed, and the producer may
// then stop early.
using TextSink = std::function<bool(std::string_view piece)>;
using TextProducer = std::function<void(const TextSink& sink)>;
// write_file_atomic with the text produced piece by piece (same rules as above).
Problems write_file_atomic(const std::string& path, const TextProducer& produce, FileMode mode = FileMode::usual);

// `path` as an absolute path with symbolic links, "." and ".." resolved (as far as it exists; the
// rest as written), so that it names the same file from any folder and any process; "" stays "".
std::string canonical_path(const std::string& path);

// The parts of write_file_atomic that keep a planted file or symlink from redirecting the write,
// exposed so the tests can check them directly.

// 16 hex digits: 64 bits from getrandom(), or std::random_device if that fails. Each call differs.
std::string random_hex();

// A name for a temporary file beside `path`, in the same directory: ".<name>.tmp-" followed by 16
// hex digits (64 bits from getrandom(), or std::random_device if that fails). Each call differs.
std::string temp_path_beside(const std::string& path);

// open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode): the descriptor of a new
// file, or -1 with errno set. Anything already at `path`, a symlink (dangling or not) included,
// gives EEXIST and is left alone.
int create_exclusive(const std::string& path, mode_t mode = 0666);

// The rule of Linux's fs.protected_symlinks: a symbolic link in a sticky, world-writable folder
// (such as /tmp) is followed only when it belongs to `user` or to the folder's owner, so a link
// another user planted there cannot redirect a write (the link's owner, the folder's owner and
// mode, and the user writing).
bool may_follow_link(uid_t link_owner, uid_t dir_owner, mode_t dir_mode, uid_t user);

}  // namespace attnviz::core
