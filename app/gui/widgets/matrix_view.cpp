#include "matrix_view.hpp"

#include <algorithm>

#include "core/base/format.hpp"
#include "core/render/export.hpp"
#include "fitted_text.hpp"
#include "heatmap.hpp"
#include "wrapped_text.hpp"

namespace attnviz::app {

float FlowItem::width(float cell) const {
    return std::max(min_w, (cell >= labels_from ? labels.x : 0) + static_cast<float>(cols) * cell);
}

float FlowItem::height(float cell, float room) const {
    const float label_w = cell >= labels_from ? labels.x : 0;
    // Wider than its row: its cells shrink to the row's width (the heatmap fits them so).
    const float fitted = std::min(cell, std::max(room - label_w, 1.0f) / static_cast<float>(std::max(cols, 1)));
    const float label_h = col_labels.upright_h > 0 ? col_labels.height(fitted) : labels.y;
    return head_h + (fitted >= labels_from ? label_h : 0) + static_cast<float>(rows) * fitted;
}

float flow_height(const std::vector<FlowItem>& items, float cell, float width, ImVec2 gap) {
    float total = 0, line_h = 0, x = 0;
    bool first = true;
    for (const FlowItem& item : items) {
        const float w = std::min(item.width(cell), width), h = item.height(cell, width);
        if (first || item.new_line || x + gap.x + w > width) {
            total += first ? 0 : line_h + gap.y;
            line_h = 0;
            x = w;
        } else {
            x += gap.x + w;
        }
        line_h = std::max(line_h, h);
        first = false;
    }
    return total + line_h;
}

float flow_cell(const std::vector<FlowItem>& items, ImVec2 room, ImVec2 gap, float min_cell, float max_cell) {
    const auto fits = [&](float cell) { return flow_height(items, cell, room.x, gap) <= room.y; };
    for (float cell = std::floor(max_cell); cell >= std::max(min_cell, 2.0f); cell -= 1)
        if (fits(cell)) return cell;
    // Below two pixels (hundreds of tokens): the largest fraction of a pixel that fits, by halving.
    float lo = min_cell, hi = std::min(2.0f, max_cell);
    if (!(lo < hi) || !fits(lo)) return min_cell;
    for (int k = 0; k < 24; ++k) {
        const float mid = (lo + hi) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

void flow_place(float width, float gap, bool new_line, bool first) {
    if (first || new_line) return;
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + gap + width <= right) ImGui::SameLine(0, gap);
}

namespace {
// "auto (default)" for the scaling a matrix gets until one is chosen.
std::string scaling_label(core::Scaling s, bool is_default) {
    return std::string(core::scaling_name(s)) + (is_default ? " (default)" : "");
}
}  // namespace

void scaling_menu_items(UiContext& ui, core::MatrixId id, std::int64_t cols) {
    const core::ColorScale colors = core::info(id).colors;
    const core::Scaling current = ui.scaling(id, cols), fallback = core::default_scaling(colors, cols);
    for (core::Scaling s : core::all_scalings) {
        if (!core::offers(colors, s)) continue;
        if (ImGui::MenuItem(scaling_label(s, s == fallback).c_str(), nullptr, s == current))
            ui.set_scaling(id, s == fallback ? std::nullopt : std::optional<core::Scaling>(s));
    }
}

void copy_menu_items(const core::Matrix& m) {
    // Exact values for CSV and TSV (they paste back bit for bit), 4 digits for LaTeX.
    if (ImGui::MenuItem("Copy as CSV")) ImGui::SetClipboardText(core::delimited_text(m, ",").c_str());
    if (ImGui::MenuItem("Copy as TSV (spreadsheets)")) ImGui::SetClipboardText(core::delimited_text(m, "\t").c_str());
    if (ImGui::MenuItem("Copy as LaTeX bmatrix")) ImGui::SetClipboardText(core::latex_bmatrix(m).c_str());
}

void scaling_combo(UiContext& ui, core::MatrixId id, std::int64_t cols, float width) {
    const core::Scaling current = ui.scaling(id, cols);
    ImGui::SetNextItemWidth(width);
    ImGui::PushID(static_cast<int>(id));
    if (ImGui::BeginCombo("##colours", core::scaling_name(current))) {
        scaling_menu_items(ui, id, cols);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "How %s is coloured (also by right-clicking any heatmap):\n"
            "fixed 0..1 (weights), auto (its own range), percentile (1st to 99th, so outliers do not wash\n"
            "the rest out), log (weights: small weights become visible)",
            core::name(id));
    ImGui::PopID();
}

void draw_explanation(const core::Explanation& e, bool numbers) {
    // Broken only at spaces where they wrap: a number is never split across lines.
    if (numbers) text_wrapped_at_spaces(e.title);
    text_wrapped_at_spaces(e.formula, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (numbers)
        for (const std::string& line : e.lines) text_wrapped_at_spaces(line);
}

std::string pooling_note(const UiContext& ui, core::MatrixId id, float cells_per_pixel) {
    if (cells_per_pixel < 1.05f) return "";
    const std::string side = core::format_number(cells_per_pixel, 2);
    const char* of = core::pooling_for(core::info(id).colors) == core::Pooling::mean ? "the mean"
                                                                                     : "the largest |value|";
    const char* times = ui.notation() == core::Notation::unicode ? "×" : "x";
    return std::string("; a pixel: ") + of + " of " + ui.symbols().about + side + times + side;
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

namespace {
// Token labels only where rows (columns) are tokens: not on the weight matrices. In the drawn frame.
void set_token_labels(const AppState& state, MatrixRef ref, const MatrixViewOptions& o, HeatmapOptions& h) {
    const bool t = o.follow_orientation && state.column_vectors();
    // Queries' labels along Dim::n, keys' (Y's under cross-attention) along Dim::n_kv.
    const core::Session& session = state.shown().session;
    const std::vector<std::string>* row_tokens = o.token_rows ? core::token_labels(session, core::info(ref.id).rows)
                                                              : nullptr;
    const std::vector<std::string>* col_tokens = o.token_cols ? core::token_labels(session, core::info(ref.id).cols)
                                                              : nullptr;
    h.row_labels = t ? col_tokens : row_tokens;
    h.col_labels = t ? row_tokens : col_tokens;
}
}  // namespace

ImVec2 matrix_view_gutters(const AppState& state, MatrixRef ref, const MatrixViewOptions& o) {
    HeatmapOptions h;
    set_token_labels(state, ref, o, h);
    return heatmap_gutters(h);
}

ColLabelRoom matrix_view_col_labels(const AppState& state, const UiContext& ui, MatrixRef ref,
                                    const MatrixViewOptions& o) {
    HeatmapOptions h;
    set_token_labels(state, ref, o, h);
    return col_label_room(ui, h);
}

HeatmapHit matrix_view(AppState& state, UiContext& ui, MatrixRef ref, const MatrixViewOptions& o) {
    const core::Matrix* m = state.matrix(ref);
    if (!m) return {};
    ImGui::PushID(static_cast<int>(ref.id) * 1000 + ref.head);
    ImGui::BeginGroup();
    const bool t = o.follow_orientation && state.column_vectors();
    if (o.title) {
        // "Q⁽¹⁾  2×2", or just "Q⁽¹⁾" where the matrix is drawn narrower than that (heads side by side);
        // never wider than the matrix's room, so a row of thumbnails does not grow past its panel.
        const std::string label = state.label(ref);
        const std::string full = label + "  " + state.shape_text(ref, o.follow_orientation);
        std::string title = o.title_text.empty() ? full : o.title_text;
        const float room = o.viewport ? o.viewport->size.x : o.max_size.x;
        if (ImGui::CalcTextSize(title.c_str()).x > room) title = o.title_text.empty() ? label : o.title_text;
        title = fitted_text(title, room);  // cut with "…" where even that does not fit (the tooltip has it)
        const bool viewed = state.viewed() == ref;
        if (viewed) ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::viewed_title));
        const ImVec2 title_size{std::min(ImGui::CalcTextSize(title.c_str()).x, room), ImGui::GetTextLineHeight()};
        if (ImGui::Selectable(title.c_str(), viewed, 0, title_size)) state.view(ref);
        if (viewed) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: click to open it in the matrix viewer", full.c_str());
    }
    HeatmapOptions h;
    h.colormap = ui.colormap(ref.id);
    h.pooling = core::pooling_for(core::info(ref.id).colors);
    h.range = o.range ? *o.range : heatmap_range(ui, *m, ref.id, state.generation());
    h.max_size = o.max_size;
    h.max_cell = o.max_cell;
    h.generation = state.generation();
    h.shown_cells = o.shown_cells;
    h.viewport = o.viewport;
    h.transposed = t;
    set_token_labels(state, ref, o, h);
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
    if (ui.report) ui.report->heatmaps.push_back({report_name, hit.cells_min, hit.cells_max});
    if (ImGui::BeginPopupContextItem("colours")) {
        ImGui::TextDisabled("Colours of %s (every head, every view)", core::name(ref.id));
        scaling_menu_items(ui, ref.id, m->cols());
        // An exercise hides cells: nothing may copy them out.
        if (o.shown_cells < 0) {
            ImGui::Separator();
            copy_menu_items(*m);
            if (ImGui::MenuItem("Export...")) ui.request_export({ExportTarget::Kind::matrix, ref});
            ImGui::Separator();
            if (ImGui::MenuItem(state.session().pin ? "Compare with A (B - A)" : "Pin as A and compare this matrix"))
                ui.request_compare(ref);
        }
        ImGui::EndPopup();
    }
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
    return hit;
}

}  // namespace attnviz::app
