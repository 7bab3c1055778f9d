// AppState: every setter keeps the session valid, refuses bad input with a message and
// leaves the user's work as it was; the trace follows each change once.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>

#include "core/attention/presets.hpp"
#include "core/attention/stiefel.hpp"
#include "core/base/format.hpp"
#include "core/io/autosave_store.hpp"
#include "core/teach/sentence.hpp"
#include "panels/layer/inputs_panel.hpp"
#include "shell/frame.hpp"
#include "state/app_state.hpp"

using namespace attnviz;
using app::AppState;
using app::CellRef;
using app::MatrixRef;
using core::MatrixId;

namespace {

std::filesystem::path temp_dir() {
    auto dir = std::filesystem::temp_directory_path() /
               ("attnviz_app_state_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace

TEST(AppState, StartsWithTheTraceOfItsSession) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.dirty());
    // Q⁽¹⁾ = X·W_Q⁽¹⁾ = [[2, 0], [0, 4]] (seed 001).
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(0, 0), 2.0);
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(1, 1), 4.0);
}

TEST(AppState, EditOfXFlowsIntoEveryIntermediateOnUpdate) {
    AppState state(core::worked_example());
    const std::uint64_t before = state.generation();
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, 3.0));
    EXPECT_TRUE(state.dirty());
    EXPECT_TRUE(state.update());
    EXPECT_FALSE(state.update());  // once per change, not per call
    EXPECT_EQ(state.generation(), before + 1);
    const core::HeadTrace& h1 = state.trace().heads[0];
    // Row 0 of X is now [3, 0, 1, 0]; W_Q⁽¹⁾ picks columns 0+2 and 1+3: Q[0] = [4, 0].
    EXPECT_DOUBLE_EQ(h1.Q(0, 0), 4.0);
    EXPECT_DOUBLE_EQ(h1.scores_raw(0, 0), 16.0);
    EXPECT_NEAR(h1.scores(0, 0), 16.0 / std::sqrt(2.0), 1e-12);
    const double e = std::exp(16.0 / std::sqrt(2.0));
    EXPECT_NEAR(h1.weights(0, 0), e / (e + 1.0), 1e-12);
    EXPECT_NEAR(h1.Z(0, 0), 4.0 * e / (e + 1.0), 1e-12);
    EXPECT_NEAR(state.trace().output(0, 0), h1.Z(0, 0), 1e-12);  // W_O is the identity
}

// Every change counts; since a count, the matrices edited are named, unless anything else changed
// (a label, an undo) or the changes since are too many to recall.
TEST(AppState, ChangesCountAndNameTheMatricesEdited) {
    AppState state(core::worked_example());
    const std::uint64_t start = state.change_count();
    const MatrixRef x{MatrixId::X, 0}, w_o{MatrixId::W_O, 0};
    ASSERT_TRUE(state.set_cell({x, 0, 0}, 2.5));
    core::Matrix doubled = state.session().params.W_O * 2;
    ASSERT_TRUE(state.set_matrix(w_o, doubled));
    ASSERT_TRUE(state.set_cell({x, 1, 0}, -1));
    EXPECT_EQ(state.change_count(), start + 3);
    EXPECT_EQ(state.matrices_edited_since(start), std::make_optional(std::vector<MatrixRef>{x, w_o}));
    EXPECT_EQ(state.matrices_edited_since(start + 2), std::make_optional(std::vector<MatrixRef>{x}));
    EXPECT_EQ(state.matrices_edited_since(start + 3), std::make_optional(std::vector<MatrixRef>{}));
    EXPECT_EQ(state.matrices_edited_since(start + 4), std::nullopt);  // not a count there has been
    ASSERT_TRUE(state.set_token(0, "cat"));
    EXPECT_EQ(state.matrices_edited_since(start), std::nullopt);
    const std::uint64_t labelled = state.change_count();
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.matrices_edited_since(labelled), std::nullopt);
    const std::uint64_t undone = state.change_count();
    for (int k = 0; k < 100; ++k) ASSERT_TRUE(state.set_cell({x, 0, 1}, 0.01 * k));
    EXPECT_EQ(state.matrices_edited_since(undone), std::nullopt);  // too many to recall
    EXPECT_EQ(state.matrices_edited_since(state.change_count() - 10), std::make_optional(std::vector<MatrixRef>{x}));
}

TEST(AppState, RefusesNonFiniteValuesAndKeepsTheOldOne) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.set_cell({{MatrixId::W_K, 1}, 2, 1}, std::numeric_limits<double>::quiet_NaN()));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("W_K"), std::string::npos);
    EXPECT_DOUBLE_EQ(state.session().params.heads[1].W_K(2, 1), 1.0);
    EXPECT_FALSE(state.dirty());
}

