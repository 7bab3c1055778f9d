#include "matrix_view.hpp"

#include "heatmap.hpp"

namespace attnviz::app {

Colormap colormap_for(core::MatrixId id) {
    return id == core::MatrixId::weights ? Colormap::sequential : Colormap::diverging;
}

void explain_tooltip(const AppState& state, const CellRef& cell) {
    const core::Result<core::Explanation> e = state.explain(cell);
    if (!e) return;
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 42);
    ImGui::TextUnformatted(e.value->title.c_str());
    ImGui::Separator();
    ImGui::TextDisabled("%s", e.value->formula.c_str());
    for (const std::string& line : e.value->lines) ImGui::TextUnformatted(line.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

namespace {

bool same_matrix(const core::OperandRef& op, MatrixRef ref) {
    return op.matrix == ref.id && (!core::is_per_head(ref.id) || op.head == ref.head);
}

}  // namespace

void matrix_view(AppState& state, MatrixRef ref, const MatrixViewOptions& o) {
    const core::Matrix* m = state.matrix(ref);
    if (!m) return;
    ImGui::PushID(static_cast<int>(ref.id) * 1000 + ref.head);
    ImGui::BeginGroup();
    if (o.title) {
        const std::string title = state.label(ref) + "  " + std::to_string(m->rows()) + "×" + std::to_string(m->cols());
        const bool viewed = state.viewed() == ref;
        if (viewed) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotHistogram));
        if (ImGui::Selectable(title.c_str(), viewed, 0, ImGui::CalcTextSize(title.c_str()))) state.view(ref);
        if (viewed) ImGui::PopStyleColor();
    }
    HeatmapOptions h;
    h.colormap = colormap_for(ref.id);
    if (o.fixed_range) {
        h.lo = o.lo;
        h.hi = o.hi;
    } else {
        heatmap_range(*m, h.colormap, h.lo, h.hi);
    }
    h.max_size = o.max_size;
    h.max_cell = o.max_cell;
    h.generation = state.generation();
    h.shown_cells = o.shown_cells;
    // Token labels only where rows (columns) are tokens: not on the weight matrices.
    const bool rows_are_tokens = !core::is_input(ref.id) || ref.id == core::MatrixId::X;
    const bool cols_are_tokens = ref.id == core::MatrixId::scores_raw || ref.id == core::MatrixId::scores ||
                                 ref.id == core::MatrixId::weights;
    h.row_labels = o.token_rows && rows_are_tokens ? &state.session().tokens : nullptr;
    h.col_labels = o.token_cols && cols_are_tokens ? &state.session().tokens : nullptr;
    if (const CellRef* sel = state.selection()) {
        if (sel->matrix == ref) h.marks.push_back({sel->row, sel->col, IM_COL32(255, 255, 255, 255)});
        for (const core::OperandRef& op : state.selection_operands())
            if (same_matrix(op, ref)) h.marks.push_back({op.row, op.col});
    }
    const HeatmapHit hit = heatmap("cells", *m, h);
    const bool hidden = o.shown_cells >= 0 && static_cast<long>(hit.row) * m->cols() + hit.col >= o.shown_cells;
    if (hit.hovered && !hidden) {
        const CellRef cell{ref, hit.row, hit.col};
        explain_tooltip(state, cell);
        if (hit.clicked) {
            state.select(cell);
            state.view(ref);
        }
    }
    ImGui::EndGroup();
    ImGui::PopID();
}

}  // namespace attnviz::app
