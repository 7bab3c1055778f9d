#include "panels/lab/lab_heatmap.hpp"

#include <algorithm>
#include <imgui.h>

namespace attnviz::app {

HeatmapHit lab_heatmap(UiContext& ui, const char* name, const core::Matrix& m, core::Colormap map,
                       core::ColorRange range, ImVec2 room, const std::vector<std::string>* rows,
                       const std::vector<std::string>* cols) {
    HeatmapOptions o;
    o.colormap = map;
    o.range = range;
    o.max_size = room;
    o.max_cell = ImGui::GetFontSize() * 3.5f;
    o.row_labels = rows;
    o.col_labels = cols;
    ImGui::BeginGroup();
    ImGui::TextUnformatted(name);
    const HeatmapHit hit = heatmap(ui, name, m, o, name);
    if (ui.report) ui.report->heatmaps.push_back({name, hit.cells_min, hit.cells_max});
    ImGui::EndGroup();
    return hit;
}

core::ColorRange symmetric(const core::Matrix& m) {
    const double a = m.size() > 0 ? std::max(m.cwiseAbs().maxCoeff(), 1e-300) : 1.0;
    return {-a, a, false};
}

}  // namespace attnviz::app