TEST(AppState, AnEditOfASharedKeyWeightChangesItsWholeGroupAndUndoes) {
    // Four heads in two K/V groups: W_K of head 2 is head 1's, so the edit reaches heads 1 and 2 and
    // not heads 3 and 4.
    core::Config c = core::random_session({4, 8, 4, 2, 2, true, core::Mask::none, {}, true, 2, {}}, 1).config;
    AppState state(core::random_session(c, 3));
    const core::Trace before = state.trace();
    ASSERT_TRUE(state.set_cell({{MatrixId::W_K, 1}, 0, 0}, 2.5));
    state.wait_for_trace();
    EXPECT_EQ(state.session().params.heads[0].W_K(0, 0), 2.5);
    EXPECT_EQ(state.input({MatrixId::W_K, 1}), state.input({MatrixId::W_K, 0}));
    EXPECT_NE(state.trace().heads[0].K(0, 0), before.heads[0].K(0, 0));
    EXPECT_EQ(state.trace().heads[1].K, state.trace().heads[0].K);
    EXPECT_EQ(state.trace().heads[2].K, before.heads[2].K);
    // A bias edit moves every row of that column of Q by the change.
    const double old_b = state.session().params.heads[3].b_Q(0, 1);
    ASSERT_TRUE(state.set_cell({{MatrixId::b_Q, 3}, 0, 1}, 1.0));
    state.wait_for_trace();
    for (int i = 0; i < 4; ++i)
        EXPECT_NEAR(state.trace().heads[3].Q(i, 1) - before.heads[3].Q(i, 1), 1.0 - old_b, 1e-12) << i;
    ASSERT_TRUE(state.undo());
    ASSERT_TRUE(state.undo());
    state.wait_for_trace();
    EXPECT_EQ(state.trace().heads[0].K, before.heads[0].K);
    EXPECT_EQ(state.trace().heads[3].Q, before.heads[3].Q);
}

TEST(AppState, OpeningACheckpointImportsItsLayerAndABadOneChangesNothing) {
    AppState state(core::worked_example());
    const std::string dir = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    // No head count: refused, the worked example stays.
    EXPECT_FALSE(state.open_file(dir + "gpt2.safetensors"));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("--heads"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), core::worked_example());
    // Llama's config.json gives the heads: imported, unsaved.
    ASSERT_TRUE(state.open_file(dir + "llama/model.safetensors")) << state.message().text;
    state.wait_for_trace();
    EXPECT_EQ(state.config().heads, 4);
    EXPECT_EQ(state.config().kv_count(), 2);
    EXPECT_TRUE(state.config().rope.on);
    EXPECT_FALSE(state.trace().heads[0].Q_rot.size() == 0);
    EXPECT_TRUE(state.file_path().empty());
    ASSERT_TRUE(state.undo());  // back to the worked example
    state.wait_for_trace();
    EXPECT_EQ(state.session(), core::worked_example());
}

TEST(AppState, RefusesCellsOutsideTheMatrix) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.set_cell({{MatrixId::X, 0}, 2, 0}, 1.0));
    EXPECT_FALSE(state.set_cell({{MatrixId::Q, 0}, 0, 0}, 1.0));  // intermediates are not editable
    EXPECT_EQ(state.session(), core::worked_example());
}

TEST(AppState, SetMatrixChecksTheShape) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.set_matrix({MatrixId::W_V, 0}, core::Matrix::Zero(4, 3)));
    EXPECT_NE(state.message().text.find("expected 4×2, got 4×3"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), core::worked_example());
    ASSERT_TRUE(state.set_matrix({MatrixId::W_V, 0}, core::Matrix::Zero(4, 2)));
    state.update();
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Z.cwiseAbs().sum(), 0.0);  // V⁽¹⁾ = 0, so Z⁽¹⁾ = 0
}

TEST(AppState, ConfigChangeResizesKeepingValues) {
    AppState state(core::worked_example());
    state.set_cell({{MatrixId::X, 0}, 1, 3}, 7.5);
    core::Config c = state.config();
    c.n = 3;
    c.heads = 4;
    c.d_k = c.d_v = 1;
    ASSERT_TRUE(state.set_config(c));
    state.update();
    EXPECT_EQ(state.trace().heads.size(), 4u);
    EXPECT_EQ(state.trace().heads[3].weights.rows(), 3);
    EXPECT_DOUBLE_EQ(state.session().params.X(1, 3), 7.5);
    EXPECT_DOUBLE_EQ(state.session().params.X(2, 0), core::fill_input(2, 0));  // a new token: the fill rule
    EXPECT_EQ(state.session().tokens.size(), 3u);
    EXPECT_EQ(state.session().tokens[2], "x3");
}

TEST(AppState, RefusesAnInvalidConfigAndKeepsTheSession) {
    AppState state(core::worked_example());
    core::Config c = state.config();
    c.n = 0;
    EXPECT_FALSE(state.set_config(c));
    EXPECT_NE(state.message().text.find("config.n"), std::string::npos);
    c = state.config();
    c.n = 100000;
    EXPECT_FALSE(state.set_config(c));
    EXPECT_EQ(state.session(), core::worked_example());
}

TEST(AppState, OutputWithoutProjectionIsReportedNotFatal) {
    AppState state(core::worked_example());
    core::Config c = state.config();
    c.output_projection = false;
    c.d_v = 3;  // h·d_v = 6 ≠ d_model = 4
    ASSERT_TRUE(state.set_config(c));
    state.update();
    EXPECT_EQ(state.trace().output.cols(), 6);
    EXPECT_FALSE(state.message().error);
    EXPECT_NE(state.message().text.find("h·d_v"), std::string::npos);
}

TEST(AppState, OpeningABadFileKeepsTheCurrentWork) {
    AppState state(core::worked_example());
    state.set_cell({{MatrixId::X, 0}, 0, 1}, 9.0);
    const core::Session work = state.session();
    const auto path = temp_dir() / "bad.json";
    std::ofstream(path) << R"({"format": "attnviz-session", "version": 1, "config": {"n": 2, "d_model": 4,
        "heads": 1, "d_k": 2, "d_v": 2, "output_projection": false, "mask": "none", "scale": "sqrt_dk"},
        "X": [[1, 0, 1, 0], [0, 2, 0, 2]], "heads": [{"W_Q": [[1, 0], [0, 1], [1, 0], [0, 1]],
        "W_K": [[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0]], "W_V": [[1, 0], [0, 1], [1, 0], [0, 1]]}]})";
    EXPECT_FALSE(state.open_file(path.string()));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("heads[0].W_K: expected 4×2, got 4×3"), std::string::npos)
        << state.message().text;
    EXPECT_EQ(state.session(), work);
    EXPECT_FALSE(state.open_file((temp_dir() / "missing.json").string()));
    EXPECT_EQ(state.session(), work);
}

