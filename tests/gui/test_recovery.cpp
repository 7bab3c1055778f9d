// Unsaved work is visible and recoverable: the window title's "*", the status message after edits,
// and the "Recover unsaved work" window restoring (or discarding) an autosave, headless.
#include <gtest/gtest.h>

#include <imgui.h>

#include <chrono>
#include <filesystem>

#include "core/attention/presets.hpp"
#include "dialogs/recovery_window.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "state/autosave.hpp"

using namespace attnviz;
using app::AppState;
using core::MatrixId;

namespace {

// A fresh state directory, removed afterwards.
struct StateDir {
    std::filesystem::path path;
    StateDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "recovery_XXXXXX").string();
        if (mkdtemp(tmpl.data())) path = tmpl;
    }
    ~StateDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
};

core::Session edited() {
    core::Session s = core::worked_example();
    s.params.X(1, 3) = -7.25;
    return s;
}

// An autosave as an instance that then crashed would leave it.
void leave_autosave(const std::string& dir, const core::Session& s, const std::string& file) {
    core::AutosaveStore crashed(dir);
    ASSERT_TRUE(crashed.save(s, file).empty());
}

class Recovery : public ::testing::Test {
protected:
    void frames(AppState& state, app::Panels& panels, int count = 2) { imgui_.frames(state, panels, count); }
    test::HeadlessImGui imgui_;
};

}  // namespace

TEST_F(Recovery, TheTitleNamesTheFileAndMarksUnsavedChanges) {
    AppState state(core::worked_example());
    EXPECT_EQ(app::window_title(state), "unsaved session — attnviz");
    StateDir dir;
    const std::string file = (dir.path / "mine.json").string();
    ASSERT_TRUE(state.save_file(file));
    EXPECT_EQ(app::window_title(state), "mine.json — attnviz");
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 3);
    EXPECT_EQ(app::window_title(state), "mine.json* — attnviz");
    ASSERT_TRUE(state.save_file(file));
    EXPECT_EQ(app::window_title(state), "mine.json — attnviz");
}

TEST_F(Recovery, AnEditEndsTheOpenedMessageButNotAnError) {
    AppState state(core::worked_example());
    state.set_message("Opened example.json", false);
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 3);
    EXPECT_EQ(state.message().text, "");
    state.set_message("Could not save: disk full", true);
    state.set_cell({{MatrixId::X, 0}, 0, 1}, 4);
    EXPECT_EQ(state.message().text, "Could not save: disk full");
}

TEST_F(Recovery, RestoringBringsTheWorkBackUnsavedWithItsFileAndKeepsItSafe) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    leave_autosave(dir.path.string(), edited(), "/home/u/lesson.json");
    app::Autosaver autosave(dir.path.string(), 5);
    ASSERT_TRUE(autosave.on());
    AppState state(core::worked_example());
    app::Panels panels;
    panels.recovery.store = &autosave.store();
    panels.recovery.offers = autosave.store().orphans();
    ASSERT_EQ(panels.recovery.offers.size(), 1u);
    app::DrawReport report;
    imgui_.ui.report = &report;
    frames(state, panels);
    bool shown = false;
    for (const auto& w : report.windows) shown = shown || w.title == "Recover unsaved work";
    EXPECT_TRUE(shown);
    imgui_.ui.report = nullptr;

    const std::string old_session = panels.recovery.offers[0].session_path;
    ASSERT_TRUE(app::restore_offer(state, panels.recovery, 0));
    EXPECT_EQ(state.session(), edited());
    EXPECT_TRUE(state.modified());
    EXPECT_EQ(state.file_path(), "/home/u/lesson.json");  // Save writes back where it came from
    EXPECT_NE(state.message().text.find("Restored unsaved work (/home/u/lesson.json"), std::string::npos)
        << state.message().text;
    EXPECT_TRUE(panels.recovery.offers.empty());
    // The old autosave is gone, and the work is this instance's autosave now.
    EXPECT_FALSE(std::filesystem::exists(old_session));
    EXPECT_TRUE(autosave.store().has_files());
    core::AutosaveStore later(dir.path.string());
    EXPECT_TRUE(later.orphans().empty());  // this instance still runs
    ASSERT_TRUE(state.undo());             // and the restore is one undo step
    EXPECT_EQ(state.session(), core::worked_example());
}

