// The dialogs and menus, headless through the whole window: every menu item's dialog opens whatever
// panel, tab or mode is showing; one dialog at a time, the shortcuts wait while it is open, Esc
// closes the topmost popup, and a cancelled dialog is gone (it takes no keys and does not come
// back); the menu bar's title and the View menu's check marks.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <filesystem>
#include <functional>

#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/io/session_file.hpp"
#include "shell/frame_commands.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;

namespace {

constexpr int escape_key = 2, backspace_key = 3;  // KeyMap entries of the headless context
constexpr int key_o = 'O';                        // GLFW's code for O, as the shortcuts read it

// One menu item: how it asks for its dialog, and an item the dialog draws.
struct MenuCase {
    const char* name;
    std::function<void(app::UiContext&)> ask;
    const char* item;
};

const MenuCase menu_cases[] = {
    {"NewFromASentence", [](app::UiContext& ui) { ui.request(app::command::NewSentence{}); }, "sentence: create"},
    {"Open", [](app::UiContext& ui) { ui.request(app::command::Open{}); }, "files: Open"},
    {"ImportLayer", [](app::UiContext& ui) { ui.request(app::command::ImportLayer{}); }, "import: import"},
    {"OpenBeside", [](app::UiContext& ui) { ui.request(app::command::OpenBeside{}); }, "files: Open"},
    {"ImportAllLayers", [](app::UiContext& ui) { ui.request(app::command::ImportAllLayers{}); }, "import: import"},
    {"SaveAs", [](app::UiContext& ui) { ui.request(app::command::SaveAs{}); }, "files: Save"},
    {"Export",
     [](app::UiContext& ui) {
         ui.request_export({app::ExportTarget::Kind::matrix, {core::MatrixId::weights, 0}});
     },
     "export: save as"},
    {"QuitWithUnsavedChanges", [](app::UiContext& ui) { ui.request(app::command::Quit{}); }, "quit: cancel"},
};

class Dialogs : public test::WindowTest {
protected:
    void SetUp() override {
        WindowTest::SetUp();
        setenv("ATTNVIZ_NATIVE_DIALOGS", "0", 1);  // the built-in dialogs, whatever the desktop has
        ImGuiIO& io = ImGui::GetIO();
        io.KeyMap[ImGuiKey_Escape] = escape_key;
        io.KeyMap[ImGuiKey_Backspace] = backspace_key;
    }
    void TearDown() override { unsetenv("ATTNVIZ_NATIVE_DIALOGS"); }
    int count(const std::string& name) const {
        int n = 0;
        for (const auto& i : report.items) n += i.name == name;
        return n;
    }
    static bool any_popup() {
        return ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel);
    }
};

class EveryMenuDialog : public Dialogs, public ::testing::WithParamInterface<std::tuple<MenuCase, bool>> {};

}  // namespace

// Import all layers… and Open beside… show the Model view's tab as they open: in the default layout
// (another tab in front) that window appeared above the new modal, an ImGui assertion (exit 134).
TEST_P(EveryMenuDialog, OpensWhateverIsShownAndEscClosesIt) {
    const auto& [menu, teach] = GetParam();
    AppState state(core::worked_example());
    state.set_cell({{core::MatrixId::X, 0}, 0, 0}, 3.0);  // unsaved changes: Quit asks
    if (teach) app::enter_teach_mode(state, panels, 0);
    frames(state, 2);
    ASSERT_EQ(item(menu.item), nullptr);
    menu.ask(imgui_.ui);
    frames(state, 3);
    EXPECT_EQ(count(menu.item), 1) << "the dialog is open, once";
    EXPECT_TRUE(app::dialog_open(panels));
    // Open beside and Import all layers show the Model view: its workspace, out of teach mode.
    const bool to_model = std::string(menu.name) == "OpenBeside" || std::string(menu.name) == "ImportAllLayers";
    EXPECT_EQ(panels.teach_mode, teach && !to_model);
    if (to_model) {
        EXPECT_EQ(panels.workspace, app::Workspace::model);
    }
    press(state, escape_key);
    EXPECT_EQ(item(menu.item), nullptr) << "Esc closed it";
    EXPECT_FALSE(any_popup());
    EXPECT_FALSE(app::dialog_open(panels));
    frames(state, 3);
    EXPECT_EQ(item(menu.item), nullptr) << "and it stays closed";
    EXPECT_FALSE(panels.quit);
}

