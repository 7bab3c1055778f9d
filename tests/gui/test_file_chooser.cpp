// The file dialog's built-in browser, recent files, the export dialog and safe saving, headless.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <imgui.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "dialogs/export_dialog.hpp"
#include "dialogs/file_chooser.hpp"
#include "headless.hpp"
#include "shell/frame.hpp"

using namespace attnviz;
using app::AppState;
using app::FileChooser;
namespace fs = std::filesystem;

namespace {

struct Dir {
    fs::path path;
    Dir() {
        std::string tmpl = (fs::temp_directory_path() / "chooser_XXXXXX").string();
        if (mkdtemp(tmpl.data())) path = tmpl;
    }
    ~Dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    void file(const std::string& name, const std::string& text = "x") const { std::ofstream(path / name) << text; }
};

const app::FileFilter sessions{"Sessions", {".json"}};

std::vector<std::string> names(const std::vector<app::DirEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.directory ? e.name + "/" : e.name);
    return out;
}

class Chooser : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir.path.empty());
        fs::create_directory(dir.path / "b-folder");
        fs::create_directory(dir.path / "a-folder");
        dir.file("z.json", "{}");
        dir.file("y.npy");
        dir.file("x.txt");
        dir.file(".hidden.json");
        dir.file("a-folder/inner.json");
    }
    // One frame with the chooser drawn; returns what it chose.
    std::optional<std::string> frame(FileChooser& c) {
        ImGui::NewFrame();
        std::optional<std::string> out = c.draw(imgui.ui);
        ImGui::Render();
        return out;
    }
    Dir dir;
    test::HeadlessImGui imgui;
};

}  // namespace

TEST_F(Chooser, ListsFoldersFirstThenMatchingFilesWithSizes) {
    std::string error;
    EXPECT_EQ(names(app::list_directory(dir.path.string(), sessions, false, error)),
              (std::vector<std::string>{"a-folder/", "b-folder/", "z.json"}));
    EXPECT_EQ(error, "");
    EXPECT_EQ(names(app::list_directory(dir.path.string(), sessions, true, error)),
              (std::vector<std::string>{"a-folder/", "b-folder/", ".hidden.json", "z.json"}));
    const auto all = app::list_directory(dir.path.string(), {"All", {}}, false, error);
    EXPECT_EQ(names(all), (std::vector<std::string>{"a-folder/", "b-folder/", "x.txt", "y.npy", "z.json"}));
    EXPECT_EQ(all.back().size, 2u);
    EXPECT_GT(all.back().modified, 1700000000);
    EXPECT_EQ(app::size_text(4300), "4.2 KiB");
    // A folder that cannot be read says why and lists nothing.
    EXPECT_TRUE(app::list_directory((dir.path / "missing").string(), sessions, false, error).empty());
    EXPECT_NE(error.find("cannot be read"), std::string::npos) << error;
}

TEST_F(Chooser, BrowsesIntoFoldersAndBackAndChoosesAFile) {
    FileChooser c;
    c.use_native = false;
    c.open(FileChooser::Mode::open, "Open", {sessions}, (dir.path / "z.json").string());
    EXPECT_EQ(fs::path(c.directory()), dir.path);
    EXPECT_EQ(c.name, "z.json");
    EXPECT_FALSE(frame(c));
    ASSERT_TRUE(c.go_to("a-folder"));
    EXPECT_EQ(names(c.entries()), (std::vector<std::string>{"inner.json"}));
    ASSERT_TRUE(c.go_to(".."));
    EXPECT_EQ(fs::path(c.directory()), dir.path);
    EXPECT_FALSE(c.go_to("no-such-folder"));
    EXPECT_NE(c.error().find("not a folder"), std::string::npos);
    EXPECT_EQ(fs::path(c.directory()), dir.path);  // stays where it was
    c.activate(2);                                 // z.json
    const std::optional<std::string> chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "z.json");
    EXPECT_FALSE(c.is_open());
    EXPECT_FALSE(frame(c));  // once
}

// Open model…: a folder is chosen — the one named or selected, else (nothing named, or a file
// selected) the one listed; a double-click enters a folder instead.
TEST_F(Chooser, AFolderIsChosenInFolderMode) {
    FileChooser c;
    c.use_native = false;
    c.open(FileChooser::Mode::folder, "Open a model folder", {}, (dir.path / "a-folder").string());
    EXPECT_EQ(fs::path(c.directory()), dir.path);
    EXPECT_EQ(c.name, "a-folder");
    EXPECT_FALSE(frame(c));
    c.activate(1);  // b-folder: entered, not chosen
    EXPECT_FALSE(frame(c));
    EXPECT_EQ(fs::path(c.directory()), dir.path / "b-folder");
    c.go_to("..");
    c.name = "a-folder";
    c.confirm();
    std::optional<std::string> chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "a-folder");
    c.open(FileChooser::Mode::folder, "Open a model folder", {}, (dir.path / "a-folder").string());
    ASSERT_TRUE(c.go_to("a-folder"));
    c.name = "inner.json";  // a file selected: the folder listed
    c.confirm();
    chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "a-folder");
    c.open(FileChooser::Mode::folder, "Open a model folder", {}, (dir.path / "a-folder").string());
    c.name = "no-such-folder";
    c.confirm();
    EXPECT_FALSE(frame(c));
    EXPECT_NE(c.error().find("not a folder"), std::string::npos) << c.error();
    EXPECT_TRUE(c.is_open());
}

