// Tests of core/attention/forward.hpp: seed 001's worked example by hand, and properties on random sessions
// checked against a direct-loop reference implementation.
#include "core/attention/forward.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

constexpr double inf = std::numeric_limits<double>::infinity();

template <class A, class B>
void expect_matrix_near(const A& got, const B& want, double tol, const std::string& what) {
    ASSERT_EQ(got.rows(), want.rows()) << what;
    ASSERT_EQ(got.cols(), want.cols()) << what;
    for (Eigen::Index r = 0; r < got.rows(); ++r)
        for (Eigen::Index c = 0; c < got.cols(); ++c)
            EXPECT_TRUE(near_rel(static_cast<double>(got(r, c)), static_cast<double>(want(r, c)), tol))
                << what << "[" << r << "][" << c << "]";
}

// ---------------------------------------------------------------------------------------------
// A direct-loop reference forward pass, straight from the seeds' formulas.

using Grid = std::vector<std::vector<double>>;

Grid grid(int rows, int cols) { return Grid(rows, std::vector<double>(cols, 0.0)); }

Grid mul(const Grid& a, const Matrix& b) {  // a (r×k) · b (k×c)
    Grid out = grid(static_cast<int>(a.size()), static_cast<int>(b.cols()));
    for (size_t i = 0; i < a.size(); ++i)
        for (Eigen::Index j = 0; j < b.cols(); ++j) {
            double s = 0;
            for (Eigen::Index k = 0; k < b.rows(); ++k) s += a[i][k] * b(k, j);
            out[i][j] = s;
        }
    return out;
}

Grid to_grid(const Matrix& m) {
    Grid g = grid(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) g[r][c] = m(r, c);
    return g;
}

Matrix to_matrix(const Grid& g) {
    Matrix m(static_cast<Eigen::Index>(g.size()), g.empty() ? 0 : static_cast<Eigen::Index>(g[0].size()));
    for (size_t r = 0; r < g.size(); ++r)
        for (size_t c = 0; c < g[r].size(); ++c) m(r, c) = g[r][c];
    return m;
}

struct RefHead {
    Grid Q, K, V, Q_rot, K_rot, scores_raw, scores, weights, Z;
};

// Adds a 1×cols bias to every row.
void add_bias(Grid& g, const Matrix& b) {
    for (auto& row : g)
        for (size_t j = 0; j < row.size(); ++j) row[j] += b(0, static_cast<Eigen::Index>(j));
}

// RoPE written out pair by pair: row p's pair (a, b) turns by p·base^(−2k/d).
// Pair k's inverse frequency for a layer of n positions, as Hugging Face's rope init functions
// compute it (modeling_rope_utils.py: default, linear, dynamic, llama3).
double inv_freq_loop(const Rope& rope, int d, int k, int n) {
    const RopeScaling& s = rope.scaling;
    double base = rope.base;
    if (s.kind == RopeScaling::Kind::dynamic) {
        const double seq_len = std::max(n, s.original_max_positions);
        base = base * std::pow(s.factor * seq_len / s.original_max_positions - (s.factor - 1),
                               static_cast<double>(d) / (d - 2));
    }
    double inv = 1.0 / std::pow(base, 2.0 * k / d);
    if (s.kind == RopeScaling::Kind::linear) inv /= s.factor;
    if (s.kind == RopeScaling::Kind::llama3) {
        const double low_wavelen = s.original_max_positions / s.low_freq_factor;
        const double high_wavelen = s.original_max_positions / s.high_freq_factor;
        const double wavelen = 2 * M_PI / inv;
        double scaled = wavelen > low_wavelen ? inv / s.factor : inv;
        const double smooth = (s.original_max_positions / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen))
            scaled = (1 - smooth) * scaled / s.factor + smooth * scaled;
        inv = scaled;
    }
    return inv;
}

Grid rope_loop(const Grid& in, const Rope& rope, int d_k, int n) {
    Grid out = in;
    const int d = rope.dims > 0 ? rope.dims : d_k;
    for (size_t p = 0; p < in.size(); ++p)
        for (int k = 0; k < d / 2; ++k) {
            const int a = rope.style == Rope::Style::half ? k : 2 * k;
            const int b = rope.style == Rope::Style::half ? k + d / 2 : 2 * k + 1;
            const double angle = static_cast<double>(p) * inv_freq_loop(rope, d, k, n);
            out[p][a] = in[p][a] * std::cos(angle) - in[p][b] * std::sin(angle);
            out[p][b] = in[p][b] * std::cos(angle) + in[p][a] * std::sin(angle);
        }
    return out;
}
struct RefTrace {
    std::vector<RefHead> heads;
    Grid concat, output;
};

// The q/k norms by loops (OLMo 2's Olmo2RMSNorm over every head's columns): each row of `parts`
// (head or group k's rows, d_k columns each) divided by √(mean of the row's squares over every
// part + eps), times w[k·d_k + j].
void qk_norm_loop(std::vector<Grid*>& parts, const Matrix& w, double eps) {
    const size_t rows = parts[0]->size();
    for (size_t i = 0; i < rows; ++i) {
        double squares = 0, count = 0;
        for (const Grid* g : parts)
            for (double v : (*g)[i]) squares += v * v, count += 1;
        const double rms = std::sqrt(squares / count + eps);
        for (size_t k = 0; k < parts.size(); ++k)
            for (size_t j = 0; j < (*parts[k])[i].size(); ++j)
                (*parts[k])[i][j] = (*parts[k])[i][j] / rms *
                                    w(0, static_cast<Eigen::Index>(k * (*parts[k])[i].size() + j));
    }
}

// Every head's Q and every K/V group's K as the heads use them: X·W (+ b), then the q/k norms.
void projections_loop(const Config& c, const Params& p, const Grid& X, const Grid& Y, std::vector<Grid>& Q,
                      std::vector<Grid>& K) {
    const int group = c.heads / c.kv_count();
    for (int h = 0; h < c.heads; ++h) {
        Q.push_back(mul(X, p.heads[h].W_Q));
        if (c.biases) add_bias(Q.back(), p.heads[h].b_Q);
    }
    for (int g = 0; g < c.kv_count(); ++g) {
        K.push_back(mul(Y, p.heads[g * group].W_K));
        if (c.biases) add_bias(K.back(), p.heads[g * group].b_K);
    }
    if (!c.qk_norm.on) return;
    std::vector<Grid*> qs, ks;
    for (Grid& q : Q) qs.push_back(&q);
    for (Grid& k : K) ks.push_back(&k);
    qk_norm_loop(qs, p.q_norm, c.qk_norm.eps);
    qk_norm_loop(ks, p.k_norm, c.qk_norm.eps);
}

