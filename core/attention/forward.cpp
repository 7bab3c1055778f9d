#include "core/attention/forward.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <type_traits>

#include "core/attention/gemm.hpp"
#include "core/attention/registry.hpp"

namespace attnviz::core {

namespace {

// The softmax of one row of scores `s` into `w` (the same row is fine): softmax_base's m is
// subtracted, then exp (Eigen's SIMD exp; entries of −∞ get weight 0 exactly: exp_or_zero) and the
// division by the sum Σ (with softmax₁'s constant), which is returned with m.
template <class Scalar, class Scores, class Weights>
Scalar softmax_row(const Scores& s, Weights&& w, Scalar& m, Softmax kind) {
    // m is finite: a row always has a key it may look at, or softmax₁'s m ≥ 0
    const SoftmaxBase<Scalar> base = softmax_base(kind, Scalar(s.maxCoeff()));
    m = base.m;
    exp_or_zero(s.array() - m, w.array());
    const Scalar sum = base.constant + w.sum();  // ≥ 1: the max entry (or softmax₁'s 1) contributes exp(0)
    w /= sum;
    return sum;
}

}  // namespace

template <class Scalar>
void softmax_rows(MatrixT<Scalar>& m, Softmax kind) {
    Scalar row_max;
    for (Eigen::Index i = 0; i < m.rows(); ++i) softmax_row(m.row(i), m.row(i), row_max, kind);
}

namespace {

// The attention of one head once its Q, K and V are in place (llm.c style; n queries, m keys):
//   2. dot products:  scores_raw = Q·Kᵀ (n×m)
//   3. scale, mask:   scores = scores_raw / s; causal: j > i → −∞; sliding window: j ≤ i − window →
//                     −∞; custom: mask[i][j] = 0 → −∞
//      soft-cap:      scores_capped = c·tanh(scores / c) (−∞ stays), the softmax's input
//   4. softmax:       weights = exp(scores − m) / row sum, with the row statistics (m = the row max,
//                     or max(0, row max) with softmax₁'s constant e^{−m} in the sum: softmax_base)
//   5. weighted sum:  Z = weights·V (n×d_v)
// Steps 3 and 4 run row by row (each row stays in cache; a causal row touches only its keys up to
// i, a windowed one only its last `window`).
template <class Scalar>
void attend(HeadTraceT<Scalar>& head, std::vector<RowStats>& rows, const Config& config, const Matrix& mask,
            Scalar scale) {
    const Eigen::Index n = config.n, m_keys = config.kv_len();
    const bool causal = config.mask == Mask::causal, custom = config.mask == Mask::custom;
    const bool capped = config.softcap > 0;
    const auto c = static_cast<Scalar>(config.softcap);
    constexpr Scalar neg_inf = -std::numeric_limits<Scalar>::infinity();
    // 2.
    const MatrixT<Scalar>& Q = config.rope.on ? head.Q_rot : head.Q;
    const MatrixT<Scalar>& K = config.rope.on ? head.K_rot : head.K;
    project<Scalar>(Q, view_of(K), true, head.scores_raw);
    head.scores.resize(n, m_keys);
    head.weights.resize(n, m_keys);
    if (capped)
        head.scores_capped.resize(n, m_keys);
    else
        head.scores_capped.resize(0, 0);
    MatrixT<Scalar>& input = capped ? head.scores_capped : head.scores;  // the softmax's
    rows.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        // The keys row i may look at: first … end − 1 (causal: n = m).
        const Eigen::Index first = config.first_key(static_cast<int>(i)), end = causal ? i + 1 : m_keys;
        const Eigen::Index keys = end - first;
        // 3. (a division, not a multiplication by 1/s: the value is exactly scores_raw / s)
        auto s = head.scores.row(i).segment(first, keys);
        s = head.scores_raw.row(i).segment(first, keys).array() / scale;
        if (custom)
            for (Eigen::Index j = 0; j < keys; ++j)
                if (mask(i, first + j) == 0) s(j) = neg_inf;  // every row keeps a key (validate): a finite max
        if (capped) input.row(i).segment(first, keys) = c * (s.array() / c).tanh();  // tanh(−∞) · c is −c: masked after
        auto x = input.row(i).segment(first, keys);
        if (capped && custom)
            for (Eigen::Index j = 0; j < keys; ++j)
                if (mask(i, first + j) == 0) x(j) = neg_inf;
        // 4. With w = exp(x − m) / Σ the entropy −Σ w·ln w is ln Σ·Σ w − Σ w·(x − m): no log per
        // weight (a masked key, w = 0 and x = −∞, adds nothing).
        auto w = head.weights.row(i).segment(first, keys);
        Scalar m;
        const Scalar sum = softmax_row(x, w, m, config.softmax);
        const Scalar shift = custom ? (w.array() > 0).select(w.array() * (x.array() - m), Scalar(0)).sum()
                                    : (w.array() * (x.array() - m)).sum();
        // Under softmax₁ the weights sum to Σ_j w_j < 1, so ln Σ counts that many times.
        const Scalar mass = config.softmax == Softmax::plus_one ? Scalar(w.sum()) : Scalar(1);
        for (MatrixT<Scalar>* hidden : {&head.scores, &head.scores_capped}) {
            if (hidden->size() == 0) continue;
            hidden->row(i).head(first).setConstant(neg_inf);
            hidden->row(i).tail(m_keys - end).setConstant(neg_inf);
        }
        head.weights.row(i).head(first).setZero();  // exp(−∞) = 0
        head.weights.row(i).tail(m_keys - end).setZero();
        RowStats& r = rows[i];
        r.sum = w.sum();
        r.max = w.maxCoeff();
        r.entropy = std::max(0.0, static_cast<double>(std::log(sum) * mass - shift));
    }
    // 5.
    project<Scalar>(head.weights, view_of(head.V), false, head.Z);
}

// RoPE of one head's Q or K into `out`: row p's pair j turned by the angle whose cosine and sine
// are cos(p, j), sin(p, j); columns from dims on copied.
template <class Scalar, class Table>
void rotate(const MatrixT<Scalar>& in, MatrixT<Scalar>& out, const Rope& rope, const Table& cos, const Table& sin) {
    const int d_k = static_cast<int>(in.cols());
    const Eigen::Index rows = in.rows();  // positions 0 … rows − 1 (the table may hold more)
    out = in;
    for (int j = 0; j < rope.rotated(d_k) / 2; ++j) {
        const RopePair p = rope_pair(rope, d_k, j);
        const auto a = in.col(p.first).array(), b = in.col(p.second).array();
        const auto c = cos.col(j).head(rows), s = sin.col(j).head(rows);
        out.col(p.first).array() = a * c - b * s;
        out.col(p.second).array() = b * c + a * s;
    }
}

// Heads run in parallel when one head is worth more than a thread's start (about 10 µs of work).
bool parallel_heads(const Config& c) {
    const double per_head = static_cast<double>(c.n) * c.kv_len() * (c.d_k + c.d_v);
    return c.heads > 1 && per_head > 2e5;
}

}  // namespace