TEST_F(Chooser, SeveralFilesAreMarkedAndChosenTogether) {
    dir.file("w.json", "{}");
    FileChooser c;
    c.use_native = false;
    c.open(FileChooser::Mode::open_several, "Open beside", {sessions}, (dir.path / "z.json").string());
    EXPECT_FALSE(frame(c));
    ASSERT_EQ(names(c.entries()), (std::vector<std::string>{"a-folder/", "b-folder/", "w.json", "z.json"}));
    c.toggle_mark(3);  // z.json, then w.json: chosen in listing order
    c.toggle_mark(2);
    c.toggle_mark(0);  // a folder is not marked
    EXPECT_EQ(c.marked, (std::vector<int>{3, 2}));
    c.confirm();
    const std::optional<std::string> chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "w.json");
    EXPECT_EQ(c.take_more(), (std::vector<std::string>{(dir.path / "z.json").string()}));
    EXPECT_TRUE(c.take_more().empty());  // once
    // A second mark of a file unmarks it; entering a folder forgets the marks; one file is still
    // chosen as in open.
    c.open(FileChooser::Mode::open_several, "Open beside", {sessions}, (dir.path / "z.json").string());
    c.toggle_mark(2);
    c.toggle_mark(2);
    EXPECT_TRUE(c.marked.empty());
    c.toggle_mark(3);
    ASSERT_TRUE(c.go_to("a-folder"));
    EXPECT_TRUE(c.marked.empty());
    c.activate(0);  // inner.json
    const std::optional<std::string> one = frame(c);
    ASSERT_TRUE(one);
    EXPECT_EQ(fs::path(*one), dir.path / "a-folder" / "inner.json");
    EXPECT_TRUE(c.take_more().empty());
    // Marks do nothing in the other modes.
    c.open(FileChooser::Mode::open, "Open", {sessions}, (dir.path / "z.json").string());
    c.toggle_mark(3);
    EXPECT_TRUE(c.marked.empty());
}

TEST_F(Chooser, SavingAppendsTheExtensionAndAsksBeforeReplacing) {
    EXPECT_EQ(app::save_target("/tmp/d", "new", sessions), "/tmp/d/new.json");
    EXPECT_EQ(app::save_target("/tmp/d", "/elsewhere/a.txt", sessions), "/elsewhere/a.txt");
    FileChooser c;
    c.use_native = false;
    c.open(FileChooser::Mode::save, "Save", {sessions}, (dir.path / "new").string());
    c.confirm();
    std::optional<std::string> chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "new.json");

    // An existing file: nothing is returned until the user agrees.
    app::DrawReport report;
    imgui.ui.report = &report;
    c.open(FileChooser::Mode::save, "Save", {sessions}, (dir.path / "z.json").string());
    frame(c);
    c.confirm();
    for (int k = 0; k < 3; ++k) {
        report.clear();
        EXPECT_FALSE(frame(c));
    }
    EXPECT_TRUE(c.is_open());
    const app::DrawReport::Item* replace = nullptr;
    for (const auto& i : report.items)
        if (i.name == "files: replace") replace = &i;
    ASSERT_NE(replace, nullptr) << "the Replace? question is shown";
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = {(replace->min.x + replace->max.x) / 2, (replace->min.y + replace->max.y) / 2};
    frame(c);
    io.MouseDown[0] = true;
    frame(c);
    io.MouseDown[0] = false;
    chosen = frame(c);
    ASSERT_TRUE(chosen);
    EXPECT_EQ(fs::path(*chosen), dir.path / "z.json");
    imgui.ui.report = nullptr;
}