RefTrace reference_forward(const Config& c, const Params& p) {
    RefTrace t;
    const Grid X = to_grid(p.X);
    const Grid Y = c.cross() ? to_grid(p.Y) : X;  // the keys' and values' input
    const int m = c.cross() ? c.n_kv : c.n;       // keys per query
    double s = 1;
    if (c.scale.kind == Scale::Kind::sqrt_dk) s = std::sqrt(static_cast<double>(c.d_k));
    if (c.scale.kind == Scale::Kind::divisor) s = c.scale.divisor;
    t.concat = grid(c.n, c.heads * c.d_v);
    std::vector<Grid> Qs, Ks;
    projections_loop(c, p, X, Y, Qs, Ks);
    for (int h = 0; h < c.heads; ++h) {
        RefHead r;
        const int g = h / (c.heads / c.kv_count());  // the head's K/V group, kept in its first head
        const HeadParams& kv = p.heads[g * (c.heads / c.kv_count())];
        r.Q = Qs[h];
        r.K = Ks[g];
        r.V = mul(Y, kv.W_V);
        if (c.biases) add_bias(r.V, kv.b_V);
        const int positions = std::max(c.n, m);
        r.Q_rot = c.rope.on ? rope_loop(r.Q, c.rope, c.d_k, positions) : r.Q;
        r.K_rot = c.rope.on ? rope_loop(r.K, c.rope, c.d_k, positions) : r.K;
        r.scores_raw = grid(c.n, m);
        r.scores = grid(c.n, m);
        r.weights = grid(c.n, m);
        for (int i = 0; i < c.n; ++i)
            for (int j = 0; j < m; ++j) {
                double dot = 0;
                for (int k = 0; k < c.d_k; ++k) dot += r.Q_rot[i][k] * r.K_rot[j][k];
                r.scores_raw[i][j] = dot;
                const bool masked = (c.mask == Mask::causal && j > i) ||
                                    (c.mask == Mask::custom && p.mask(i, j) == 0) ||
                                    (c.window > 0 && i - j >= c.window);
                r.scores[i][j] = masked ? -inf : dot / s;
                // Gemma 2's soft-capping: tanh(s / c)·c, before the mask.
                if (c.softcap > 0) r.scores[i][j] = masked ? -inf : std::tanh(dot / s / c.softcap) * c.softcap;
            }
        for (int i = 0; i < c.n; ++i) {
            double mx = -inf;
            for (int j = 0; j < m; ++j) mx = std::max(mx, r.scores[i][j]);
            double sum = 0;
            for (int j = 0; j < m; ++j) sum += std::exp(r.scores[i][j] - mx);
            for (int j = 0; j < m; ++j) r.weights[i][j] = std::exp(r.scores[i][j] - mx) / sum;
        }
        r.Z = grid(c.n, c.d_v);
        for (int i = 0; i < c.n; ++i)
            for (int j = 0; j < c.d_v; ++j) {
                double z = 0;
                for (int k = 0; k < m; ++k) z += r.weights[i][k] * r.V[k][j];
                r.Z[i][j] = z;
                t.concat[i][h * c.d_v + j] = z;
            }
        t.heads.push_back(std::move(r));
    }
    t.output = c.output_projection ? mul(t.concat, p.W_O) : t.concat;
    if (c.output_projection && c.biases) add_bias(t.output, p.b_O);
    return t;
}

// Layers beyond the seeds: biases, K/V groups and RoPE, alone and together, both RoPE styles,
// partial rotation, masks and no projection.
std::vector<Config> extended_configs() {
    std::vector<Config> out;
    Config c = make_config(6, 8, 4, 4, 3, true, Mask::none);
    c.biases = true;
    out.push_back(c);  // biases only
    c = make_config(7, 8, 6, 4, 2, true, Mask::causal);
    c.kv_heads = 2;
    out.push_back(c);  // groups of 3 heads
    c = make_config(9, 8, 2, 6, 4, false, Mask::none);
    c.rope = {true, 10000, Rope::Style::half, 0, {}};
    out.push_back(c);  // RoPE, half
    c.rope = {true, 100, Rope::Style::interleaved, 4, {}};
    out.push_back(c);  // RoPE, interleaved, 4 of 6 columns
    c = make_config(12, 16, 8, 8, 8, true, Mask::causal);
    c.biases = true;
    c.kv_heads = 2;
    c.rope = {true, 500000, Rope::Style::half, 0, {}};
    out.push_back(c);  // all three, Llama-like
    c = make_config(64, 32, 4, 16, 16, true, Mask::none);
    c.biases = true;
    c.kv_heads = 1;
    c.rope = {true, 10000, Rope::Style::interleaved, 8, {}};
    out.push_back(c);  // multi-query, large enough for heads in parallel
    c = make_config(4, 6, 2, 3, 2, true, Mask::none);
    c.n_kv = 7;
    out.push_back(c);  // cross-attention: 4 queries, 7 keys
    c.n_kv = 2;
    c.mask = Mask::custom;
    out.push_back(c);  // fewer keys than queries, a custom mask
    c = make_config(6, 8, 4, 4, 4, false, Mask::custom);
    out.push_back(c);  // a custom mask on self-attention
    c = make_config(5, 8, 4, 4, 2, true, Mask::custom);
    c.n_kv = 9;
    c.biases = true;
    c.kv_heads = 2;
    c.rope = {true, 10000, Rope::Style::half, 0, {}};
    out.push_back(c);  // cross-attention with everything else
    c = make_config(48, 32, 4, 16, 16, true, Mask::custom);
    c.n_kv = 80;
    out.push_back(c);  // large enough for heads in parallel
    c = make_config(9, 8, 4, 4, 4, true, Mask::causal);
    c.window = 3;
    c.softcap = 0.7;
    c.kv_heads = 2;
    c.rope = {true, 10000, Rope::Style::half, 0, {RopeScaling::Kind::llama3, 8, 1, 4, 4}};
    out.push_back(c);  // Gemma 2's local layer: a window of 3, soft-capping that bites, Llama 3's RoPE
    c = make_config(7, 8, 2, 4, 4, true, Mask::none);
    c.window = 2;
    c.softcap = 30;
    c.rope = {true, 10000, Rope::Style::half, 2, {RopeScaling::Kind::linear, 4, 1, 4, 0}};
    out.push_back(c);  // a window without the causal mask, partial rotary with linear scaling
    c = make_config(64, 32, 4, 16, 16, true, Mask::causal);
    c.window = 20;
    c.softcap = 1;
    c.rope = {true, 10000, Rope::Style::half, 8, {RopeScaling::Kind::dynamic, 2, 1, 4, 16}};
    out.push_back(c);  // heads in parallel; dynamic NTK for 64 positions beyond 16
    c.rope.scaling.original_max_positions = 128;
    out.push_back(c);  // dynamic NTK within the trained length: the plain frequencies
    c = make_config(6, 8, 4, 4, 4, true, Mask::causal);
    c.kv_heads = 2;
    c.biases = true;
    c.qk_norm = {true, 1e-6};
    c.rope = {true, 500000, Rope::Style::half, 0, {}};
    out.push_back(c);  // OLMo 2's q/k norms over every head, with biases, K/V groups and RoPE
    c = make_config(40, 32, 4, 16, 16, true, Mask::none);
    c.qk_norm = {true, 0.5};
    out.push_back(c);  // q/k norms with heads in parallel and a large eps
    return out;
}

// Configs of different shapes, masks and scales for the property tests.
std::vector<Config> property_configs() {
    std::vector<Config> out;
    const Scale sqrt_dk{Scale::Kind::sqrt_dk, 1.0};
    out.push_back(make_config(1, 1, 1, 1, 1, true, Mask::none, sqrt_dk));
    out.push_back(make_config(2, 4, 2, 2, 2, true, Mask::none, sqrt_dk));
    out.push_back(make_config(5, 6, 3, 2, 2, true, Mask::causal, sqrt_dk));
    out.push_back(make_config(7, 8, 2, 4, 3, false, Mask::none, Scale{Scale::Kind::none, 1.0}));
    out.push_back(make_config(9, 5, 4, 3, 2, true, Mask::causal, Scale{Scale::Kind::divisor, 0.37}));
    out.push_back(make_config(16, 32, 4, 8, 8, true, Mask::none, sqrt_dk));
    out.push_back(make_config(33, 12, 1, 12, 5, false, Mask::causal, sqrt_dk));
    return out;
}

std::string describe(const Config& c, std::uint64_t seed) {
    return "n=" + std::to_string(c.n) + " d_model=" + std::to_string(c.d_model) + " h=" + std::to_string(c.heads) +
           " d_k=" + std::to_string(c.d_k) + " d_v=" + std::to_string(c.d_v) +
           " proj=" + std::to_string(c.output_projection) + " mask=" + to_string(c.mask) +
           " scale=" + to_string(c.scale) + " seed=" + std::to_string(seed);
}

// ---------------------------------------------------------------------------------------------
// Seed 001 by hand

