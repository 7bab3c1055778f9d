#include "trace_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <vector>

#include "../widgets/matrix_view.hpp"

namespace attnviz::app {

void draw_trace_panel(AppState& state, UiContext& ui, TracePanel& panel) {
    using core::MatrixId;
    const core::Config& c = state.shown_config();
    // The computed matrices of one head that exist in this layer (Q … Z; Q_rot and K_rot with RoPE),
    // each headed as the shown convention writes it:
    // row vectors (seeds 000–003), or column vectors (seed 004: every matrix transposed).
    std::vector<MatrixId> per_head;
    for (MatrixId id : core::all_matrix_ids)
        if (core::is_per_head(id) && !core::is_input(id) && core::exists(id, c)) per_head.push_back(id);
    const int columns = static_cast<int>(per_head.size());
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Hover a cell for its arithmetic; click it to outline its operands and open it in the viewer.");
    ImGui::PopTextWrapPos();

    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float box = std::clamp((avail - font * 3.5f) / columns - font * 0.7f, font * 3, font * 12);
    MatrixViewOptions o;
    o.title = false;
    o.max_size = {box, box};
    o.max_cell = panel.cell_limit;
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_BordersInnerV;
    const float concat_h = std::min(box, font * 7) + font * 3;
    if (ImGui::BeginTable("trace", columns + 1, flags,
                          {0, std::max(font * 6, ImGui::GetContentRegionAvail().y - concat_h)})) {
        ImGui::TableSetupScrollFreeze(1, 1);
        ImGui::TableSetupColumn("head");
        for (MatrixId id : per_head)
            ImGui::TableSetupColumn(core::heading_text(id, c, ui.notation(), state.column_vectors()).c_str());
        ImGui::TableHeadersRow();
        // Only the heads scrolled into view are drawn (every row is as tall: the first one is measured).
        ImGuiListClipper clipper;
        clipper.Begin(c.heads);
        while (clipper.Step())
            for (int h = clipper.DisplayStart; h < clipper.DisplayEnd; ++h) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::Text("%d", h + 1);
                for (MatrixId id : per_head) {
                    ImGui::TableNextColumn();
                    matrix_view(state, ui, {id, h}, o);
                }
            }
        ImGui::EndTable();
    }
    MatrixViewOptions wide = o;
    wide.title = true;
    wide.max_size = {std::max(box * 2, (avail - font * 2) / 2), std::min(box, font * 7)};
    matrix_view(state, ui, {MatrixId::concat, 0}, wide);
    ImGui::SameLine(0, font * 1.5f);
    matrix_view(state, ui, {MatrixId::output, 0}, wide);
}

}  // namespace attnviz::app