RopePair rope_pair(const Rope& rope, int d_k, int j) {
    const int dims = rope.rotated(d_k);
    return rope.style == Rope::Style::half ? RopePair{j, j + dims / 2} : RopePair{2 * j, 2 * j + 1};
}

double rope_frequency(const Rope& rope, int d_k, int j, int n) {
    const double dims = rope.rotated(d_k);
    const RopeScaling& s = rope.scaling;
    using K = RopeScaling::Kind;
    double base = rope.base;
    if (s.kind == K::dynamic && n > s.original_max_positions)
        base *= std::pow(s.factor * n / s.original_max_positions - (s.factor - 1), dims / (dims - 2));
    const double theta = std::pow(base, -2.0 * j / dims);
    switch (s.kind) {
        case K::none:
        case K::dynamic: return theta;
        case K::linear: return theta / s.factor;
        case K::llama3: {
            const double wavelength = 2 * M_PI / theta, L = s.original_max_positions;
            if (wavelength < L / s.high_freq_factor) return theta;
            if (wavelength > L / s.low_freq_factor) return theta / s.factor;
            const double t = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
            return (1 - t) * theta / s.factor + t * theta;
        }
    }
    return theta;
}

double rope_angle(const Rope& rope, int d_k, int position, int j, int n) {
    return position * rope_frequency(rope, d_k, j, n);
}