TEST(ForwardWorkedExample, ByHand) {
    const Session w = worked_example();
    const Trace t = forward<double>(w.config, w.params);
    constexpr double tol = 1e-12;
    const double r2 = std::sqrt(2.0);
    const double e2 = std::exp(2 * r2), e8 = std::exp(8 * r2);
    // weights⁽¹⁾ = weights⁽²⁾
    const double w00 = e2 / (e2 + 1), w01 = 1 / (e2 + 1);
    const double w10 = 1 / (1 + e8), w11 = e8 / (1 + e8);

    ASSERT_EQ(t.heads.size(), 2u);
    EXPECT_NEAR(t.scale, r2, tol);

    // Head 1: Q = K = V = [[2,0],[0,4]].
    const Matrix qkv1{{2, 0}, {0, 4}};
    const HeadTrace& h1 = t.heads[0];
    expect_matrix_near(h1.Q, qkv1, tol, "Q1");
    expect_matrix_near(h1.K, qkv1, tol, "K1");
    expect_matrix_near(h1.V, qkv1, tol, "V1");
    expect_matrix_near(h1.scores_raw, Matrix{{4, 0}, {0, 16}}, tol, "scores_raw1");
    expect_matrix_near(h1.scores, Matrix{{2 * r2, 0}, {0, 8 * r2}}, tol, "scores1");
    expect_matrix_near(h1.weights, Matrix{{w00, w01}, {w10, w11}}, tol, "weights1");
    // Z⁽¹⁾ = weights·[[2,0],[0,4]] = [[2·w00, 4·w01], [2·w10, 4·w11]].
    const Matrix z1{{2 * w00, 4 * w01}, {2 * w10, 4 * w11}};
    expect_matrix_near(h1.Z, z1, tol, "Z1");

    // Head 2: Q = K = V = [[0,2],[4,0]]; scores_raw = [[4,0],[0,16]] again.
    const Matrix qkv2{{0, 2}, {4, 0}};
    const HeadTrace& h2 = t.heads[1];
    expect_matrix_near(h2.Q, qkv2, tol, "Q2");
    expect_matrix_near(h2.K, qkv2, tol, "K2");
    expect_matrix_near(h2.V, qkv2, tol, "V2");
    expect_matrix_near(h2.scores_raw, Matrix{{4, 0}, {0, 16}}, tol, "scores_raw2");
    expect_matrix_near(h2.scores, Matrix{{2 * r2, 0}, {0, 8 * r2}}, tol, "scores2");
    expect_matrix_near(h2.weights, Matrix{{w00, w01}, {w10, w11}}, tol, "weights2");
    // Z⁽²⁾ = weights·[[0,2],[4,0]] = [[4·w01, 2·w00], [4·w11, 2·w10]].
    const Matrix z2{{4 * w01, 2 * w00}, {4 * w11, 2 * w10}};
    expect_matrix_near(h2.Z, z2, tol, "Z2");

    // concat = [Z⁽¹⁾ Z⁽²⁾]; output = concat·I = concat.
    const Matrix concat{{2 * w00, 4 * w01, 4 * w01, 2 * w00}, {2 * w10, 4 * w11, 4 * w11, 2 * w10}};
    expect_matrix_near(t.concat, concat, tol, "concat");
    expect_matrix_near(t.output, concat, tol, "output");

    // Row diagnostics: sum 1, max the larger weight, entropy −Σ w ln w.
    const double ent0 = -(w00 * std::log(w00) + w01 * std::log(w01));
    const double ent1 = -(w10 * std::log(w10) + w11 * std::log(w11));
    for (int h = 0; h < 2; ++h) {
        ASSERT_EQ(t.rows[h].size(), 2u);
        EXPECT_NEAR(t.rows[h][0].sum, 1.0, tol);
        EXPECT_NEAR(t.rows[h][1].sum, 1.0, tol);
        EXPECT_NEAR(t.rows[h][0].max, w00, tol);
        EXPECT_NEAR(t.rows[h][1].max, w11, tol);
        EXPECT_NEAR(t.rows[h][0].entropy, ent0, tol);
        EXPECT_NEAR(t.rows[h][1].entropy, ent1, tol);
    }
    EXPECT_EQ(t.config, w.config);
}

