#include "core/attention/registry.hpp"

#include <cstdlib>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/params.hpp"
#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

constexpr MatrixId none = MatrixId::count;

// Accessors for the table: where each matrix lives. A K/V group's matrices live in its first head.
Matrix* stored_X(Params& p, int) { return &p.X; }
Matrix* stored_Y(Params& p, int) { return &p.Y; }
Matrix* stored_mask(Params& p, int) { return &p.mask; }
Matrix* stored_W_Q(Params& p, int h) { return &p.heads[h].W_Q; }
Matrix* stored_W_K(Params& p, int h) { return &p.heads[p.kv_owner(h)].W_K; }
Matrix* stored_W_V(Params& p, int h) { return &p.heads[p.kv_owner(h)].W_V; }
Matrix* stored_b_Q(Params& p, int h) { return &p.heads[h].b_Q; }
Matrix* stored_b_K(Params& p, int h) { return &p.heads[p.kv_owner(h)].b_K; }
Matrix* stored_b_V(Params& p, int h) { return &p.heads[p.kv_owner(h)].b_V; }
Matrix* stored_W_O(Params& p, int) { return &p.W_O; }
Matrix* stored_b_O(Params& p, int) { return &p.b_O; }
const Matrix* trace_Q(const Trace& t, int h) { return &t.heads[h].Q; }
const Matrix* trace_K(const Trace& t, int h) { return &t.heads[h].K; }
const Matrix* trace_V(const Trace& t, int h) { return &t.heads[h].V; }
const Matrix* trace_Q_rot(const Trace& t, int h) { return &t.heads[h].Q_rot; }
const Matrix* trace_K_rot(const Trace& t, int h) { return &t.heads[h].K_rot; }
const Matrix* trace_scores_raw(const Trace& t, int h) { return &t.heads[h].scores_raw; }
const Matrix* trace_scores(const Trace& t, int h) { return &t.heads[h].scores; }
const Matrix* trace_weights(const Trace& t, int h) { return &t.heads[h].weights; }
const Matrix* trace_Z(const Trace& t, int h) { return &t.heads[h].Z; }
const Matrix* trace_concat(const Trace& t, int) { return &t.concat; }
const Matrix* trace_output(const Trace& t, int) { return &t.output; }

constexpr Oriented same(const char* unicode, const char* ascii) { return {{unicode, ascii}, {unicode, ascii}}; }

using D = Dim;
using M = MatrixId;
using Op = Operation;
using C = ColorScale;

