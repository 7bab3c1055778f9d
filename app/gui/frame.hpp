// One frame of the explorer: every panel in its window, laid out for the display size.
// Shared by the real window (gui.cpp) and the headless tests.
#pragma once

#include <imgui.h>

#include "app_state.hpp"
#include "panels/dimensions_panel.hpp"
#include "panels/heads_panel.hpp"
#include "panels/inputs_panel.hpp"
#include "panels/menu_bar.hpp"
#include "panels/pipeline_panel.hpp"
#include "panels/status_bar.hpp"
#include "panels/teach_panel.hpp"
#include "panels/trace_panel.hpp"
#include "panels/viewer_panel.hpp"

namespace attnviz::app {

struct Panels {
    MenuBar menu;
    DimensionsPanel dimensions;
    InputsPanel inputs;
    PipelinePanel pipeline;
    HeadsPanel heads;
    TracePanel trace;
    ViewerPanel viewer;
    StatusBar status;
    TeachPanel teach;
    bool teach_mode = false;  // the lesson fills the window instead of the explorer's panels
};

// Enters teach mode at a step (0-based), loading the lesson first if needed.
void enter_teach_mode(AppState& state, Panels& panels, int step);

struct Rect {
    ImVec2 pos, size;
};

// Where each window goes on a fresh start (or after View > Reset layout).
struct Layout {
    Rect dimensions, pipeline, inputs, heads, trace, viewer, status;
};
Layout default_layout(ImVec2 display, float menu_height, float status_height);

// Draws the whole UI between ImGui::NewFrame() and ImGui::Render(). Input panels are drawn
// first, then the trace is brought up to date, then the views: every view shows an edit's
// result in the frame the edit happened.
void draw_frame(AppState& state, Panels& panels, float frame_ms);

}  // namespace attnviz::app
