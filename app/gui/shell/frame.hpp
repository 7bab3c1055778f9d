// One frame of the explorer: every panel in its window, laid out for the display size, then the
// commands the frame's panels requested. Shared by the real window (gui.cpp) and the headless tests.
//
// The explorer's panels are the rows of one table (frame.cpp): {id, title, stage, draw}. A new view
// is one panel file (a state struct and a draw function), one PanelId (command.hpp), one row there
// and its place in one or more workspaces (workspaces.cpp). Several panels of a workspace may share
// a place: the place then shows one of them at a time, with a tab for each (in place of the
// window's title bar). The places and how they share the window are frame_layout.hpp's; the
// commands and dialogs frame_commands.hpp's.
#pragma once

#include <array>
#include <imgui.h>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dialogs/attentions_mode.hpp"
#include "dialogs/export_dialog.hpp"
#include "dialogs/recovery_window.hpp"
#include "dialogs/sentence_dialog.hpp"
#include "panels/lab/compare_panel.hpp"
#include "panels/lab/gradient_panel.hpp"
#include "panels/lab/lab_panel.hpp"
#include "panels/lab/saturation_panel.hpp"
#include "panels/layer/dimensions_panel.hpp"
#include "panels/layer/heads_panel.hpp"
#include "panels/layer/inputs_panel.hpp"
#include "panels/layer/mask_panel.hpp"
#include "panels/layer/pipeline_panel.hpp"
#include "panels/layer/trace_panel.hpp"
#include "panels/layer/viewer_panel.hpp"
#include "panels/model/attribution_panel.hpp"
#include "panels/model/head_view_panel.hpp"
#include "panels/model/model_analysis_panel.hpp"
#include "panels/model/model_panel.hpp"
#include "panels/model/next_token_panel.hpp"
#include "panels/teach/flash_panel.hpp"
#include "panels/teach/kv_cache_panel.hpp"
#include "panels/teach/teach_panel.hpp"
#include "shell/command_palette.hpp"
#include "shell/frame_layout.hpp"
#include "shell/menu_bar.hpp"
#include "shell/status_bar.hpp"
#include "shell/workspaces.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

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
    NextTokenPanel next_token;
    ModelAnalysisPanel model_analysis;
    KvCachePanel kv_cache;
    FlashPanel flash;
    LabPanel lab;
    AttributionPanel attribution;
    StatusBar status;
    TeachPanel teach;
    RecoveryWindow recovery;
    ExportDialog export_dialog;
    SentenceDialog sentence;
    CommandPalette palette;
    AttentionsMode attentions;  // any model's weights opened: the head view and the model view alone
    bool teach_mode = false;    // the lesson fills the window (the Teach workspace's lesson alone)
    bool reset_layout = false;  // the shares go back to the default in the next frame
    // The workspace shown. Its layout is the four fields below; the others' are kept in `layouts`
    // (switch_workspace swaps them).
    Workspace workspace = Workspace::layer;
    std::array<WorkspaceLayout, workspace_count> layouts;
    Workspace layout_section = Workspace::layer;  // the workspace whose lines the layout file gives now
    LayoutShares shares;
    bool shares_set = false;  // false: workspace_default_shares() for the display at the first frame
    Splitters splitters;
    int maximized = -1;  // a panel (index in explorer_panels()) filling the work area; -1: none
    // The panel each place shows (index in explorer_panels()), for places holding several; -1:
    // the place's first panel. Kept with the layout.
    std::array<int, static_cast<size_t>(Place::count)> active;
    std::optional<Workspace> workspace_at_start;  // --workspace: shown from the first frame
    std::vector<PanelId> show_at_start;           // shown in the first frame, over the saved layout
    std::optional<PanelId> maximize_at_start;     // maximised in the first frame
    Panels() { active.fill(-1); }
    bool quit = false;  // the app ends after this frame
    // The look asked for (View menu, command line, the layout file, where it is kept): the window
    // makes its fonts, style and palette those of it between frames (apply_appearance).
    Appearance appearance;
    bool full_screen = false;  // View > Full screen (F11): the window follows between frames
};