TEST(AppState, SaveThenOpenGivesTheSameSession) {
    AppState state(core::random_session({3, 6, 2, 3, 3, true, core::Mask::causal, {}, false, 0, {}}, 11));
    state.set_token(1, "cat");
    const auto path = (temp_dir() / "saved.json").string();
    ASSERT_TRUE(state.save_file(path));
    AppState other(core::worked_example());
    ASSERT_TRUE(other.open_file(path));
    EXPECT_EQ(other.session(), state.session());
    EXPECT_EQ(other.file_path(), path);
}

TEST(AppState, SelectionOperandsFollowTheCell) {
    AppState state(core::worked_example());
    state.select({{MatrixId::Z, 1}, 1, 0});
    ASSERT_EQ(state.selection_operands().size(), 2u);
    EXPECT_EQ(state.selection_operands()[0], (core::CellRef{{MatrixId::weights, 1}, 1, -1}));
    EXPECT_EQ(state.selection_operands()[1], (core::CellRef{{MatrixId::V, 1}, -1, 0}));
    // Shrinking the session drops a selection that no longer exists.
    core::Config c = state.config();
    c.heads = 1;
    c.d_k = c.d_v = 4;
    ASSERT_TRUE(state.set_config(c));
    state.update();
    EXPECT_EQ(state.selection(), nullptr);
}

TEST(ParseCellRef, SelectingACellThatDoesNotExistIsReported) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.select_checked({{MatrixId::weights, 2}, 0, 0}));  // there is no head 3
    EXPECT_TRUE(state.message().error);
    EXPECT_EQ(state.selection(), nullptr);
    EXPECT_FALSE(state.select_checked({{MatrixId::Q, 0}, 2, 0}));  // Q⁽¹⁾ has 2 rows
    ASSERT_TRUE(state.select_checked({{MatrixId::Z, 1}, 1, 1}));
    EXPECT_EQ(state.viewed(), (MatrixRef{MatrixId::Z, 1}));
}

TEST(Undo, EveryKindOfChangeCanBeTakenBack) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.can_undo());
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 5.0);
    state.set_matrix({MatrixId::W_V, 1}, core::Matrix::Zero(4, 2));
    state.set_token(0, "the");
    core::Config c = state.config();
    c.n = 3;
    ASSERT_TRUE(state.set_config(c));
    state.randomize(7);
    const core::Session last = state.session();

    for (int k = 0; k < 5; ++k) ASSERT_TRUE(state.undo()) << k;
    EXPECT_FALSE(state.can_undo());
    EXPECT_EQ(state.session(), core::worked_example());
    state.update();
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(0, 0), 2.0);  // the trace follows

    for (int k = 0; k < 5; ++k) ASSERT_TRUE(state.redo()) << k;
    EXPECT_FALSE(state.can_redo());
    EXPECT_EQ(state.session(), last);
}

TEST(Undo, ADragOfOneCellIsOneStep) {
    AppState state(core::worked_example());
    for (double v = 1.0; v < 2.0; v += 0.1) state.set_cell({{MatrixId::X, 0}, 1, 1}, v);  // one drag
    state.set_cell({{MatrixId::X, 0}, 1, 2}, 4.0);                                        // another cell
    EXPECT_EQ(state.undo_label(), "edit of X[1][2]");
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.undo_label(), "edit of X[1][1]");
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), core::worked_example());
}

TEST(Undo, ANewChangeClearsRedoAndRefusedChangesAddNothing) {
    AppState state(core::worked_example());
    state.set_cell({{MatrixId::X, 0}, 0, 1}, 3.0);
    state.undo();
    EXPECT_TRUE(state.can_redo());
    state.set_cell({{MatrixId::X, 0}, 0, 2}, 3.0);
    EXPECT_FALSE(state.can_redo());
    state.undo();
    EXPECT_FALSE(state.set_matrix({MatrixId::X, 0}, core::Matrix::Zero(3, 3)));  // refused
    core::Config bad = state.config();
    bad.d_k = 0;
    EXPECT_FALSE(state.set_config(bad));  // refused
    EXPECT_FALSE(state.can_undo());
}

TEST(Undo, OpeningAFileCanBeUndone) {
    AppState state(core::worked_example());
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 8.0);
    const core::Session work = state.session();
    const auto path = (temp_dir() / "other.json").string();
    AppState other(core::random_session({3, 4, 1, 4, 4, false, core::Mask::none, {}, false, 0, {}}, 3));
    ASSERT_TRUE(other.save_file(path));
    ASSERT_TRUE(state.open_file(path));
    EXPECT_EQ(state.config().n, 3);
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), work);
}

TEST(Undo, KeepsAtMostTheNewestSteps) {
    AppState state(core::worked_example());
    for (size_t k = 0; k < AppState::max_undo_steps + 20; ++k)
        state.set_cell({{MatrixId::X, 0}, static_cast<int>(k % 2), static_cast<int>(k % 4)},
                       static_cast<double>(k + 10));
    size_t steps = 0;
    while (state.undo()) ++steps;
    EXPECT_EQ(steps, AppState::max_undo_steps);
}

