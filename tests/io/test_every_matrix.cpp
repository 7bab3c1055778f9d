// Every matrix of the registry through the whole app's path: saved and loaded (core/io), explained
// (core/attention/explain), exported (core/render/export, as `attnviz export` writes it) and, for
// the inputs, differentiated (core/attention/gradient). The loops run over core::all_matrix_ids,
// so a matrix added to the registry is checked here without a line of this file changing; one that
// some step does not handle (no place in the params or the trace, not written or not read back, no
// explanation, no gradient) fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/attention/explain.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/gradient.hpp"
#include "core/attention/presets.hpp"
#include "core/attention/registry.hpp"
#include "core/io/session_file.hpp"
#include "core/render/export.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// Configs between which every matrix of the registry exists at least once: one with everything
// beyond the seeds' layer switched on (biases, grouped K/V, RoPE, cross-attention, a custom mask,
// W_O), one without the output projection.
std::vector<Session> sessions() {
    Config all = make_config(3, 4, 4, 2, 2, true, Mask::custom);
    all.biases = true;
    all.kv_heads = 2;
    all.rope.on = true;
    all.n_kv = 4;
    Session with_everything = random_session(all, 21);
    // One key hidden from query 0, so a masked score is exported and explained too.
    with_everything.params.mask(0, 1) = 0;
    Config no_projection = make_config(3, 4, 2, 2, 3, false, Mask::causal);
    no_projection.biases = true;
    // Gemma 2's mechanisms: soft-capping that bites (c = 0.5), a sliding window of 2 keys, scaled RoPE.
    Config capped = make_config(4, 4, 2, 2, 2, true, Mask::causal);
    capped.softcap = 0.5;
    capped.window = 2;
    capped.rope.on = true;
    capped.rope.scaling = {RopeScaling::Kind::llama3, 8, 1, 4, 2};
    // OLMo 2's q/k norms: Q and K explained as the projection, then the norm over every head.
    Config normed = make_config(3, 4, 2, 2, 2, true, Mask::causal);
    normed.qk_norm = {true, 1e-6};
    normed.kv_heads = 1;
    normed.biases = true;
    return {with_everything, random_session(no_projection, 22), random_session(capped, 23), random_session(normed, 24)};
}

// The cell each matrix is checked at: its last one.
CellRef last_cell(const MatrixRef& ref, const Config& c) {
    return {ref, rows_of(ref.id, c) - 1, cols_of(ref.id, c) - 1};
}

// output[row][col] of the params, recomputed.
double output_at(const Config& c, const Params& p, int row, int col) { return forward<double>(c, p).output(row, col); }

void check_matrix(const Session& saved, const Session& loaded, const Trace& t, const MatrixRef& ref) {
    const Config& c = loaded.config;
    SCOPED_TRACE(label(ref, Notation::ascii));
    const Matrix* m = find_matrix(loaded.params, t, ref);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->rows(), rows_of(ref.id, c));
    ASSERT_EQ(m->cols(), cols_of(ref.id, c));

    // Saved and loaded: an input reads back bit for bit.
    if (is_input(ref.id)) {
        const Matrix* before = find_input(saved.params, ref);
        ASSERT_NE(before, nullptr);
        EXPECT_TRUE(same(*before, *m));
    }

    // Explained: the cell's value, and a sum's terms add up to it.
    const CellRef cell = last_cell(ref, c);
    const double value = (*m)(cell.row, cell.col);
    const Result<Explanation> e = explain(loaded.params, t, cell);
    ASSERT_TRUE(e.value) << (e.problems.empty() ? "" : e.problems[0].message);
    EXPECT_EQ(e.value->value, value);
    if (const SumTerms* sum = e.value->as<SumTerms>()) {
        double total = sum->has_bias ? sum->bias : 0;
        for (const Product& p : sum->products) total += p.a * p.b;
        EXPECT_EQ(sum->normed, c.qk_norm.on && (ref.id == MatrixId::Q || ref.id == MatrixId::K));
        if (sum->normed) total = total / sum->rms * sum->weight;  // the q/k norm after the projection
        EXPECT_TRUE(near_rel(total, value, 1e-12));
    }
    if (const SoftcapTerms* cap = e.value->as<SoftcapTerms>()) {
        EXPECT_EQ(cap->cap, c.softcap);
        EXPECT_TRUE(near_rel(cap->cap * std::tanh(cap->score / cap->cap), value, 1e-15));
        EXPECT_LT(std::abs(value), c.softcap);
    }

    // Exported as `attnviz export --matrix … --format csv` writes it: the numbers read back.
    ExportRequest request;
    request.matrix = ref;
    request.format = ExportFormat::csv;
    const Result<std::string> csv = export_bytes(loaded, t, request);
    ASSERT_TRUE(csv.value) << (csv.problems.empty() ? "" : csv.problems[0].message);
    // Read back cell by cell (a masked score is written as -inf, which strtod reads).
    std::vector<double> numbers;
    const std::string& text = *csv.value;
    for (std::size_t at = 0; at < text.size();) {
        char* end = nullptr;
        numbers.push_back(std::strtod(text.c_str() + at, &end));
        ASSERT_NE(end, text.c_str() + at) << "not a number at " << at;
        at = static_cast<std::size_t>(end - text.c_str());
        while (at < text.size() && (text[at] == ',' || text[at] == ' ' || text[at] == '\n')) ++at;
    }
    ASSERT_EQ(static_cast<Eigen::Index>(numbers.size()), m->size());
    for (Eigen::Index k = 0; k < m->size(); ++k) EXPECT_EQ(numbers[static_cast<std::size_t>(k)], m->data()[k]) << k;
}