// One row per matrix, in enum order: id, name, per head, shared by a K/V group, input, rows, cols,
// operands, bias, operation, colours, formula, heading, where it is stored.
// clang-format off
constexpr MatrixInfo table[] = {
    {M::X, "X", false, false, true, D::n, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("the input", "the input"), same("X", "X"), stored_X, nullptr},
    {M::Y, "Y", false, false, true, D::n_kv, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("the keys' and values' input", "the keys' and values' input"), same("Y", "Y"), stored_Y, nullptr},
    {M::mask, "mask", false, false, true, D::n, D::n_kv, {none, none}, none, Op::input, C::unit_interval,
     same("1 where query i may attend to key j", "1 where query i may attend to key j"), same("mask", "mask"),
     stored_mask, nullptr},
    {M::W_Q, "W_Q", true, false, true, D::d_model, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_Q", "W_Q"), stored_W_Q, nullptr},
    {M::W_K, "W_K", true, true, true, D::d_model, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_K", "W_K"), stored_W_K, nullptr},
    {M::W_V, "W_V", true, true, true, D::d_model, D::d_v, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_V", "W_V"), stored_W_V, nullptr},
    {M::b_Q, "b_Q", true, false, true, D::one, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_Q", "b_Q"), stored_b_Q, nullptr},
    {M::b_K, "b_K", true, true, true, D::one, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_K", "b_K"), stored_b_K, nullptr},
    {M::b_V, "b_V", true, true, true, D::one, D::d_v, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_V", "b_V"), stored_b_V, nullptr},
    {M::W_O, "W_O", false, false, true, D::concat_width, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_O", "W_O"), stored_W_O, nullptr},
    {M::b_O, "b_O", false, false, true, D::one, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_O", "b_O"), stored_b_O, nullptr},
    {M::Q, "Q", true, false, false, D::n, D::d_k, {M::X, M::W_Q}, M::b_Q, Op::product, C::diverging,
     {{"X·W_Q", "X*W_Q"}, {"W_Qᵀ·X", "W_Q^T*X"}},
     {{"Q = X·W_Q", "Q = X*W_Q"}, {"Q = W_Qᵀ·X", "Q = W_Q^T*X"}}, nullptr, trace_Q},
    {M::K, "K", true, false, false, D::n_kv, D::d_k, {M::X, M::W_K}, M::b_K, Op::product, C::diverging,
     {{"X·W_K", "X*W_K"}, {"W_Kᵀ·X", "W_K^T*X"}},
     {{"K = X·W_K", "K = X*W_K"}, {"K = W_Kᵀ·X", "K = W_K^T*X"}}, nullptr, trace_K},
    {M::V, "V", true, false, false, D::n_kv, D::d_v, {M::X, M::W_V}, M::b_V, Op::product, C::diverging,
     {{"X·W_V", "X*W_V"}, {"W_Vᵀ·X", "W_V^T*X"}},
     {{"V = X·W_V", "V = X*W_V"}, {"V = W_Vᵀ·X", "V = W_V^T*X"}}, nullptr, trace_V},
    {M::Q_rot, "Q_rot", true, false, false, D::n, D::d_k, {M::Q, none}, none, Op::rotation, C::diverging,
     same("RoPE(Q)", "RoPE(Q)"), same("RoPE(Q)", "RoPE(Q)"), nullptr, trace_Q_rot},
    {M::K_rot, "K_rot", true, false, false, D::n_kv, D::d_k, {M::K, none}, none, Op::rotation, C::diverging,
     same("RoPE(K)", "RoPE(K)"), same("RoPE(K)", "RoPE(K)"), nullptr, trace_K_rot},
    {M::scores_raw, "scores_raw", true, false, false, D::n, D::n_kv, {M::Q, M::K}, none, Op::dot_products, C::diverging,
     {{"Q·Kᵀ", "Q*K^T"}, {"Kᵀ·Q", "K^T*Q"}}, {{"QKᵀ", "QK^T"}, {"KᵀQ", "K^T Q"}}, nullptr, trace_scores_raw},
    {M::scores, "scores", true, false, false, D::n, D::n_kv, {M::scores_raw, none}, none, Op::scale, C::diverging,
     same("÷ s", "/ s"), same("÷ s", "/ s"), nullptr, trace_scores},
    {M::weights, "weights", true, false, false, D::n, D::n_kv, {M::scores, none}, none, Op::softmax, C::unit_interval,
     {{"softmax (rows)", "softmax (rows)"}, {"softmax (columns)", "softmax (columns)"}},
     {{"softmax →", "softmax ->"}, {"softmax ↓", "softmax (col)"}}, nullptr, trace_weights},
    {M::Z, "Z", true, false, false, D::n, D::d_v, {M::weights, M::V}, none, Op::weighted_sum, C::diverging,
     {{"weights·V", "weights*V"}, {"V·weights", "V*weights"}},
     {{"Z = A·V", "Z = A*V"}, {"Z = V·A", "Z = V*A"}}, nullptr, trace_Z},
    {M::concat, "concat", false, false, false, D::n, D::concat_width, {M::Z, none}, none, Op::concatenation,
     C::diverging, same("concat heads", "concat heads"), same("concat", "concat"), nullptr, trace_concat},
    {M::output, "output", false, false, false, D::n, D::output_width, {M::concat, M::W_O}, M::b_O, Op::product,
     C::diverging, {{"concat·W_O", "concat*W_O"}, {"W_Oᵀ·concat", "W_O^T*concat"}},
     {{"output = concat·W_O", "output = concat*W_O"}, {"output = W_Oᵀ·concat", "output = W_O^T*concat"}}, nullptr,
     trace_output},
};
// clang-format on

constexpr bool rows_in_enum_order() {
    for (std::size_t k = 0; k < std::size(table); ++k)
        if (static_cast<std::size_t>(table[k].id) != k) return false;
    return true;
}
static_assert(std::size(table) == matrix_count, "the matrix table has one row per MatrixId");
static_assert(rows_in_enum_order(), "the matrix table's rows are in MatrixId order");

constexpr bool inputs_and_computed_consistent() {
    for (const MatrixInfo& m : table)
        if ((m.stored != nullptr) != m.input || (m.computed != nullptr) == m.input) return false;
    return true;
}
static_assert(inputs_and_computed_consistent(), "an input lives in the params, a computed matrix in the trace");

}  // namespace

const MatrixInfo& info(MatrixId id) { return table[static_cast<std::size_t>(id)]; }

int extent(Dim dim, const Config& c) {
    switch (dim) {
        case Dim::one: return 1;
        case Dim::n: return c.n;
        case Dim::n_kv: return c.kv_len();
        case Dim::d_model: return c.d_model;
        case Dim::d_k: return c.d_k;
        case Dim::d_v: return c.d_v;
        case Dim::concat_width: return c.concat_width();
        case Dim::output_width: return c.output_width();
    }
    return 0;
}

std::optional<MatrixId> matrix_id_from_name(const std::string& text) {
    for (const MatrixInfo& m : table)
        if (text == m.name) return m.id;
    return std::nullopt;
}

std::string matrix_names() {
    std::string out;
    for (const MatrixInfo& m : table) out += (out.empty() ? "" : ", ") + std::string(m.name);
    return out;
}

bool exists(MatrixId id, const Config& c) {
    switch (id) {
        case MatrixId::W_O: return c.output_projection;
        case MatrixId::b_Q:
        case MatrixId::b_K:
        case MatrixId::b_V: return c.biases;
        case MatrixId::b_O: return c.biases && c.output_projection;
        case MatrixId::Q_rot:
        case MatrixId::K_rot: return c.rope.on;
        case MatrixId::Y: return c.cross();
        case MatrixId::mask: return c.mask == Mask::custom;
        default: return true;
    }
}

MatrixId operand_of(MatrixId id, int k, const Config& c) {
    if (id == MatrixId::scores_raw && c.rope.on) return k == 0 ? MatrixId::Q_rot : MatrixId::K_rot;
    if ((id == MatrixId::K || id == MatrixId::V) && k == 0 && c.cross()) return MatrixId::Y;
    return info(id).operands[k];
}

bool exists(const MatrixRef& ref, const Config& c) {
    if (is_per_head(ref.id) && (ref.head < 0 || ref.head >= c.heads)) return false;
    return exists(ref.id, c);
}

int rows_of(MatrixId id, const Config& c) { return extent(info(id).rows, c); }
int cols_of(MatrixId id, const Config& c) { return extent(info(id).cols, c); }

std::string label(const MatrixRef& ref, Notation notation) {
    std::string s = name(ref.id);
    return is_per_head(ref.id) ? s + head_mark(ref.head + 1, notation) : s;
}

std::string label(const CellRef& cell, Notation notation) {
    return label(cell.matrix, notation) + "[" + std::to_string(cell.row) + "][" + std::to_string(cell.col) + "]";
}

const Matrix* find_matrix(const Params& params, const Trace& trace, const MatrixRef& ref) {
    const MatrixInfo& m = info(ref.id);
    const bool head_ok = ref.head >= 0 && ref.head < static_cast<int>(trace.heads.size()) &&
                         ref.head < static_cast<int>(params.heads.size());
    if (m.per_head && !head_ok) return nullptr;
    if (!exists(ref.id, trace.config)) return nullptr;
    // stored() only hands out the address; the const params stay unchanged.
    return m.input ? m.stored(const_cast<Params&>(params), ref.head) : m.computed(trace, ref.head);
}

Matrix* find_input(Params& params, const MatrixRef& ref) {
    const MatrixInfo& m = info(ref.id);
    if (!m.input) return nullptr;
    if (m.per_head && (ref.head < 0 || ref.head >= static_cast<int>(params.heads.size()))) return nullptr;
    return m.stored(params, ref.head);
}

std::string operation_text(MatrixId id, const Config& c, Notation notation, bool column_vectors) {
    const Symbols& sym = symbols(notation);
    if (id == MatrixId::scores) {
        std::string s = c.scale.kind == Scale::Kind::sqrt_dk ? std::string(sym.divide) + " " + sym.sqrt_dk
                        : c.scale.kind == Scale::Kind::none
                            ? std::string(sym.divide) + " 1 (no scaling)"
                            : std::string(sym.divide) + " " + format_number(c.scale.divisor);
        return c.mask == Mask::none ? s : s + ", mask";
    }
    if (id == MatrixId::output && !c.output_projection) return "concat (no W_O)";
    if (id == MatrixId::scores_raw && c.rope.on) {
        constexpr Oriented rotated{{"Q_rot·K_rotᵀ", "Q_rot*K_rot^T"}, {"K_rotᵀ·Q_rot", "K_rot^T*Q_rot"}};
        return rotated.in(notation, column_vectors);
    }
    if ((id == MatrixId::K || id == MatrixId::V) && c.cross()) {
        constexpr Oriented k_of_y{{"Y·W_K", "Y*W_K"}, {"W_Kᵀ·Y", "W_K^T*Y"}},
            v_of_y{{"Y·W_V", "Y*W_V"}, {"W_Vᵀ·Y", "W_V^T*Y"}};
        std::string text = (id == MatrixId::K ? k_of_y : v_of_y).in(notation, column_vectors);
        return c.biases ? text + " + " + name(info(id).bias) : text;
    }
    std::string text = info(id).formula.in(notation, column_vectors);
    const MatrixId bias = info(id).bias;
    if (bias != MatrixId::count && exists(bias, c)) text += std::string(" + ") + name(bias);
    return text;
}

std::string heading_text(MatrixId id, const Config& c, Notation notation, bool column_vectors) {
    if ((id == MatrixId::K || id == MatrixId::V) && c.cross())
        return std::string(name(id)) + " = " + operation_text(id, c, notation, column_vectors);
    return info(id).heading.in(notation, column_vectors);
}

std::string ref_part(const std::string& text) {
    const size_t first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

Result<CellRef> parse_cell_ref(const std::string& text) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t colon = text.find(':');; colon = text.find(':', start)) {
        parts.push_back(ref_part(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start)));
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    const auto id = matrix_id_from_name(parts[0]);
    if (!id)
        return Result<CellRef>::fail(
            {{"", "\"" + printable(parts[0]) + "\" is not a matrix (" + matrix_names() + ")"}});
    const bool per_head = is_per_head(*id);
    if (parts.size() != (per_head ? 4u : 3u))
        return Result<CellRef>::fail({{"", per_head ? "expected NAME:HEAD:ROW:COL, e.g. weights:1:0:1"
                                                    : "expected NAME:ROW:COL, e.g. output:0:2"}});
    std::vector<int> numbers;
    for (size_t k = 1; k < parts.size(); ++k) {
        char* end = nullptr;
        const long v = std::strtol(parts[k].c_str(), &end, 10);
        if (parts[k].empty() || *end != '\0' || v < 0 || v > 1000000)
            return Result<CellRef>::fail({{"", "\"" + printable(parts[k]) + "\" is not a row, column or head number"}});
        numbers.push_back(static_cast<int>(v));
    }
    if (per_head && numbers[0] < 1) return Result<CellRef>::fail({{"", "heads are counted from 1"}});
    if (per_head) return Result<CellRef>::ok({{*id, numbers[0] - 1}, numbers[1], numbers[2]});
    return Result<CellRef>::ok({{*id, 0}, numbers[0], numbers[1]});
}

}  // namespace attnviz::core
