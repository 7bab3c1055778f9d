#include "trace_panel.hpp"

#include <algorithm>
#include <imgui.h>

#include "../widgets/matrix_view.hpp"

namespace attnviz::app {

void draw_trace_panel(AppState& state, TracePanel& panel) {
    using core::MatrixId;
    const core::Config& c = state.config();
    static constexpr MatrixId per_head[] = {MatrixId::Q,      MatrixId::K,       MatrixId::V, MatrixId::scores_raw,
                                            MatrixId::scores, MatrixId::weights, MatrixId::Z};
    const bool unicode = state.notation() == core::Notation::unicode;
    // Row vectors (seeds 000–003), or column vectors (seed 004: every matrix transposed).
    const char* headers[] = {"Q = X·W_Q", "K = X·W_K", "V = X·W_V", "QKᵀ", "÷ s", "softmax →", "Z = A·V"};
    const char* headers_ascii[] = {"Q = X*W_Q", "K = X*W_K", "V = X*W_V", "QK^T", "/ s", "softmax ->", "Z = A*V"};
    const char* headers_columns[] = {"Q = W_Qᵀ·X", "K = W_Kᵀ·X", "V = W_Vᵀ·X", "KᵀQ", "÷ s", "softmax ↓", "Z = V·A"};
    const char* headers_columns_ascii[] = {"Q = W_Q^T*X", "K = W_K^T*X", "V = W_V^T*X", "K^T Q", "/ s", "softmax (col)",
                                           "Z = V*A"};
    const char* const* titles = state.column_vectors() ? (unicode ? headers_columns : headers_columns_ascii)
                                                       : (unicode ? headers : headers_ascii);
    ImGui::TextDisabled("Hover a cell for its arithmetic; click it to outline its operands and open it in the viewer.");

    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float box = std::clamp((avail - font * 3.5f) / 7 - font * 0.7f, font * 3, font * 12);
    MatrixViewOptions o;
    o.title = false;
    o.max_size = {box, box};
    o.max_cell = panel.cell_limit;
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV;
    const float concat_h = std::min(box, font * 7) + font * 3;
    if (ImGui::BeginTable("trace", 8, flags, {0, std::max(font * 6, ImGui::GetContentRegionAvail().y - concat_h)})) {
        ImGui::TableSetupScrollFreeze(1, 1);
        ImGui::TableSetupColumn("head");
        for (int k = 0; k < 7; ++k) ImGui::TableSetupColumn(titles[k]);
        ImGui::TableHeadersRow();
        for (int h = 0; h < c.heads; ++h) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%d", h + 1);
            for (MatrixId id : per_head) {
                ImGui::TableNextColumn();
                matrix_view(state, {id, h}, o);
            }
        }
        ImGui::EndTable();
    }
    MatrixViewOptions wide = o;
    wide.title = true;
    wide.max_size = {std::max(box * 2, (avail - font * 2) / 2), std::min(box, font * 7)};
    matrix_view(state, {MatrixId::concat, 0}, wide);
    ImGui::SameLine(0, font * 1.5f);
    matrix_view(state, {MatrixId::output, 0}, wide);
}

}  // namespace attnviz::app