TEST(ForwardWorkedExample, ApproximateDecimals) {
    // A sanity anchor in plain decimals: e^{2√2} ≈ 16.9188, so w00 ≈ 0.94419.
    const Session w = worked_example();
    const Trace t = forward<double>(w.config, w.params);
    EXPECT_NEAR(t.heads[0].weights(0, 0), 0.944193, 1e-6);
    EXPECT_NEAR(t.heads[0].scores(0, 0), 2.828427, 1e-6);
    EXPECT_NEAR(t.heads[0].scores(1, 1), 11.313708, 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Reference implementation and properties on random sessions

TEST(ForwardProperties, MatchesDirectLoopReference) {
    for (const Config& c : property_configs())
        for (std::uint64_t seed : {1u, 2u, 99u}) {
            SCOPED_TRACE(describe(c, seed));
            ASSERT_TRUE(validate(c).empty());
            const Session s = random_session(c, seed);
            const Trace t = forward<double>(c, s.params);
            const RefTrace ref = reference_forward(c, s.params);
            ASSERT_EQ(t.heads.size(), static_cast<size_t>(c.heads));
            for (int h = 0; h < c.heads; ++h) {
                const std::string hs = std::to_string(h);
                expect_matrix_near(t.heads[h].Q, to_matrix(ref.heads[h].Q), 1e-12, "Q" + hs);
                expect_matrix_near(t.heads[h].K, to_matrix(ref.heads[h].K), 1e-12, "K" + hs);
                expect_matrix_near(t.heads[h].V, to_matrix(ref.heads[h].V), 1e-12, "V" + hs);
                expect_matrix_near(t.heads[h].scores_raw, to_matrix(ref.heads[h].scores_raw), 1e-12, "scores_raw" + hs);
                expect_matrix_near(t.heads[h].scores, to_matrix(ref.heads[h].scores), 1e-12, "scores" + hs);
                expect_matrix_near(t.heads[h].weights, to_matrix(ref.heads[h].weights), 1e-12, "weights" + hs);
                expect_matrix_near(t.heads[h].Z, to_matrix(ref.heads[h].Z), 1e-12, "Z" + hs);
            }
            expect_matrix_near(t.concat, to_matrix(ref.concat), 1e-12, "concat");
            expect_matrix_near(t.output, to_matrix(ref.output), 1e-12, "output");
            const double expected_scale = c.scale.kind == Scale::Kind::sqrt_dk ? std::sqrt(double(c.d_k))
                                          : c.scale.kind == Scale::Kind::none  ? 1.0
                                                                               : c.scale.divisor;
            EXPECT_EQ(t.scale, expected_scale);
        }
}

std::string describe_extended(const Config& c) {
    return describe(c, 0) + " biases=" + std::to_string(c.biases) + " kv_heads=" + std::to_string(c.kv_count()) +
           " rope=" + (c.rope.on ? std::string(to_string(c.rope.style)) + "/" + std::to_string(c.rope.dims) : "off") +
           " n_kv=" + std::to_string(c.n_kv) + " qk_norm=" + std::to_string(c.qk_norm.on);
}

TEST(ForwardExtended, MatchesDirectLoopReference) {
    for (const Config& c : extended_configs()) {
        SCOPED_TRACE(describe_extended(c));
        ASSERT_TRUE(validate(c).empty()) << all_text(validate(c));
        const Session s = random_session(c, 5);
        ASSERT_TRUE(validate(s).empty()) << all_text(validate(s));
        const Trace t = forward<double>(c, s.params);
        const RefTrace ref = reference_forward(c, s.params);
        for (int h = 0; h < c.heads; ++h) {
            const std::string hs = std::to_string(h);
            expect_matrix_near(t.heads[h].Q, to_matrix(ref.heads[h].Q), 1e-12, "Q" + hs);
            expect_matrix_near(t.heads[h].K, to_matrix(ref.heads[h].K), 1e-12, "K" + hs);
            expect_matrix_near(t.heads[h].V, to_matrix(ref.heads[h].V), 1e-12, "V" + hs);
            if (c.rope.on) {
                expect_matrix_near(t.heads[h].Q_rot, to_matrix(ref.heads[h].Q_rot), 1e-12, "Q_rot" + hs);
                expect_matrix_near(t.heads[h].K_rot, to_matrix(ref.heads[h].K_rot), 1e-12, "K_rot" + hs);
            } else {
                EXPECT_EQ(t.heads[h].Q_rot.size(), 0);
            }
            expect_matrix_near(t.heads[h].scores_raw, to_matrix(ref.heads[h].scores_raw), 1e-12, "scores_raw" + hs);
            const Matrix& softmax_input = c.softcap > 0 ? t.heads[h].scores_capped : t.heads[h].scores;
            EXPECT_EQ(t.heads[h].scores_capped.size(), c.softcap > 0 ? t.heads[h].scores.size() : 0);
            for (int i = 0; i < c.n; ++i)
                for (int j = 0; j < c.kv_len(); ++j) {
                    const double want = ref.heads[h].scores[i][j];
                    if (std::isinf(want))
                        EXPECT_EQ(softmax_input(i, j), want) << i << " " << j;
                    else
                        EXPECT_TRUE(near_rel(softmax_input(i, j), want, 1e-12)) << i << " " << j;
                }
            expect_matrix_near(t.heads[h].weights, to_matrix(ref.heads[h].weights), 1e-12, "weights" + hs);
            expect_matrix_near(t.heads[h].Z, to_matrix(ref.heads[h].Z), 1e-12, "Z" + hs);
        }
        expect_matrix_near(t.output, to_matrix(ref.output), 1e-12, "output");
        // The float path agrees too.
        const TraceT<float> tf = forward<float>(c, s.params);
        expect_matrix_near(Matrix(tf.output.cast<double>()), to_matrix(ref.output), 1e-4, "float output");
    }
}

TEST(ForwardExtended, AllOffIsTheSeedsLayer) {
    // Biases present but off, kv_heads = heads, RoPE off: the trace of the plain layer, bit for bit.
    for (const Config& base : property_configs()) {
        SCOPED_TRACE(describe(base, 3));
        Session s = random_session(base, 3);
        const Trace plain = forward<double>(base, s.params);
        Config c = base;
        c.kv_heads = c.heads;
        for (HeadParams& h : s.params.heads) h.b_Q.setConstant(5);  // ignored while biases are off
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h) EXPECT_TRUE(same(t.heads[h].weights, plain.heads[h].weights));
        EXPECT_TRUE(same(t.output, plain.output));
    }
}

TEST(ForwardExtended, GroupsEqualHeadsWithCopiedKeysAndValues) {
    // A grouped layer equals the plain multi-head layer in which each head holds a copy of its
    // group's W_K, W_V (what resize() gives when the groups are split).
    for (const Config& c : extended_configs()) {
        // (Under q/k norms the split layer's k_norm has h·d_k weights where the grouped one has g·d_k:
        // resize keeps the first g·d_k and starts the others at 1, not at copies of the groups'.)
        if (!c.grouped() || c.qk_norm.on) continue;
        SCOPED_TRACE(describe_extended(c));
        const Session s = random_session(c, 8);
        Config plain = c;
        plain.kv_heads = 0;
        const Session split = resized(s, plain);
        ASSERT_TRUE(validate(split).empty()) << all_text(validate(split));
        for (int h = 0; h < c.heads; ++h) {
            const HeadParams& owner = s.params.heads[s.params.kv_owner(h)];
            EXPECT_TRUE(same(split.params.heads[h].W_K, owner.W_K)) << h;
            EXPECT_TRUE(same(split.params.heads[h].b_V, owner.b_V)) << h;
        }
        const Trace grouped = forward<double>(c, s.params), ungrouped = forward<double>(plain, split.params);
        for (int h = 0; h < c.heads; ++h) EXPECT_TRUE(same(grouped.heads[h].weights, ungrouped.heads[h].weights));
        EXPECT_TRUE(same(grouped.output, ungrouped.output));
        // Merged back, each group keeps its first head's K/V: the grouped session again.
        EXPECT_EQ(resized(split, c).params, s.params);
    }
}

TEST(ForwardExtended, RopePreservesEachPairsNorm) {
    for (const Config& c : extended_configs()) {
        if (!c.rope.on) continue;
        SCOPED_TRACE(describe_extended(c));
        const Session s = random_session(c, 4);
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h)
            for (int j = 0; j < c.rope.rotated(c.d_k) / 2; ++j) {
                const RopePair pr = rope_pair(c.rope, c.d_k, j);
                for (int p = 0; p < c.n; ++p) {
                    const auto& q = t.heads[h].Q;
                    const auto& r = t.heads[h].Q_rot;
                    const double before = std::hypot(q(p, pr.first), q(p, pr.second));
                    const double after = std::hypot(r(p, pr.first), r(p, pr.second));
                    EXPECT_TRUE(near_rel(after, before, 1e-12)) << "head " << h << " pair " << j << " row " << p;
                }
                // Position 0 is not turned at all.
                EXPECT_EQ(t.heads[h].Q_rot(0, pr.first), t.heads[h].Q(0, pr.first));
            }
    }
}

TEST(ForwardExtended, RopeScoresDependOnlyOnRelativePosition) {
    // The same token at every position: every q is the same vector and so is every k, so with RoPE
    // the score of query p and key p + δ depends on δ alone (without RoPE it would be constant).
    for (const auto style : {Rope::Style::half, Rope::Style::interleaved}) {
        Config c = make_config(10, 6, 2, 4, 4, true, Mask::none);
        c.rope = {true, 10000, style, 0, {}};
        Session s = random_session(c, 12);
        for (int p = 1; p < c.n; ++p) s.params.X.row(p) = s.params.X.row(0);
        const Trace t = forward<double>(c, s.params);
        for (int h = 0; h < c.heads; ++h) {
            const Matrix& sc = t.heads[h].scores_raw;
            for (int i = 0; i + 1 < c.n; ++i)
                for (int j = 0; j + 1 < c.n; ++j)
                    EXPECT_TRUE(near_rel(sc(i + 1, j + 1), sc(i, j), 1e-10)) << i << "," << j;
            // and it does change with δ
            EXPECT_GT(std::abs(sc(0, 1) - sc(0, 3)), 1e-6);
        }
    }
}

// Checks a trace against the direct loops, matrix by matrix.
template <class Scalar>
void expect_matches_reference(const TraceT<Scalar>& t, const Config& c, const Params& params, double tol) {
    const RefTrace ref = reference_forward(c, params);
    ASSERT_EQ(t.heads.size(), static_cast<size_t>(c.heads));
    for (int h = 0; h < c.heads; ++h) {
        const std::string hs = std::to_string(h);
        expect_matrix_near(Matrix(t.heads[h].Q.template cast<double>()), to_matrix(ref.heads[h].Q), tol, "Q" + hs);
        expect_matrix_near(Matrix(t.heads[h].scores.template cast<double>()), to_matrix(ref.heads[h].scores), tol,
                           "scores" + hs);
        expect_matrix_near(Matrix(t.heads[h].weights.template cast<double>()), to_matrix(ref.heads[h].weights), tol,
                           "weights" + hs);
        expect_matrix_near(Matrix(t.heads[h].Z.template cast<double>()), to_matrix(ref.heads[h].Z), tol, "Z" + hs);
    }
    expect_matrix_near(Matrix(t.output.template cast<double>()), to_matrix(ref.output), tol, "output");
}

TEST(ForwardProperties, HeadsInParallelMatchTheReference) {
    // Large enough that the heads run on several threads (n²·(d_k + d_v) > 2·10⁵), causal and not.
    for (const Mask mask : {Mask::none, Mask::causal}) {
        const Config c = make_config(96, 48, 5, 16, 24, true, mask);
        const Session s = random_session(c, 21);
        expect_matches_reference(forward<double>(c, s.params), c, s.params, 1e-12);
        expect_matches_reference(forward<float>(c, s.params), c, s.params, 1e-4);
    }
}

