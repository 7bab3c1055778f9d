#include "core/attention/session_patch.hpp"

#include <algorithm>
#include <cstring>

namespace attnviz::core {

namespace {

// Whether two matrices of one shape hold other bits (a bitwise compare: far faster than comparing
// values, and a value copied that compares equal changes nothing).
bool differ(const Matrix& a, const Matrix& b) {
    return a.size() > 0 && std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(double)) != 0;
}

template <class A, class B>
bool same_shapes(const A& a, const B& b) {
    for (size_t k = 0; k < a.size(); ++k)
        if (a[k]->rows() != b[k]->rows() || a[k]->cols() != b[k]->cols()) return false;
    return true;
}

// Whether `s` can be a patch of `base`: everything but the params' values is the same.
bool patchable(const Session& base, const Session& s) {
    const Params &a = base.params, &b = s.params;
    if (!(base.config == s.config) || base.tokens != s.tokens || base.kv_tokens != s.kv_tokens || base.pin != s.pin ||
        a.kv_group_size != b.kv_group_size || a.heads.size() != b.heads.size() ||
        !same_shapes(a.matrices(), b.matrices()))
        return false;
    for (size_t h = 0; h < a.heads.size(); ++h)
        if (!same_shapes(a.heads[h].matrices(), b.heads[h].matrices())) return false;
    return true;
}

}  // namespace

SessionPatch::SessionPatch(std::shared_ptr<const Session> base, const Session& session,
                           const std::optional<std::vector<MatrixRef>>& may_differ)
    : base_(std::move(base)) {
    if (!base_ || !patchable(*base_, session)) {
        whole_ = std::make_shared<const Session>(session);
        base_.reset();
        return;
    }
    std::vector<const Matrix*> named;  // the matrices of `session` that may_differ names
    if (may_differ)
        for (const MatrixRef& ref : *may_differ)
            if (const Matrix* m = find_input(session.params, ref)) named.push_back(m);
    const auto compared = [&](const Matrix* m) {
        return !may_differ || std::find(named.begin(), named.end(), m) != named.end();
    };
    const auto layer_a = base_->params.matrices(), layer_b = session.params.matrices();
    for (size_t k = 0; k < layer_a.size(); ++k)
        if (compared(layer_b[k]) && differ(*layer_a[k], *layer_b[k]))
            parts_.push_back({-1, static_cast<int>(k), *layer_b[k]});
    for (size_t h = 0; h < session.params.heads.size(); ++h) {
        const auto head_a = base_->params.heads[h].matrices(), head_b = session.params.heads[h].matrices();
        for (size_t k = 0; k < head_a.size(); ++k)
            if (compared(head_b[k]) && differ(*head_a[k], *head_b[k]))
                parts_.push_back({static_cast<int>(h), static_cast<int>(k), *head_b[k]});
    }
}

Session SessionPatch::make() const {
    if (whole_) return *whole_;
    Session s = *base_;
    for (const Part& part : parts_) {
        Matrix* to = part.head < 0
                         ? s.params.matrices()[static_cast<size_t>(part.index)]
                         : s.params.heads[static_cast<size_t>(part.head)].matrices()[static_cast<size_t>(part.index)];
        *to = part.values;
    }
    return s;
}

std::int64_t SessionPatch::copied_values() const {
    std::int64_t values = 0;
    if (whole_) {
        for (const Matrix* m : whole_->params.matrices()) values += m->size();
        for (const HeadParams& h : whole_->params.heads)
            for (const Matrix* m : h.matrices()) values += m->size();
        return values;
    }
    for (const Part& part : parts_) values += part.values.size();
    return values;
}

}  // namespace attnviz::core
