#include "viewer_panel.hpp"

#include <algorithm>
#include <imgui.h>

#include "../widgets/heatmap.hpp"
#include "../widgets/matrix_view.hpp"

namespace attnviz::app {

void draw_viewer_panel(AppState& state, UiContext& ui, ViewerPanel&) {
    MatrixRef ref = state.viewed();
    const core::Config& c = state.shown_config();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::BeginCombo("##matrix", core::name(ref.id))) {
        for (core::MatrixId id : core::all_matrix_ids) {
            if (!core::exists(id, c)) continue;
            if (ImGui::Selectable(core::name(id), id == ref.id)) state.view({id, ref.head});
        }
        ImGui::EndCombo();
    }
    if (core::is_per_head(ref.id) && c.heads > 1) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
        int shown = ref.head + 1;
        if (ImGui::SliderInt("head", &shown, 1, c.heads)) state.view({ref.id, shown - 1});
    }
    ref = state.viewed();
    const core::Matrix* m = state.matrix(ref);
    if (!m) {
        ImGui::TextDisabled("%s does not exist in this configuration.", state.label(ref).c_str());
        return;
    }
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Room for the legend and, when a cell is selected, its arithmetic (about ten lines).
    const float text_h = state.selection() ? std::min(avail.y * 0.5f, font * 12.0f) : font * 4.5f;
    MatrixViewOptions o;
    const float view_h = std::max(font * 6.5f, avail.y - text_h);  // the matrix with its title and labels
    o.max_size = {avail.x, view_h - font * 2.5f};
    o.max_cell = 64;
    o.token_rows = o.token_cols = true;  // where rows / columns are tokens
    ImGui::BeginChild("view", {0, view_h}, false, ImGuiWindowFlags_HorizontalScrollbar);
    matrix_view(state, ui, ref, o);
    ImGui::EndChild();
    double lo, hi;
    heatmap_range(ui, *m, colormap_for(ref.id), state.generation(), lo, hi);
    colormap_legend(colormap_for(ref.id), lo, hi, std::min(avail.x, font * 16));

    ImGui::BeginChild("arithmetic");
    if (const core::Explanation* e = state.selected_explanation()) {
        ImGui::PushTextWrapPos(0);
        draw_explanation(*e);
        ImGui::PopTextWrapPos();
    } else {
        ImGui::TextDisabled("Click any cell to keep its arithmetic here.");
    }
    ImGui::EndChild();
}

}  // namespace attnviz::app
