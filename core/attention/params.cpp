#include "core/attention/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>

#include "core/attention/registry.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

void check_matrix(Problems& out, const std::string& path, const Matrix& m, int rows, int cols) {
    if (m.rows() != rows || m.cols() != cols) {
        out.push_back({path, "expected " + format_shape(rows, cols) + ", got " + format_shape(m.rows(), m.cols())});
        return;
    }
    if (values_allowed(m)) return;  // the common case, in one vectorised pass
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            if (auto problem = value_problem(m(i, j)))
                out.push_back({path + "[" + std::to_string(i) + "][" + std::to_string(j) + "]", *problem});
}

// A rows×cols matrix holding `old`'s overlapping block; each new cell from `memory` where it holds
// a finite value there, else fill(r, c).
template <class Fill>
Matrix keep_and_fill(const Matrix& old, int rows, int cols, Fill fill, const Matrix* memory = nullptr) {
    Matrix m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            if (r < old.rows() && c < old.cols())
                m(r, c) = old(r, c);
            else if (memory && r < memory->rows() && c < memory->cols() && std::isfinite((*memory)(r, c)))
                m(r, c) = (*memory)(r, c);
            else
                m(r, c) = fill(r, c);
        }
    return m;
}

// The union of two matrices (see remembered()).
Matrix union_of(const Matrix& memory, const Matrix& current) {
    const Eigen::Index rows = std::max(memory.rows(), current.rows()), cols = std::max(memory.cols(), current.cols());
    Matrix m(rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r)
        for (Eigen::Index c = 0; c < cols; ++c)
            m(r, c) = r < current.rows() && c < current.cols() ? current(r, c)
                      : r < memory.rows() && c < memory.cols() ? memory(r, c)
                                                               : std::numeric_limits<double>::quiet_NaN();
    return m;
}

}  // namespace

std::optional<std::string> value_problem(double v) {
    if (!std::isfinite(v)) return format_number(v) + " is not allowed, values must be finite";
    if (std::abs(v) > Limits::max_abs_value) {
        // With as many digits as it takes to show the value outside: 1.0000000000000002e+15 is
        // outside ±1e+15, where six digits would print both as 1e+15.
        std::string text = format_number(v);
        for (int digits = 7; digits <= 17 && !(std::abs(std::strtod(text.c_str(), nullptr)) > Limits::max_abs_value);
             ++digits)
            text = format_number(v, digits);
        return text + " is outside ±" + format_number(Limits::max_abs_value) +
               ", the range that keeps every intermediate finite";
    }
    return std::nullopt;
}

bool values_allowed(const Matrix& m) {
    // One vectorised pass: a NaN makes the max NaN (PropagateNaN), and NaN ≤ limit is false.
    return m.size() == 0 || m.cwiseAbs().maxCoeff<Eigen::PropagateNaN>() <= Limits::max_abs_value;
}