INSTANTIATE_TEST_SUITE_P(DefaultLayoutAndTeachMode, EveryMenuDialog,
                         ::testing::Combine(::testing::ValuesIn(menu_cases), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<EveryMenuDialog::ParamType>& info) {
                             return std::string(std::get<0>(info.param).name) +
                                    (std::get<1>(info.param) ? "InTeachMode" : "");
                         });

// The window keeps drawing while a dialog comes on screen: the frame its popup opens in, the
// frames of the modal's dimming fading in, and again while it fades out once closed; then it may
// sleep. Before, a dialog chosen from a menu waited for the next input to show.
TEST_F(Dialogs, TheWindowDrawsOnWhileADialogComesAndGoes) {
    AppState state(core::worked_example());
    frames(state, 2);
    int popups = 0;
    EXPECT_FALSE(app::imgui_settling(popups)) << "nothing open, nothing fading";
    imgui_.ui.request(app::command::Open{});
    const auto settling_frames = [&] {
        int count = 0;
        for (int k = 0; k < 120; ++k) {
            frames(state);
            if (!app::imgui_settling(popups)) break;
            ++count;
        }
        return count;
    };
    frames(state);  // runs the command (the loop draws it: a command is waiting)
    EXPECT_FALSE(app::imgui_settling(popups)) << "the dialog opens in the next frame";
    const int coming = settling_frames();
    ASSERT_EQ(count("files: Open"), 1) << "the dialog is on screen";
    // 1/60 s a frame (the headless context's), the dimming 6 per second: about ten frames.
    EXPECT_GE(coming, 8);
    EXPECT_LE(coming, 14);
    EXPECT_FLOAT_EQ(ImGui::GetCurrentContext()->DimBgRatio, 1.0f) << "dimmed whole when it sleeps";
    frames(state, 3);
    EXPECT_FALSE(app::imgui_settling(popups)) << "an open dialog alone draws nothing";
    press(state, escape_key);
    const int going = settling_frames();
    EXPECT_EQ(item("files: Open"), nullptr);
    EXPECT_GE(going, 3);
    EXPECT_FLOAT_EQ(ImGui::GetCurrentContext()->DimBgRatio, 0.0f);
}

// "Save and quit" of a session without a file asks where to save it, and quits once saved there; a
// cancelled save keeps the window open, and a later Save as… does not quit.
TEST_F(Dialogs, SaveAndQuitOfANewSessionQuitsOnceSaved) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnviz_save_and_quit";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(panels.menu.save_files.go_to(dir.string()));  // where the save browser suggests session.json
    AppState state(core::worked_example());
    state.set_cell({{core::MatrixId::X, 0}, 0, 0}, 3.0);
    frames(state, 2);
    imgui_.ui.request(app::command::Quit{});
    frames(state, 3);
    click(state, "quit: save", 2);
    ASSERT_EQ(count("files: Save"), 1) << "asks where";
    EXPECT_FALSE(panels.quit);
    frames(state, 2);
    click(state, "files: cancel", 2);  // cancelled: the window stays, unsaved
    ASSERT_FALSE(panels.menu.save_files.is_open());
    EXPECT_FALSE(panels.quit);
    EXPECT_TRUE(state.modified());
    imgui_.ui.request(app::command::SaveAs{});  // a later Save as… saves and stays
    frames(state, 3);
    panels.menu.save_files.confirm();  // Save, on the name it suggests
    frames(state, 2);
    EXPECT_FALSE(state.modified());
    EXPECT_FALSE(panels.quit);
    std::filesystem::remove(dir / "session.json");
    AppState fresh(core::worked_example());  // another new session, edited
    fresh.set_cell({{core::MatrixId::X, 0}, 0, 0}, 4.0);
    frames(fresh, 2);
    imgui_.ui.request(app::command::Quit{});
    frames(fresh, 3);
    click(fresh, "quit: save", 2);
    ASSERT_TRUE(panels.menu.save_files.is_open());
    panels.menu.save_files.confirm();  // saved where it suggested: quits
    frames(fresh, 2);
    EXPECT_TRUE(panels.quit);
    const core::Result<std::string> text = core::read_file((dir / "session.json").string());
    ASSERT_TRUE(text) << "saved";
    const core::Result<core::Session> saved = core::parse_session(*text.value);
    ASSERT_TRUE(saved);
    EXPECT_EQ(saved.value->params.X(0, 0), 4.0);
    std::filesystem::remove_all(dir);
}

