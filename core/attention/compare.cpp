#include "core/attention/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attention/params.hpp"
#include "core/attention/session.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

// Whether cell x ranks before cell y among the largest changes: larger |B − A| first, then
// row-major order (a tie keeps the cell that comes first).
bool ranks_before(const CellPair& x, const CellPair& y) {
    const double dx = std::abs(x.delta()), dy = std::abs(y.delta());
    if (dx != dy) return dx > dy;
    return x.row != y.row ? x.row < y.row : x.col < y.col;
}

}  // namespace

Comparison compare(const Matrix& a, const Matrix& b, int top_k) {
    Comparison out;
    out.difference.resize(a.rows(), a.cols());
    const size_t k = static_cast<size_t>(std::max(top_k, 0));
    constexpr double inf = std::numeric_limits<double>::infinity();
    // `top` is kept as a heap whose first element ranks last: each cell is compared with the
    // weakest of the k kept so far, so a matrix of n·m cells costs n·m·log k, not a sort.
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j) {
            const CellPair cell{static_cast<int>(i), static_cast<int>(j), a(i, j), b(i, j)};
            const bool finite_a = std::isfinite(cell.a), finite_b = std::isfinite(cell.b);
            double& d = out.difference(i, j);
            if (!finite_a || !finite_b) {
                d = finite_a ? -inf : finite_b ? inf : 0;  // masked in B only, in A only, or in both
                if (finite_a == finite_b) continue;
                ++(finite_a ? out.masked_b : out.masked_a);
                if (out.masks.size() < k) out.masks.push_back(cell);
                continue;
            }
            d = cell.delta();
            if (cell.a == cell.b) continue;
            ++out.changed;
            out.max_abs = std::max(out.max_abs, std::abs(d));
            if (k == 0) continue;
            if (out.top.size() < k) {
                out.top.push_back(cell);
                std::push_heap(out.top.begin(), out.top.end(), ranks_before);
            } else if (ranks_before(cell, out.top.front())) {
                std::pop_heap(out.top.begin(), out.top.end(), ranks_before);
                out.top.back() = cell;
                std::push_heap(out.top.begin(), out.top.end(), ranks_before);
            }
        }
    std::sort(out.top.begin(), out.top.end(), ranks_before);
    return out;
}

bool same_shape(const MatrixRef& ref, const Config& a, const Config& b) {
    return exists(ref, a) && exists(ref, b) && rows_of(ref.id, a) == rows_of(ref.id, b) &&
           cols_of(ref.id, a) == cols_of(ref.id, b);
}

std::vector<InputChange> changed_inputs(const Session& a, const Session& b) {
    std::vector<InputChange> out;
    const Config &ca = a.config, &cb = b.config;
    for (MatrixId id : all_matrix_ids) {
        if (!is_input(id)) continue;
        const int heads = is_per_head(id) ? std::min(ca.heads, cb.heads) : 1;
        for (int h = 0; h < heads; ++h) {
            // A group's shared matrices once, where both sessions keep them (its first head).
            if (is_kv_shared(id) && (a.params.kv_owner(h) != h || b.params.kv_owner(h) != h)) continue;
            const MatrixRef ref{id, h};
            const bool in_a = exists(ref, ca), in_b = exists(ref, cb);
            if (!in_a && !in_b) continue;
            if (in_a != in_b) {
                out.push_back({ref, in_a ? InputChange::Kind::only_a : InputChange::Kind::only_b});
                continue;
            }
            if (!same_shape(ref, ca, cb)) {
                out.push_back({ref, InputChange::Kind::shape});
                continue;
            }
            const Matrix* ma = find_input(a.params, ref);
            const Matrix* mb = find_input(b.params, ref);
            if (ma && mb && !same(*ma, *mb)) out.push_back({ref, InputChange::Kind::values});
        }
    }
    return out;
}

namespace {

const char* mask_name(Mask m) { return m == Mask::none ? "none" : m == Mask::causal ? "causal" : "custom"; }

std::string scale_text(const Scale& s, Notation notation) {
    if (s.kind == Scale::Kind::sqrt_dk) return symbols(notation).sqrt_dk;
    if (s.kind == Scale::Kind::none) return "1 (none)";
    return format_number(s.divisor);
}

const char* softmax_text(Softmax s) { return s == Softmax::plus_one ? "plus one" : "standard"; }

std::string rope_text(const Rope& r) {
    if (!r.on) return "off";
    std::string s = "base " + format_number(r.base) + (r.style == Rope::Style::half ? ", half" : ", interleaved");
    return r.dims > 0 ? s + ", " + std::to_string(r.dims) + " dims" : s;
}

}  // namespace

std::vector<std::string> config_changes(const Config& a, const Config& b, Notation notation) {
    std::vector<std::string> out;
    const std::string arrow = std::string(" ") + symbols(notation).arrow + " ";
    const auto note = [&](const char* what, const std::string& x, const std::string& y) {
        if (x != y) out.push_back(what + (" " + x) + arrow + y);
    };
    const auto number = [&](const char* what, int x, int y) { note(what, std::to_string(x), std::to_string(y)); };
    const auto on_off = [](bool on) { return std::string(on ? "on" : "off"); };
    number("n", a.n, b.n);
    number("d_model", a.d_model, b.d_model);
    number("h", a.heads, b.heads);
    number("d_k", a.d_k, b.d_k);
    number("d_v", a.d_v, b.d_v);
    note("W_O", on_off(a.output_projection), on_off(b.output_projection));
    note("mask", mask_name(a.mask), mask_name(b.mask));
    // The divisor in use: √d_k of another d_k is another s, already told by d_k.
    if (!(a.scale == b.scale)) note("s", scale_text(a.scale, notation), scale_text(b.scale, notation));
    note("softmax", softmax_text(a.softmax), softmax_text(b.softmax));
    note("biases", on_off(a.biases), on_off(b.biases));
    if (a.grouped() || b.grouped()) number("K/V groups", a.kv_count(), b.kv_count());
    note("RoPE", rope_text(a.rope), rope_text(b.rope));
    note("n_kv", a.cross() ? std::to_string(a.n_kv) : "none", b.cross() ? std::to_string(b.n_kv) : "none");
    return out;
}

}  // namespace attnviz::core