std::optional<std::pair<int, bool>> rope_pair_of_column(const Rope& rope, int d_k, int column) {
    const int dims = rope.rotated(d_k);
    if (column < 0 || column >= dims) return std::nullopt;
    if (rope.style == Rope::Style::half)
        return column < dims / 2 ? std::pair{column, true} : std::pair{column - dims / 2, false};
    return std::pair{column / 2, column % 2 == 0};
}

double forward_flops(const Config& c) {
    const double n = c.n, m = c.kv_len(), d = c.d_model, h = c.heads, dk = c.d_k, dv = c.d_v;
    double flops = 2 * n * d * dk * h + 2 * m * d * (dk + dv) * h + 2 * n * m * (dk + dv) * h;
    if (c.output_projection) flops += 2 * n * h * dv * d;
    return flops;
}

namespace {

// Steps 2–5 of every head (attend), heads in parallel, once `project(h, head)` has put head h's Q,
// K and V in place; RoPE's Q_rot and K_rot between (cos and sin of every position and pair computed
// once first, in double whatever the Scalar); each head's Z into its columns of concat. An
// exception (std::bad_alloc) cannot leave an OpenMP region: the first one is kept and thrown again
// after it.
template <class Scalar, class Project>
void attend_heads(TraceT<Scalar>& t, const Config& config, const Matrix& mask, const Project& project) {
    const int heads = config.heads, d_k = config.d_k, d_v = config.d_v;
    t.heads.resize(heads);
    t.rows.resize(heads);
    auto& cos = t.scratch.cos;
    auto& sin = t.scratch.sin;
    if (config.rope.on) {
        const int pairs = config.rope.rotated(d_k) / 2, positions = std::max(config.n, config.kv_len());
        cos.resize(positions, pairs);
        sin.resize(positions, pairs);
        std::vector<double> frequency(static_cast<size_t>(pairs));
        for (int j = 0; j < pairs; ++j)
            frequency[static_cast<size_t>(j)] = rope_frequency(config.rope, d_k, j, positions);
        for (int p = 0; p < positions; ++p)
            for (int j = 0; j < pairs; ++j) {
                const double angle = p * frequency[static_cast<size_t>(j)];
                cos(p, j) = static_cast<Scalar>(std::cos(angle));
                sin(p, j) = static_cast<Scalar>(std::sin(angle));
            }
    }
    const Scalar scale = static_cast<Scalar>(t.scale);
    t.concat.resize(config.n, config.concat_width());
    std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) if (parallel_heads(config))
    for (int h = 0; h < heads; ++h) {
        try {
            HeadTraceT<Scalar>& head = t.heads[h];
            project(h, head);
            if (config.rope.on) {
                rotate(head.Q, head.Q_rot, config.rope, cos, sin);
                rotate(head.K, head.K_rot, config.rope, cos, sin);
            } else {
                head.Q_rot.resize(0, 0);
                head.K_rot.resize(0, 0);
            }
            attend(head, t.rows[h], config, mask, scale);
            t.concat.middleCols(static_cast<Eigen::Index>(h) * d_v, d_v) = head.Z;
        } catch (...) {
#pragma omp critical(attnviz_forward_failure)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
}

// A matrix in the compute type: the double one itself, or its values converted into `scratch`.
template <class Scalar>
MatrixView<Scalar> in_scalar(const Matrix& m, MatrixT<Scalar>& scratch) {
    if constexpr (std::is_same_v<Scalar, double>) {
        return view_of(m);
    } else {
        scratch = m.cast<Scalar>();
        return view_of(scratch);
    }
}

// A session's W_Q, W_K, W_V (and biases) laid out as LayerWeightsT's W_qkv (and b_qkv) in the
// compute type, into `W` (d_model × qkv_columns) and `b`: copies into blocks already allocated
// (nothing here throws), heads in parallel when the weights are large (a real model's layer:
// megabytes).
template <class Scalar>
void gather_projections(const Config& c, const Params& params, MatrixT<Scalar>& W, MatrixT<Scalar>& b) {
    const int d_k = c.d_k, d_v = c.d_v;
    W.resize(c.d_model, qkv_columns(c));
    if (c.biases) b.resize(1, qkv_columns(c));
#pragma omp parallel for if (static_cast <double>(c.d_model) * qkv_columns(c) > 1e6)
    for (int h = 0; h < c.heads; ++h) {
        const HeadParams& w = params.heads[h];
        const bool owner = params.kv_owner(h) == h;  // holds its group's W_K, W_V
        W.middleCols(q_column(c, h), d_k) = w.W_Q.template cast<Scalar>();
        if (owner) {
            W.middleCols(k_column(c, h), d_k) = w.W_K.template cast<Scalar>();
            W.middleCols(v_column(c, h), d_v) = w.W_V.template cast<Scalar>();
        }
        if (!c.biases) continue;
        b.middleCols(q_column(c, h), d_k) = w.b_Q.template cast<Scalar>();
        if (owner) {
            b.middleCols(k_column(c, h), d_k) = w.b_K.template cast<Scalar>();
            b.middleCols(v_column(c, h), d_v) = w.b_V.template cast<Scalar>();
        }
    }
}

// Under cross-attention each head computes its own Q = X·W_Q and K = Y·W_K, V = Y·W_V (+ biases),
// in double whatever the Scalar (cross-attention is for exploring, not the benchmarks).
template <class Scalar>
void cross_projections(const Config& config, const Params& params, int h, HeadTraceT<Scalar>& head) {
    const HeadParams &w = params.heads[h], &kv = params.heads[params.kv_owner(h)];
    Matrix q = params.X * w.W_Q, k = params.Y * kv.W_K, v = params.Y * kv.W_V;
    if (config.biases) {
        q.rowwise() += w.b_Q.row(0);
        k.rowwise() += kv.b_K.row(0);
        v.rowwise() += kv.b_V.row(0);
    }
    head.Q = q.template cast<Scalar>();
    head.K = k.template cast<Scalar>();
    head.V = v.template cast<Scalar>();
}

// The q/k norm of the columns `x` of every row (n × width): each row divided by its RMS
// √(mean(x²) + eps), kept in `rms` (n×1), and times the weights w (1 × width).
template <class Scalar, class Columns>
void rms_norm_rows(Columns x, const MatrixView<Scalar>& w, double eps, MatrixT<Scalar>& rms) {
    const Eigen::Index width = x.cols();
    rms.resize(x.rows(), 1);
    const auto weights = w.map().row(0);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const Scalar r = std::sqrt(x.row(i).squaredNorm() / static_cast<Scalar>(width) + static_cast<Scalar>(eps));
        rms(i, 0) = r;
        x.row(i) = (x.row(i) * (Scalar(1) / r)).cwiseProduct(weights);
    }
}

// 6. output = concat·W_O (+ b_O), or concat without W_O.
template <class Scalar>
void output_of(TraceT<Scalar>& t, const Config& config, const LayerWeightsT<Scalar>& w) {
    if (!config.output_projection) {
        t.output = t.concat;
        return;
    }
    project<Scalar>(t.concat, w.W_O, w.o_transposed, t.output);  // n×d_model
    if (!w.b_O.empty()) t.output.rowwise() += w.b_O.map().row(0);
}

}  // namespace