TEST(Undo, ACellEditKeepsOneNumberNotACopyOfTheSession) {
    // X alone is 256×256 here (512 KiB): a step that copied the session would hold over 1 MiB.
    AppState state(core::random_session({256, 256, 4, 64, 64, true, core::Mask::none, {}, false, 0, {}}, 2));
    for (int k = 0; k < 200; ++k) ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, k, k % 256}, 0.5 + k));
    EXPECT_LT(state.undo_bytes(), 200 * 1024) << "200 cell edits";  // a step's own size and one number
    // A whole matrix keeps that matrix.
    ASSERT_TRUE(state.set_matrix({MatrixId::W_Q, 2}, core::Matrix::Zero(256, 64)));
    EXPECT_GE(state.undo_bytes(), 256 * 64 * 8);
    EXPECT_LT(state.undo_bytes(), 256 * 64 * 8 + 200 * 1024);
}

TEST(Undo, StepsOfEveryKindRestoreExactStatesBothWays) {
    AppState state(core::random_session({6, 8, 2, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 9));
    std::vector<core::Session> states{state.session()};
    const auto step = [&](bool ok) {
        ASSERT_TRUE(ok);
        states.push_back(state.session());
    };
    step(state.set_cell({{MatrixId::X, 0}, 1, 2}, 0.25));
    step(state.set_cell({{MatrixId::W_K, 1}, 3, 0}, -1.5));
    step(state.set_matrix({MatrixId::W_O, 0}, core::Matrix::Constant(8, 8, 0.125)));
    step(state.set_token(4, "cat"));
    core::Config c = state.config();
    c.n = 9;
    c.heads = 3;
    step(state.set_config(c));
    step(state.set_cell({{MatrixId::W_V, 2}, 7, 3}, 3.0));  // a cell of a head the resize added
    step(state.set_token(8, "new"));
    state.randomize(4);
    states.push_back(state.session());
    step(state.set_cell({{MatrixId::X, 0}, 8, 7}, -2.0));

    for (size_t k = states.size() - 1; k > 0; --k) {
        ASSERT_TRUE(state.undo()) << k;
        EXPECT_EQ(state.session(), states[k - 1]) << "after undoing step " << k;
    }
    EXPECT_FALSE(state.can_undo());
    for (size_t k = 1; k < states.size(); ++k) {
        ASSERT_TRUE(state.redo()) << k;
        EXPECT_EQ(state.session(), states[k]) << "after redoing step " << k;
    }
    state.wait_for_trace();
    EXPECT_EQ(state.shown().session, states.back());
    EXPECT_TRUE(
        core::same(state.trace().output, core::forward<double>(states.back().config, states.back().params).output));
}

TEST(Undo, StepsAreBoundedByBytes) {
    // Each change of a 512×512 X keeps 2 MiB: 256 MiB hold at most 128 of them.
    AppState state(core::random_session({512, 512, 1, 8, 8, false, core::Mask::none, {}, false, 0, {}}, 1));
    for (int k = 0; k < 140; ++k) ASSERT_TRUE(state.set_matrix({MatrixId::X, 0}, core::Matrix::Constant(512, 512, k)));
    EXPECT_LE(state.undo_bytes(), AppState::max_undo_bytes);
    size_t steps = 0;
    while (state.undo()) ++steps;
    EXPECT_GE(steps, 100u);
    EXPECT_LT(steps, 140u);
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 0), static_cast<double>(140 - steps - 1));
}

TEST(MemoryBudget, ChangesOverItAreRefusedWithTheSizeAndNothingChanges) {
    AppState state(core::worked_example());
    state.set_memory_budget(std::int64_t{64} << 20);  // 64 MiB
    core::Config c = state.config();
    c.n = 2048;  // 2 heads × 3·2048² doubles ≈ 192 MiB
    EXPECT_FALSE(state.set_config(c));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find(core::format_bytes(core::bytes_needed(c))), std::string::npos)
        << state.message().text;
    EXPECT_NE(state.message().text.find("64 MiB"), std::string::npos) << state.message().text;
    EXPECT_EQ(state.session(), core::worked_example());
    EXPECT_FALSE(state.can_undo());
    // A file of those dimensions is refused the same way, and the current session stays.
    const auto path = (temp_dir() / "long.json").string();
    AppState other(core::random_session({2048, 4, 2, 2, 2, true, core::Mask::none, {}, false, 0, {}}, 1));
    ASSERT_TRUE(other.save_file(path));
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, 7.0));
    EXPECT_FALSE(state.open_file(path));
    EXPECT_NE(state.message().text.find("over the memory budget"), std::string::npos) << state.message().text;
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 0), 7.0);
    EXPECT_EQ(state.config().n, 2);
    // Within a larger budget both go through.
    state.set_memory_budget(std::int64_t{1} << 30);
    EXPECT_TRUE(state.set_config(c));
}

TEST(AppState, ATokenLabelShowsInTheNextSnapshot) {
    AppState state(core::worked_example());
    ASSERT_TRUE(state.set_token(1, "dog"));
    state.update();
    EXPECT_EQ(state.shown().session.tokens[1], "dog");
}

TEST(Modified, FollowsEditsSavesAndOpens) {
    AppState state(core::worked_example());
    EXPECT_FALSE(state.modified());
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 2.0);
    EXPECT_TRUE(state.modified());
    const auto path = (temp_dir() / "modified.json").string();
    ASSERT_TRUE(state.save_file(path));
    EXPECT_FALSE(state.modified());
    state.undo();
    EXPECT_TRUE(state.modified());
    ASSERT_TRUE(state.open_file(path));
    EXPECT_FALSE(state.modified());
    EXPECT_FALSE(state.set_cell({{MatrixId::X, 0}, 0, 0}, std::nan("")));  // refused: still unmodified
    EXPECT_FALSE(state.modified());
}

