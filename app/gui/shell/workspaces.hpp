// The workspaces: the window's panels grouped by what a person is doing, each with its own tiling.
//   Layer  the seeds' single layer: dimensions, pipeline, inputs and mask, the heads, every
//          intermediate and the matrix viewer;
//   Model  a model run on a sentence: the model view (its sentence and layers), the head view, the
//          model analysis (logit lens, rollout, norms) and the next token;
//   Lab    the analyses: the attention lab, the heads, the saturation lab, Compare, the gradients
//          and the matrix viewer;
//   Teach  the lesson and the KV-cache and FlashAttention steppers (teach mode: the lesson alone).
// A workspace places each of its panels in one place of the tiling (frame_layout.hpp); places it
// leaves empty are hidden, their room going to their neighbours. A panel may be in several
// workspaces (Dimensions in three); every panel is in at least one (its home).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "shell/frame_layout.hpp"
#include "shell/workspace_names.hpp"
#include "ui/command.hpp"

namespace attnviz::app {

// Workspace itself is command.hpp's (a command switches to one); the names workspace_names.hpp's.
// What the workspace holds, in a line (the bar's tooltip, the palette).
const char* workspace_summary(Workspace w);

// A panel in a workspace, and where.
struct Placement {
    PanelId panel;
    Place place;
};
// The panels of a workspace, in the order of their tabs within each place.
std::span<const Placement> placements(Workspace w);
// Where the panel is in the workspace, if it is there.
std::optional<Place> place_in(Workspace w, PanelId panel);
// The first workspace holding the panel (in bar order): where showing it goes from a workspace
// without it.
Workspace home_of(PanelId panel);
// How many panels share a place of the workspace (more than one: they have tabs).
int panels_in_place(Workspace w, Place place);

// A workspace's layout, kept while another is shown: how its places share the window, which tab
// each place shows (an index in explorer_panels(); -1: the place's first) and the panel maximised.
struct WorkspaceLayout {
    LayoutShares shares;
    bool shares_set = false;  // false: the workspace's default shares at its first frame
    std::array<int, static_cast<size_t>(Place::count)> active = {-1, -1, -1, -1, -1, -1};
    int maximized = -1;
};

// The workspace's default shares for a display: default_shares() with its empty places hidden and
// its rows sized for what it shows (the lesson gets more height in Teach).
LayoutShares workspace_default_shares(Workspace w, ImVec2 display);
// Hides the places the workspace leaves empty (a layout file may have shown them).
void hide_empty_places(Workspace w, LayoutShares& shares);

}  // namespace attnviz::app