TEST(ForwardProperties, ForwardIntoReusesATraceOfAnyEarlierShape) {
    // One trace written again and again, growing, shrinking and changing mask and projection,
    // equals a fresh computation each time.
    Trace t;
    TraceT<float> tf;
    const Config configs[] = {make_config(5, 8, 2, 4, 4), make_config(40, 12, 3, 4, 2, false, Mask::causal),
                              make_config(3, 4, 1, 2, 3), make_config(70, 16, 4, 8, 8, true, Mask::causal),
                              make_config(70, 16, 4, 8, 8)};
    std::uint64_t seed = 40;
    for (const Config& c : configs) {
        SCOPED_TRACE(describe(c, seed));
        const Session s = random_session(c, seed++);
        forward_into(t, c, s.params);
        forward_into(tf, c, s.params);
        const Trace fresh = forward<double>(c, s.params);
        ASSERT_EQ(t.heads.size(), fresh.heads.size());
        for (int h = 0; h < c.heads; ++h) {
            EXPECT_TRUE(same(t.heads[h].scores, fresh.heads[h].scores));
            EXPECT_TRUE(same(t.heads[h].weights, fresh.heads[h].weights));
            EXPECT_TRUE(same(t.heads[h].Z, fresh.heads[h].Z));
            EXPECT_EQ(t.rows[h].size(), static_cast<size_t>(c.n));
        }
        EXPECT_TRUE(same(t.output, fresh.output));
        expect_matches_reference(tf, c, s.params, 1e-4);
    }
}

TEST(ForwardFlops, CountsEveryProduct) {
    // Worked example: projections 2·2·4·(2+2+2)·2 = 192, Q·Kᵀ and weights·V 2·2·2·(2+2)·2 = 64,
    // W_O 2·2·4·4 = 64.
    EXPECT_EQ(forward_flops(worked_example().config), 192 + 64 + 64);
    Config c = worked_example().config;
    c.output_projection = false;
    EXPECT_EQ(forward_flops(c), 192 + 64);
}

TEST(ForwardProperties, ShapesFollowConfig) {
    for (const Config& c : property_configs()) {
        SCOPED_TRACE(describe(c, 4));
        const Trace t = forward<double>(c, random_session(c, 4).params);
        for (const HeadTrace& h : t.heads) {
            EXPECT_EQ(h.Q.rows(), c.n);
            EXPECT_EQ(h.Q.cols(), c.d_k);
            EXPECT_EQ(h.K.cols(), c.d_k);
            EXPECT_EQ(h.V.cols(), c.d_v);
            EXPECT_EQ(h.scores.rows(), c.n);
            EXPECT_EQ(h.scores.cols(), c.n);
            EXPECT_EQ(h.weights.cols(), c.n);
            EXPECT_EQ(h.Z.rows(), c.n);
            EXPECT_EQ(h.Z.cols(), c.d_v);
        }
        EXPECT_EQ(t.concat.rows(), c.n);
        EXPECT_EQ(t.concat.cols(), c.heads * c.d_v);
        EXPECT_EQ(t.output.rows(), c.n);
        EXPECT_EQ(t.output.cols(), c.output_projection ? c.d_model : c.heads * c.d_v);
        EXPECT_EQ(t.rows.size(), static_cast<size_t>(c.heads));
    }
}

TEST(ForwardProperties, WeightRowsSumToOneAndRowStatsMatchLoop) {
    for (const Config& c : property_configs())
        for (std::uint64_t seed : {3u, 4u}) {
            SCOPED_TRACE(describe(c, seed));
            const Trace t = forward<double>(c, random_session(c, seed).params);
            for (int h = 0; h < c.heads; ++h) {
                ASSERT_EQ(t.rows[h].size(), static_cast<size_t>(c.n));
                for (int i = 0; i < c.n; ++i) {
                    double sum = 0, mx = -inf, ent = 0;
                    for (int j = 0; j < c.n; ++j) {
                        const double w = t.heads[h].weights(i, j);
                        EXPECT_GE(w, 0.0);
                        EXPECT_LE(w, 1.0);
                        sum += w;
                        mx = std::max(mx, w);
                        if (w > 0) ent -= w * std::log(w);
                    }
                    EXPECT_NEAR(sum, 1.0, 1e-12) << "head " << h << " row " << i;
                    EXPECT_TRUE(near_rel(t.rows[h][i].sum, sum, 1e-12));
                    EXPECT_EQ(t.rows[h][i].max, mx);
                    EXPECT_TRUE(near_rel(t.rows[h][i].entropy, ent, 1e-12));
                    EXPECT_GE(t.rows[h][i].entropy, -1e-15);
                    EXPECT_LE(t.rows[h][i].entropy, std::log(static_cast<double>(c.n)) + 1e-12);
                }
            }
        }
}

TEST(ForwardProperties, UniformAttentionHasEntropyLogN) {
    // Identical tokens: every score equal, so weights are 1/n and entropy ln n.
    Config c;
    c.n = 5;
    Session s = random_session(c, 8);
    for (int i = 1; i < c.n; ++i) s.params.X.row(i) = s.params.X.row(0);
    const Trace t = forward<double>(c, s.params);
    for (int h = 0; h < c.heads; ++h)
        for (int i = 0; i < c.n; ++i) {
            for (int j = 0; j < c.n; ++j) EXPECT_NEAR(t.heads[h].weights(i, j), 0.2, 1e-15);
            EXPECT_NEAR(t.rows[h][i].entropy, std::log(5.0), 1e-12);
            EXPECT_NEAR(t.rows[h][i].max, 0.2, 1e-15);
        }
}

TEST(ForwardProperties, CausalMask) {
    for (const Config& base : property_configs())
        for (std::uint64_t seed : {5u, 6u}) {
            Config c = base;
            c.mask = Mask::causal;
            SCOPED_TRACE(describe(c, seed));
            const Trace t = forward<double>(c, random_session(c, seed).params);
            for (int h = 0; h < c.heads; ++h)
                for (int i = 0; i < c.n; ++i) {
                    double sum = 0;
                    for (int j = 0; j < c.n; ++j) {
                        const double w = t.heads[h].weights(i, j);
                        sum += w;
                        if (j > i) {
                            EXPECT_EQ(w, 0.0) << i << "," << j;
                            EXPECT_FALSE(std::signbit(w));
                            EXPECT_EQ(t.heads[h].scores(i, j), -inf) << i << "," << j;
                            EXPECT_TRUE(std::isfinite(t.heads[h].scores_raw(i, j)));
                        } else {
                            EXPECT_TRUE(std::isfinite(t.heads[h].scores(i, j)));
                            EXPECT_GT(w, 0.0);
                        }
                    }
                    EXPECT_NEAR(sum, 1.0, 1e-12);
                }
            // The first token can only attend to itself.
            for (int h = 0; h < c.heads; ++h) EXPECT_EQ(t.heads[h].weights(0, 0), 1.0);
        }
}

TEST(ForwardMasks, ACustomMaskOfTheCausalPatternIsTheCausalMask) {
    for (const Config& base : property_configs()) {
        Config causal = base;
        causal.mask = Mask::causal;
        SCOPED_TRACE(describe(causal, 8));
        const Session s = random_session(causal, 8);
        Config custom = causal;
        custom.mask = Mask::custom;
        Params p = s.params;
        p.mask = Matrix::Zero(base.n, base.n);
        for (int i = 0; i < base.n; ++i) p.mask.row(i).head(i + 1).setOnes();
        ASSERT_TRUE(validate(custom, p).empty()) << all_text(validate(custom, p));
        const Trace a = forward<double>(causal, s.params), b = forward<double>(custom, p);
        for (int h = 0; h < base.heads; ++h) {
            expect_matrix_near(b.heads[h].weights, a.heads[h].weights, 1e-14, "weights");
            EXPECT_TRUE(same(b.heads[h].scores, a.heads[h].scores));  // −∞ in the same places
            for (int i = 0; i < base.n; ++i) EXPECT_NEAR(b.rows[h][i].entropy, a.rows[h][i].entropy, 1e-12);
        }
        expect_matrix_near(b.output, a.output, 1e-13, "output");
        // A mask of ones allows everything: no mask at all.
        Config none = base;
        none.mask = Mask::none;
        p.mask.setOnes();
        const Trace all = forward<double>(custom, p), plain = forward<double>(none, s.params);
        expect_matrix_near(all.output, plain.output, 1e-13, "all-ones mask");
    }
}