template <class Scalar>
void project_qkv(const Eigen::Ref<const MatrixT<Scalar>>& X, const LayerWeightsT<Scalar>& w, MatrixT<Scalar>& P) {
    if (w.W_qkv_parts[0].empty()) {
        project<Scalar>(X, w.W_qkv, w.qkv_transposed, P);
    } else {
        Eigen::Index columns = 0;
        for (const WeightsView<Scalar>& part : w.W_qkv_parts) columns += part.empty() ? 0 : part.rows();
        P.resize(X.rows(), columns);
        Eigen::Index at = 0;
        for (const WeightsView<Scalar>& part : w.W_qkv_parts) {
            if (part.empty()) continue;
            project_into<Scalar>(X, part, true, P.middleCols(at, part.rows()));
            at += part.rows();
        }
    }
    if (!w.b_qkv.empty()) P.leftCols(w.b_qkv.cols).rowwise() += w.b_qkv.map().row(0);
}

// The layer (shapes: X n×d_model; W_qkv as LayerWeightsT lays it out; W_O h·d_v×d_model):
//   1. projections of every head in one product: X·W_qkv (+ b_qkv on every row), n×qkv_columns; each
//      head's Q, K, V are its columns of it (a K/V group's serve each of its heads); with q/k norms
//      the Q columns (h·d_k) and the K columns (g·d_k) of each row normed, each block as one
//   2–5. each head's attention (attend_heads), heads in parallel
//   6. concat = [Z⁽¹⁾ … Z⁽ʰ⁾]; output = concat·W_O (+ b_O), or concat
template <class Scalar>
void forward_into(TraceT<Scalar>& t, const Config& config, const Eigen::Ref<const MatrixT<Scalar>>& X,
                  const LayerWeightsT<Scalar>& w, const Matrix& mask) {
    t.config = config;
    t.scale = config.scale.value(config.d_k);
    // 1.
    MatrixT<Scalar>& P = t.scratch.projections;
    project_qkv<Scalar>(X, w, P);
    if (config.qk_norm.on) {
        const Eigen::Index q_width = Eigen::Index{config.heads} * config.d_k,
                           k_width = Eigen::Index{config.kv_count()} * config.d_k;
        rms_norm_rows<Scalar>(P.leftCols(q_width), w.q_norm, config.qk_norm.eps, t.q_rms);
        rms_norm_rows<Scalar>(P.middleCols(q_width, k_width), w.k_norm, config.qk_norm.eps, t.k_rms);
    } else {
        t.q_rms.resize(0, 0);
        t.k_rms.resize(0, 0);
    }
    // 2–5.
    attend_heads(t, config, mask, [&](int h, HeadTraceT<Scalar>& head) {
        head.Q = P.middleCols(q_column(config, h), config.d_k);
        head.K = P.middleCols(k_column(config, h), config.d_k);
        head.V = P.middleCols(v_column(config, h), config.d_v);
    });
    // 6.
    output_of(t, config, w);
}

