// A session as a file (docs/session-format.md) and a trace as JSON: reading and writing.
#pragma once

#include <string>
#include <string_view>

#include "core/attention/config.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/gradient.hpp"
#include "core/attention/session.hpp"
#include "core/base/file_io.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

inline constexpr const char* session_format = "attnviz-session";
inline constexpr const char* trace_format = "attnviz-trace";
// Version 2 adds biases, K/V groups (kv_heads) and RoPE; version 3 cross-attention (n_kv, Y,
// kv_tokens) and a custom mask; version 4 the softmax (softmax₁, "plus_one"); version 5 a sliding
// window, soft-capping, q/k norms (qk_norm_eps, q_norm, k_norm) and RoPE's scaling. A file is written with the lowest
// version that holds what it uses (a session of the seeds' layer is version 1, which older readers know); all are read.
inline constexpr int session_version = 5;
inline constexpr int trace_version = 5;
inline int file_version(const Config& config) {
    if (config.window > 0 || config.softcap > 0 || config.qk_norm.on ||
        (config.rope.on && config.rope.scaling.kind != RopeScaling::Kind::none))
        return 5;
    if (config.softmax != Softmax::standard) return 4;
    if (config.cross() || config.mask == Mask::custom) return 3;
    return config.extended() ? 2 : 1;
}

// Parses a session file. Reports every problem it can find, each with its field path;
// malformed JSON is reported with its line and column.
Result<Session> parse_session(std::string_view text);

// The session as JSON: deterministic, numbers in their shortest exact form, one matrix row per line.
// parse_session(write_session(s)) == s, and writing again gives the same bytes — except that the
// file carries W_O only while the projection is on: with it off, W_O reads back empty.
std::string write_session(const Session& session);

// The trace as JSON ("attnviz-trace" version 1): every intermediate of every head, concat and output;
// numbers in their shortest exact form (at most 17 significant digits), null for a masked score.
std::string write_trace(const Trace& trace);
// The same text handed to `sink` piece by piece (about a megabyte each), so a large trace is
// written without being held whole; stops early once the sink returns false.
// With a gradient, a last field "grad": {"of": "output:ROW:COL", "X", "heads": [{"W_Q", "W_K",
// "W_V" (and biases)}], "W_O", "b_O"}, keyed and shaped as the session's own inputs.
void write_trace(const Trace& trace, const TextSink& sink, const Gradients* grad = nullptr);

}  // namespace attnviz::core
