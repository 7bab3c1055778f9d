// A session: what the user edits and saves (its config, token labels and params, and a pinned
// session to compare with). Reading and writing it as a file is core/io/session_file.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/params.hpp"
#include "core/attention/registry.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

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

}  // namespace attnviz::core