namespace {

// Where each input lives in the params, for Params and const Params: head h's own matrices in
// heads[h], the K/V ones (W_K, W_V, b_K, b_V) in heads[kv_h]. Every id is named, so a new one is a
// compile error here until it has its place.
template <class P>
auto input_in(P& p, MatrixId id, int h, int kv_h) -> decltype(&p.X) {
    const auto head = [&]() -> auto& { return p.heads[static_cast<size_t>(h)]; };
    const auto group = [&]() -> auto& { return p.heads[static_cast<size_t>(kv_h)]; };
    switch (id) {
        case MatrixId::X: return &p.X;
        case MatrixId::Y: return &p.Y;
        case MatrixId::mask: return &p.mask;
        case MatrixId::W_Q: return &head().W_Q;
        case MatrixId::W_K: return &group().W_K;
        case MatrixId::W_V: return &group().W_V;
        case MatrixId::b_Q: return &head().b_Q;
        case MatrixId::b_K: return &group().b_K;
        case MatrixId::b_V: return &group().b_V;
        case MatrixId::W_O: return &p.W_O;
        case MatrixId::b_O: return &p.b_O;
        case MatrixId::q_norm: return &p.q_norm;
        case MatrixId::k_norm: return &p.k_norm;
        case MatrixId::Q:
        case MatrixId::K:
        case MatrixId::V:
        case MatrixId::Q_rot:
        case MatrixId::K_rot:
        case MatrixId::scores_raw:
        case MatrixId::scores:
        case MatrixId::scores_capped:
        case MatrixId::weights:
        case MatrixId::Z:
        case MatrixId::concat:
        case MatrixId::output:
        case MatrixId::count: return nullptr;  // computed: in the trace
    }
    return nullptr;
}

template <class P>
bool head_in_range(const P& params, MatrixId id, int head) {
    return !is_per_head(id) || (head >= 0 && head < static_cast<int>(params.heads.size()));
}

template <class P>
auto find_input_in(P& params, const MatrixRef& ref) -> decltype(&params.X) {
    if (!is_input(ref.id) || !head_in_range(params, ref.id, ref.head)) return nullptr;
    return input_in(params, ref.id, ref.head, params.kv_owner(ref.head));
}

template <class P>
auto held_input_in(P& params, MatrixId id, int head) -> decltype(&params.X) {
    if (!is_input(id) || !head_in_range(params, id, head)) return nullptr;
    return input_in(params, id, head, head);
}

}  // namespace

Matrix* find_input(Params& params, const MatrixRef& ref) { return find_input_in(params, ref); }
const Matrix* find_input(const Params& params, const MatrixRef& ref) { return find_input_in(params, ref); }
Matrix* held_input(Params& params, MatrixId id, int head) { return held_input_in(params, id, head); }
const Matrix* held_input(const Params& params, MatrixId id, int head) { return held_input_in(params, id, head); }

namespace {

// Visits every input matrix of the registry that the config has, with its path and expected shape,
// in file order: the layer's inputs listed before the per-head ones (X), then each head's
// ("heads[i].W_Q" …), then the layer's inputs listed after them (W_O). A head count that differs
// is visited once as ("heads", nullptr, expected, got).
template <class Visit>
void visit_inputs(const Config& config, const Params& p, Visit visit) {
    auto layer = [&](bool after_heads) {
        bool seen_head = false;
        for (MatrixId id : all_matrix_ids) {
            seen_head = seen_head || (is_input(id) && is_per_head(id));
            if (!is_input(id) || is_per_head(id) || seen_head != after_heads || !exists(id, config)) continue;
            visit(std::string(name(id)), find_input(p, {id, 0}), rows_of(id, config), cols_of(id, config));
        }
    };
    layer(false);
    if (static_cast<int>(p.heads.size()) != config.heads) {
        visit("heads", nullptr, config.heads, static_cast<int>(p.heads.size()));
    } else {
        // A K/V group's matrices are visited at its first head only (grouped-query attention).
        for (int i = 0; i < config.heads; ++i)
            for (MatrixId id : all_matrix_ids)
                if (is_input(id) && is_per_head(id) && exists(id, config) &&
                    (!is_kv_shared(id) || i % config.group_size() == 0))
                    visit("heads[" + std::to_string(i) + "]." + name(id), find_input(p, {id, i}), rows_of(id, config),
                          cols_of(id, config));
    }
    layer(true);
}

}  // namespace

Problems validate(const Config& config, const Params& p) {
    Problems out;
    if (p.kv_group_size != config.group_size()) {
        out.push_back({"heads", "the params share K/V among " + std::to_string(p.kv_group_size) +
                                    " heads, the config among " + std::to_string(config.group_size())});
        return out;
    }
    visit_inputs(config, p, [&](const std::string& path, const Matrix* m, int rows, int cols) {
        if (m)
            check_matrix(out, path, *m, rows, cols);
        else
            out.push_back({path, "expected " + std::to_string(rows) + " heads, got " + std::to_string(cols)});
    });
    if (config.mask == Mask::custom && p.mask.rows() == config.n && p.mask.cols() == config.kv_len())
        for (Problem& problem : mask_problems(p.mask)) out.push_back(std::move(problem));
    return out;
}