TEST_F(Chooser, NativeDialogsOnlyWithADisplayAndNotWhenTurnedOff) {
    const char* display = std::getenv("DISPLAY");
    const std::string keep = display ? display : "";
    setenv("ATTNVIZ_NATIVE_DIALOGS", "0", 1);
    setenv("DISPLAY", ":0", 1);
    EXPECT_EQ(app::native_dialog_tool(), "");
    unsetenv("ATTNVIZ_NATIVE_DIALOGS");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    EXPECT_EQ(app::native_dialog_tool(), "");
    // With a display and a zenity on PATH (a stand-in script), zenity is the tool.
    dir.file("zenity", "#!/bin/sh\nexit 1\n");
    fs::permissions(dir.path / "zenity", fs::perms::owner_all);
    const char* path = std::getenv("PATH");
    const std::string old_path = path ? path : "";
    setenv("PATH", dir.path.c_str(), 1);
    setenv("DISPLAY", ":0", 1);
    EXPECT_EQ(app::native_dialog_tool(), "zenity");
    // Its "cancel" (exit 1) closes the dialog with nothing chosen.
    FileChooser c;
    c.open(FileChooser::Mode::open, "Open", {sessions});
    for (int k = 0; k < 200 && c.is_open(); ++k) {
        frame(c);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_FALSE(c.is_open());
    setenv("PATH", old_path.c_str(), 1);
    if (display)
        setenv("DISPLAY", keep.c_str(), 1);
    else
        unsetenv("DISPLAY");
}

TEST(RecentFiles, NewestFirstOnceEachAtMostTenAndKeptOnDisk) {
    Dir dir;
    const std::string file = (dir.path / "recent.json").string();
    {
        app::RecentFiles r(file);
        for (int k = 0; k < 12; ++k) r.add("/s/" + std::to_string(k) + ".json");
        r.add("/s/5.json");
        ASSERT_EQ(r.paths().size(), 10u);
        EXPECT_EQ(r.paths()[0], "/s/5.json");
        EXPECT_EQ(r.paths()[1], "/s/11.json");
        EXPECT_EQ(std::count(r.paths().begin(), r.paths().end(), "/s/5.json"), 1);
    }
    app::RecentFiles again(file);
    EXPECT_EQ(again.paths().size(), 10u);
    EXPECT_EQ(again.paths()[0], "/s/5.json");
    again.clear();
    EXPECT_TRUE(app::RecentFiles(file).paths().empty());
    std::ofstream(file) << "{ not json";
    EXPECT_TRUE(app::RecentFiles(file).paths().empty());  // ignored, not a crash
}

// A path as typed ("notes.json" in the working folder, through a link, with "..") is kept absolute
// and canonical: the same file from whatever folder attnviz starts in next.
TEST(RecentFiles, KeepsAbsoluteCanonicalPaths) {
    Dir dir;
    fs::create_directory(dir.path / "real");
    std::ofstream(dir.path / "real" / "notes.json") << "{}";
    fs::create_directory_symlink(dir.path / "real", dir.path / "link");
    const fs::path real = fs::canonical(dir.path / "real" / "notes.json");
    const fs::path before = fs::current_path();
    fs::current_path(dir.path / "link");
    app::RecentFiles r((dir.path / "recent.json").string());
    r.add("notes.json");
    r.add("../link/./notes.json");
    fs::current_path(before);
    ASSERT_EQ(r.paths().size(), 1u) << "one file, once";
    EXPECT_EQ(r.paths()[0], real.string());
    // A relative path in recent.json (written by hand, or by an older version) is left out.
    std::ofstream(dir.path / "recent.json") << R"({"recent": ["notes.json", ")" << real.string() << R"("]})";
    EXPECT_EQ(app::RecentFiles((dir.path / "recent.json").string()).paths(), (std::vector<std::string>{real.string()}));
}

TEST(ExportDialog, WritesTheChosenExportAndSchedulesTheWindow) {
    test::HeadlessImGui imgui;
    Dir dir;
    AppState state(core::worked_example());
    app::ExportDialog d;
    app::open_export_dialog(d, {app::ExportTarget::Kind::matrix, {core::MatrixId::weights, 1}});
    d.format = core::ExportFormat::csv;
    EXPECT_EQ(app::suggested_name(state, d), "weights-head2.csv");
    const std::string csv = (dir.path / "w.csv").string();
    ASSERT_TRUE(app::export_to(state, imgui.ui, d, csv));
    std::ifstream in(csv);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, core::format_exact(state.trace().heads[1].weights(0, 0)) + "," +
                         core::format_exact(state.trace().heads[1].weights(0, 1)));
    // A view offers figures only; the window is read back by the GUI after the next frame.
    app::open_export_dialog(d, {app::ExportTarget::Kind::pipeline, {}});
    EXPECT_EQ(d.format, core::ExportFormat::svg);
    app::open_export_dialog(d, {app::ExportTarget::Kind::window, {}});
    ASSERT_TRUE(app::export_to(state, imgui.ui, d, (dir.path / "w.png").string()));
    EXPECT_EQ(d.window_png_path, (dir.path / "w.png").string());
    // A failure is reported and writes nothing.
    app::open_export_dialog(d, {app::ExportTarget::Kind::matrix, {core::MatrixId::X, 0}});
    EXPECT_FALSE(app::export_to(state, imgui.ui, d, (dir.path / "no-such-dir" / "x.csv").string()));
    EXPECT_TRUE(state.message().error);
}

TEST(SafeSave, AFailedSaveKeepsTheOldFileAndSaysWhy) {
    Dir dir;
    AppState state(core::worked_example());
    const fs::path file = dir.path / "kept.json";
    std::ofstream(file) << "old";
    fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    state.set_cell({{core::MatrixId::X, 0}, 0, 0}, 3);
    EXPECT_FALSE(state.save_file(file.string()));
    EXPECT_TRUE(state.message().error);
    EXPECT_NE(state.message().text.find("Could not save"), std::string::npos) << state.message().text;
    std::ifstream in(file);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "old");
    EXPECT_TRUE(state.modified());  // the work is still unsaved, and still there
    EXPECT_EQ(state.session().params.X(0, 0), 3);
}