// Panels that edit the session are drawn first, then the trace is brought up to date, then the
// views: every view shows an edit's result in the frame the edit happened.
enum class Stage { edits, views };

struct PanelRow {
    PanelId id;         // its index in the table
    const char* title;  // the window's title, also its ImGui ID (fixed text, never user data)
    Stage stage;
    void (*draw)(AppState& state, UiContext& ui, Panels& panels);
};

// The explorer's panels, in drawing order within each stage; row k is PanelId k.
std::span<const PanelRow> explorer_panels();

// The panel with this title (the window's: what --panel and the layout file name), if any.
std::optional<PanelId> panel_titled(std::string_view title);

// The panel a place shows (an index in explorer_panels()), and whether panel `index` is shown.
int active_panel(const Panels& panels, Place place);
bool panel_shown(const Panels& panels, int index);
// Whether a panel is on screen: drawn in its place (its tab the chosen one), maximised, or in the
// attentions mode the view of them shown; none is in teach mode.
bool panel_on_screen(const Panels& panels, PanelId panel);
// Shows a panel in its place (its tab chosen, its place unhidden), in the workspace shown when it
// is there, else in its home workspace (workspaces.hpp).
void show_panel(Panels& panels, PanelId panel);
// Shows another workspace with the layout it had (its shares, tabs and maximised panel); teach
// mode ends unless it is Teach.
void switch_workspace(Panels& panels, Workspace workspace);
// The same by the panel's title; returns whether a panel has that title.
bool show_panel(Panels& panels, std::string_view title);

// Whether something moves on its own (the lesson playing, a trace or a gradient being computed whose
// result must be shown when ready), so the window must keep drawing frames.
bool animating(const Panels& panels, const AppState& state);

// Enters teach mode at a step (0-based), loading the lesson first if needed.
void enter_teach_mode(AppState& state, Panels& panels, int step);

// The panels that show opened attentions (the head view and the model view): in the attentions
// mode they fill the window, in their place's tabs, and no other panel is drawn.
bool shows_attentions(PanelId panel);
// After attentions opened (attentions_mode.hpp): the head view starts afresh on them (its first
// layer, every head, no selection) in its tab; the mode ends when the session or the model changes.
void attentions_opened(const AppState& state, Panels& panels);
// Ends the attentions mode when the session was replaced or edited (a file, a sentence, an import
// opened) or another model opened since it began. Once a frame.
void end_attentions_if_replaced(const AppState& state, Panels& panels);

// Keeps the shares, the chosen tabs and the look (theme, text size, colormap) in ImGui's settings
// (the layout file) under [attnviz][Layout], so they are saved and loaded with the window layout.
// Call once after creating the ImGui context, before loading.
void install_layout_settings(Panels& panels);

// The window's title: the session's file name (or "unsaved session"), "*" when it has unsaved
// changes, and the app's name: "example.json* — attnviz"; in the attentions mode the attentions'
// file: "bert.npz (attentions) — attnviz".
std::string window_title(const AppState& state);
std::string window_title(const AppState& state, const Panels& panels);

// The windows between the menu bar (menu_h high) and the status bar (status_h): the lesson's in
// teach mode, else every shown place with its chosen panel (or the maximised one), with the
// splitters between them. The frame driver (frame_driver.hpp) draws one or the other.
void draw_teach_window(AppState& state, UiContext& ui, Panels& panels, float menu_h, float status_h);
void draw_explorer_windows(AppState& state, UiContext& ui, Panels& panels, float menu_h, float status_h);
// The View menu, appended to the menu bar's: teach mode, the presentation (focus, full screen, text
// size, theme, colormap; panels/presentation_menu.hpp), the layout, and each panel (checked while
// on screen).
void draw_view_menu(Panels& panels, UiContext& ui);

}  // namespace attnviz::app
