// The online softmax in tiles gives Z (double, ≤ 1e-12) for tile sizes that divide n and ones that
// do not, under every mask and cross-attention; its running max and sum after a row's last tile
// are the row's max score and Σ e^{S − max}; the steps come in the tiles' order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/attention/masks.hpp"
#include "core/attention/online_softmax.hpp"
#include "core/attention/presets.hpp"

using namespace attnviz::core;

namespace {

Session session_with(Mask mask, int n_kv = 0, int window = 0, double softcap = 0) {
    Config c = worked_example().config;
    c.window = window;
    c.softcap = softcap;
    c.n = 7;
    c.d_model = 8;
    c.heads = 2;
    c.d_k = c.d_v = 4;
    c.mask = mask;
    c.n_kv = n_kv;
    Session s = random_session(c, 11);
    if (mask == Mask::custom) {
        s.params.mask = Matrix::Ones(c.n, c.kv_len());
        s.params.mask(2, 0) = s.params.mask(2, 1) = s.params.mask(5, 4) = 0;  // keys each row may not see
    }
    return s;
}

}  // namespace

TEST(OnlineSoftmax, GivesZForEveryTileSizeMaskAndCrossAttention) {
    struct Case {
        Mask mask;
        int n_kv = 0, window = 0;
        double softcap = 0;
    };
    for (const auto& [mask, n_kv, window, softcap] :
         {Case{Mask::none}, Case{Mask::causal}, Case{Mask::custom}, Case{Mask::none, 5}, Case{Mask::custom, 9},
          Case{Mask::causal, 0, 3, 0.5}}) {  // the last: Gemma 2's window and soft-capping
        const Session s = session_with(mask, n_kv, window, softcap);
        const Trace trace = forward<double>(s.config, s.params);
        for (const auto& [br, bc] : {std::pair{1, 1}, std::pair{2, 3}, std::pair{3, 2}, std::pair{7, 7},
                                     std::pair{4, 100}, std::pair{100, 1}}) {
            for (int head = 0; head < 2; ++head) {
                SCOPED_TRACE(std::to_string(static_cast<int>(mask)) + " n_kv " + std::to_string(n_kv) + " tiles " +
                             std::to_string(br) + "×" + std::to_string(bc) + " head " + std::to_string(head));
                const Result<OnlineSoftmaxRun> run = online_softmax(trace, head, br, bc);
                ASSERT_TRUE(run);
                const Matrix& Z = trace.heads[static_cast<std::size_t>(head)].Z;
                EXPECT_LE((run.value->O - Z).cwiseAbs().maxCoeff(), 1e-12);
                EXPECT_EQ(run.value->max_difference, (run.value->O - Z).cwiseAbs().maxCoeff());
                const int kv = s.config.kv_len();
                const std::size_t row_tiles = (7 + br - 1) / br, col_tiles = (kv + bc - 1) / bc;
                ASSERT_EQ(run.value->steps.size(), row_tiles * col_tiles);
            }
        }
    }
}

TEST(OnlineSoftmax, TheRunningMaxAndSumEndAtTheRowsMaxAndItsSumOfExponentials) {
    const Session s = session_with(Mask::causal);
    const Trace trace = forward<double>(s.config, s.params);
    const Matrix& S = trace.heads[1].scores;
    const Result<OnlineSoftmaxRun> run = online_softmax(trace, 1, 3, 2);
    ASSERT_TRUE(run);
    // Steps in order: row tile [0,3) over keys [0,2), [2,4), [4,6), [6,7), then row tile [3,6) …
    const OnlineSoftmaxStep& first = run.value->steps[0];
    EXPECT_EQ(first.row_begin, 0);
    EXPECT_EQ(first.row_end, 3);
    EXPECT_EQ(first.col_begin, 0);
    EXPECT_EQ(first.col_end, 2);
    EXPECT_EQ(run.value->steps[4].row_begin, 3);
    EXPECT_EQ(run.value->steps[4].col_begin, 0);
    // Row 0 after its first tile: key 1 is masked, so m = S(0,0) and ℓ = 1.
    EXPECT_EQ(first.m[0], S(0, 0));
    EXPECT_DOUBLE_EQ(first.l[0], 1.0);
    // After each row tile's last step: the row's max and Σ e^{S − max}, computed directly.
    for (const OnlineSoftmaxStep& step : run.value->steps) {
        if (step.col_end != 7) continue;
        for (int r = 0; r < step.row_end - step.row_begin; ++r) {
            const int i = step.row_begin + r;
            double max = -std::numeric_limits<double>::infinity(), sum = 0;
            for (int j = 0; j < 7; ++j) max = std::max(max, S(i, j));
            for (int j = 0; j < 7; ++j)
                if (std::isfinite(S(i, j))) sum += std::exp(S(i, j) - max);
            EXPECT_EQ(step.m[static_cast<std::size_t>(r)], max) << i;
            EXPECT_NEAR(step.l[static_cast<std::size_t>(r)], sum, 1e-12 * sum) << i;
        }
    }
    // The traffic model: 4·n·n_kv values of n × n data for standard attention; K and V read once
    // per row tile (3 of them) by the tiled form.
    EXPECT_EQ(run.value->standard_nn_accesses, 4 * 7 * 7);
    EXPECT_EQ(run.value->standard_kv_reads, 7 * (4 + 4));
    EXPECT_EQ(run.value->tiled_kv_reads, 3 * 7 * (4 + 4));
}

