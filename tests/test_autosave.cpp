// Tests of core/autosave.hpp: each instance's autosave, found after its owner is gone and never
// while it runs. (A real kill -9 of the app is tests/gui/autosave_test.sh.)
#include "core/autosave.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "core/presets.hpp"
#include "test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;
namespace fs = std::filesystem;

Session edited() {
    Session s = worked_example();
    s.params.X(0, 0) = 2.45;
    s.tokens[0] = "edited";
    return s;
}

TEST(Autosave, RunningInstancesDoNotSeeEachOthersAutosave) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    AutosaveStore a(dir.path().string()), b(dir.path().string());
    ASSERT_TRUE(a.enabled()) << a.problem();
    ASSERT_TRUE(b.enabled()) << b.problem();
    EXPECT_NE(a.id(), b.id());
    ASSERT_TRUE(a.save(edited(), "/home/u/example.json").empty());
    ASSERT_TRUE(b.save(worked_example(), "").empty());
    // Both run: neither offers the other's work, and the files are distinct.
    EXPECT_TRUE(a.orphans().empty());
    EXPECT_TRUE(b.orphans().empty());
    EXPECT_TRUE(fs::exists(dir.path() / (a.id() + ".json")));
    EXPECT_TRUE(fs::exists(dir.path() / (b.id() + ".json")));
}

TEST(Autosave, AnAutosaveLeftByAnEndedInstanceIsOfferedAndRestoresTheSession) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    std::string gone_id;
    {
        AutosaveStore gone(dir.path().string());
        ASSERT_TRUE(gone.save_async(edited(), "/home/u/example.json"));
        gone.wait();
        ASSERT_TRUE(gone.last_problems().empty()) << all_text(gone.last_problems());
        gone_id = gone.id();
    }  // ends without clear(): as a crash would leave it (its lock is released)
    AutosaveStore next(dir.path().string());
    const std::vector<AutosaveInfo> found = next.orphans();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].id, gone_id);
    EXPECT_EQ(found[0].file, "/home/u/example.json");
    EXPECT_NE(found[0].what.find("n = 2, d_model = 4, 2 heads: edited"), std::string::npos) << found[0].what;
    EXPECT_GT(found[0].saved_at, 1700000000);
    const Result<Session> back = AutosaveStore::load(found[0]);
    ASSERT_TRUE(back) << all_text(back.problems);
    EXPECT_EQ(*back.value, edited());
    AutosaveStore::discard(found[0]);
    EXPECT_TRUE(next.orphans().empty());
    EXPECT_FALSE(fs::exists(found[0].session_path));
}

TEST(Autosave, ClearRemovesTheInstancesFilesAndNothingIsOffered) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    {
        AutosaveStore clean(dir.path().string());
        ASSERT_TRUE(clean.save(edited(), "").empty());
        EXPECT_TRUE(clean.has_files());
        clean.clear();
        EXPECT_FALSE(clean.has_files());
    }
    AutosaveStore next(dir.path().string());
    EXPECT_TRUE(next.orphans().empty());
    // Only the running instance's lock file is left.
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
    EXPECT_EQ(files, 1);
}

TEST(Autosave, MalformedOrIncompleteAutosavesAreSkipped) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir.path() / name) << text;
    };
    write("1-aa.meta.json", "{ not json");
    write("2-bb.meta.json", R"({"format": "something else"})");
    write("3-cc.meta.json", R"({"format": "attnviz-autosave", "saved_at": 5})");  // no 3-cc.json
    write("4-dd.meta.json", R"({"format": "attnviz-autosave", "saved_at": "later", "file": 7})");
    write("4-dd.json", "{}");
    AutosaveStore store(dir.path().string());
    const std::vector<AutosaveInfo> found = store.orphans();
    ASSERT_EQ(found.size(), 1u);  // 4-dd: its fields of the wrong type are read as absent
    EXPECT_EQ(found[0].id, "4-dd");
    EXPECT_EQ(found[0].saved_at, 0);
    EXPECT_EQ(found[0].file, "");
    const Result<Session> bad = AutosaveStore::load(found[0]);  // "{}" is not a session
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.problems[0].str().find("4-dd.json"), std::string::npos) << all_text(bad.problems);
}

TEST(Autosave, AnUnusableDirectoryDisablesTheStoreWithAReason) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    std::ofstream(dir.path() / "file") << "x";
    AutosaveStore store((dir.path() / "file" / "attnviz").string());
    EXPECT_FALSE(store.enabled());
    EXPECT_NE(store.problem().find("cannot create"), std::string::npos) << store.problem();
    EXPECT_FALSE(store.save(edited(), "").empty());
    EXPECT_FALSE(store.save_async(edited(), ""));
    AutosaveStore none("");
    EXPECT_FALSE(none.enabled());
    EXPECT_NE(none.problem().find("XDG_STATE_HOME"), std::string::npos);
}

TEST(Autosave, TheDirectoryFollowsXdgStateHome) {
    const char* old_state = std::getenv("XDG_STATE_HOME");
    const std::string keep = old_state ? old_state : "";
    setenv("XDG_STATE_HOME", "/tmp/state-here", 1);
    EXPECT_EQ(default_autosave_dir(), "/tmp/state-here/attnviz");
    unsetenv("XDG_STATE_HOME");
    if (const char* home = std::getenv("HOME")) {
        EXPECT_EQ(default_autosave_dir(), std::string(home) + "/.local/state/attnviz");
    }
    if (old_state) setenv("XDG_STATE_HOME", keep.c_str(), 1);
}

}  // namespace
}  // namespace attnviz::core
