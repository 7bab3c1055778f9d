// The workspaces and the command palette, headless through the whole window: each workspace shows
// its panels with no tab strip wider than its window at 1024×640, 1280×800 and 1920×1080; each
// keeps its own layout; Ctrl+1…5 switch and Ctrl+K opens the palette, which reaches every panel by
// name; a lesson goes to Teach and a model to Model; the layout file keeps every workspace's layout.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <string>

#include "core/attention/presets.hpp"
#include "shell/command_palette.hpp"
#include "shell/workspaces.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;
using app::PanelId;
using app::Workspace;

namespace {

constexpr int escape_key = 2, enter_key = 4, down_key = 5;  // KeyMap entries of the headless context

class Workspaces : public test::WindowTest {
protected:
    void SetUp() override {
        WindowTest::SetUp();
        ImGuiIO& io = ImGui::GetIO();
        io.KeyMap[ImGuiKey_Escape] = escape_key;
        io.KeyMap[ImGuiKey_Enter] = enter_key;
        io.KeyMap[ImGuiKey_DownArrow] = down_key;
    }
    void type(AppState& state, const std::string& text) {
        for (char c : text) {
            ImGui::GetIO().AddInputCharacter(static_cast<unsigned>(c));
            frames(state);
        }
    }
    const app::DrawReport::Window* window_at(ImVec2 point) const {
        const app::DrawReport::Window* found = nullptr;
        for (const auto& w : report.windows)
            if (point.x >= w.pos.x && point.x < w.pos.x + w.size.x && point.y >= w.pos.y &&
                point.y < w.pos.y + w.size.y)
                found = &w;  // the last drawn: the one in front
        return found;
    }
};

std::string title_of(PanelId panel) { return app::explorer_panels()[static_cast<size_t>(panel)].title; }

}  // namespace

TEST(WorkspaceTable, EveryPanelHasAHomeAndNoPlaceHoldsMoreThanTwo) {
    for (size_t k = 0; k < static_cast<size_t>(PanelId::count); ++k) {
        const auto panel = static_cast<PanelId>(k);
        EXPECT_TRUE(app::place_in(app::home_of(panel), panel)) << title_of(panel);
    }
    for (size_t w = 0; w < app::workspace_count; ++w)
        for (size_t place = 0; place < static_cast<size_t>(app::Place::count); ++place)
            EXPECT_LE(app::panels_in_place(static_cast<Workspace>(w), static_cast<app::Place>(place)), 2)
                << app::workspace_name(static_cast<Workspace>(w)) << " place " << place;
    EXPECT_EQ(app::workspace_named("LAB"), Workspace::lab);
    EXPECT_EQ(app::workspace_named("teach"), Workspace::teach);
    EXPECT_FALSE(app::workspace_named("train"));
    EXPECT_EQ(app::home_of(PanelId::gradients), Workspace::lab);
    EXPECT_EQ(app::home_of(PanelId::next_token), Workspace::model);
    EXPECT_EQ(app::home_of(PanelId::flash), Workspace::teach);
}