TEST(ForwardMasks, MaskedKeysGetNoWeightAndTheRestShareIt) {
    Config c = make_config(4, 6, 2, 3, 3, true, Mask::custom);
    c.n_kv = 6;
    Session s = random_session(c, 9);
    // Query 0 sees only key 5; query 3 every key but 0 and 1.
    s.params.mask.setOnes();
    s.params.mask.row(0).setZero();
    s.params.mask(0, 5) = 1;
    s.params.mask(3, 0) = s.params.mask(3, 1) = 0;
    ASSERT_TRUE(validate(s).empty()) << all_text(validate(s));
    const Trace t = forward<double>(c, s.params);
    for (int h = 0; h < c.heads; ++h) {
        EXPECT_EQ(t.heads[h].weights(0, 5), 1.0);
        EXPECT_EQ(t.rows[h][0].entropy, 0.0);
        for (int j = 0; j < 5; ++j) EXPECT_EQ(t.heads[h].weights(0, j), 0.0);
        // Z's row 0 is V's row 5 exactly.
        for (int j = 0; j < c.d_v; ++j) EXPECT_EQ(t.heads[h].Z(0, j), t.heads[h].V(5, j));
        EXPECT_EQ(t.heads[h].weights(3, 0), 0.0);
        EXPECT_EQ(t.heads[h].weights(3, 1), 0.0);
        EXPECT_NEAR(t.heads[h].weights.row(3).sum(), 1.0, 1e-15);
        EXPECT_TRUE(std::isfinite(t.rows[h][3].entropy));
    }
}

TEST(ForwardCross, YEqualToXIsSelfAttention) {
    for (const Config& base : property_configs()) {
        if (base.mask == Mask::causal) continue;
        SCOPED_TRACE(describe(base, 10));
        const Session s = random_session(base, 10);
        Config cross = base;
        cross.n_kv = base.n;
        Params p = s.params;
        p.Y = p.X;
        ASSERT_TRUE(validate(cross, p).empty());
        const Trace a = forward<double>(base, s.params), b = forward<double>(cross, p);
        for (int h = 0; h < base.heads; ++h)
            expect_matrix_near(b.heads[h].weights, a.heads[h].weights, 1e-13, "weights");
        expect_matrix_near(b.output, a.output, 1e-13, "output");
    }
}

TEST(ForwardCross, AQueryDependsOnlyOnItsOwnRowOfXAndOnY) {
    Config c = make_config(3, 4, 2, 2, 2, true, Mask::none);
    c.n_kv = 5;
    Session s = random_session(c, 11);
    const Trace before = forward<double>(c, s.params);
    s.params.X(1, 2) += 0.5;  // another query's input
    const Trace after = forward<double>(c, s.params);
    EXPECT_TRUE(same(Matrix(after.output.row(0)), Matrix(before.output.row(0))));
    EXPECT_FALSE(same(Matrix(after.output.row(1)), Matrix(before.output.row(1))));
    s.params.Y(4, 0) += 0.5;  // a key's input moves every query's weights
    const Trace moved = forward<double>(c, s.params);
    EXPECT_FALSE(same(Matrix(moved.output.row(0)), Matrix(after.output.row(0))));
    EXPECT_EQ(moved.heads[0].weights.rows(), 3);
    EXPECT_EQ(moved.heads[0].weights.cols(), 5);
}

TEST(ForwardCross, ACausalMaskNeedsAsManyKeysAsQueries) {
    Config c = make_config(3, 4, 2, 2, 2, true, Mask::causal);
    c.n_kv = 4;
    const Problems p = validate(c);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].path, "config.mask");
    EXPECT_NE(p[0].message.find("n_kv = n"), std::string::npos) << p[0].message;
    c.n_kv = 3;
    EXPECT_TRUE(validate(c).empty());
    c.n_kv = -1;
    EXPECT_FALSE(validate(c).empty());
}

TEST(ForwardProperties, CausalLastRowEqualsUnmaskedLastRow) {
    // The last query sees every key, so its row is the same with and without the mask.
    Config c;
    c.n = 6;
    const Session s = random_session(c, 12);
    Config causal = c;
    causal.mask = Mask::causal;
    const Trace a = forward<double>(c, s.params);
    const Trace b = forward<double>(causal, s.params);
    for (int h = 0; h < c.heads; ++h) {
        for (int j = 0; j < c.n; ++j)
            EXPECT_TRUE(near_rel(a.heads[h].weights(c.n - 1, j), b.heads[h].weights(c.n - 1, j), 1e-15));
        EXPECT_EQ(a.heads[h].scores_raw, b.heads[h].scores_raw);
    }
}

TEST(ForwardProperties, MultiHeadEqualsSingleHeadRuns) {
    for (const Config& c : property_configs()) {
        SCOPED_TRACE(describe(c, 7));
        const Session s = random_session(c, 7);
        const Trace multi = forward<double>(c, s.params);
        Matrix concat(c.n, c.heads * c.d_v);
        for (int h = 0; h < c.heads; ++h) {
            Config one = c;
            one.heads = 1;
            one.output_projection = false;
            Params p;
            p.X = s.params.X;
            p.heads = {s.params.heads[h]};
            ASSERT_TRUE(validate(one, p).empty());
            const Trace single = forward<double>(one, p);
            expect_matrix_near(multi.heads[h].weights, single.heads[0].weights, 1e-14, "weights");
            expect_matrix_near(multi.heads[h].Z, single.heads[0].Z, 1e-14, "Z");
            concat.middleCols(h * c.d_v, c.d_v) = single.heads[0].Z;
        }
        expect_matrix_near(multi.concat, concat, 1e-14, "concat");
    }
}

TEST(ForwardProperties, OutputIsConcatTimesWOByLoop) {
    for (const Config& base : property_configs()) {
        Config c = base;
        c.output_projection = true;
        SCOPED_TRACE(describe(c, 9));
        const Session s = random_session(c, 9);
        const Trace t = forward<double>(c, s.params);
        ASSERT_EQ(t.output.cols(), c.d_model);
        for (int i = 0; i < c.n; ++i)
            for (int j = 0; j < c.d_model; ++j) {
                double o = 0;
                for (int k = 0; k < c.heads * c.d_v; ++k) o += t.concat(i, k) * s.params.W_O(k, j);
                EXPECT_TRUE(near_rel(t.output(i, j), o, 1e-12)) << i << "," << j;
            }
    }
}

TEST(ForwardProperties, NoProjectionGivesConcat) {
    for (const Config& base : property_configs()) {
        Config c = base;
        c.output_projection = false;
        SCOPED_TRACE(describe(c, 10));
        const Session s = random_session(c, 10);
        const Trace t = forward<double>(c, s.params);
        EXPECT_EQ(t.output, t.concat);
        // The rest of the trace does not depend on the switch.
        Config on = c;
        on.output_projection = true;
        const Trace t_on = forward<double>(on, s.params);
        EXPECT_EQ(t.concat, t_on.concat);
    }
}

TEST(ForwardProperties, ScaleNoneVsSqrtDk) {
    for (const Config& base : property_configs()) {
        Config a = base, b = base;
        a.scale = {Scale::Kind::none, 1.0};
        b.scale = {Scale::Kind::sqrt_dk, 1.0};
        SCOPED_TRACE(describe(base, 13));
        const Session s = random_session(base, 13);
        const Trace ta = forward<double>(a, s.params), tb = forward<double>(b, s.params);
        const double r = std::sqrt(static_cast<double>(base.d_k));
        EXPECT_EQ(ta.scale, 1.0);
        for (int h = 0; h < base.heads; ++h) {
            EXPECT_EQ(ta.heads[h].scores_raw, tb.heads[h].scores_raw);
            // Without scaling, scores are scores_raw itself.
            for (int i = 0; i < base.n; ++i)
                for (int j = 0; j < base.n; ++j) {
                    const double sa = ta.heads[h].scores(i, j), sb = tb.heads[h].scores(i, j);
                    if (std::isinf(sa)) {
                        EXPECT_EQ(sa, sb);
                        continue;
                    }
                    EXPECT_EQ(sa, ta.heads[h].scores_raw(i, j));
                    EXPECT_TRUE(near_rel(sa, sb * r, 1e-12)) << i << "," << j;
                    EXPECT_TRUE(near_rel(sa / r, sb, 1e-12)) << i << "," << j;
                }
        }
    }
}