// A session: its inputs in the compute type as LayerWeightsT lays them out (converted into the
// trace's scratch space where they are not), then the forward above; under cross-attention each
// head projects X and Y itself.
template <class Scalar>
LayerWeightsT<Scalar> layer_weights(const Config& config, const Params& params, typename TraceT<Scalar>::Scratch& s) {
    LayerWeightsT<Scalar> w;
    if (config.output_projection) w.W_O = in_scalar(params.W_O, s.W_O);
    if (config.output_projection && config.biases) w.b_O = in_scalar(params.b_O, s.b_O);
    if (config.cross()) return w;
    gather_projections(config, params, s.W_qkv, s.b_qkv);
    w.W_qkv = view_of(s.W_qkv);
    if (config.biases) w.b_qkv = view_of(s.b_qkv);
    if (config.qk_norm.on) {
        w.q_norm = in_scalar(params.q_norm, s.q_norm);
        w.k_norm = in_scalar(params.k_norm, s.k_norm);
    }
    return w;
}

template <class Scalar>
void forward_into(TraceT<Scalar>& t, const Config& config, const Params& params) {
    typename TraceT<Scalar>::Scratch& s = t.scratch;
    const LayerWeightsT<Scalar> w = layer_weights<Scalar>(config, params, s);
    if (!config.cross()) {
        const MatrixView<Scalar> X = in_scalar(params.X, s.X);
        forward_into<Scalar>(t, config, X.map(), w, params.mask);
        return;
    }
    t.config = config;
    t.scale = config.scale.value(config.d_k);
    attend_heads(t, config, params.mask,
                 [&](int h, HeadTraceT<Scalar>& head) { cross_projections(config, params, h, head); });
    output_of(t, config, w);
}