// attnviz --dialog save, then Ctrl+O: the two built-in browsers were one window holding both, and
// the Save browser, cancelled, lived on out of sight taking keys.
TEST_F(Dialogs, OneFileDialogAtATimeAndACancelledOneIsGone) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::SaveAs{});
    frames(state, 3);
    ASSERT_EQ(count("files: Save"), 1);
    // Ctrl+O, and the command itself (as --dialog open would ask), while Save is open: nothing.
    press(state, key_o, true);
    imgui_.ui.request(app::command::Open{});
    frames(state, 3);
    EXPECT_EQ(count("files: up"), 1) << "one browser";
    EXPECT_EQ(item("files: Open"), nullptr);
    EXPECT_FALSE(panels.menu.open_files.is_open());
    // Cancel: the Save browser is gone.
    click(state, "files: cancel", 2);
    EXPECT_FALSE(panels.menu.save_files.is_open());
    EXPECT_FALSE(any_popup());
    EXPECT_FALSE(imgui_.ui.dialog_open);
    // Now Ctrl+O opens Open alone, and the keys go to it only.
    press(state, key_o, true);
    EXPECT_EQ(count("files: Open"), 1);
    EXPECT_EQ(item("files: Save"), nullptr);
    EXPECT_EQ(count("files: up"), 1);
    const std::string save_dir = panels.menu.save_files.directory(), open_dir = panels.menu.open_files.directory();
    press(state, backspace_key);  // the parent folder
    EXPECT_EQ(panels.menu.open_files.directory(), std::filesystem::path(open_dir).parent_path().string());
    EXPECT_EQ(panels.menu.save_files.directory(), save_dir);
    click(state, "files: cancel", 3);
    EXPECT_FALSE(panels.menu.open_files.is_open());
    EXPECT_EQ(item("files: up"), nullptr) << "does not come back";
    EXPECT_FALSE(any_popup());
}

// The shortcuts wait while a dialog is open: F2 (teach mode) and Ctrl+Z (undo) do nothing.
TEST_F(Dialogs, ShortcutsDoNothingWhileADialogIsOpen) {
    AppState state(core::worked_example());
    state.set_cell({{core::MatrixId::X, 0}, 0, 0}, 3.0);
    constexpr int key_f2 = 291, key_z = 'Z';
    frames(state, 2);
    imgui_.ui.request(app::command::NewSentence{});
    frames(state, 3);
    ASSERT_NE(item("sentence: create"), nullptr);
    ImGui::ClearActiveID();  // the sentence field would take Ctrl+Z for itself
    frames(state);
    press(state, key_z, true);
    press(state, key_f2);
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 0), 3.0) << "not undone";
    EXPECT_FALSE(panels.teach_mode);
    press(state, escape_key);
    press(state, key_z, true);
    EXPECT_DOUBLE_EQ(state.session().params.X(0, 0), core::worked_example().params.X(0, 0)) << "undone once closed";
}

// Esc closes the topmost popup: the Export dialog's open combo first, then the dialog.
TEST_F(Dialogs, EscClosesTheExportDialogsComboThenTheDialog) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request_export({app::ExportTarget::Kind::matrix, {core::MatrixId::weights, 0}});
    frames(state, 3);
    click(state, "export: what", 2);
    ASSERT_TRUE(ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel));
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    ASSERT_EQ(g.OpenPopupStack.Size, 2) << "the dialog and its combo";
    press(state, escape_key);
    EXPECT_EQ(g.OpenPopupStack.Size, 1);
    EXPECT_NE(item("export: save as"), nullptr);
    press(state, escape_key);
    EXPECT_EQ(g.OpenPopupStack.Size, 0);
    EXPECT_EQ(item("export: save as"), nullptr);
}

// The menu bar's title is the window title's: the file's name with "*" once there are unsaved changes.
TEST_F(Dialogs, TheMenuBarTitleMarksUnsavedChangesAsTheWindowTitleDoes) {
    AppState state(core::worked_example());
    frames(state);
    EXPECT_NE(item("title: unsaved session"), nullptr);
    EXPECT_EQ(app::window_title(state), "unsaved session — attnviz");
    state.set_cell({{core::MatrixId::X, 0}, 0, 0}, 3.0);
    frames(state);
    EXPECT_NE(item("title: unsaved session*"), nullptr);
    EXPECT_EQ(app::window_title(state), "unsaved session* — attnviz");
}