TEST(ForwardProperties, DivisorScaleDivides) {
    for (double d : {0.25, 3.0, 1e3}) {
        Config c;
        c.n = 4;
        c.scale = {Scale::Kind::divisor, d};
        const Session s = random_session(c, 14);
        const Trace t = forward<double>(c, s.params);
        EXPECT_EQ(t.scale, d);
        for (int h = 0; h < c.heads; ++h)
            for (int i = 0; i < c.n; ++i)
                for (int j = 0; j < c.n; ++j)
                    EXPECT_TRUE(near_rel(t.heads[h].scores(i, j), t.heads[h].scores_raw(i, j) / d, 1e-15));
    }
    // A huge divisor flattens attention towards uniform.
    Config c;
    c.n = 4;
    c.scale = {Scale::Kind::divisor, 1e12};
    const Trace t = forward<double>(c, random_session(c, 14).params);
    for (int i = 0; i < c.n; ++i)
        for (int j = 0; j < c.n; ++j) EXPECT_NEAR(t.heads[0].weights(i, j), 0.25, 1e-9);
}

TEST(ForwardProperties, FloatAgreesWithDouble) {
    for (const Config& c : property_configs()) {
        SCOPED_TRACE(describe(c, 15));
        const Session s = random_session(c, 15);
        const Trace td = forward<double>(c, s.params);
        const TraceT<float> tf = forward<float>(c, s.params);
        ASSERT_EQ(tf.heads.size(), td.heads.size());
        for (int h = 0; h < c.heads; ++h) {
            expect_matrix_near(tf.heads[h].Q, td.heads[h].Q, 1e-4, "Q");
            expect_matrix_near(tf.heads[h].scores, td.heads[h].scores, 1e-4, "scores");
            expect_matrix_near(tf.heads[h].weights, td.heads[h].weights, 1e-4, "weights");
            expect_matrix_near(tf.heads[h].Z, td.heads[h].Z, 1e-4, "Z");
        }
        expect_matrix_near(tf.concat, td.concat, 1e-4, "concat");
        expect_matrix_near(tf.output, td.output, 1e-4, "output");
    }
}

TEST(ForwardProperties, ValidatedInputsGiveFiniteWeights) {
    // forward()'s precondition is a valid config and params; every finite X passes validation.
    // A large but finite X (|Q·Kᵀ| overflows past 1e308) must either be refused by validate
    // or still give finite weights that sum to 1, never NaN.
    Session s = worked_example();
    s.params.X(0, 0) = 1e200;
    if (!validate(s.config, s.params).empty()) {
        SUCCEED() << "refused by validate";
    } else {
        const Trace t = forward<double>(s.config, s.params);
        for (int h = 0; h < s.config.heads; ++h)
            for (int i = 0; i < s.config.n; ++i) {
                for (int j = 0; j < s.config.n; ++j)
                    EXPECT_FALSE(std::isnan(t.heads[h].weights(i, j))) << "head " << h << " [" << i << "][" << j << "]";
                EXPECT_NEAR(t.rows[h][i].sum, 1.0, 1e-12) << "head " << h << " row " << i;
            }
    }
}

// ---------------------------------------------------------------------------------------------
// softmax_rows

TEST(SoftmaxRows, ByHand) {
    Matrix m{{0, 0}, {std::log(3.0), 0}, {1, 2}};
    softmax_rows(m);
    EXPECT_NEAR(m(0, 0), 0.5, 1e-15);
    EXPECT_NEAR(m(0, 1), 0.5, 1e-15);
    EXPECT_NEAR(m(1, 0), 0.75, 1e-15);
    EXPECT_NEAR(m(1, 1), 0.25, 1e-15);
    const double e = std::exp(1.0);
    EXPECT_NEAR(m(2, 0), 1 / (1 + e), 1e-15);
    EXPECT_NEAR(m(2, 1), e / (1 + e), 1e-15);
}

TEST(SoftmaxRows, ShiftInvariant) {
    // Values on a 2^-10 grid in (−5, 5): adding any of these shifts is exact, and so is each
    // entry minus the row max, so a stable softmax gives bit-identical rows.
    Matrix base = random_session(Config{}, 16).params.X * 5;  // 2×4
    for (Eigen::Index i = 0; i < base.size(); ++i) base.data()[i] = std::round(base.data()[i] * 1024) / 1024;
    for (double shift : {-1000.0, -3.5, 0.0, 7.25, 1e3, 1e6}) {
        Matrix a = base, b = base;
        b.row(1).array() += shift;
        softmax_rows(a);
        softmax_rows(b);
        for (int j = 0; j < base.cols(); ++j) {
            EXPECT_EQ(a(1, j), b(1, j)) << "shift " << shift;
            EXPECT_EQ(a(0, j), b(0, j));  // the other row is untouched
        }
    }
    // Arbitrary (non-grid) values and a moderate shift agree to rounding.
    const Matrix raw = random_session(Config{}, 17).params.X * 5;
    Matrix a = raw, b = raw;
    b.row(0).array() += 12.345;
    softmax_rows(a);
    softmax_rows(b);
    for (int j = 0; j < raw.cols(); ++j) EXPECT_NEAR(a(0, j), b(0, j), 1e-13);
}

TEST(SoftmaxRows, LargeScoresStayFinite) {
    Matrix m{{1e4, 0, -1e4}, {-1e4, -1e4, -1e4}, {1e4, 1e4, 1e4}, {-1e4, 1e4, 0}, {1e300, -1e300, 0}};
    softmax_rows(m);
    for (int i = 0; i < m.rows(); ++i) {
        double sum = 0;
        for (int j = 0; j < m.cols(); ++j) {
            EXPECT_TRUE(std::isfinite(m(i, j))) << i << "," << j;
            sum += m(i, j);
        }
        EXPECT_NEAR(sum, 1.0, 1e-15) << i;
    }
    EXPECT_EQ(m(0, 0), 1.0);
    EXPECT_EQ(m(0, 2), 0.0);
    EXPECT_NEAR(m(1, 0), 1.0 / 3, 1e-15);
    EXPECT_NEAR(m(2, 2), 1.0 / 3, 1e-15);
    EXPECT_EQ(m(3, 1), 1.0);
    EXPECT_EQ(m(4, 0), 1.0);
}

TEST(SoftmaxRows, LargeScoresThroughForward) {
    // Scores of ±1e4 through the whole pass: scale none, one head, Q = K = X with tokens ±100.
    const Config c = make_config(3, 1, 1, 1, 1, false, Mask::none, {Scale::Kind::none, 1.0});
    Params p = filled(c);
    p.X = Matrix{{100}, {-100}, {0.5}};
    const Trace t = forward<double>(c, p);
    EXPECT_EQ(t.heads[0].scores(0, 0), 1e4);
    EXPECT_EQ(t.heads[0].scores(0, 1), -1e4);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isfinite(t.heads[0].weights(i, j))) << i << "," << j;
    EXPECT_EQ(t.heads[0].weights(0, 0), 1.0);
    EXPECT_EQ(t.heads[0].weights(1, 1), 1.0);
    EXPECT_NEAR(t.output(0, 0), 100, 1e-9);
    EXPECT_NEAR(t.output(1, 0), -100, 1e-9);
}

TEST(SoftmaxRows, MaskedEntriesGetZero) {
    Matrix m{{0, -inf, -inf}, {1, 1, -inf}, {-inf, 2, -inf}};
    softmax_rows(m);
    EXPECT_EQ(m(0, 0), 1.0);
    EXPECT_EQ(m(0, 1), 0.0);
    EXPECT_EQ(m(1, 0), 0.5);
    EXPECT_EQ(m(1, 2), 0.0);
    EXPECT_EQ(m(2, 1), 1.0);
    EXPECT_EQ(m(2, 0), 0.0);
}

