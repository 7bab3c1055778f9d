// A session: what the user edits and saves. Its file format is docs/session-format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "file_io.hpp"
#include "forward.hpp"
#include "gradient.hpp"
#include "params.hpp"
#include "problem.hpp"

namespace attnviz::core {

inline constexpr const char* session_format = "attnviz-session";
inline constexpr const char* trace_format = "attnviz-trace";
// Version 2 adds biases, K/V groups (kv_heads) and RoPE; version 3 cross-attention (n_kv, Y,
// kv_tokens) and a custom mask. A file is written with the lowest version that holds what it
// uses (a session of the seeds' layer is version 1, which older readers know); all are read.
inline constexpr int session_version = 3;
inline constexpr int trace_version = 3;
inline int file_version(const Config& config) {
    if (config.cross() || config.mask == Mask::custom) return 3;
    return config.extended() ? 2 : 1;
}

struct Session {
    Config config;
    std::vector<std::string> tokens;  // n labels, one per row of X (the queries)
    Params params;
    std::vector<std::string> kv_tokens;  // n_kv labels, one per row of Y (cross-attention only)
    // A session kept to compare with ("pinned"): saved inside the file as "pin", never nested.
    std::shared_ptr<const Session> pin;
    bool operator==(const Session& o) const {
        return config == o.config && tokens == o.tokens && params == o.params && kv_tokens == o.kv_tokens &&
               (pin == o.pin || (pin && o.pin && *pin == *o.pin));
    }
};

// "x1" … "xn"; the keys of cross-attention "y1" … "yn".
std::vector<std::string> default_tokens(int n);
std::vector<std::string> default_kv_tokens(int n_kv);
// The labels of the keys (the columns of the scores and weights): kv_tokens under cross-attention,
// else the tokens themselves.
inline const std::vector<std::string>& key_tokens(const Session& session) {
    return session.config.cross() ? session.kv_tokens : session.tokens;
}
// The labels along a matrix's rows or columns of extent `dim` when they are tokens (Dim::n: the
// queries', Dim::n_kv: the keys'), else nullptr: info(id).rows or .cols.
inline const std::vector<std::string>* token_labels(const Session& session, Dim dim) {
    return dim == Dim::n ? &session.tokens : dim == Dim::n_kv ? &key_tokens(session) : nullptr;
}

// The bytes a session holds in memory: its inputs (8 bytes a number), its labels and its pin.
std::int64_t session_bytes(const Session& session);

// Every problem of a session held in memory: config, token count, shapes, finiteness.
Problems validate(const Session& session);

// The session with new dimensions: params through resize(), tokens kept or extended with defaults.
// Precondition: validate(config) is empty.
Session resized(const Session& session, const Config& config);
// The same, new cells and token labels taken from `memory` where it has them (remembered()), so a
// dimension shrunk and grown back brings its values back.
Session resized(const Session& session, const Config& config, const Session& memory);
// Everything `memory` and `current` hold (core::remembered() of their params; the longer list of
// token labels, current's first).
Session remembered(const Session& memory, const Session& current);

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