// Every workspace at the three sizes: the bar names it, each of its places shows a panel (its
// chosen tab) and every tab lies inside its window (no strip scrolled or cut).
TEST_F(Workspaces, EachShowsItsPanelsWithTabsInsideTheirWindows) {
    AppState state(core::worked_example());
    for (const ImVec2 size : {ImVec2{1024, 640}, ImVec2{1280, 800}, ImVec2{1920, 1080}}) {
        ImGui::GetIO().DisplaySize = size;
        panels.reset_layout = true;
        for (size_t w = 0; w < app::workspace_count; ++w) {
            const auto workspace = static_cast<Workspace>(w);
            imgui_.ui.request(app::command::SwitchWorkspace{workspace});
            frames(state, 3);
            const std::string where = std::string(app::workspace_name(workspace)) + " at " +
                                      std::to_string(static_cast<int>(size.x)) + "x" +
                                      std::to_string(static_cast<int>(size.y));
            EXPECT_EQ(report.workspace, app::workspace_name(workspace)) << where;
            ASSERT_NE(item(std::string("workspace: ") + app::workspace_name(workspace) + " (current)"), nullptr)
                << where;
            for (const app::Placement& p : app::placements(workspace)) {
                const std::string title = title_of(p.panel);
                EXPECT_TRUE(window(title) || item("tab: " + title)) << title << " in " << where;
            }
            int tabs = 0;
            for (const auto& i : report.items) {
                if (i.name.rfind("tab: ", 0) != 0) continue;
                ++tabs;
                const app::DrawReport::Window* w = window_at(i.min);
                ASSERT_NE(w, nullptr) << i.name << " in " << where;
                EXPECT_LE(i.max.x, w->pos.x + w->size.x + 0.5f) << i.name << " runs past its window in " << where;
            }
            bool shared = false;  // a place of two panels: it has tabs
            for (size_t place = 0; place < static_cast<size_t>(app::Place::count); ++place)
                shared = shared || app::panels_in_place(workspace, static_cast<app::Place>(place)) > 1;
            EXPECT_EQ(tabs > 0, shared) << where;
            // Nothing drawn over the bar: the windows start below it.
            const app::DrawReport::Item* bar =
                item(std::string("workspace: ") + app::workspace_name(workspace) + " (current)");
            for (const auto& win : report.windows)
                if (win.title != "##workspaces" && win.title.rfind("##", 0) != 0) {
                    EXPECT_GE(win.pos.y, bar->max.y) << win.title << " in " << where;
                }
        }
    }
}

TEST_F(Workspaces, EachKeepsItsOwnLayout) {
    AppState state(core::worked_example());
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::layer);
    imgui_.ui.request(app::command::ShowPanel{PanelId::mask});
    frames(state, 2);
    panels.shares.left = 0.31f;
    ASSERT_TRUE(window("Mask"));
    imgui_.ui.request(app::command::SwitchWorkspace{Workspace::lab});
    frames(state, 2);
    EXPECT_FALSE(window("Mask"));
    EXPECT_TRUE(window("Attention lab"));
    EXPECT_NE(panels.shares.left, 0.31f);
    imgui_.ui.request(app::command::ShowPanel{PanelId::compare});
    frames(state, 2);
    ASSERT_TRUE(window("Compare"));
    imgui_.ui.request(app::command::SwitchWorkspace{Workspace::layer});
    frames(state, 2);
    EXPECT_TRUE(window("Mask")) << "Layer's chosen tab is kept";
    EXPECT_FLOAT_EQ(panels.shares.left, 0.31f) << "Layer's shares are kept";
    imgui_.ui.request(app::command::SwitchWorkspace{Workspace::lab});
    frames(state, 2);
    EXPECT_TRUE(window("Compare")) << "Lab's chosen tab is kept";
}

TEST_F(Workspaces, CtrlDigitsSwitchAndAPanelElsewhereGoesToItsWorkspace) {
    AppState state(core::worked_example());
    frames(state, 2);
    press(state, '3', true);
    EXPECT_EQ(panels.workspace, Workspace::lab);
    EXPECT_EQ(report.workspace, "Lab");
    press(state, '2', true);
    EXPECT_EQ(panels.workspace, Workspace::model);
    press(state, '4', true);
    EXPECT_EQ(panels.workspace, Workspace::teach);
    EXPECT_TRUE(window("Lesson"));
    EXPECT_TRUE(window("KV cache stepper"));
    press(state, '1', true);
    EXPECT_EQ(panels.workspace, Workspace::layer);
    // Gradients is not in Layer: showing it goes to Lab; the Head view is in Layer: it stays.
    imgui_.ui.request(app::command::ShowPanel{PanelId::gradients});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::lab);
    EXPECT_TRUE(window("Gradients"));
    imgui_.ui.request(app::command::ShowPanel{PanelId::viewer});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::lab) << "the matrix viewer is in Lab too";
    imgui_.ui.request(app::command::ShowPanel{PanelId::inputs});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::layer);
}