// View > Teach mode is checked in teach mode; a panel is checked while it is on screen: not behind
// another tab, nor behind a maximised panel, nor in teach mode.
TEST_F(Dialogs, TheViewMenuChecksWhatIsOnScreen) {
    AppState state(core::worked_example());
    frames(state, 2);
    const auto open_view_menu = [&] {
        click(state, "menu: View", 2);
        ASSERT_NE(item("view: Dimensions") ? item("view: Dimensions") : item("view: Dimensions (checked)"), nullptr)
            << "the View menu is open";
    };
    open_view_menu();
    EXPECT_NE(item("view: teach mode"), nullptr);
    EXPECT_NE(item("view: Dimensions (checked)"), nullptr);
    EXPECT_NE(item("view: Matrix viewer (checked)"), nullptr);
    EXPECT_NE(item("view: Head view"), nullptr) << "behind the Attention per head tab";
    press(state, escape_key);
    // The matrix viewer maximised: the others are not on screen.
    int viewer = -1;
    for (size_t k = 0; k < app::explorer_panels().size(); ++k)
        if (std::string(app::explorer_panels()[k].title) == "Matrix viewer") viewer = static_cast<int>(k);
    panels.maximized = viewer;
    frames(state);
    open_view_menu();
    EXPECT_NE(item("view: Matrix viewer (checked)"), nullptr);
    EXPECT_NE(item("view: Dimensions"), nullptr);
    press(state, escape_key);
    // Teach mode: checked, and no panel is.
    app::enter_teach_mode(state, panels, 0);
    frames(state);
    open_view_menu();
    EXPECT_NE(item("view: teach mode (checked)"), nullptr);
    for (const auto& i : report.items) {
        if (i.name.rfind("view: ", 0) == 0 && i.name.rfind("view: teach", 0) != 0) {
            EXPECT_EQ(i.name.find("(checked)"), std::string::npos) << i.name;
        }
    }
}

namespace {

const std::string checkpoints = ATTNVIZ_REFERENCE_DIR "/checkpoints/";

int occurrences(const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

// A refused import keeps the dialog open with the reason in it (it closed, and the Dimensions panel
// showed the message with the path twice); the session stays.
TEST_F(Dialogs, ARefusedImportKeepsTheDialogOpenWithTheReason) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::ImportLayer{});
    frames(state, 3);
    app::ImportDialog& d = panels.menu.import;
    ImGui::ClearActiveID();  // the path field has the keyboard (and its own copy of the path) at first
    d.path = checkpoints + "llama/model.safetensors";
    d.layer = 5;  // the checkpoint holds layer 0 only
    frames(state, 2);
    click(state, "import: import", 3);
    EXPECT_NE(item("import: import"), nullptr) << "the dialog is still open";
    EXPECT_NE(item("import: error"), nullptr);
    EXPECT_NE(d.error.find("no attention layer 5"), std::string::npos) << d.error;
    EXPECT_EQ(occurrences(d.error, "model.safetensors"), 1) << d.error;
    EXPECT_EQ(state.session(), core::worked_example());
    // Corrected, it imports and closes.
    d.layer = 0;
    d.tokens = "a b c";
    frames(state);
    click(state, "import: import", 3);
    EXPECT_EQ(item("import: import"), nullptr) << d.error;
    EXPECT_EQ(state.config().n, 3);
    EXPECT_EQ(state.config().heads, 4);
}

