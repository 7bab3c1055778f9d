// Whole-file reads and all-or-nothing writes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "problem.hpp"

namespace attnviz::core {

// Files larger than this are refused rather than read (a session at the size limits is far smaller).
inline constexpr std::uintmax_t max_read_bytes = std::uintmax_t{1} << 30;  // 1 GiB

// The file's bytes, or a problem naming the path and the system's reason. Directories, devices,
// FIFOs and files over max_read_bytes are refused (checked on the opened file, so nothing can be
// swapped in between the check and the read).
Result<std::string> read_file(const std::string& path);

// Writes `text` to `path` so that a reader never sees a partial file and a failure leaves any old
// file untouched. Returns the problems (empty on success, else one naming `path`).
//  - A regular file (or a new one) is replaced atomically: a temporary file with an unpredictable
//    name is created exclusively beside it (create_exclusive), given the old file's mode (and
//    owner when running as root; a new file gets 0666 & ~umask), written, fsynced, renamed over
//    the target, and the directory is fsynced.
//  - A symbolic link is written through: the chain is followed (at most 40 links, loops refused)
//    and the file it finally names is replaced as above; the link stays a link. A dangling link
//    creates the file it names.
//  - A character device (e.g. /dev/null) or a FIFO with a reader is written to directly; a FIFO
//    with no reader, a directory, a block device or a socket is refused. Nothing is ever created in
//    place of a device node.
//  - A file without write permission (or, even for root, without any write bit) is refused as
//    read-only and left alone.
Problems write_file_atomic(const std::string& path, const std::string& text);

// A file's text in pieces, so a large file (a trace) is never held whole: the producer calls the
// sink with each piece in order; the sink returns false once writing failed, and the producer may
// then stop early.
using TextSink = std::function<bool(std::string_view piece)>;
using TextProducer = std::function<void(const TextSink& sink)>;
// write_file_atomic with the text produced piece by piece (same rules as above).
Problems write_file_atomic(const std::string& path, const TextProducer& produce);

// The parts of write_file_atomic that keep a planted file or symlink from redirecting the write,
// exposed so the tests can check them directly.

// 16 hex digits: 64 bits from getrandom(), or std::random_device if that fails. Each call differs.
std::string random_hex();

// A name for a temporary file beside `path`, in the same directory: ".<name>.tmp-" followed by 16
// hex digits (64 bits from getrandom(), or std::random_device if that fails). Each call differs.
std::string temp_path_beside(const std::string& path);

// open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666): the descriptor of a new
// file, or -1 with errno set. Anything already at `path`, a symlink (dangling or not) included,
// gives EEXIST and is left alone.
int create_exclusive(const std::string& path);

}  // namespace attnviz::core
