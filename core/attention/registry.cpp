#include "core/attention/registry.hpp"

#include <cstdlib>
#include <vector>

#include "core/base/format.hpp"

namespace attnviz::core {

namespace {

constexpr MatrixId none = MatrixId::count;

constexpr Oriented same(const char* unicode, const char* ascii) { return {{unicode, ascii}, {unicode, ascii}}; }

using D = Dim;
using M = MatrixId;
using Op = Operation;
using C = ColorScale;

// One row per matrix, in enum order: id, name, per head, shared by a K/V group, input, rows, cols,
// operands, bias, operation, colours, formula, heading, what of the config it needs.
// clang-format off
constexpr MatrixInfo table[] = {
    {M::X, "X", false, false, true, D::n, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("the input", "the input"), same("X", "X"), 0},
    {M::Y, "Y", false, false, true, D::n_kv, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("the keys' and values' input", "the keys' and values' input"), same("Y", "Y"), needs_cross},
    {M::mask, "mask", false, false, true, D::n, D::n_kv, {none, none}, none, Op::input, C::unit_interval,
     same("1 where query i may attend to key j", "1 where query i may attend to key j"), same("mask", "mask"),
     needs_custom_mask},
    {M::W_Q, "W_Q", true, false, true, D::d_model, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_Q", "W_Q"), 0},
    {M::W_K, "W_K", true, true, true, D::d_model, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_K", "W_K"), 0},
    {M::W_V, "W_V", true, true, true, D::d_model, D::d_v, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_V", "W_V"), 0},
    {M::b_Q, "b_Q", true, false, true, D::one, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_Q", "b_Q"), needs_biases},
    {M::b_K, "b_K", true, true, true, D::one, D::d_k, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_K", "b_K"), needs_biases},
    {M::b_V, "b_V", true, true, true, D::one, D::d_v, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_V", "b_V"), needs_biases},
    {M::W_O, "W_O", false, false, true, D::concat_width, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("a weight", "a weight"), same("W_O", "W_O"), needs_W_O},
    {M::b_O, "b_O", false, false, true, D::one, D::d_model, {none, none}, none, Op::input, C::diverging,
     same("a bias", "a bias"), same("b_O", "b_O"), needs_biases | needs_W_O},
    {M::q_norm, "q_norm", false, false, true, D::one, D::q_width, {none, none}, none, Op::input, C::diverging,
     same("a norm's weight", "a norm's weight"), same("q_norm", "q_norm"), needs_qk_norm},
    {M::k_norm, "k_norm", false, false, true, D::one, D::k_width, {none, none}, none, Op::input, C::diverging,
     same("a norm's weight", "a norm's weight"), same("k_norm", "k_norm"), needs_qk_norm},
    {M::Q, "Q", true, false, false, D::n, D::d_k, {M::X, M::W_Q}, M::b_Q, Op::product, C::diverging,
     {{"X·W_Q", "X*W_Q"}, {"W_Qᵀ·X", "W_Q^T*X"}},
     {{"Q = X·W_Q", "Q = X*W_Q"}, {"Q = W_Qᵀ·X", "Q = W_Q^T*X"}}, 0},
    {M::K, "K", true, false, false, D::n_kv, D::d_k, {M::X, M::W_K}, M::b_K, Op::product, C::diverging,
     {{"X·W_K", "X*W_K"}, {"W_Kᵀ·X", "W_K^T*X"}},
     {{"K = X·W_K", "K = X*W_K"}, {"K = W_Kᵀ·X", "K = W_K^T*X"}}, 0},
    {M::V, "V", true, false, false, D::n_kv, D::d_v, {M::X, M::W_V}, M::b_V, Op::product, C::diverging,
     {{"X·W_V", "X*W_V"}, {"W_Vᵀ·X", "W_V^T*X"}},
     {{"V = X·W_V", "V = X*W_V"}, {"V = W_Vᵀ·X", "V = W_V^T*X"}}, 0},
    {M::Q_rot, "Q_rot", true, false, false, D::n, D::d_k, {M::Q, none}, none, Op::rotation, C::diverging,
     same("RoPE(Q)", "RoPE(Q)"), same("RoPE(Q)", "RoPE(Q)"), needs_rope},
    {M::K_rot, "K_rot", true, false, false, D::n_kv, D::d_k, {M::K, none}, none, Op::rotation, C::diverging,
     same("RoPE(K)", "RoPE(K)"), same("RoPE(K)", "RoPE(K)"), needs_rope},
    {M::scores_raw, "scores_raw", true, false, false, D::n, D::n_kv, {M::Q, M::K}, none, Op::dot_products, C::diverging,
     {{"Q·Kᵀ", "Q*K^T"}, {"Kᵀ·Q", "K^T*Q"}}, {{"QKᵀ", "QK^T"}, {"KᵀQ", "K^T Q"}}, 0},
    {M::scores, "scores", true, false, false, D::n, D::n_kv, {M::scores_raw, none}, none, Op::scale, C::diverging,
     same("÷ s", "/ s"), same("÷ s", "/ s"), 0},
    {M::scores_capped, "scores_capped", true, false, false, D::n, D::n_kv, {M::scores, none}, none, Op::softcap,
     C::diverging, same("c·tanh(scores / c)", "c*tanh(scores / c)"), same("soft-cap", "soft-cap"), needs_softcap},
    {M::weights, "weights", true, false, false, D::n, D::n_kv, {M::scores, none}, none, Op::softmax, C::unit_interval,
     {{"softmax (rows)", "softmax (rows)"}, {"softmax (columns)", "softmax (columns)"}},
     {{"softmax →", "softmax ->"}, {"softmax ↓", "softmax (col)"}}, 0},
    {M::Z, "Z", true, false, false, D::n, D::d_v, {M::weights, M::V}, none, Op::weighted_sum, C::diverging,
     {{"weights·V", "weights*V"}, {"V·weights", "V*weights"}},
     {{"Z = A·V", "Z = A*V"}, {"Z = V·A", "Z = V*A"}}, 0},
    {M::concat, "concat", false, false, false, D::n, D::concat_width, {M::Z, none}, none, Op::concatenation,
     C::diverging, same("concat heads", "concat heads"), same("concat", "concat"), 0},
    {M::output, "output", false, false, false, D::n, D::output_width, {M::concat, M::W_O}, M::b_O, Op::product,
     C::diverging, {{"concat·W_O", "concat*W_O"}, {"W_Oᵀ·concat", "W_O^T*concat"}},
     {{"output = concat·W_O", "output = concat*W_O"}, {"output = W_Oᵀ·concat", "output = W_O^T*concat"}}, 0},
};
// clang-format on

constexpr bool rows_in_enum_order() {
    for (std::size_t k = 0; k < std::size(table); ++k)
        if (static_cast<std::size_t>(table[k].id) != k) return false;
    return true;
}
static_assert(std::size(table) == matrix_count, "the matrix table has one row per MatrixId");
static_assert(rows_in_enum_order(), "the matrix table's rows are in MatrixId order");

// What each feature a matrix can need is, and what its absence is called (in the order a missing
// one is named: b_O without biases and W_O is "no biases").
struct Feature {
    Need need;
    bool (*on)(const Config& config);
    const char* absent;  // why a matrix that needs it is not in the layer
};
constexpr Feature features[] = {
    {needs_biases, [](const Config& c) { return c.biases; }, "this layer has no biases"},
    {needs_W_O, [](const Config& c) { return c.output_projection; }, "the output projection is off"},
    {needs_rope, [](const Config& c) { return c.rope.on; }, "RoPE is off"},
    {needs_cross, [](const Config& c) { return c.cross(); }, "this layer has no cross-attention input"},
    {needs_custom_mask, [](const Config& c) { return c.mask == Mask::custom; }, "this layer has no custom mask"},
    {needs_softcap, [](const Config& c) { return c.softcap > 0; }, "this layer has no soft-capping"},
    {needs_qk_norm, [](const Config& c) { return c.qk_norm.on; }, "this layer has no q/k norms"},
};

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
        case Dim::q_width: return c.heads * c.d_k;
        case Dim::k_width: return c.kv_count() * c.d_k;
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

namespace {

const Feature* missing_feature(MatrixId id, const Config& c) {
    for (const Feature& f : features)
        if ((info(id).needs & f.need) && !f.on(c)) return &f;
    return nullptr;
}

}  // namespace

const char* absence(MatrixId id, const Config& c) {
    const Feature* f = missing_feature(id, c);
    return f ? f->absent : nullptr;
}

unsigned missing_need(MatrixId id, const Config& c) {
    const Feature* f = missing_feature(id, c);
    return f ? f->need : 0u;
}

bool exists(MatrixId id, const Config& c) { return absence(id, c) == nullptr; }

MatrixId operand_of(MatrixId id, int k, const Config& c) {
    if (id == MatrixId::scores_raw && c.rope.on) return k == 0 ? MatrixId::Q_rot : MatrixId::K_rot;
    if ((id == MatrixId::K || id == MatrixId::V) && k == 0 && c.cross()) return MatrixId::Y;
    if (id == MatrixId::weights && k == 0 && c.softcap > 0) return MatrixId::scores_capped;
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

std::string operation_text(MatrixId id, const Config& c, Notation notation, bool column_vectors) {
    const Symbols& sym = symbols(notation);
    if (id == MatrixId::scores) {
        std::string s = c.scale.kind == Scale::Kind::sqrt_dk ? std::string(sym.divide) + " " + sym.sqrt_dk
                        : c.scale.kind == Scale::Kind::none
                            ? std::string(sym.divide) + " 1 (no scaling)"
                            : std::string(sym.divide) + " " + format_number(c.scale.divisor);
        if (c.window > 0) return s + ", window " + std::to_string(c.window);
        return c.mask == Mask::none ? s : s + ", mask";
    }
    if (id == MatrixId::scores_capped)
        return format_number(c.softcap) + (notation == Notation::unicode ? "·tanh(scores / " : "*tanh(scores / ") +
               format_number(c.softcap) + ")";
    if (id == MatrixId::output && !c.output_projection) return "concat (no W_O)";
    if (id == MatrixId::weights && c.softmax == Softmax::plus_one)
        return column_vectors ? "softmax plus one (columns)" : "softmax plus one (rows)";
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
    if ((id == MatrixId::Q || id == MatrixId::K) && c.qk_norm.on)  // OLMo 2: RMS over all heads, then the weights
        return "norm(" + text + ")" + (notation == Notation::unicode ? "·" : "*") +
               (id == MatrixId::Q ? "q_norm" : "k_norm");
    return text;
}

std::string heading_text(MatrixId id, const Config& c, Notation notation, bool column_vectors) {
    if (((id == MatrixId::K || id == MatrixId::V) && c.cross()) ||
        ((id == MatrixId::Q || id == MatrixId::K) && c.qk_norm.on))
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