TEST(OnlineSoftmax, GivesZUnderTheSoftmaxPlusOne) {
    // Rows start at m = 0, ℓ = 1 (softmax₁'s 1); scores scaled up so that some rows' max is above 0
    // and others' below, for tiles that divide n = 7 (1, 7) and that do not (2, 3, 4).
    for (const Mask mask : {Mask::none, Mask::causal, Mask::custom}) {
        Session s = session_with(mask);
        s.config.softmax = Softmax::plus_one;
        s.params.X *= 3;
        const Trace trace = forward<double>(s.config, s.params);
        for (const auto& [br, bc] :
             {std::pair{1, 1}, std::pair{2, 3}, std::pair{3, 2}, std::pair{7, 7}, std::pair{4, 100}, std::pair{7, 4}}) {
            for (int head = 0; head < 2; ++head) {
                SCOPED_TRACE(std::to_string(static_cast<int>(mask)) + " tiles " + std::to_string(br) + "×" +
                             std::to_string(bc) + " head " + std::to_string(head));
                const Result<OnlineSoftmaxRun> run = online_softmax(trace, head, br, bc);
                ASSERT_TRUE(run);
                const HeadTrace& h = trace.heads[static_cast<std::size_t>(head)];
                EXPECT_LE((run.value->O - h.Z).cwiseAbs().maxCoeff(), 1e-12);
                // After a row's last tile: m = max(0, row max) and ℓ = e^{−m} + Σ e^{S − m}.
                for (const OnlineSoftmaxStep& step : run.value->steps) {
                    if (step.col_end != 7) continue;
                    for (int r = 0; r < step.row_end - step.row_begin; ++r) {
                        const int i = step.row_begin + r;
                        const double m = std::max(0.0, h.scores.row(i).maxCoeff());
                        double sum = std::exp(-m);
                        for (int j = 0; j < 7; ++j) sum += std::exp(h.scores(i, j) - m);  // e^−∞ = 0
                        EXPECT_EQ(step.m[static_cast<std::size_t>(r)], m) << i;
                        EXPECT_NEAR(step.l[static_cast<std::size_t>(r)], sum, 1e-12 * sum) << i;
                    }
                }
            }
        }
        // The rows' weights sum to below 1 there, so this is not the standard softmax's Z.
        EXPECT_LT(trace.rows[0][3].sum, 1 - 1e-6);
    }
}

TEST(OnlineSoftmax, RefusesAHeadOrATileSizeOutOfRange) {
    const Session s = session_with(Mask::none);
    const Trace trace = forward<double>(s.config, s.params);
    EXPECT_EQ(online_softmax(trace, 2, 2, 2).problems.front().path, "head");
    EXPECT_EQ(online_softmax(trace, -1, 2, 2).problems.front().path, "head");
    EXPECT_EQ(online_softmax(trace, 0, 0, 2).problems.front().path, "block_rows");
    EXPECT_EQ(online_softmax(trace, 0, 2, max_block + 1).problems.front().path, "block_cols");
}