// ∂output[row][col]/∂ the input has the input's shape and matches a central difference at its last
// cell. The mask is 0/1, not differentiable: its gradient is empty.
void check_gradient(const Session& s, const Trace& t, const MatrixRef& ref) {
    const Config& c = s.config;
    SCOPED_TRACE("d/d" + label(ref, Notation::ascii));
    const int row = c.n - 1, col = c.output_width() - 1;
    const Result<Gradients> g = output_gradient(c, s.params, t, row, col);
    ASSERT_TRUE(g.value);
    const Matrix* d = find_input(g.value->d, ref);
    ASSERT_NE(d, nullptr);
    if (ref.id == MatrixId::mask) {
        EXPECT_EQ(d->size(), 0);
        return;
    }
    ASSERT_EQ(d->rows(), rows_of(ref.id, c));
    ASSERT_EQ(d->cols(), cols_of(ref.id, c));
    const CellRef cell = last_cell(ref, c);
    const double eps = 1e-6;
    Params up = s.params, down = s.params;
    (*find_input(up, ref))(cell.row, cell.col) += eps;
    (*find_input(down, ref))(cell.row, cell.col) -= eps;
    const double numeric = (output_at(c, up, row, col) - output_at(c, down, row, col)) / (2 * eps);
    EXPECT_NEAR((*d)(cell.row, cell.col), numeric, 1e-6 * std::max(1.0, std::abs(numeric)));
}

TEST(EveryMatrix, SavedLoadedExplainedExportedAndDifferentiated) {
    std::set<MatrixId> checked;
    for (const Session& saved : sessions()) {
        ASSERT_TRUE(validate(saved).empty());
        const Result<Session> loaded = parse_session(write_session(saved));
        ASSERT_TRUE(loaded.value) << (loaded.problems.empty() ? "" : loaded.problems[0].message);
        // (W_O is kept in memory while the projection is off, but not saved: each matrix that
        // exists is compared below.)
        EXPECT_EQ(loaded.value->tokens, saved.tokens);
        const Session& s = *loaded.value;
        const Trace t = forward<double>(s.config, s.params);
        for (MatrixId id : all_matrix_ids) {
            if (!exists(id, s.config)) {
                // Absent, and explain says why in the registry's words.
                ASSERT_NE(absence(id, s.config), nullptr) << name(id);
                const Result<Explanation> e = explain(s.params, t, {{id, 0}, 0, 0});
                ASSERT_FALSE(e.value) << name(id);
                EXPECT_EQ(e.problems[0].message, absence(id, s.config));
                continue;
            }
            EXPECT_EQ(absence(id, s.config), nullptr) << name(id);
            checked.insert(id);
            for (int h = 0; h < (is_per_head(id) ? s.config.heads : 1); ++h) {
                check_matrix(saved, s, t, {id, h});
                if (is_input(id)) check_gradient(s, t, {id, h});
            }
        }
    }
    // Every id of the registry was taken through every step in one of the sessions.
    for (MatrixId id : all_matrix_ids) EXPECT_TRUE(checked.count(id)) << name(id) << " exists in none of the sessions";
}

// Why a matrix is absent comes from its row: b_O needs biases and the projection, and names what
// is missing first (biases), then the projection.
TEST(EveryMatrix, AbsenceNamesWhatTheConfigLacks) {
    Config c = make_config(2, 4, 2, 2, 2, true);
    EXPECT_STREQ(absence(MatrixId::b_O, c), "this layer has no biases");
    c.biases = true;
    EXPECT_EQ(absence(MatrixId::b_O, c), nullptr);
    c.output_projection = false;
    EXPECT_STREQ(absence(MatrixId::b_O, c), "the output projection is off");
    EXPECT_STREQ(absence(MatrixId::W_O, c), "the output projection is off");
    EXPECT_STREQ(absence(MatrixId::Q_rot, c), "RoPE is off");
    EXPECT_STREQ(absence(MatrixId::Y, c), "this layer has no cross-attention input");
    EXPECT_STREQ(absence(MatrixId::mask, c), "this layer has no custom mask");
    EXPECT_EQ(absence(MatrixId::X, c), nullptr);
}

}  // namespace
}  // namespace attnviz::core