TEST_F(Recovery, DiscardingRemovesTheAutosaveForGood) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    leave_autosave(dir.path.string(), edited(), "");
    app::RecoveryWindow window;
    core::AutosaveStore mine(dir.path.string());
    window.offers = mine.orphans();
    ASSERT_EQ(window.offers.size(), 1u);
    app::discard_offer(window, 0);
    EXPECT_TRUE(window.offers.empty());
    EXPECT_TRUE(mine.orphans().empty());
}

TEST_F(Recovery, AnAutosaveIsWrittenWhileModifiedAndRemovedOnceSaved) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    app::Autosaver autosave((dir.path / "state").string(), 5);
    AppState state(core::worked_example());
    const auto t0 = std::chrono::steady_clock::now();
    autosave.tick(state, t0);
    autosave.store().wait();
    EXPECT_FALSE(autosave.store().has_files());  // nothing unsaved yet
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 3);
    autosave.tick(state, t0);
    autosave.store().wait();
    EXPECT_TRUE(autosave.store().has_files());
    // Another edit within the interval waits; after it, it is written.
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 4);
    autosave.tick(state, t0 + std::chrono::seconds(1));
    EXPECT_FALSE(autosave.store().busy());
    autosave.tick(state, t0 + std::chrono::seconds(6));
    autosave.store().wait();
    {
        // What a crash now would leave: read through a second store after this one's lock is gone
        // is covered in core; here the file's content.
        core::AutosaveInfo info;
        info.session_path = (dir.path / "state" / (autosave.store().id() + ".json")).string();
        const core::Result<core::Session> written = core::AutosaveStore::load(info);
        ASSERT_TRUE(written);
        EXPECT_EQ(written.value->params.X(0, 0), 4);
    }
    ASSERT_TRUE(state.save_file((dir.path / "saved.json").string()));
    autosave.tick(state, t0 + std::chrono::seconds(7));
    EXPECT_FALSE(autosave.store().has_files());
}

TEST_F(Recovery, AFailedAutosaveIsSaidOncePerCause) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::filesystem::path state_dir = dir.path / "state";
    app::Autosaver autosave(state_dir.string(), 5);
    ASSERT_TRUE(autosave.on());
    AppState state(core::worked_example());
    auto t = std::chrono::steady_clock::now();
    const auto edit_and_autosave = [&](double value) {
        state.set_cell({{MatrixId::X, 0}, 0, 0}, value);
        t += std::chrono::seconds(6);
        autosave.tick(state, t);
        autosave.store().wait();
        autosave.tick(state, t);  // the next frame looks at how it went
    };
    const auto errors = [&] {
        size_t n = 0;
        for (const app::Message& m : state.message_log()) n += m.error && m.text.rfind("Autosave failed", 0) == 0;
        return n;
    };
    edit_and_autosave(3);
    EXPECT_TRUE(autosave.store().has_files());
    EXPECT_EQ(errors(), 0u);
    // The folder goes (as a full disk or a folder made read-only would fail the write): said once.
    std::filesystem::remove_all(state_dir);
    edit_and_autosave(4);
    ASSERT_EQ(errors(), 1u);
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("Autosave failed ("), std::string::npos) << state.message().text;
    EXPECT_NE(state.message().text.find("No such file or directory"), std::string::npos) << state.message().text;
    EXPECT_NE(state.message().text.find("save it to keep it"), std::string::npos) << state.message().text;
    edit_and_autosave(5);
    edit_and_autosave(6);
    EXPECT_EQ(errors(), 1u);  // the same cause again: not repeated
    // Another cause is said too; after a write that works, a failure is news again.
    std::filesystem::create_directories(state_dir / (autosave.store().id() + ".json"));
    edit_and_autosave(7);
    EXPECT_EQ(errors(), 2u);
    EXPECT_NE(state.message().text.find("is a directory"), std::string::npos) << state.message().text;
    std::filesystem::remove(state_dir / (autosave.store().id() + ".json"));
    edit_and_autosave(8);
    EXPECT_EQ(errors(), 2u);
    EXPECT_TRUE(autosave.store().has_files());
}