TEST(AppState, ReplacingTheSessionRecomputesBeforeAnyCellIsRead) {
    // A lesson's "Reset to the worked example" replaces a larger session and selects a cell in the
    // same frame: the selection must be read against the new trace, never the old one.
    AppState state(core::random_session({3, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 2));
    state.set_session(core::worked_example(), "reset");
    EXPECT_FALSE(state.dirty());
    ASSERT_TRUE(state.select_checked({{MatrixId::Q, 0}, 1, 1}));
    const auto e = state.explain(*state.selection());
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e.value->value, 4.0);  // Q⁽¹⁾[1][1] of the worked example
    ASSERT_TRUE(e.value->as<core::SumTerms>());
    EXPECT_EQ(e.value->as<core::SumTerms>()->products.size(), 4u);  // d_model = 4 terms, not 8
    // The same after undo and after a change of dimensions.
    ASSERT_TRUE(state.undo());
    EXPECT_FALSE(state.dirty());
    EXPECT_EQ(state.trace().config.d_model, 8);
    core::Config c = state.config();
    c.d_model = 2;
    c.d_k = c.d_v = 1;
    ASSERT_TRUE(state.set_config(c));
    EXPECT_FALSE(state.dirty());
    EXPECT_EQ(state.trace().heads[0].Q.cols(), 1);
}

// --- The worker: large sessions are computed off the UI thread (forced here with a sync limit of 0).

namespace {

// The trace of a session computed from scratch, for comparison.
core::Trace fresh(const core::Session& s) { return core::forward<double>(s.config, s.params); }

}  // namespace

TEST(Worker, ABurstOfEditsEndsWithTheTraceOfTheLastState) {
    AppState state(core::random_session({12, 8, 2, 4, 4, true, core::Mask::causal, {}, false, 0, {}}, 3));
    state.set_sync_limit(0);  // every recompute goes to the worker
    for (int k = 0; k < 25; ++k) {
        ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, k % 12, k % 8}, 0.1 * k));
        state.update();  // as a frame would: requests, shows whatever is finished
    }
    state.wait_for_trace();
    EXPECT_FALSE(state.computing());
    EXPECT_EQ(state.shown().session, state.session());  // the shown snapshot is the edited session
    const core::Trace expected = fresh(state.session());
    for (int h = 0; h < 2; ++h) {
        EXPECT_TRUE(core::same(state.trace().heads[h].weights, expected.heads[h].weights));
        EXPECT_TRUE(core::same(state.trace().heads[h].Z, expected.heads[h].Z));
    }
    EXPECT_TRUE(core::same(state.trace().output, expected.output));
    // The views read the snapshot: X there is the edited one.
    EXPECT_DOUBLE_EQ((*state.matrix({MatrixId::X, 0}))(24 % 12, 24 % 8), 2.4);
}

// The worker's requests compare only the matrices edited since the last request where nothing else
// changed; whatever mix of edits, undos, redos, labels and settings comes, the trace shown once the
// worker is done is of the session exactly.
TEST(Worker, EveryMixOfChangesEndsWithTheSessionItself) {
    core::Config c{6, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}};
    AppState state(core::random_session(c, 5));
    state.set_sync_limit(0);
    unsigned seed = 17;
    const auto next = [&](unsigned below) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) % below;
    };
    for (int step = 0; step < 300; ++step) {
        const int head = static_cast<int>(next(2));
        const double value = 0.01 * step;
        switch (next(8)) {
            case 0: ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, static_cast<int>(next(6)), 1}, value)); break;
            case 1: ASSERT_TRUE(state.set_cell({{MatrixId::W_Q, head}, 2, static_cast<int>(next(4))}, value)); break;
            case 2: ASSERT_TRUE(state.set_cell({{MatrixId::b_V, head}, 0, 3}, value)); break;
            case 3: {
                core::Matrix w_o = state.session().params.W_O;
                w_o(1, static_cast<int>(next(8))) = value;
                ASSERT_TRUE(state.set_matrix({MatrixId::W_O, 0}, w_o));
                break;
            }
            case 4: state.undo(); break;
            case 5: state.redo(); break;
            case 6: ASSERT_TRUE(state.set_token(static_cast<int>(next(6)), "t" + std::to_string(step))); break;
            default: {
                core::Config scaled = state.config();
                scaled.scale.kind = core::Scale::Kind::divisor;
                scaled.scale.divisor = next(2) ? 0.5 : 2.0;
                ASSERT_TRUE(state.set_config(scaled));
            }
        }
        state.update();  // as a frame would
        if (next(5) == 0) {
            state.wait_for_trace();
            ASSERT_EQ(state.shown().session, state.session()) << "step " << step;
        }
    }
    state.wait_for_trace();
    EXPECT_EQ(state.shown().session, state.session());
    EXPECT_TRUE(core::same(state.trace().output, fresh(state.session()).output));
}

TEST(Worker, ASnapshotIsNeverPairedWithOtherParams) {
    AppState state(core::random_session({10, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 4));
    state.set_sync_limit(0);
    ASSERT_TRUE(state.select_checked({{MatrixId::Q, 1}, 3, 2}));
    for (int k = 0; k < 15; ++k) {
        ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 3, k % 8}, 1.0 + k));
        state.update();
        // Whatever snapshot is shown, the selected cell's arithmetic is that of the snapshot's own
        // session: its terms are X's row 3 of that session, and its value that trace's Q.
        const core::Explanation* e = state.selected_explanation();
        ASSERT_NE(e, nullptr);
        const core::Session& shown = state.shown().session;
        const core::Trace shown_trace = fresh(shown);
        EXPECT_DOUBLE_EQ(e->value, shown_trace.heads[1].Q(3, 2));
        const core::SumTerms* sum = e->as<core::SumTerms>();
        ASSERT_NE(sum, nullptr);
        for (int c = 0; c < 8; ++c) EXPECT_EQ(sum->products[c].a, shown.params.X(3, c));
    }
    state.wait_for_trace();
    EXPECT_DOUBLE_EQ(state.selected_explanation()->value, fresh(state.session()).heads[1].Q(3, 2));
}

