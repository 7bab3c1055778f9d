#include "heads_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>

#include "../widgets/colormap.hpp"
#include "../widgets/fitted_text.hpp"
#include "../widgets/heatmap.hpp"
#include "../widgets/matrix_view.hpp"

namespace attnviz::app {

HeadsGrid heads_grid(int heads, ImVec2 avail, float title_h, float gap, float min_side) {
    HeadsGrid best;
    for (int columns = 1; columns <= std::max(heads, 1); ++columns) {
        const int rows = (heads + columns - 1) / columns;
        const float by_width = (avail.x - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns);
        const float by_height = (avail.y - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows) - title_h;
        const float side = std::min(by_width, by_height);
        if (side > best.side) best = {columns, side};
    }
    if (best.side >= min_side) return best;
    // Too many heads for the height: as many columns of min_side as the width takes, scrolling down.
    const int columns = std::clamp(static_cast<int>((avail.x + gap) / (min_side + gap)), 1, std::max(heads, 1));
    return {columns, std::max(min_side, (avail.x - gap * static_cast<float>(columns - 1)) / columns)};
}

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel) {
    const core::Config& c = state.shown_config();
    ImGui::Checkbox("show scores", &panel.show_scores);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Show each head's scores (before the softmax) instead of its weights");
    const core::MatrixId id = panel.show_scores ? core::MatrixId::scores : core::MatrixId::weights;
    const float font = ImGui::GetFontSize();
    ImGui::SameLine();
    scaling_combo(ui, id, c.kv_len(), font * 9);
    const char* axes = state.column_vectors() ? "rows: keys, columns: queries" : "rows: queries, columns: keys";
    same_line_if_fits(ImGui::CalcTextSize(axes).x);
    ImGui::TextDisabled("%s", axes);

    // One range for all heads, so they can be compared: every head's statistics combined.
    const core::Scaling scaling = ui.scaling(id, c.kv_len());
    const bool clip = ui.clips_outliers(id, c.kv_len());
    core::ValueStats all;
    for (const core::HeadTrace& head : state.trace().heads)
        all = core::combine(all, ui.heatmaps.stats(panel.show_scores ? head.scores : head.weights, state.generation(),
                                                   clip || scaling == core::Scaling::percentile));
    MatrixViewOptions o;
    o.range = clip ? core::auto_outlier_range(all) : core::color_range(core::info(id).colors, scaling, all);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float legend_h = ImGui::GetTextLineHeight() * 2.2f;
    // A thumbnail's title above it and, for weights, its summary line below.
    const float title_h = ImGui::GetTextLineHeightWithSpacing() * (panel.show_scores ? 1 : 2) +
                          ImGui::GetStyle().ItemSpacing.y;
    const float gap = font;
    const float scrollbar = ImGui::GetStyle().ScrollbarSize;
    HeadsGrid grid = heads_grid(c.heads, {avail.x, avail.y - legend_h}, title_h, gap, font * 4);
    const int grid_rows = (c.heads + grid.columns - 1) / grid.columns;
    if (grid_rows * (grid.side + title_h) + (grid_rows - 1) * gap > avail.y - legend_h)  // a vertical scrollbar
        grid = heads_grid(c.heads, {avail.x - scrollbar, avail.y - legend_h}, title_h, gap, font * 4);
    o.max_size = {grid.side, grid.side};
    o.max_cell = 80;
    o.token_rows = o.token_cols = true;
    ImGui::BeginChild("heads", {0, avail.y - legend_h});
    if (!panel.show_scores &&
        (panel.summaries_of != state.generation() || panel.summaries.size() != state.trace().heads.size())) {
        panel.summaries.clear();
        for (const core::HeadTrace& head : state.trace().heads)
            panel.summaries.push_back(core::summarize_head(head.weights));
        panel.summaries_of = state.generation();
    }
    float cells_per_pixel = 1;
    for (int h = 0; h < c.heads; ++h) {
        if (h % grid.columns) ImGui::SameLine(0, gap);
        ImGui::BeginGroup();
        cells_per_pixel = std::max(cells_per_pixel, matrix_view(state, ui, {id, h}, o).cells_per_pixel);
        if (!panel.show_scores && h < static_cast<int>(panel.summaries.size())) {
            const std::string line = summary_line(panel.summaries[static_cast<size_t>(h)]);
            ImGui::TextDisabled("%s", fitted_text(line, grid.side).c_str());
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip(
                    "Head %d: %s\nH: mean entropy of a row, in nats (0: each query on one key; ln %d = %.3g: "
                    "uniform over every key)\n"
                    "|i-j|: mean distance from query to key it attends to\n"
                    "diag: mean weight of a token on itself; first: mean weight on the first token",
                    h + 1, line.c_str(), c.kv_len(), std::log(static_cast<double>(c.kv_len())));
        }
        ImGui::EndGroup();
    }
    ImGui::EndChild();
    const std::string note = std::string(core::scaling_name(scaling)) +
                             (clip && core::max_is_outlier(all) ? ", top at the 99th percentile" : "") +
                             pooling_note(ui, id, cells_per_pixel);
    colormap_legend(colormap_for(id), *o.range, std::min(avail.x, font * 22), note.c_str());
}

std::string summary_line(const core::HeadSummary& s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "H %.2g  |i-j| %.2g  diag %.0f%%  first %.0f%%", s.mean_entropy, s.mean_distance,
                  s.diagonal_share * 100, s.first_share * 100);
    return buf;
}

}  // namespace attnviz::app