TEST(SoftmaxRows, FloatShiftInvariantAndFinite) {
    // Built from double: GCC 12 gives a false -Warray-bounds on Eigen's float packets for a
    // 2×3 float initializer list.
    MatrixT<float> m = Matrix{{1e4, 0, -1e4}, {3, 2, 1}}.cast<float>();
    MatrixT<float> shifted = m;
    shifted.row(1).array() += 50.f;
    softmax_rows(m);
    softmax_rows(shifted);
    for (int j = 0; j < 3; ++j) {
        EXPECT_TRUE(std::isfinite(m(0, j)));
        EXPECT_NEAR(m(1, j), shifted(1, j), 1e-6);
    }
    EXPECT_EQ(m(0, 0), 1.0f);
}

TEST(ForwardProperties, ExtremeValidInputsStayFinite) {
    // The largest allowed values with the smallest allowed temperature: nothing overflows.
    Session s = worked_example();
    s.params.X.setConstant(Limits::max_abs_value);
    for (HeadParams& h : s.params.heads) {
        h.W_Q.setConstant(-Limits::max_abs_value);
        h.W_K.setConstant(Limits::max_abs_value);
        h.W_V.setConstant(Limits::max_abs_value);
    }
    s.params.W_O.setConstant(Limits::max_abs_value);
    s.config.scale = {Scale::Kind::divisor, Limits::min_divisor};
    ASSERT_TRUE(validate(s).empty());
    const Trace t = forward<double>(s.config, s.params);
    for (const HeadTrace& h : t.heads)
        for (const Matrix* m : {&h.Q, &h.K, &h.V, &h.scores_raw, &h.scores, &h.weights, &h.Z})
            EXPECT_TRUE(m->allFinite());
    EXPECT_TRUE(t.output.allFinite());
    for (const auto& rows : t.rows)
        for (const RowStats& r : rows) EXPECT_NEAR(r.sum, 1.0, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// softmax₁ (config.softmax = plus_one): e^{s_j} / (1 + Σ_k e^{s_k})

TEST(SoftmaxPlusOne, OneKeyLeftGivesWeightBelowOne) {
    // Every score −∞ but one: the standard softmax gives that key 1, softmax₁ e^s / (1 + e^s).
    for (const double s : {-3.0, 0.0, 0.7, 5.0}) {
        Matrix m{{-inf, s, -inf}};
        softmax_rows(m, Softmax::plus_one);
        const double want = std::exp(s) / (1 + std::exp(s));
        EXPECT_NEAR(m(0, 1), want, 1e-15 * want) << "s = " << s;
        EXPECT_LT(m(0, 1), 1.0);
        EXPECT_EQ(m(0, 0), 0.0);
        EXPECT_EQ(m(0, 2), 0.0);
    }
    // Every score −∞: the 1 takes all the weight, no key any (0, not 0/0).
    Matrix none{{-inf, -inf}};
    softmax_rows(none, Softmax::plus_one);
    EXPECT_EQ(none(0, 0), 0.0);
    EXPECT_EQ(none(0, 1), 0.0);
}

TEST(SoftmaxPlusOne, RowsSumBelowOneAsADirectLoopSays) {
    Matrix m{{0.5, -1.25, 2}, {-4, -6, -5}, {0, 0, 0}, {30, -2, 29}};
    const Matrix scores = m;
    softmax_rows(m, Softmax::plus_one);
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        double exps = 0;
        for (Eigen::Index k = 0; k < m.cols(); ++k) exps += std::exp(scores(i, k));
        double sum = 0;
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            const double want = std::exp(scores(i, j)) / (1 + exps);
            EXPECT_TRUE(near_rel(m(i, j), want, 1e-14)) << i << "," << j << ": " << m(i, j) << " vs " << want;
            sum += m(i, j);
        }
        EXPECT_TRUE(near_rel(sum, exps / (1 + exps), 1e-14)) << "row " << i;
        EXPECT_LT(sum, 1.0) << "row " << i;
    }
    // Three zeros: 1 / (1 + 3) each, the row summing to 3/4.
    EXPECT_NEAR(m(2, 0), 0.25, 1e-16);
}

TEST(SoftmaxPlusOne, LargeScoresStayFinite) {
    Matrix m{{1000, 999, -1000}, {-1000, -1000, -1000}, {1e300, 0, -1e300}};
    softmax_rows(m, Softmax::plus_one);
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) EXPECT_TRUE(std::isfinite(m(i, j))) << i << "," << j;
    // e^1000 / (1 + e^1000 + e^999) = 1 / (e^−1000 + 1 + e^−1), the 1 negligible beside e^1000.
    EXPECT_NEAR(m(0, 0), 1 / (1 + std::exp(-1.0)), 1e-15);
    EXPECT_NEAR(m(0, 1), std::exp(-1.0) / (1 + std::exp(-1.0)), 1e-15);
    EXPECT_EQ(m(0, 2), 0.0);
    // Scores of −1000: e^−1000 underflows to 0 against the 1, which takes the whole row.
    EXPECT_EQ(m(1, 0), 0.0);
    EXPECT_EQ(m(2, 0), 1.0);
}

TEST(SoftmaxPlusOne, ForwardWeightsAndRowStatsMatchADirectLoop) {
    for (Config c : property_configs()) {
        c.softmax = Softmax::plus_one;
        SCOPED_TRACE(describe(c, 5));
        const Trace t = forward<double>(c, random_session(c, 5).params);
        const Trace standard = [&] {
            Config s = c;
            s.softmax = Softmax::standard;
            return forward<double>(s, random_session(c, 5).params);
        }();
        for (int h = 0; h < c.heads; ++h)
            for (int i = 0; i < c.n; ++i) {
                double exps = 0;
                for (int k = 0; k < c.n; ++k) exps += std::exp(t.heads[h].scores(i, k));  // e^−∞ = 0
                double sum = 0, mx = 0, ent = 0;
                for (int j = 0; j < c.n; ++j) {
                    const double w = t.heads[h].weights(i, j);
                    EXPECT_TRUE(near_rel(w, std::exp(t.heads[h].scores(i, j)) / (1 + exps), 1e-12)) << h << i << j;
                    sum += w;
                    mx = std::max(mx, w);
                    if (w > 0) ent -= w * std::log(w);
                }
                EXPECT_TRUE(near_rel(sum, exps / (1 + exps), 1e-12)) << "head " << h << " row " << i;
                EXPECT_LT(sum, 1.0);
                EXPECT_TRUE(near_rel(t.rows[h][i].sum, sum, 1e-12));
                EXPECT_EQ(t.rows[h][i].max, mx);
                EXPECT_TRUE(near_rel(t.rows[h][i].entropy, ent, 1e-11)) << t.rows[h][i].entropy << " vs " << ent;
            }
        // The scores do not depend on the softmax; Z is the new weights times V.
        for (int h = 0; h < c.heads; ++h) {
            EXPECT_EQ(t.heads[h].scores, standard.heads[h].scores);
            expect_matrix_near(t.heads[h].Z, Matrix(t.heads[h].weights * t.heads[h].V), 1e-12, "Z");
        }
    }
}

TEST(SoftmaxPlusOne, ForwardWithScoresOfAThousandStaysFinite) {
    // Scores of ±1e4 and 0.25·1e4 through the whole pass (scale none, Q = K = X with tokens ±100).
    Config c = make_config(3, 1, 1, 1, 1, false, Mask::none, {Scale::Kind::none, 1.0});
    c.softmax = Softmax::plus_one;
    Params p = filled(c);
    p.X = Matrix{{100}, {-100}, {0.5}};
    const Trace t = forward<double>(c, p);
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(std::isfinite(t.rows[0][i].entropy));
        for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isfinite(t.heads[0].weights(i, j))) << i << "," << j;
    }
    EXPECT_EQ(t.heads[0].weights(0, 0), 1.0);  // 1 / (1 + e^−1e4 + …)
    // Row 2: scores 50, −50, 0.25: e^50 / (1 + e^50 + …) is 1 but for 1e−21.
    EXPECT_NEAR(t.heads[0].weights(2, 0), 1.0, 1e-15);
    EXPECT_NEAR(t.output(0, 0), 100, 1e-9);
}

}  // namespace
}  // namespace attnviz::core