template <class Scalar>
TraceT<Scalar> forward(const Config& config, const Params& params) {
    TraceT<Scalar> t;
    forward_into(t, config, params);
    return t;
}

template LayerWeightsT<double> layer_weights<double>(const Config&, const Params&, TraceT<double>::Scratch&);
template LayerWeightsT<float> layer_weights<float>(const Config&, const Params&, TraceT<float>::Scratch&);
template void project_qkv<double>(const Eigen::Ref<const MatrixT<double>>&, const LayerWeightsT<double>&,
                                  MatrixT<double>&);
template void project_qkv<float>(const Eigen::Ref<const MatrixT<float>>&, const LayerWeightsT<float>&, MatrixT<float>&);
template void softmax_rows<double>(MatrixT<double>&, Softmax);
template void softmax_rows<float>(MatrixT<float>&, Softmax);
template TraceT<double> forward<double>(const Config&, const Params&);
template TraceT<float> forward<float>(const Config&, const Params&);
template void forward_into<double>(TraceT<double>&, const Config&, const Params&);
template void forward_into<float>(TraceT<float>&, const Config&, const Params&);
template void forward_into<double>(TraceT<double>&, const Config&, const Eigen::Ref<const MatrixT<double>>&,
                                   const LayerWeightsT<double>&, const Matrix&);
template void forward_into<float>(TraceT<float>&, const Config&, const Eigen::Ref<const MatrixT<float>>&,
                                  const LayerWeightsT<float>&, const Matrix&);

const Matrix* find_computed(const Trace& t, const MatrixRef& ref) {
    if (is_per_head(ref.id) && (ref.head < 0 || ref.head >= static_cast<int>(t.heads.size()))) return nullptr;
    const auto head = [&]() -> const HeadTrace& { return t.heads[static_cast<size_t>(ref.head)]; };
    // Where each computed matrix lives in the trace; every id is named, so a new one is a compile
    // error here until it has its place.
    switch (ref.id) {
        case MatrixId::Q: return &head().Q;
        case MatrixId::K: return &head().K;
        case MatrixId::V: return &head().V;
        case MatrixId::Q_rot: return &head().Q_rot;
        case MatrixId::K_rot: return &head().K_rot;
        case MatrixId::scores_raw: return &head().scores_raw;
        case MatrixId::scores: return &head().scores;
        case MatrixId::scores_capped: return &head().scores_capped;
        case MatrixId::weights: return &head().weights;
        case MatrixId::Z: return &head().Z;
        case MatrixId::concat: return &t.concat;
        case MatrixId::output: return &t.output;
        case MatrixId::X:
        case MatrixId::Y:
        case MatrixId::mask:
        case MatrixId::W_Q:
        case MatrixId::W_K:
        case MatrixId::W_V:
        case MatrixId::b_Q:
        case MatrixId::b_K:
        case MatrixId::b_V:
        case MatrixId::W_O:
        case MatrixId::b_O:
        case MatrixId::q_norm:
        case MatrixId::k_norm:
        case MatrixId::count: return nullptr;  // inputs live in the params
    }
    return nullptr;
}

const Matrix* find_matrix(const Params& params, const Trace& trace, const MatrixRef& ref) {
    if (is_per_head(ref.id) && (ref.head < 0 || ref.head >= static_cast<int>(params.heads.size()))) return nullptr;
    if (!exists(ref.id, trace.config)) return nullptr;
    return is_input(ref.id) ? find_input(params, ref) : find_computed(trace, ref);
}

}  // namespace attnviz::core