// The heads panel's numbers come with the snapshot, made on the worker: each head's summary of the
// very weights it is shown with, in the synchronous path and the worker's alike.
TEST(Worker, EachSnapshotCarriesItsHeadsSummaries) {
    for (const int sync_limit : {0, 1 << 30}) {
        AppState state(core::random_session({12, 8, 4, 2, 2, true, core::Mask::causal, {}, false, 0, {}}, 5));
        state.set_sync_limit(sync_limit);
        ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 2, 3}, 4.0));
        state.wait_for_trace();
        state.update();
        const app::Snapshot& shown = state.shown();
        ASSERT_EQ(shown.session.params.X(2, 3), 4.0);
        ASSERT_EQ(shown.head_summaries.size(), 4u);
        for (size_t h = 0; h < 4; ++h) {
            const core::HeadSummary want = core::summarize_head(shown.trace.heads[h].weights);
            EXPECT_EQ(shown.head_summaries[h].mean_entropy, want.mean_entropy) << h;
            EXPECT_EQ(shown.head_summaries[h].mean_distance, want.mean_distance) << h;
            EXPECT_EQ(shown.head_summaries[h].first_share, want.first_share) << h;
            EXPECT_EQ(shown.head_summaries[h].diagonal_share, want.diagonal_share) << h;
        }
        EXPECT_GT(shown.head_summaries[1].mean_entropy, 0.0);
    }
}

TEST(Worker, ANewShapeIsShownOnlyWithItsOwnTrace) {
    AppState state(core::worked_example());
    state.set_sync_limit(0);
    core::Config c = state.config();
    c.n = 7;
    ASSERT_TRUE(state.set_config(c));  // the editable session has 7 tokens at once
    EXPECT_EQ(state.session().params.X.rows(), 7);
    // Until the new trace is shown, the views see the old snapshot whole: 2 tokens everywhere.
    if (state.computing()) {
        EXPECT_EQ(state.shown_config().n, state.matrix({MatrixId::X, 0})->rows());
        EXPECT_EQ(state.trace().heads[0].weights.rows(), state.shown_config().n);
    }
    state.wait_for_trace();
    EXPECT_EQ(state.shown_config().n, 7);
    EXPECT_EQ(state.trace().heads[0].weights.rows(), 7);
    EXPECT_EQ(state.matrix({MatrixId::X, 0})->rows(), 7);
    // Undo goes back through the worker too.
    ASSERT_TRUE(state.undo());
    state.wait_for_trace();
    EXPECT_EQ(state.shown().session, core::worked_example());
    EXPECT_TRUE(core::same(state.trace().output, fresh(core::worked_example()).output));
}

TEST(Worker, SmallSessionsAreComputedAtOnce) {
    AppState state(core::worked_example());  // the default limit: the worked example is tiny
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, 3.0));
    EXPECT_TRUE(state.update());
    EXPECT_FALSE(state.computing());
    EXPECT_DOUBLE_EQ(state.trace().heads[0].Q(0, 0), 4.0);  // 3·1 + 0 + 1·1 + 0
}

TEST(Worker, AComputationAtOnceSupersedesOneOnTheWorker) {
    // A large change goes to the worker; a small one right after is computed at once. The worker's
    // late result must neither replace it nor leave the app "computing" for ever.
    AppState state(core::worked_example());
    state.set_sync_limit(1e4);  // the worked example (320 flops) at once, 1500 tokens on the worker
    core::Config big = state.config();
    big.n = 1500;  // tens of milliseconds of work: still running when undo() comes
    big.d_model = 64;
    big.d_k = big.d_v = 32;
    ASSERT_TRUE(state.set_config(big));
    // The worker may only have finished if this thread was held up for the whole computation; the
    // superseding below is then not exercised, but every check still holds.
    const bool still_running = state.computing();
    ASSERT_TRUE(state.undo());  // back to 2 tokens: computed at once
    EXPECT_EQ(state.shown_config().n, 2);
    state.wait_for_trace();
    EXPECT_FALSE(state.computing());
    EXPECT_EQ(state.shown_config().n, 2);  // the 60-token trace came later and older: not shown
    EXPECT_EQ(state.shown().session, core::worked_example());
    if (!still_running) std::cerr << "note: the worker finished before undo(); superseding was not exercised\n";
}

