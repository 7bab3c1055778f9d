#include "matrix_view.hpp"

#include "heatmap.hpp"

namespace attnviz::app {

Colormap colormap_for(core::MatrixId id) {
    return core::info(id).colors == core::ColorScale::unit_interval ? Colormap::sequential : Colormap::diverging;
}

void draw_explanation(const core::Explanation& e, bool numbers) {
    if (numbers) ImGui::TextUnformatted(e.title.c_str());
    ImGui::TextDisabled("%s", e.formula.c_str());
    if (numbers)
        for (const std::string& line : e.lines) ImGui::TextUnformatted(line.c_str());
}

void explain_tooltip(const AppState& state, const CellRef& cell, bool transposed) {
    const core::Result<core::Explanation> e = state.explain(cell);
    if (!e) return;
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 42);
    if (transposed)
        ImGui::TextDisabled("drawn transposed (column vectors): this is row %d, column %d of the row form", cell.row,
                            cell.col);
    draw_explanation(*e.value);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

void matrix_view(AppState& state, UiContext& ui, MatrixRef ref, const MatrixViewOptions& o) {
    const core::Matrix* m = state.matrix(ref);
    if (!m) return;
    ImGui::PushID(static_cast<int>(ref.id) * 1000 + ref.head);
    ImGui::BeginGroup();
    const bool t = o.follow_orientation && state.column_vectors();
    if (o.title) {
        const std::string title = state.label(ref) + "  " + state.shape_text(ref, o.follow_orientation);
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
        heatmap_range(ui, *m, h.colormap, state.generation(), h.lo, h.hi);
    }
    h.max_size = o.max_size;
    h.max_cell = o.max_cell;
    h.generation = state.generation();
    h.shown_cells = o.shown_cells;
    // Token labels only where rows (columns) are tokens: not on the weight matrices.
    const auto& tokens = state.shown().session.tokens;
    const std::vector<std::string>* row_tokens = o.token_rows && core::rows_are_tokens(ref.id) ? &tokens : nullptr;
    const std::vector<std::string>* col_tokens = o.token_cols && core::cols_are_tokens(ref.id) ? &tokens : nullptr;
    h.transposed = t;
    h.row_labels = t ? col_tokens : row_tokens;
    h.col_labels = t ? row_tokens : col_tokens;
    // Marks and hits are in the drawn frame: swap rows and columns when transposed.
    auto mark = [&](int row, int col, ImU32 color) {
        h.marks.push_back(t ? HeatmapMark{col, row, color} : HeatmapMark{row, col, color});
    };
    if (const CellRef* sel = state.selection()) {
        if (sel->matrix == ref) mark(sel->row, sel->col, ui.color(Color::selected_cell));
        for (const CellRef& op : state.selection_operands())
            if (op.matrix == ref) mark(op.row, op.col, ui.color(Color::operand));
    }
    // The draw report (screenshot tests) names the matrix; no name is built otherwise.
    const std::string report_name = ui.report ? core::label(ref, core::Notation::ascii) : std::string();
    const HeatmapHit hit = heatmap(ui, "cells", *m, h, ui.report ? report_name.c_str() : nullptr);
    const int drawn_cols = static_cast<int>(t ? m->rows() : m->cols());
    const bool hidden = o.shown_cells >= 0 && static_cast<long>(hit.row) * drawn_cols + hit.col >= o.shown_cells;
    if (hit.hovered && !hidden) {
        const CellRef cell{ref, t ? hit.col : hit.row, t ? hit.row : hit.col};
        explain_tooltip(state, cell, t);
        if (hit.clicked) {
            state.select(cell);
            state.view(ref);
        }
    }
    ImGui::EndGroup();
    ImGui::PopID();
}

}  // namespace attnviz::app
