// A session as the input matrices in which it differs from a base session held elsewhere (shared,
// never changed): it is made again (make()) where the copy costs nothing to the one who asked, a
// worker thread, while only the changed matrices were copied. A real model's layer holds tens of
// megabytes of weights; a drag edits a cell of X.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/attention/registry.hpp"
#include "core/attention/session.hpp"

namespace attnviz::core {

class SessionPatch {
public:
    // `session` as a patch of `base`: its config, labels and pin must be the base's and its params'
    // shapes too, else the patch is a whole copy. Where the caller knows that `session` differs
    // from `base` at most in the matrices `may_differ` names (those it edited since `base` was made
    // of it), only they are compared, so the patch costs what they hold, not every weight of the
    // layer; nullopt: every matrix is compared.
    SessionPatch(std::shared_ptr<const Session> base, const Session& session,
                 const std::optional<std::vector<MatrixRef>>& may_differ = std::nullopt);
    // The session the patch was made of, exactly.
    Session make() const;
    // How many values the patch copied (a whole copy: every value of the session's params).
    std::int64_t copied_values() const;

private:
    struct Part {
        int head = -1;  // -1: a matrix of the layer; else that head's
        int index = 0;  // its place in Params::matrices() or HeadParams::matrices()
        Matrix values;
    };
    std::shared_ptr<const Session> base_;
    std::shared_ptr<const Session> whole_;  // when the session is not a patch of the base
    std::vector<Part> parts_;
};

}  // namespace attnviz::core