TEST_F(Workspaces, TeachModeIsTeachsLessonAloneAndAnotherWorkspaceEndsIt) {
    AppState state(core::worked_example());
    frames(state, 2);
    app::enter_teach_mode(state, panels, 0);
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::teach);
    EXPECT_EQ(report.workspace, "Teach");
    EXPECT_TRUE(window("Teach: attention step by step"));
    imgui_.ui.request(app::command::ToggleTeach{});
    frames(state, 2);
    EXPECT_FALSE(panels.teach_mode);
    EXPECT_EQ(panels.workspace, Workspace::teach) << "the lesson goes back to its place beside the steppers";
    EXPECT_TRUE(window("Lesson"));
    app::enter_teach_mode(state, panels, 0);
    imgui_.ui.request(app::command::SwitchWorkspace{Workspace::lab});
    frames(state, 2);
    EXPECT_FALSE(panels.teach_mode);
    EXPECT_TRUE(window("Attention lab"));
}

TEST(FuzzyScore, MatchesInOrderAndPrefersWordStartsAndRuns) {
    EXPECT_GE(app::fuzzy_score("grad", "Gradients"), 0);
    EXPECT_GE(app::fuzzy_score("GRD", "Gradients"), 0);
    EXPECT_GE(app::fuzzy_score("kv step", "KV cache stepper"), 0);
    EXPECT_EQ(app::fuzzy_score("dg", "Gradients"), -1) << "out of order";
    EXPECT_EQ(app::fuzzy_score("gradz", "Gradients"), -1);
    EXPECT_GE(app::fuzzy_score("", "anything"), 0);
    // A run at a word's start beats the same letters scattered.
    EXPECT_GT(app::fuzzy_score("mask", "Mask"), app::fuzzy_score("mask", "Model analysis: k"));
    EXPECT_GT(app::fuzzy_score("hv", "Head view"), app::fuzzy_score("hv", "the heavy"));
    const std::vector<app::PaletteEntry> entries = app::palette_entries({}, {}, {});
    const std::vector<int> matches = app::palette_matches(entries, "lab");
    ASSERT_FALSE(matches.empty());
    EXPECT_EQ(entries[static_cast<size_t>(matches[0])].name, "Lab") << "the workspace first";
}

// Every panel by its title through the palette: Ctrl+K, the title typed, Enter; then its window
// is on screen (in whatever workspace holds it).
TEST_F(Workspaces, ThePaletteReachesEveryPanel) {
    AppState state(core::worked_example());
    frames(state, 2);
    for (const app::PanelRow& row : app::explorer_panels()) {
        press(state, 'K', true);
        ASSERT_NE(item("palette: query"), nullptr) << "Ctrl+K opens the palette";
        type(state, row.title);
        ASSERT_NE(item(std::string("palette: Panel: ") + row.title), nullptr) << row.title;
        press(state, enter_key);
        frames(state, 2);
        EXPECT_EQ(item("palette: query"), nullptr) << "closed after running " << row.title;
        EXPECT_TRUE(window(row.title)) << row.title << " is on screen in " << report.workspace;
    }
}

TEST_F(Workspaces, ThePaletteRunsWorkspacesAndActionsAndEscClosesIt) {
    AppState state(core::worked_example());
    frames(state, 2);
    press(state, 'K', true);
    type(state, "lab");
    press(state, enter_key);
    EXPECT_EQ(panels.workspace, Workspace::lab);
    press(state, 'K', true);
    type(state, "theme light");
    press(state, enter_key);
    EXPECT_EQ(panels.appearance.theme, app::Theme::light);
    press(state, 'K', true);
    type(state, "zzqqxx");
    EXPECT_EQ(item("palette: Panel: Gradients"), nullptr) << "nothing matches";
    press(state, enter_key);
    EXPECT_NE(item("palette: query"), nullptr) << "Enter on no match keeps the palette";
    press(state, escape_key);
    EXPECT_EQ(item("palette: query"), nullptr);
    EXPECT_EQ(panels.workspace, Workspace::lab);
    // The arrows choose: the second match of "view" runs.
    press(state, 'K', true);
    type(state, "view");
    const std::vector<int> matches = app::palette_matches(panels.palette.entries, "view");
    ASSERT_GE(matches.size(), 2u);
    const app::PaletteEntry second = panels.palette.entries[static_cast<size_t>(matches[1])];
    press(state, down_key);
    press(state, enter_key);
    if (second.kind == "Panel") {
        EXPECT_TRUE(window(second.name)) << second.name;
    }
}

