#include "shell/workspaces.hpp"

#include <algorithm>

namespace attnviz::app {

namespace {

using P = PanelId;
using L = Place;

// Each place holds at most two panels, so no tab strip overflows at 1024 pixels.
constexpr Placement layer_panels[] = {
    {P::dimensions, L::left_top}, {P::pipeline, L::left_bottom}, {P::inputs, L::upper_left},
    {P::mask, L::upper_left},     {P::heads, L::upper_right},    {P::head_view, L::upper_right},
    {P::trace, L::lower_left},    {P::viewer, L::lower_right},
};
// The model view over the whole width (a thumbnail per head of every layer), the head view and the
// analysis below it beside the next token.
constexpr Placement model_panels[] = {
    {P::dimensions, L::left_top},  {P::pipeline, L::left_bottom},      {P::model, L::upper_left},
    {P::head_view, L::lower_left}, {P::model_analysis, L::lower_left}, {P::next_token, L::lower_right},
};
// The attention lab over the whole width, the experiments below it.
constexpr Placement lab_panels[] = {
    {P::dimensions, L::left_top},   {P::pipeline, L::left_bottom}, {P::lab, L::upper_left},
    {P::saturation, L::lower_left}, {P::compare, L::lower_left},   {P::gradients, L::lower_right},
    {P::viewer, L::lower_right},
};
// The lesson in a column of its own, the steppers beside it over the whole height.
constexpr Placement teach_panels[] = {
    {P::lesson, L::left_top},
    {P::kv_cache, L::upper_left},
    {P::flash, L::upper_left},
};

// Why the model predicts its next token over the whole width, the head view and the next token below.
constexpr Placement attribution_panels[] = {
    {P::attribution, L::upper_left},
    {P::head_view, L::lower_left},
    {P::next_token, L::lower_right},
};

struct WorkspaceRow {
    Workspace id;
    const char* summary;
    std::span<const Placement> panels;
};

constexpr WorkspaceRow workspace_table[] = {
    {Workspace::layer, "the single layer: inputs, pipeline, heads, every intermediate, the matrix viewer",
     layer_panels},
    {Workspace::model, "a model on a sentence: its layers, head view, logit lens, rollout, next token", model_panels},
    {Workspace::lab, "the analyses: attention lab, saturation, Compare, gradients", lab_panels},
    {Workspace::teach, "the lesson and the KV-cache and FlashAttention steppers", teach_panels},
    {Workspace::attribution, "why a model predicts its next token: tokens, heads and MLPs that raise or lower it",
     attribution_panels},
};

constexpr bool rows_in_order() {
    for (size_t k = 0; k < std::size(workspace_table); ++k)
        if (static_cast<size_t>(workspace_table[k].id) != k) return false;
    return std::size(workspace_table) == workspace_count;
}
static_assert(rows_in_order(), "the workspace table's rows are in Workspace order");

// Every panel has a home: some workspace holds it.
constexpr bool every_panel_placed() {
    for (size_t panel = 0; panel < static_cast<size_t>(PanelId::count); ++panel) {
        bool found = false;
        for (const WorkspaceRow& row : workspace_table)
            for (const Placement& p : row.panels) found = found || static_cast<size_t>(p.panel) == panel;
        if (!found) return false;
    }
    return true;
}
static_assert(every_panel_placed(), "every panel is in a workspace");

const WorkspaceRow& row_of(Workspace w) {
    const auto k = std::min(static_cast<size_t>(w), workspace_count - 1);
    return workspace_table[k];
}

}  // namespace

const char* workspace_summary(Workspace w) { return row_of(w).summary; }

std::span<const Placement> placements(Workspace w) { return row_of(w).panels; }

std::optional<Place> place_in(Workspace w, PanelId panel) {
    for (const Placement& p : placements(w))
        if (p.panel == panel) return p.place;
    return std::nullopt;
}

Workspace home_of(PanelId panel) {
    for (const WorkspaceRow& row : workspace_table)
        if (place_in(row.id, panel)) return row.id;
    return Workspace::layer;  // unreachable: every_panel_placed
}

int panels_in_place(Workspace w, Place place) {
    int count = 0;
    for (const Placement& p : placements(w)) count += p.place == place;
    return count;
}

void hide_empty_places(Workspace w, LayoutShares& shares) {
    for (size_t place = 0; place < shares.hidden.size(); ++place)
        if (panels_in_place(w, static_cast<Place>(place)) == 0) shares.hidden[place] = true;
}

LayoutShares workspace_default_shares(Workspace w, ImVec2 display) {
    LayoutShares s = default_shares(display);
    if (w == Workspace::model) s.upper = 0.5f;         // the model view above the head view and the analysis
    if (w == Workspace::lab) s.upper = 0.55f;          // the lab's heatmaps above the experiments
    if (w == Workspace::teach) s.left = 0.42f;         // the lesson's text and matrices beside the steppers
    if (w == Workspace::attribution) s.upper = 0.62f;  // the tokens and the heads' attribution above
    hide_empty_places(w, s);
    return s;
}

}  // namespace attnviz::app
