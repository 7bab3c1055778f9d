// Tests of core/io/autosave_store.hpp: each instance's autosave, found after its owner is gone and never
// while it runs. (A real kill -9 of the app is tests/gui/autosave_test.sh.)
#include "core/io/autosave_store.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

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
        const Problems saved = gone.save(edited(), "/home/u/example.json");
        ASSERT_TRUE(saved.empty()) << all_text(saved);
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

TEST(Autosave, FilesAreWrittenForTheOwnerOnlyAndTheFolderIsPrivate) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    const fs::path state = dir.path() / "attnviz";
    const mode_t old_mask = ::umask(0);  // a umask that would leave new files 0666
    AutosaveStore store(state.string());
    ASSERT_TRUE(store.enabled()) << store.problem();
    // An older autosave file of the same name that was readable by all is made private too.
    std::ofstream(state / (store.id() + ".json")) << "{}";
    fs::permissions(state / (store.id() + ".json"), fs::perms(0644));
    ASSERT_TRUE(store.save(edited(), "").empty());
    ::umask(old_mask);
    const auto mode = [](const fs::path& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 07777;
    };
    EXPECT_EQ(mode(state), 0700u);
    for (const char* suffix : {".json", ".meta.json", ".lock"})
        EXPECT_EQ(mode(state / (store.id() + suffix)), 0600u) << suffix;
}

TEST(Autosave, AStateFolderThatIsALinkIsRefusedAndWhatItNamesIsLeftAlone) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    const fs::path elsewhere = dir.path() / "shared", link = dir.path() / "attnviz";
    fs::create_directory(elsewhere);
    fs::permissions(elsewhere, fs::perms(0755));
    fs::create_directory_symlink(elsewhere, link);
    AutosaveStore store(link.string());
    EXPECT_FALSE(store.enabled());
    EXPECT_EQ(store.problem(), link.string() +
                                   ": is a symbolic link; autosaves are written only into a folder of your own "
                                   "(remove the link, or set XDG_STATE_HOME to another folder)");
    struct stat st {};
    ASSERT_EQ(::stat(elsewhere.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);  // not chmodded through the link
    EXPECT_TRUE(fs::is_empty(elsewhere));  // and nothing written there
}

TEST(Autosave, AStateFolderOfAnotherUserIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    const fs::path theirs = dir.path() / "attnviz";
    fs::create_directory(theirs);
    fs::permissions(theirs, fs::perms(0777));
    ASSERT_EQ(::chown(theirs.c_str(), 54321, 54321), 0);
    AutosaveStore store(theirs.string());
    EXPECT_FALSE(store.enabled());
    EXPECT_EQ(store.problem(),
              theirs.string() +
                  ": belongs to another user (uid 54321); autosaves are written only into a folder of your own");
    struct stat st {};
    ASSERT_EQ(::stat(theirs.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0777u);
    EXPECT_TRUE(fs::is_empty(theirs));
}

TEST(Autosave, TheFileIsRecordedAsAnAbsolutePath) {
    TempDir dir("autosave"), folder_a("autosave_a");
    ASSERT_TRUE(dir.created() && folder_a.created());
    const fs::path before = fs::current_path();
    std::string gone_id;
    {
        AutosaveStore gone(dir.path().string());
        fs::current_path(folder_a.path());
        const Problems p = gone.save(edited(), "notes.json");  // as typed, relative to folder A
        fs::current_path(before);
        ASSERT_TRUE(p.empty()) << all_text(p);
    }
    AutosaveStore next(dir.path().string());
    const std::vector<AutosaveInfo> found = next.orphans();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].file, (fs::canonical(folder_a.path()) / "notes.json").string());
}

TEST(Autosave, ADescriptionCutInsideACharacterIsStillWritten) {
    // The description keeps the first 40 bytes of the tokens: cut inside "é" it was no UTF-8, and
    // writing the record threw.
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    Session s = worked_example();
    s.tokens = {"aééééééééééééééééééééé", "ééééééééééééééééééééé"};  // byte 40 is inside the 20th é
    {
        AutosaveStore gone(dir.path().string());
        const Problems p = gone.save(s, "");
        ASSERT_TRUE(p.empty()) << all_text(p);
    }
    AutosaveStore next(dir.path().string());
    const std::vector<AutosaveInfo> found = next.orphans();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_NE(found[0].what.find(": aééééééééééééééééééé …"), std::string::npos) << found[0].what;
}

TEST(Autosave, LocksThatEndedInstancesLeftWithoutAnAutosaveAreRemoved) {
    TempDir dir("autosave");
    ASSERT_TRUE(dir.created());
    const fs::path d = dir.path();
    const auto backdate = [&](const std::string& name) {
        const timespec times[2] = {{0, UTIME_OMIT}, {std::time(nullptr) - 3600, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, (d / name).c_str(), times, 0), 0);
    };
    const auto old = [&](const std::string& name) {
        std::ofstream(d / name) << "";
        backdate(name);
    };
    old("111-aa.lock");                      // a crash before anything was autosaved
    std::ofstream(d / "222-bb.lock") << "";  // just created by an instance that is starting
    old("333-cc.lock");                      // an autosave's: discard() removes it with the autosave
    std::ofstream(d / "333-cc.json") << "{}";
    AutosaveStore running(d.string());  // an old instance still running: its lock is held
    const std::string running_lock = running.id() + ".lock";
    backdate(running_lock);
    {
        AutosaveStore cleaner(d.string());
        cleaner.remove_stale_locks();
        EXPECT_FALSE(fs::exists(d / "111-aa.lock"));
        EXPECT_TRUE(fs::exists(d / "222-bb.lock"));
        EXPECT_TRUE(fs::exists(d / "333-cc.lock"));
        EXPECT_TRUE(fs::exists(d / running_lock));
        EXPECT_TRUE(fs::exists(d / (cleaner.id() + ".lock")));
    }
    EXPECT_FALSE(fs::exists(d / "111-aa.lock"));
}

}  // namespace
}  // namespace attnviz::core