TEST(Worker, EditsMadeWhileItComputesGoTogetherInOneRequest) {
    // While the worker computes, edits only mark the session; once it is free, one request carries
    // the newest state. Ten edits during one trace cost one more trace, not ten.
    core::Config c{2000, 128, 2, 64, 64, true, core::Mask::none, {}, false, 0, {}};
    AppState state(core::random_session(c, 6));
    state.set_sync_limit(0);
    const std::uint64_t first = state.generation();
    ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, 0, 0}, 0.5));
    state.update();  // the worker starts on this one
    const auto start = std::chrono::steady_clock::now();
    for (int k = 1; k <= 10; ++k) {
        ASSERT_TRUE(state.set_cell({{MatrixId::X, 0}, k, k}, 0.5 + k));
        state.update();
        EXPECT_TRUE(state.computing());
    }
    const double edits_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    state.wait_for_trace();
    EXPECT_FALSE(state.computing());
    EXPECT_EQ(state.shown().session, state.session());
    EXPECT_TRUE(core::same(state.trace().output, fresh(state.session()).output));
    // Only meaningful when the ten edits took less time than a trace (a held-up thread may let the
    // worker finish between them; then each check above still holds).
    if (edits_ms < 0.5 * state.compute_ms())
        EXPECT_EQ(state.generation(), first + 2);  // the first edit's trace, then the ten together
    else
        std::cerr << "note: the edits took " << edits_ms << " ms, a trace " << state.compute_ms()
                  << " ms; the coalescing was not exercised\n";
}

TEST(AppState, ShrinkingAndGrowingBackRestoresTheValuesWhileTheSessionIsOpen) {
    AppState state(core::worked_example());
    core::Config three = state.config();
    three.n = 3;
    three.heads = 3;
    three.d_k = three.d_v = 1;
    ASSERT_TRUE(state.set_config(three));
    // New tokens and heads are not blank: the fill rule's generator.
    EXPECT_DOUBLE_EQ(state.session().params.X(2, 1), core::fill_input(2, 1));
    EXPECT_NE(state.session().params.heads[2].W_Q, state.session().params.heads[0].W_Q);
    state.set_cell({{MatrixId::X, 0}, 2, 1}, 4.25);    // an edit of the new token
    state.set_cell({{MatrixId::W_V, 2}, 3, 0}, -1.5);  // and of the new head
    ASSERT_TRUE(state.set_token(2, "mat"));
    core::Config one = three;
    one.n = 1;
    one.heads = 1;
    ASSERT_TRUE(state.set_config(one));
    EXPECT_EQ(state.session().params.X.rows(), 1);
    ASSERT_TRUE(state.set_config(three));  // back: the edits return, not the fill rule
    EXPECT_DOUBLE_EQ(state.session().params.X(2, 1), 4.25);
    EXPECT_DOUBLE_EQ(state.session().params.heads[2].W_V(3, 0), -1.5);
    EXPECT_EQ(state.session().tokens[2], "mat");
    // Another session forgets them.
    state.set_session(core::worked_example(), "Worked example");
    ASSERT_TRUE(state.set_config(three));
    EXPECT_DOUBLE_EQ(state.session().params.X(2, 1), core::fill_input(2, 1));
    EXPECT_EQ(state.session().tokens[2], "x3");
}