Problems mask_problems(const Matrix& mask) {
    Problems out;
    for (Eigen::Index i = 0; i < mask.rows(); ++i) {
        bool any = false;
        for (Eigen::Index j = 0; j < mask.cols(); ++j) {
            const double v = mask(i, j);
            if (v == 1) any = true;
            if (v != 0 && v != 1)
                out.push_back({"mask[" + std::to_string(i) + "][" + std::to_string(j) + "]",
                               "must be 0 or 1 (1: the query may attend to the key), got " + format_number(v)});
        }
        if (!any)
            out.push_back({"mask[" + std::to_string(i) + "]", "query " + std::to_string(i) +
                                                                  " may attend to no key; a row of the mask needs at "
                                                                  "least one 1 (the softmax shares its weight among "
                                                                  "the keys allowed)"});
    }
    return out;
}

bool has_shapes(const Config& config, const Params& p) {
    bool all = p.kv_group_size == config.group_size();
    if (!all) return false;
    visit_inputs(config, p, [&](const std::string&, const Matrix* m, int rows, int cols) {
        all = all && m && m->rows() == rows && m->cols() == cols;
    });
    return all;
}

double fill_random(int stream, int head, int r, int c) {
    // splitmix64 (Steele, Lea, Flood 2014) of the cell's place: well mixed, the same everywhere.
    std::uint64_t z = (std::uint64_t(stream) << 56) ^ (std::uint64_t(head) << 40) ^ (std::uint64_t(r) << 20) ^
                      std::uint64_t(c);
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
    return std::round((2 * unit - 1) * 100) / 100;
}

double fill_weight(Weight weight, int head, int r, int c, int cols) {
    if (head < 2) return (r + head) % cols == c ? 1.0 : 0.0;
    return fill_random(1 + static_cast<int>(weight), head, r, c);
}

double fill_input(int r, int c) { return fill_random(0, 0, r, c); }

double fill_output(int r, int c) { return r == c ? 1.0 : 0.0; }

Params filled(const Config& config) { return resize(Params{}, config); }

Params resize(const Params& from, const Config& to) { return resize(from, to, Params{}); }

Params remembered(const Params& memory, const Params& current) {
    Params p;
    p.heads.resize(std::max(memory.heads.size(), current.heads.size()));
    const Matrix none;
    for (MatrixId id : all_matrix_ids)
        for (int h = 0; is_input(id) && h < (is_per_head(id) ? static_cast<int>(p.heads.size()) : 1); ++h) {
            const Matrix *m = held_input(memory, id, h), *c = held_input(current, id, h);
            *held_input(p, id, h) = union_of(m ? *m : none, c ? *c : none);
        }
    p.kv_group_size = current.kv_group_size;
    return p;
}

namespace {

// The fill rule of an input (resize(), params.hpp): the value of a new cell (r, c) of head `head`'s
// matrix with `cols` columns. A switch over every id, so a new input does not compile without one.
double fill_value(MatrixId id, int head, int r, int c, int cols) {
    switch (id) {
        case MatrixId::X: return fill_input(r, c);
        case MatrixId::Y: return fill_random(4, 0, r, c);
        case MatrixId::mask: return 1.0;
        case MatrixId::W_Q: return fill_weight(Weight::W_Q, head, r, c, cols);
        case MatrixId::W_K: return fill_weight(Weight::W_K, head, r, c, cols);
        case MatrixId::W_V: return fill_weight(Weight::W_V, head, r, c, cols);
        case MatrixId::W_O: return fill_output(r, c);
        case MatrixId::b_Q:
        case MatrixId::b_K:
        case MatrixId::b_V:
        case MatrixId::b_O: return 0.0;
        case MatrixId::q_norm:
        case MatrixId::k_norm: return 1.0;  // a norm's weights start at 1 (the plain RMS norm)
        case MatrixId::Q:
        case MatrixId::K:
        case MatrixId::V:
        case MatrixId::Q_rot:
        case MatrixId::K_rot:
        case MatrixId::scores_raw:
        case MatrixId::scores:
        case MatrixId::scores_capped:
        case MatrixId::weights:
        case MatrixId::Z:
        case MatrixId::concat:
        case MatrixId::output:
        case MatrixId::count: break;  // computed: never in the params
    }
    return 0.0;
}

// Whether an input the config does not use is still held: W_O and the biases keep their values
// while switched off (turned on again, they come back); Y, the mask and the q/k norms' weights are
// dropped (while the session is open they come back from the memory of resize()).
bool held_while_unused(MatrixId id) {
    return id != MatrixId::Y && id != MatrixId::mask && id != MatrixId::q_norm && id != MatrixId::k_norm;
}

}  // namespace

