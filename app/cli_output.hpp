// What the headless commands share for their output: problems printed as "error: FILE: what",
// text written to a file (atomically) or to stdout, matrices as JSON, and a session file read for a
// command.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/attention/matrix_types.hpp"
#include "core/attention/session.hpp"
#include "core/base/file_io.hpp"
#include "core/base/problem.hpp"

namespace attnviz::app {

// The exit codes of every headless command: success, an I/O error, invalid input.
inline constexpr int exit_ok = 0;
inline constexpr int exit_io = 1;
inline constexpr int exit_invalid = 2;

// Prints each problem as "error: <path>: <message>" (a problem about the whole document is given
// the file's path), the first max_reported_problems of them and then how many more there are, with
// the files' names and text escaped (core::printable).
void report(const core::Problems& problems, const std::string& file);

// A note on stderr, escaped as report() escapes.
void note(const std::string& text);

// Writes produced text to out_path (atomically), or to stdout for "" and "-"; the exit code.
int write_output(const core::TextProducer& produce, const std::string& out_path);
int write_output(const std::string& text, const std::string& out_path);

// Whether --dtype names a compute type (float or double); else reported ("error: --dtype: …").
bool dtype_valid(const std::string& dtype);

// A matrix as JSON: an array of its rows, each an array of numbers.
nlohmann::ordered_json matrix_rows(const core::Matrix& m);

// The session of a file, refused (reported; the exit code returned, 0 when read) when the path is
// empty (2), the file cannot be read (1), is not a valid session (2) or its trace needs more than
// memory_budget bytes (2).
int read_session(const std::string& path, std::int64_t memory_budget, core::Session& session);

}  // namespace attnviz::app