TEST_F(Recovery, AnAutosaveThatIsOffIsSaidOnceThereIsWorkToKeep) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    std::filesystem::create_directory(dir.path / "elsewhere");
    std::filesystem::create_directory_symlink(dir.path / "elsewhere", dir.path / "state");
    app::Autosaver autosave((dir.path / "state").string(), 5);
    EXPECT_FALSE(autosave.on());
    AppState state(core::worked_example());
    const auto t = std::chrono::steady_clock::now();
    autosave.tick(state, t);
    EXPECT_FALSE(state.message().error);  // nothing to keep yet: nothing said
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 3);
    autosave.tick(state, t);
    ASSERT_TRUE(state.message().error);
    EXPECT_EQ(
        state.message().text.rfind("Autosave is off (" + (dir.path / "state").string() + ": is a symbolic link", 0), 0u)
        << state.message().text;
    const size_t logged = state.message_log().size();
    state.set_cell({{MatrixId::X, 0}, 0, 0}, 4);
    autosave.tick(state, t + std::chrono::seconds(10));
    EXPECT_EQ(state.message_log().size(), logged);
}

TEST_F(Recovery, EveryMessageIsKeptInTheLogAndTheStatusBarOpensIt) {
    AppState state(core::worked_example());
    app::Panels panels;
    const std::string long_error(400, 'e');
    state.set_message("Opened a.json", false);
    state.set_message(long_error, true);
    ASSERT_EQ(state.message_log().size(), 2u);
    EXPECT_EQ(state.message_log()[1].text, long_error);
    EXPECT_TRUE(state.message_log()[1].error);
    EXPECT_EQ(state.message_log()[0].time.size(), 8u);  // "14:05:09"
    for (int k = 0; k < 300; ++k) state.set_message("m" + std::to_string(k));
    EXPECT_EQ(state.message_log().size(), AppState::max_log);
    EXPECT_EQ(state.message_log().back().text, "m299");
    // Clicking the (cut) message in the status bar opens the Messages window.
    app::DrawReport report;
    imgui_.ui.report = &report;
    state.set_message(long_error, true);
    frames(state, panels, 2);
    const app::DrawReport::Item* message = nullptr;
    for (const auto& i : report.items)
        if (i.name == "status: message") message = &i;
    ASSERT_NE(message, nullptr);
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {(message->min.x + message->max.x) / 2, (message->min.y + message->max.y) / 2};
    frames(state, panels, 1);
    io.MouseDown[0] = true;
    frames(state, panels, 1);
    io.MouseDown[0] = false;
    frames(state, panels, 2);
    EXPECT_TRUE(panels.status.show_log);
    bool shown = false;
    for (const auto& w : report.windows) shown = shown || w.title == "Messages";
    EXPECT_TRUE(shown);
    imgui_.ui.report = nullptr;
}

// A restored session is written through the store at once (save), while an autosave of a large
// session may still be being written on the worker: the immediate write waits for it, so the
// file ends up holding the restored session, never the older one written last.
TEST_F(Recovery, AnImmediateWriteWaitsForTheAutosaveInProgress) {
    StateDir dir;
    ASSERT_FALSE(dir.path.empty());
    app::AutosaveWriter store((dir.path / "state").string());
    ASSERT_TRUE(store.enabled());
    core::Config big = core::worked_example().config;
    big.n = 256;
    big.d_model = 256;
    big.heads = 4;
    big.d_k = big.d_v = 64;
    ASSERT_TRUE(store.save_async(core::random_session(big, 3), "big.json"));
    const core::Session restored = edited();
    EXPECT_TRUE(store.save(restored, "restored.json").empty());
    EXPECT_FALSE(store.busy());
    core::AutosaveInfo info;
    info.session_path = (dir.path / "state" / (store.id() + ".json")).string();
    const core::Result<core::Session> written = core::AutosaveStore::load(info);
    ASSERT_TRUE(written);
    EXPECT_EQ(written.value->config.n, restored.config.n);
    EXPECT_EQ(written.value->params.X(1, 3), -7.25);
}