Params resize(const Params& from, const Config& to, const Params& memory) {
    Params p;
    p.kv_group_size = to.group_size();
    p.heads.resize(static_cast<size_t>(to.heads));
    const Matrix none;
    const int from_heads = static_cast<int>(from.heads.size());
    for (MatrixId id : all_matrix_ids) {
        if (!is_input(id) || (!held_while_unused(id) && !exists(id, to))) continue;
        const int rows = rows_of(id, to), cols = cols_of(id, to);
        for (int i = 0; i < (is_per_head(id) ? to.heads : 1); ++i) {
            if (is_kv_shared(id) && p.kv_owner(i) != i) continue;  // this head uses its group's K/V
            // A K/V group's matrix comes from the head whose K/V head i used before.
            const int source = is_kv_shared(id) && i < from_heads && from.kv_group_size > 0 ? from.kv_owner(i) : i;
            const Matrix* old = held_input(from, id, source);
            *held_input(p, id, i) = keep_and_fill(
                old ? *old : none, rows, cols, [&](int r, int c) { return fill_value(id, i, r, c, cols); },
                held_input(memory, id, i));
        }
    }
    return p;
}

void set_projections(Params& params, const Config& config, const LayerProjections& p) {
    const auto row_or_zero = [](const Matrix& bias, Eigen::Index from, Eigen::Index count) -> Matrix {
        return bias.size() ? Matrix(bias.middleCols(from, count)) : Matrix(Matrix::Zero(1, count));
    };
    const int group = config.group_size(), d_k = config.d_k, d_v = config.d_v;
    // Heads in parallel when the weights are large (a real model's layer: megabytes). An exception
    // (std::bad_alloc) cannot leave an OpenMP region: the first one is kept and thrown after it.
    std::exception_ptr failure;
#pragma omp parallel for if (static_cast <double>(p.W_Q.size() + p.W_K.size() + p.W_V.size()) > 1e6)
    for (int i = 0; i < config.heads; ++i) {
        try {
            HeadParams& hp = params.heads[static_cast<size_t>(i)];
            hp.W_Q = p.W_Q.middleCols(static_cast<Eigen::Index>(i) * d_k, d_k);
            hp.b_Q = row_or_zero(p.b_Q, static_cast<Eigen::Index>(i) * d_k, d_k);
            if (i % group != 0) continue;  // the group's K and V live in its first head
            const Eigen::Index g = i / group;
            hp.W_K = p.W_K.middleCols(g * d_k, d_k);
            hp.W_V = p.W_V.middleCols(g * d_v, d_v);
            hp.b_K = row_or_zero(p.b_K, g * d_k, d_k);
            hp.b_V = row_or_zero(p.b_V, g * d_v, d_v);
        } catch (...) {
#pragma omp critical(attnviz_set_projections)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
    params.W_O = p.W_O;
    params.b_O = p.b_O.size() ? p.b_O : Matrix(Matrix::Zero(1, config.d_model));
}

}  // namespace attnviz::core