TEST_F(Workspaces, ALessonGoesToTeachAndAModelToModel) {
    AppState state(core::worked_example());
    frames(state, 2);
    imgui_.ui.request(app::command::OpenLesson{app::default_lesson_path()});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::teach) << panels.teach.error << " / " << state.message().text;
    EXPECT_TRUE(panels.teach_mode);
    imgui_.ui.request(app::command::ShowPanel{PanelId::model});
    frames(state, 2);
    EXPECT_EQ(panels.workspace, Workspace::model);
    EXPECT_FALSE(panels.teach_mode);
}

// The layout file: each workspace's shares and tabs come back; a layout of a version without
// workspaces is Layer's.
TEST_F(Workspaces, TheLayoutFileKeepsEveryWorkspace) {
    AppState state(core::worked_example());
    app::install_layout_settings(panels);
    frames(state, 2);
    imgui_.ui.request(app::command::ShowPanel{PanelId::mask});
    frames(state, 2);
    panels.shares.left = 0.3f;
    imgui_.ui.request(app::command::ShowPanel{PanelId::compare});
    frames(state, 2);
    panels.shares.upper = 0.6f;
    size_t size = 0;
    const std::string saved = ImGui::SaveIniSettingsToMemory(&size);
    EXPECT_NE(saved.find("workspace=Lab"), std::string::npos) << saved;

    // One handler of the type at a time: the first is the one ImGui finds.
    ImGuiContext& g = *ImGui::GetCurrentContext();
    g.SettingsHandlers.pop_back();
    app::Panels fresh;
    app::install_layout_settings(fresh);
    ImGui::LoadIniSettingsFromMemory(saved.c_str(), saved.size());
    EXPECT_FLOAT_EQ(fresh.shares.left, 0.3f) << saved;
    EXPECT_EQ(fresh.active[static_cast<size_t>(app::Place::upper_left)], static_cast<int>(PanelId::mask));
    app::switch_workspace(fresh, Workspace::lab);
    EXPECT_FLOAT_EQ(fresh.shares.upper, 0.6f) << saved;
    EXPECT_EQ(fresh.active[static_cast<size_t>(app::Place::lower_left)], static_cast<int>(PanelId::compare));

    g.SettingsHandlers.pop_back();
    app::Panels old;
    app::install_layout_settings(old);
    const std::string before =
        "[attnviz][Layout]\nleft=0.2500 left_top=0.5000 upper=0.4700 upper_left=0.4600 lower_left=0.6300 "
        "hidden=000000\ntabs=||Mask|||\n";
    ImGui::LoadIniSettingsFromMemory(before.c_str(), before.size());
    EXPECT_FLOAT_EQ(old.shares.left, 0.25f);
    g.SettingsHandlers.pop_back();
    // Places Teach leaves empty stay hidden when a file shows them; its lesson and steppers do not.
    app::Panels shown;
    app::install_layout_settings(shown);
    const std::string all_shown =
        "[attnviz][Layout]\nworkspace=Teach\nleft=0.4000 left_top=0.5000 upper=0.4700 upper_left=0.4600 "
        "lower_left=0.6300 hidden=000000\n";
    ImGui::LoadIniSettingsFromMemory(all_shown.c_str(), all_shown.size());
    const app::WorkspaceLayout& teach = shown.layouts[static_cast<size_t>(Workspace::teach)];
    EXPECT_TRUE(teach.shares_set);
    EXPECT_FLOAT_EQ(teach.shares.left, 0.4f);
    for (size_t place = 0; place < teach.shares.hidden.size(); ++place)
        EXPECT_EQ(teach.shares.hidden[place],
                  app::panels_in_place(Workspace::teach, static_cast<app::Place>(place)) == 0)
            << "place " << place;
    EXPECT_EQ(old.active[static_cast<size_t>(app::Place::upper_left)], static_cast<int>(PanelId::mask));
    g.SettingsHandlers.pop_back();
}
