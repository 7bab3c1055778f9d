// One frame of the explorer: every panel in its window, laid out for the display size, then the
// commands the frame's panels requested. Shared by the real window (gui.cpp) and the headless tests.
//
// The explorer's panels are the rows of one table (frame.cpp): {title, default place, stage, draw}.
// A new view is one panel file (a state struct and a draw function) and one row there. Several
// rows may share a place: the place then shows one of them at a time, with a tab for each (in place
// of the window's title bar).
#pragma once

#include <array>
#include <imgui.h>
#include <span>
#include <string>
#include <vector>

#include "app_state.hpp"
#include "panels/compare_panel.hpp"
#include "panels/dimensions_panel.hpp"
#include "panels/export_dialog.hpp"
#include "panels/gradient_panel.hpp"
#include "panels/head_view_panel.hpp"
#include "panels/heads_panel.hpp"
#include "panels/inputs_panel.hpp"
#include "panels/mask_panel.hpp"
#include "panels/menu_bar.hpp"
#include "panels/model_panel.hpp"
#include "panels/pipeline_panel.hpp"
#include "panels/recovery_window.hpp"
#include "panels/saturation_panel.hpp"
#include "panels/sentence_dialog.hpp"
#include "panels/status_bar.hpp"
#include "panels/teach_panel.hpp"
#include "panels/trace_panel.hpp"
#include "panels/viewer_panel.hpp"
#include "ui_context.hpp"

namespace attnviz::app {

// The places of the layout: a left column (two places) and a right area of two rows of two.
enum class Place { left_top, left_bottom, upper_left, upper_right, lower_left, lower_right, count };

struct Rect {
    ImVec2 pos, size;
};
using Layout = std::array<Rect, static_cast<size_t>(Place::count)>;

// How the work area (between the menu bar and the status bar) is shared, as fractions, so a layout
// fits any window: the left column's width, the top left place's height within it, the upper row's
// height within the right area, and the left place's width within each row. Dragging the gaps
// between the places (splitters) changes them; they are kept with the window layout.
struct LayoutShares {
    float left = 0.22f;
    float left_top = 0.5f;
    float upper = 0.47f;
    float upper_left = 0.46f;
    float lower_left = 0.63f;
    // Panels hidden by the user (View > Panels), by place: their room goes to their neighbours.
    std::array<bool, static_cast<size_t>(Place::count)> hidden{};
    bool operator==(const LayoutShares&) const = default;
};

// The gap between places, where the splitters are.
inline constexpr float splitter_width = 6;

// Every place for a display, the menu bar and status bar heights and the shares. Each place keeps
// at least a title bar and a few lines (shares are clamped so), and the places tile the work area;
// a hidden place is empty (zero size) and its neighbour in the column or row takes its room.
Layout tiled_layout(ImVec2 display, float menu_height, float status_height, const LayoutShares& shares);
// The default shares: the left column 22% of the width, within 270 to 420 pixels.
LayoutShares default_shares(ImVec2 display);
Rect status_rect(ImVec2 display, float status_height);

// The splitters' state: which one is being dragged.
struct Splitters {
    int dragging = -1;
};
// Every panel's own state.
struct Panels {
    MenuBar menu;
    DimensionsPanel dimensions;
    InputsPanel inputs;
    MaskPanel mask;
    PipelinePanel pipeline;
    HeadsPanel heads;
    HeadViewPanel head_view;
    ModelPanel model;
    TracePanel trace;
    ViewerPanel viewer;
    SaturationPanel saturation;
    GradientPanel gradients;
    ComparePanel compare;
    StatusBar status;
    TeachPanel teach;
    RecoveryWindow recovery;
    ExportDialog export_dialog;
    SentenceDialog sentence;
    bool teach_mode = false;    // the lesson fills the window instead of the explorer's panels
    bool reset_layout = false;  // the shares go back to the default in the next frame
    LayoutShares shares;
    bool shares_set = false;  // false: default_shares() for the display at the first frame
    Splitters splitters;
    int maximized = -1;  // a panel (index in explorer_panels()) filling the work area; -1: none
    // The panel each place shows (index in explorer_panels()), for places holding several; -1:
    // the place's first panel. Kept with the layout.
    std::array<int, static_cast<size_t>(Place::count)> active;
    std::vector<std::string> show_at_start;  // titles shown in the first frame, over the saved layout
    std::string maximize_at_start;           // a title maximised in the first frame ("": none)
    Panels() { active.fill(-1); }
    bool quit = false;  // the app ends after this frame
};

// Panels that edit the session are drawn first, then the trace is brought up to date, then the
// views: every view shows an edit's result in the frame the edit happened.
enum class Stage { edits, views };

struct PanelRow {
    const char* title;  // the window's title, also its ImGui ID (fixed text, never user data)
    Place place;
    Stage stage;
    void (*draw)(AppState& state, UiContext& ui, Panels& panels);
};

// The explorer's panels, in drawing order within each stage.
std::span<const PanelRow> explorer_panels();

// The panel a place shows (an index in explorer_panels()), and whether panel `index` is shown.
int active_panel(const Panels& panels, Place place);
bool panel_shown(const Panels& panels, int index);
// Shows the panel with this title in its place (its tab chosen, its place unhidden). Returns
// whether a panel has that title.
bool show_panel(Panels& panels, const std::string& title);

// Whether something moves on its own (the lesson playing, a trace or a gradient being computed whose
// result must be shown when ready), so the window must keep drawing frames.
bool animating(const Panels& panels, const AppState& state);

// Enters teach mode at a step (0-based), loading the lesson first if needed.
void enter_teach_mode(AppState& state, Panels& panels, int step);

// The window's title: the session's file name (or "unsaved session"), "*" when it has unsaved
// changes, and the app's name: "example.json* — attnviz".
std::string window_title(const AppState& state);

// Whether a dialog is open (a modal, or a desktop file dialog of the menu's): the shortcuts wait, and
// a command that would open another dialog is dropped.
bool dialog_open(const Panels& panels);

// Carries out the commands requested so far (menus, shortcuts, dropped files), in order.
void run_commands(AppState& state, UiContext& ui, Panels& panels);

// The shares as a line of the layout file ("left=0.22 left_top=0.5 …") and back; a line that does
// not parse leaves the shares as they were (an older or foreign layout is adapted, not trusted).
std::string shares_text(const LayoutShares& shares);
void read_shares(const std::string& text, LayoutShares& shares);
// Keeps the shares in ImGui's settings (the layout file) under [attnviz][Layout], so they are saved
// and loaded with the window layout. Call once after creating the ImGui context, before loading.
void install_layout_settings(Panels& panels);

// Draws the whole UI between ImGui::NewFrame() and ImGui::Render(), then runs the commands.
void draw_frame(AppState& state, UiContext& ui, Panels& panels, float frame_ms);

}  // namespace attnviz::app
