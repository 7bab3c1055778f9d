#include "heads_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>

#include "../widgets/colormap.hpp"
#include "../widgets/heatmap.hpp"
#include "../widgets/matrix_view.hpp"

namespace attnviz::app {

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel) {
    const core::Config& c = state.shown_config();
    ImGui::Checkbox("show scores", &panel.show_scores);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Show each head's scores (before the softmax) instead of its weights");
    bool stretch = panel.stretch.value_or(c.n >= auto_weights_from_keys);
    if (!panel.show_scores) {
        ImGui::SameLine();
        if (ImGui::Checkbox("stretch colours", &stretch)) panel.stretch = stretch;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "Colour the weights from 0 to the largest weight of all heads instead of 0 to 1:\n"
                "with many tokens every weight is small and 0..1 looks uniform.");
    }
    ImGui::SameLine();
    ImGui::TextDisabled("%s", state.column_vectors() ? "rows: keys, columns: queries" : "rows: queries, columns: keys");
    const core::MatrixId id = panel.show_scores ? core::MatrixId::scores : core::MatrixId::weights;

    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float legend_h = ImGui::GetTextLineHeight() * 2.2f;
    // Heads in a grid of `per_row` columns, as large as the panel allows.
    const int per_row = std::max(1, std::min(c.heads, static_cast<int>(std::ceil(std::sqrt(c.heads * 1.6)))));
    const int grid_rows = (c.heads + per_row - 1) / per_row;
    const float side = std::max(font * 4, std::min((avail.x - font * (per_row - 1)) / per_row,
                                                   (avail.y - legend_h) / grid_rows - font * 1.6f));
    MatrixViewOptions o;
    o.max_size = {side, side};
    o.max_cell = 80;
    o.token_rows = o.token_cols = true;
    o.fixed_range = true;  // one range for all heads, so they can be compared
    if (panel.show_scores || stretch) {
        // The largest magnitude over all heads (scanned once per recompute, see heatmap_range).
        double largest = 0;
        for (const core::HeadTrace& head : state.trace().heads) {
            double lo, hi;
            heatmap_range(ui, panel.show_scores ? head.scores : head.weights, Colormap::diverging, state.generation(),
                          lo, hi);
            largest = std::max(largest, hi);
        }
        o.lo = panel.show_scores ? -largest : 0;  // scores around 0; weights from 0 up to the largest
        o.hi = largest;
    }
    ImGui::BeginChild("heads", {0, avail.y - legend_h}, false, ImGuiWindowFlags_HorizontalScrollbar);
    for (int h = 0; h < c.heads; ++h) {
        if (h % per_row) ImGui::SameLine(0, font);
        matrix_view(state, ui, {id, h}, o);
    }
    ImGui::EndChild();
    colormap_legend(colormap_for(id), o.lo, o.hi, std::min(avail.x, font * 18));
}

}  // namespace attnviz::app
