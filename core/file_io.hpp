// Whole-file reads and all-or-nothing writes.
#pragma once

#include <cstdint>
#include <string>

#include "problem.hpp"

namespace attnviz::core {

// Files larger than this are refused rather than read (a session at the size limits is far smaller).
inline constexpr std::uintmax_t max_read_bytes = std::uintmax_t{1} << 30;  // 1 GiB

// The file's bytes, or a problem naming the path and the system's reason. Directories, devices
// and files over max_read_bytes are refused.
Result<std::string> read_file(const std::string& path);

// Writes `text` to a temporary file beside `path`, flushes it, then renames it over `path`,
// so a reader never sees a partial file and a failed write leaves any old file untouched.
// Returns the problems (empty on success).
Problems write_file_atomic(const std::string& path, const std::string& text);

}  // namespace attnviz::core
