#include "core/attention/presets.hpp"

#include <cmath>
#include <random>

namespace attnviz::core {

Session worked_example() {
    Session s;
    s.config = Config{};  // n = 2, d_model = 4, h = 2, d_k = d_v = 2, W_O on, no mask, √d_k
    s.tokens = default_tokens(2);
    s.params.X = Matrix{{1, 0, 1, 0}, {0, 2, 0, 2}};
    const Matrix head1{{1, 0}, {0, 1}, {1, 0}, {0, 1}};
    const Matrix head2{{0, 1}, {1, 0}, {0, 1}, {1, 0}};
    const Matrix zero = Matrix::Zero(1, 2);  // the seed has no biases
    s.params.heads = {{head1, head1, head1, zero, zero, zero}, {head2, head2, head2, zero, zero, zero}};
    s.params.W_O = Matrix::Identity(4, 4);
    s.params.b_O = Matrix::Zero(1, 4);
    return s;
}

namespace {

// U(−a, a) from 53 random bits: the same numbers everywhere, unlike std::uniform_real_distribution.
class Uniform {
public:
    explicit Uniform(std::uint64_t seed) : engine_(seed) {}
    double operator()(double a) {
        const double unit = static_cast<double>(engine_() >> 11) * 0x1.0p-53;  // [0, 1)
        return (2 * unit - 1) * a;
    }
    Matrix matrix(int rows, int cols, double a) {
        Matrix m(rows, cols);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) m(r, c) = (*this)(a);
        return m;
    }

private:
    std::mt19937_64 engine_;
};

}  // namespace

double glorot_limit(int fan_in, int fan_out) { return std::sqrt(6.0 / (fan_in + fan_out)); }

Matrix random_matrix(int rows, int cols, double limit, std::uint64_t seed) {
    Uniform u(seed);
    return u.matrix(rows, cols, limit);
}

Session random_session(const Config& config, std::uint64_t seed) {
    Uniform u(seed);
    Session s;
    s.config = config;
    s.tokens = default_tokens(config.n);
    s.params.X = u.matrix(config.n, config.d_model, 1.0);
    for (int i = 0; i < config.heads; ++i) {
        HeadParams h;
        h.W_Q = u.matrix(config.d_model, config.d_k, glorot_limit(config.d_model, config.d_k));
        h.W_K = u.matrix(config.d_model, config.d_k, glorot_limit(config.d_model, config.d_k));
        h.W_V = u.matrix(config.d_model, config.d_v, glorot_limit(config.d_model, config.d_v));
        s.params.heads.push_back(std::move(h));
    }
    // W_O is drawn even while the projection is off, so turning it on shows a real matrix.
    s.params.W_O = u.matrix(config.concat_width(), config.d_model, glorot_limit(config.concat_width(), config.d_model));
    // Biases after everything else (so a config without them draws the same numbers as before),
    // U(−0.1, 0.1) with biases on, zeros otherwise.
    const double b = config.biases ? 0.1 : 0.0;
    for (HeadParams& h : s.params.heads) {
        h.b_Q = u.matrix(1, config.d_k, b);
        h.b_K = u.matrix(1, config.d_k, b);
        h.b_V = u.matrix(1, config.d_v, b);
    }
    s.params.b_O = u.matrix(1, config.d_model, b);
    // Grouped-query attention: each group keeps its first head's K/V.
    s.params.kv_group_size = config.group_size();
    for (int i = 0; i < config.heads; ++i)
        if (s.params.kv_owner(i) != i) {
            HeadParams& h = s.params.heads[i];
            h.W_K = h.W_V = h.b_K = h.b_V = Matrix();
        }
    // Cross-attention's Y ~ U(−1, 1), and a custom mask allowing each key with probability 1/2
    // (and key i mod kv_len always, so every query keeps one), drawn last for the same reason.
    if (config.cross()) {
        s.params.Y = u.matrix(config.n_kv, config.d_model, 1.0);
        s.kv_tokens = default_kv_tokens(config.n_kv);
    }
    if (config.mask == Mask::custom) {
        s.params.mask = u.matrix(config.n, config.kv_len(), 1.0);
        for (int i = 0; i < config.n; ++i)
            for (int j = 0; j < config.kv_len(); ++j)
                s.params.mask(i, j) = j == i % config.kv_len() || s.params.mask(i, j) >= 0 ? 1.0 : 0.0;
    }
    // The q/k norms' weights 1 + U(−0.5, 0.5), as trained norms are near 1; drawn last too.
    if (config.qk_norm.on) {
        s.params.q_norm = u.matrix(1, config.heads * config.d_k, 0.5).array() + 1.0;
        s.params.k_norm = u.matrix(1, config.kv_count() * config.d_k, 0.5).array() + 1.0;
    }
    return s;
}

}  // namespace attnviz::core