TEST(AppState, OrthonormalizeGivesWtWEqualsIAndUndoesInOneStep) {
    AppState state(core::random_session({3, 8, 2, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 9));
    const core::Matrix before = *state.input({MatrixId::W_K, 1});
    ASSERT_GT(core::stiefel_distance(before), 0.1);
    ASSERT_TRUE(app::matrix_orthonormalize(state, {MatrixId::W_K, 1}));
    EXPECT_LT(core::stiefel_distance(*state.input({MatrixId::W_K, 1})), 1e-12);
    EXPECT_NE(state.message().text.find("orthonormal"), std::string::npos);
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(*state.input({MatrixId::W_K, 1}), before);
    // More columns than rows: refused with the reason, nothing changed.
    AppState wide(core::random_session({2, 2, 1, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 1));
    const core::Matrix q = *wide.input({MatrixId::W_Q, 0});
    EXPECT_FALSE(app::matrix_orthonormalize(wide, {MatrixId::W_Q, 0}));
    EXPECT_TRUE(wide.message().error);
    EXPECT_EQ(*wide.input({MatrixId::W_Q, 0}), q);
}

// ---------------------------------------------------------------------------------------------
// Presets, files and paths

namespace {

// A session saved as `name` in the test's folder and opened: the state's file is that file.
std::string open_a_file_of_mine(AppState& state, const std::string& name) {
    AppState other(core::random_session({3, 4, 1, 4, 4, true, core::Mask::none, {}, false, 0, {}}, 5));
    const std::string path = (temp_dir() / name).string();
    EXPECT_TRUE(other.save_file(path));
    EXPECT_TRUE(state.open_file(path)) << state.message().text;
    return std::filesystem::canonical(path).string();
}

}  // namespace

TEST(NewSession, APresetIsANewUnsavedSessionSoSaveNeverWritesItOverTheOpenFile) {
    AppState state(core::worked_example());
    const std::string mine = open_a_file_of_mine(state, "mine.json");
    const core::Session my_work = state.session();
    ASSERT_EQ(state.file_path(), mine);
    ASSERT_EQ(app::window_title(state), "mine.json — attnviz");
    // Every preset of the app goes through set_session or randomize: the Dimensions panel's
    // Worked example, Random and Randomize, teach mode's "Use the worked example" and "Reset to
    // the worked example", a sentence, an imported layer.
    const auto sentence = core::sentence_session("The cat sat", state.session(), core::SentenceRows::embedding);
    ASSERT_TRUE(sentence);
    const std::vector<std::pair<std::string, std::function<void()>>> presets = {
        {"worked example",
         [&] { state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads"); }},
        {"random", [&] { state.randomize(7); }},
        {"sentence", [&] { state.set_session(*sentence.value, "A sentence"); }},
        {"import", [&] { ASSERT_TRUE(state.open_file(ATTNVIZ_REFERENCE_DIR "/checkpoints/llama/model.safetensors")); }},
    };
    for (const auto& [name, apply] : presets) {
        SCOPED_TRACE(name);
        apply();
        EXPECT_TRUE(state.file_path().empty()) << state.file_path();
        EXPECT_EQ(app::window_title(state), "unsaved session* — attnviz");
        // Undo brings back the file with its session: Save then writes the file's own work to it.
        ASSERT_TRUE(state.undo());
        EXPECT_EQ(state.session(), my_work);
        EXPECT_EQ(state.file_path(), mine);
        // And redo takes the preset, without the file, again.
        ASSERT_TRUE(state.redo());
        EXPECT_TRUE(state.file_path().empty());
        ASSERT_TRUE(state.undo());
    }
    AppState reread(core::worked_example());
    ASSERT_TRUE(reread.open_file(mine));
    EXPECT_EQ(reread.session(), my_work);  // nothing was written over it
}

TEST(NewSession, UndoingAnOpenBringsBackThePreviousFileToo) {
    AppState state(core::worked_example());
    const std::string first = open_a_file_of_mine(state, "first.json");
    const core::Session first_work = state.session();
    AppState other(core::worked_example());
    const std::string second = (temp_dir() / "second.json").string();
    ASSERT_TRUE(other.save_file(second));
    ASSERT_TRUE(state.open_file(second));
    ASSERT_TRUE(state.undo());
    EXPECT_EQ(state.session(), first_work);
    EXPECT_EQ(state.file_path(), first);  // Save would once have written first.json's work into second.json
    ASSERT_TRUE(state.redo());
    EXPECT_EQ(state.file_path(), std::filesystem::canonical(second).string());
}

TEST(Paths, AFileOpenedOrSavedByARelativePathIsKeptAbsolute) {
    const std::filesystem::path before = std::filesystem::current_path();
    const std::filesystem::path a = temp_dir() / "folder_a", b = temp_dir() / "folder_b";
    std::filesystem::create_directories(a);
    std::filesystem::create_directories(b);
    AppState state(core::worked_example());
    std::filesystem::current_path(a);
    ASSERT_TRUE(state.save_file("notes.json"));
    std::filesystem::current_path(b);  // another folder, as a later start of attnviz would be
    const std::string absolute = (std::filesystem::canonical(a) / "notes.json").string();
    EXPECT_EQ(state.file_path(), absolute);
    std::filesystem::current_path(a);
    AppState opened(core::worked_example());
    ASSERT_TRUE(opened.open_file("./notes.json"));
    std::filesystem::current_path(b);
    EXPECT_EQ(opened.file_path(), absolute);
    // What the autosave records of it is that path.
    {
        core::AutosaveStore crashed((temp_dir() / "state").string());
        ASSERT_TRUE(crashed.save(opened.session(), opened.file_path()).empty());
    }
    std::filesystem::current_path(before);
    const core::AutosaveStore next((temp_dir() / "state").string());
    const std::vector<core::AutosaveInfo> found = next.orphans();
    ASSERT_FALSE(found.empty());
    EXPECT_EQ(found.front().file, absolute);
    for (const core::AutosaveInfo& info : found) core::AutosaveStore::discard(info);
}

TEST(Paths, RestoringAnAutosaveThatNamesARelativeFileAsksWhereToSave) {
    // Records written before paths were kept absolute: the folder of "notes.json" is not known,
    // and Save must not write into whatever folder attnviz runs in now.
    AppState state(core::worked_example());
    ASSERT_TRUE(state.restore_unsaved(core::worked_example(), "notes.json", "Restored unsaved work"));
    EXPECT_TRUE(state.file_path().empty());
    EXPECT_TRUE(state.modified());
    EXPECT_NE(state.message().text.find("It came from notes.json, a path without its folder: Save asks where"),
              std::string::npos)
        << state.message().text;
    ASSERT_TRUE(state.restore_unsaved(core::worked_example(), "/home/u/notes.json", "Restored unsaved work"));
    EXPECT_EQ(state.file_path(), "/home/u/notes.json");
}

TEST(Messages, AFailureAtStartSaysNothingOfASessionThatIsNotThereYet) {
    // As the window starts: the worked example, then the file given on the command line.
    AppState start(core::worked_example());
    EXPECT_FALSE(start.open_file((temp_dir() / "missing.json").string()));
    EXPECT_EQ(start.message().text.find("unchanged"), std::string::npos) << start.message().text;
    EXPECT_EQ(start.message().text.rfind("Could not open " + (temp_dir() / "missing.json").string() + ": ", 0), 0u)
        << start.message().text;
    // Once there is work of the user's (an edit, or a file), a failure says it is kept.
    AppState working(core::worked_example());
    working.set_cell({{MatrixId::X, 0}, 0, 0}, 5);
    EXPECT_FALSE(working.open_file((temp_dir() / "missing.json").string()));
    EXPECT_NE(working.message().text.find("(your current session is unchanged)"), std::string::npos)
        << working.message().text;
    AppState with_file(core::worked_example());
    open_a_file_of_mine(with_file, "kept.json");
    EXPECT_FALSE(with_file.open_file((temp_dir() / "missing.json").string()));
    EXPECT_NE(with_file.message().text.find("(your current session is unchanged)"), std::string::npos);
}

TEST(Messages, ControlCharactersAndInvalidUtf8AreShownEscaped) {
    AppState state(core::worked_example());
    state.set_message("Could not open a\x1b[31mred\xff.json: \r\n", true);
    EXPECT_EQ(state.message().text, "Could not open a\\x1b[31mred\\xff.json: \\r\\n");
    EXPECT_EQ(state.message_log().back().text, state.message().text);
    state.set_message("Opened Zürich-猫.json", false);
    EXPECT_EQ(state.message().text, "Opened Zürich-猫.json");  // printable text as it is
}