// Before importing, the dialog says what it found: the convention, the layers, the heads and K/V
// groups (config.json beside the checkpoint), and plainly that X is random when nothing gives one.
TEST_F(Dialogs, TheImportDialogSaysWhatItWillMakeBeforeImporting) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::ImportLayer{});
    frames(state, 2);
    app::ImportDialog& d = panels.menu.import;
    ImGui::ClearActiveID();  // the path field has the keyboard (and its own copy of the path) at first
    d.path = checkpoints + "llama/model.safetensors";
    frames(state, 2);
    ASSERT_TRUE(d.preview) << (d.preview.problems.empty() ? "" : d.preview.problems.front().str());
    EXPECT_EQ(d.preview.value->convention, core::Convention::llama);
    EXPECT_EQ(d.preview.value->heads, 4);
    EXPECT_EQ(d.preview.value->kv_groups, 2);
    EXPECT_EQ(d.preview.value->rope_base, 500000.0);
    EXPECT_NE(item("import: x is random"), nullptr);
    // Token ids and the RoPE base, as `attnviz import --token-ids --rope-base` takes them.
    d.token_ids = "3, 17 0";
    d.rope_base = 1000;
    frames(state, 2);
    EXPECT_NE(item("import: preview"), nullptr) << "X is no longer random";
    EXPECT_EQ(d.preview.value->rope_base, 1000.0);
    const core::Result<core::ImportOptions> o = app::import_options(d);
    ASSERT_TRUE(o);
    EXPECT_EQ(o.value->token_ids, (std::vector<std::int64_t>{3, 17, 0}));
    EXPECT_EQ(o.value->rope_base, 1000.0);
    d.x_path = checkpoints + "llama-x.npy";
    EXPECT_FALSE(app::import_options(d)) << "X from a file and from token ids at once";
    d.x_path.clear();
    d.token_ids = "3, x";
    EXPECT_FALSE(app::import_options(d));
}

// "Browse..." for X starts in the checkpoint's folder, where export-layer.py writes X.
TEST_F(Dialogs, BrowsingForXStartsInTheCheckpointsFolder) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::ImportLayer{});
    frames(state, 2);
    app::ImportDialog& d = panels.menu.import;
    ImGui::ClearActiveID();  // the path field has the keyboard (and its own copy of the path) at first
    d.path = checkpoints + "llama/model.safetensors";
    frames(state, 2);
    click(state, "import: browse x", 2);
    ASSERT_TRUE(d.x_files.is_open());
    EXPECT_EQ(std::filesystem::path(d.x_files.directory()), std::filesystem::canonical(checkpoints + "llama"));
}

// A checkpoint opened as a file (File > Open, a dropped file) without X: the window says that X is
// random, in a dialog, not only in a status line cut at its width; its button opens the import.
TEST_F(Dialogs, ACheckpointOpenedWithoutXSaysXIsRandom) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.dropped_files.push_back(checkpoints + "llama/model.safetensors");
    frames(state, 3);
    EXPECT_EQ(state.config().heads, 4);
    ASSERT_NE(item("random x: import"), nullptr);
    click(state, "random x: import", 3);
    EXPECT_EQ(item("random x: import"), nullptr);
    EXPECT_NE(item("import: import"), nullptr);
    EXPECT_EQ(panels.menu.import.path, checkpoints + "llama/model.safetensors");
    // A session file says nothing of the kind.
    press(state, escape_key);
    imgui_.ui.dropped_files.push_back(checkpoints + "expected.json");
    frames(state, 3);
    EXPECT_EQ(item("random x: import"), nullptr);
}

// Without a popup, Esc closes the Messages window it is typed in.
TEST_F(Dialogs, EscClosesTheMessagesWindow) {
    AppState state(core::worked_example());
    frames(state, 2);
    panels.status.show_log = true;
    frames(state, 2);
    ASSERT_TRUE(window("Messages"));
    press(state, escape_key);
    EXPECT_FALSE(panels.status.show_log);
    EXPECT_FALSE(window("Messages"));
}

// Two requests of one kind in one frame are each carried out with its own payload, in order: the
// Mask's tab and the Compare panel's (another place) are both shown. A payload kept beside the
// queue held the last one only, so both showed Compare and the Mask stayed behind its tab.
TEST_F(Dialogs, TwoShowPanelRequestsInOneFrameShowBothPanels) {
    AppState state(core::worked_example());
    frames(state, 2);
    ASSERT_FALSE(window("Mask"));
    ASSERT_FALSE(window("Head view"));
    imgui_.ui.request(app::command::ShowPanel{app::PanelId::mask});
    imgui_.ui.request(app::command::ShowPanel{app::PanelId::head_view});
    frames(state, 2);
    EXPECT_TRUE(window("Mask"));
    EXPECT_TRUE(window("Head view"));
    // In order: of two panels of one place, the later is in front; one of another workspace goes there.
    imgui_.ui.request(app::command::ShowPanel{app::PanelId::saturation});
    imgui_.ui.request(app::command::ShowPanel{app::PanelId::compare});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, app::Workspace::lab);
    EXPECT_TRUE(window("Compare"));
    EXPECT_FALSE(window("Saturation lab"));
    EXPECT_FALSE(window("Mask"));
}
