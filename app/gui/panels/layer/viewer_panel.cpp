#include "panels/layer/viewer_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/base/format.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

// A cell this large shows its number in the small numbers font.
constexpr float readable_cell = 64;

// Keeps the view on the matrix: a matrix smaller than the view is centred, a larger one can be
// moved until its edge reaches the view's edge.
void keep_in_view(ViewerPanel& p, int rows, int cols, ImVec2 view) {
    const auto clamp_axis = [&](double& first, int cells, float pixels) {
        const double shown = static_cast<double>(pixels) / p.cell;  // cells the view shows along this axis
        if (shown >= cells)
            first = (cells - shown) / 2;  // smaller than the view: centred
        else
            first = std::clamp(first, 0.0, cells - shown);
    };
    clamp_axis(p.row0, rows, view.y);
    clamp_axis(p.col0, cols, view.x);
}

}  // namespace

core::Result<int> goto_index(const std::string& text, const std::vector<std::string>* labels, int count,
                             const std::string& axis) {
    const std::string plural = axis == "row" ? "rows" : "columns";
    const bool number = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (number) {
        const long k = text.size() > 9 ? -1 : std::stol(text);
        if (k >= 0 && k < count) return core::Result<int>::ok(static_cast<int>(k));
        return core::Result<int>::fail(
            {{"", axis + " " + bounded_text(text, 12) + " is past the matrix: its " + std::to_string(count) + " " +
                      plural + " count from 0 to " + std::to_string(count - 1)}});
    }
    if (labels)
        for (int k = 0; k < count && k < static_cast<int>(labels->size()); ++k)
            if ((*labels)[static_cast<size_t>(k)] == text) return core::Result<int>::ok(k);
    return core::Result<int>::fail(
        {{"", quoted_label(text) + " is no " + axis + " number (from 0)" + (labels ? " and no token's label" : "")}});
}

float fit_cell(int rows, int cols, ImVec2 view, float max_cell) {
    return std::max(1e-3f, std::min({max_cell, view.x / std::max(cols, 1), view.y / std::max(rows, 1)}));
}

void viewer_zoom(ViewerPanel& p, float factor, ImVec2 at, int rows, int cols, ImVec2 view) {
    const float fitted = fit_cell(rows, cols, view, viewer_max_cell);
    const float before = p.cell > 0 ? p.cell : fitted;
    if (p.cell <= 0) {  // leaving the fitted view: start from where it shows the matrix
        p.cell = fitted;
        keep_in_view(p, rows, cols, view);
    }
    const double at_row = p.row0 + static_cast<double>(at.y) / before;
    const double at_col = p.col0 + static_cast<double>(at.x) / before;
    p.cell = std::clamp(before * factor, fitted, std::max(fitted, viewer_max_cell));
    p.row0 = at_row - static_cast<double>(at.y) / p.cell;
    p.col0 = at_col - static_cast<double>(at.x) / p.cell;
    keep_in_view(p, rows, cols, view);
    if (p.cell <= fitted) p.cell = 0;  // all the way out: fitted again (follows the panel's size)
}

void viewer_pan(ViewerPanel& p, ImVec2 delta, int rows, int cols, ImVec2 view) {
    if (p.cell <= 0) return;  // fitted: the whole matrix is in view
    p.row0 -= static_cast<double>(delta.y) / p.cell;
    p.col0 -= static_cast<double>(delta.x) / p.cell;
    keep_in_view(p, rows, cols, view);
}

void viewer_center(ViewerPanel& p, int row, int col, int rows, int cols, ImVec2 view) {
    const float fitted = fit_cell(rows, cols, view, viewer_max_cell);
    p.cell = std::max({p.cell, fitted, std::min(readable_cell, viewer_max_cell)});
    p.row0 = row + 0.5 - static_cast<double>(view.y) / p.cell / 2;
    p.col0 = col + 0.5 - static_cast<double>(view.x) / p.cell / 2;
    keep_in_view(p, rows, cols, view);
}

HeatmapOptions::Viewport viewer_viewport(const ViewerPanel& p, int rows, int cols, ImVec2 view) {
    if (p.cell <= 0) {
        ViewerPanel fitted = p;
        fitted.cell = fit_cell(rows, cols, view, viewer_max_cell);
        keep_in_view(fitted, rows, cols, view);
        return {fitted.row0, fitted.col0, fitted.cell, view};
    }
    return {p.row0, p.col0, p.cell, view};
}

namespace {

// The matrix shown: a combo of those that exist in this configuration, and its head.
void draw_matrix_choice(AppState& state) {
    const MatrixRef ref = state.viewed();
    const core::Config& c = state.shown_config();
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(font * 8);
    if (ImGui::BeginCombo("##matrix", core::name(ref.id))) {
        for (core::MatrixId id : core::all_matrix_ids) {
            if (!core::exists(id, c)) continue;
            if (ImGui::Selectable(core::name(id), id == ref.id)) state.view({id, ref.head});
        }
        ImGui::EndCombo();
    }
    if (core::is_per_head(ref.id) && c.heads > 1) {
        same_line_if_fits(font * 7 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("head").x);
        ImGui::SetNextItemWidth(font * 7);
        int shown = ref.head + 1;
        if (ImGui::SliderInt("head", &shown, 1, c.heads)) state.view({ref.id, shown - 1});
    }
}

// The matrix in view this frame: rows and columns as drawn, and the cells' area the zoom works on.
struct ViewedMatrix {
    MatrixRef ref;
    bool transposed = false;
    int rows = 0, cols = 0;
    ImVec2 cells;
};

// Zoom: out, in, fitted.
void draw_zoom_buttons(UiContext& ui, ViewerPanel& panel, const ViewedMatrix& v) {
    const ImVec2 middle{v.cells.x / 2, v.cells.y / 2};
    if (ImGui::SmallButton("-")) viewer_zoom(panel, 1 / 1.5f, middle, v.rows, v.cols, v.cells);
    ui.report_item("viewer: zoom out");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Zoom out (or the mouse wheel over the matrix)");
    ImGui::SameLine();
    if (ImGui::SmallButton("+")) viewer_zoom(panel, 1.5f, middle, v.rows, v.cols, v.cells);
    ui.report_item("viewer: zoom in");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Zoom in (or the mouse wheel); drag the matrix to move it");
    ImGui::SameLine();
    if (ImGui::SmallButton("fit")) panel.cell = 0;
    ui.report_item("viewer: fit");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The whole matrix in view");
}

// "go": the typed row and column (numbers or tokens' labels) zoomed to, centred and selected.
void go_to_cell(AppState& state, ViewerPanel& panel, const ViewedMatrix& v, const std::vector<std::string>* row_labels,
                const std::vector<std::string>* col_labels) {
    const MatrixRef ref = v.ref;
    const bool t = v.transposed;
    const core::Result<int> r = goto_index(panel.goto_row, row_labels, v.rows, "row");
    const core::Result<int> c = goto_index(panel.goto_col, col_labels, v.cols, "column");
    if (!r || !c) {
        state.set_message("Go to in " + state.label(ref) + " (" + core::format_shape(v.rows, v.cols) +
                              "): " + (!r ? r : c).problems.front().message + ".",
                          true);
        return;
    }
    const int row = *r.value, col = *c.value;
    viewer_center(panel, row, col, v.rows, v.cols, v.cells);
    const CellRef cell{ref, t ? col : row, t ? row : col};
    state.select(cell);
    // Which token each number is: rows and columns count from 0, labels (x1, …) from 1.
    const auto token = [](const std::vector<std::string>* labels, int k) {
        return labels && k < static_cast<int>(labels->size()) ? " (" + quoted_label((*labels)[k]) + ")" : std::string();
    };
    state.set_message(state.label(ref) + ": row " + std::to_string(row) + token(row_labels, row) + ", column " +
                          std::to_string(col) + token(col_labels, col) + "; rows and columns count from 0",
                      false);
}

// "go to [row] [col] go" as one group, on the next line when the panel is narrow.
void draw_go_to(AppState& state, UiContext& ui, ViewerPanel& panel, const ViewedMatrix& v) {
    const float font = ImGui::GetFontSize();
    const ImGuiStyle& style = ImGui::GetStyle();
    same_line_if_fits(ImGui::CalcTextSize("go to").x + font * 7 + ImGui::CalcTextSize("go").x +
                      style.FramePadding.x * 2 + style.ItemSpacing.x * 3);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("go to");
    ImGui::SameLine();
    const core::Session& session = state.shown().session;
    const core::MatrixInfo& mi = core::info(v.ref.id);
    const std::vector<std::string>* row_labels = core::token_labels(session, v.transposed ? mi.cols : mi.rows);
    const std::vector<std::string>* col_labels = core::token_labels(session, v.transposed ? mi.rows : mi.cols);
    for (std::string* field : {&panel.goto_row, &panel.goto_col}) {
        const bool row = field == &panel.goto_row;
        if (!row) ImGui::SameLine();
        ImGui::SetNextItemWidth(font * 3.5f);
        ImGui::InputTextWithHint(row ? "##row" : "##col", row ? "row" : "col", field);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s, counted from 0%s", row ? "Row" : "Column",
                              (row ? row_labels : col_labels) ? ", or a token's label (x1 is 0)" : "");
    }
    ImGui::SameLine();
    const bool go = ImGui::SmallButton("go");
    ui.report_item("viewer: go");
    if (go) go_to_cell(state, panel, v, row_labels, col_labels);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Zoom to the cell, centre it and select it");
}

// The hovered cell, readable even when cells are smaller than a pixel.
void draw_hovered_cell(const AppState& state, ViewerPanel& panel, const ViewedMatrix& v, const core::Matrix& m,
                       const HeatmapHit& hit) {
    const bool t = v.transposed;
    if (hit.hovered) {
        panel.hover_row = hit.row;
        panel.hover_col = hit.col;
    } else if (!ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
        panel.hover_row = panel.hover_col = -1;
    }
    if (panel.hover_row >= 0 && panel.hover_row < v.rows && panel.hover_col >= 0 && panel.hover_col < v.cols) {
        const int r = t ? panel.hover_col : panel.hover_row, col = t ? panel.hover_row : panel.hover_col;
        const core::Session& session = state.shown().session;
        const core::MatrixInfo& mi = core::info(v.ref.id);
        auto token = [&](core::Dim dim, int k) {
            const std::vector<std::string>* labels = core::token_labels(session, dim);
            return labels && k < static_cast<int>(labels->size()) ? " " + quoted_label((*labels)[k]) : std::string();
        };
        const std::string text = "row " + std::to_string(panel.hover_row) +
                                 token(t ? mi.cols : mi.rows, panel.hover_row) + ", column " +
                                 std::to_string(panel.hover_col) + token(t ? mi.rows : mi.cols, panel.hover_col) +
                                 ": " + core::format_number(m(r, col), 6);
        ImGui::TextWrapped("%s", text.c_str());
    } else {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Hover a cell for its row, column and value.");
        ImGui::PopStyleColor();
    }
}

// The selected cell's arithmetic, in a child of its own.
void draw_arithmetic(const AppState& state) {
    ImGui::BeginChild("arithmetic");
    if (const core::Explanation* e = state.selected_explanation()) {
        ImGui::PushTextWrapPos(0);
        draw_explanation(*e);
        ImGui::PopTextWrapPos();
    } else {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("Click any cell to keep its arithmetic here.");
        ImGui::PopTextWrapPos();
    }
    ImGui::EndChild();
}

}  // namespace

void draw_viewer_panel(AppState& state, UiContext& ui, ViewerPanel& panel) {
    const float font = ImGui::GetFontSize();
    draw_matrix_choice(state);
    const MatrixRef ref = state.viewed();
    const core::Matrix* m = state.matrix(ref);
    if (!m) {
        ImGui::TextDisabled("%s does not exist in this configuration.", state.label(ref).c_str());
        return;
    }
    if (!(panel.zoomed == ref)) {  // another matrix: fitted, from its top left
        panel.zoomed = ref;
        panel.cell = 0;
        panel.row0 = panel.col0 = 0;
    }
    const bool t = state.column_vectors();
    const int rows = static_cast<int>(t ? m->cols() : m->rows()), cols = static_cast<int>(t ? m->rows() : m->cols());

    MatrixViewOptions o;
    o.token_rows = o.token_cols = true;  // where rows / columns are tokens
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Room for the toolbar, the hover line, the legend and, when a cell is selected, its arithmetic.
    // (The arithmetic scrolls in its own child: the matrix keeps most of the room.)
    const float text_h = state.selection() ? std::min(avail.y * 0.25f, font * 6.0f) : font * 2.5f;
    const float tools_h = ImGui::GetFrameHeightWithSpacing();
    // The legend (with its note) and the scaling's combo on one line where there is room for both,
    // else the combo under the legend.
    const float combo_w = font * 9;
    const bool one_line = avail.x >= font * 22 + combo_w;
    const float view_h = std::max(font * 6.5f, avail.y - text_h - tools_h - font * 4.2f -
                                                   (one_line ? 0 : ImGui::GetFrameHeightWithSpacing()));
    const ImVec2 gutters = matrix_view_gutters(state, ref, o);
    const ImVec2 region{std::max(avail.x, font * 8), view_h - ImGui::GetTextLineHeightWithSpacing()};
    const ImVec2 cells{std::max(region.x - gutters.x, 1.0f), std::max(region.y - gutters.y, 1.0f)};
    const ViewedMatrix v{ref, t, rows, cols, cells};

    // Zoom and "go to cell".
    draw_zoom_buttons(ui, panel, v);
    draw_go_to(state, ui, panel, v);
    // Last on the line, so that its changing width does not move the buttons.
    ImGui::SameLine(0, font);
    ImGui::TextDisabled("%s", panel.cell > 0 ? (core::format_number(panel.cell, 3) + " px/cell").c_str() : "fitted");

    // The zoom works on the cells' area; the heatmap gets the whole region and puts the labels around it.
    o.viewport = viewer_viewport(panel, rows, cols, cells);
    o.viewport->size = region;
    ImGui::BeginChild("view", {0, view_h}, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    const HeatmapHit hit = matrix_view(state, ui, ref, o);
    // The mouse wheel zooms around the pointer; a drag moves the matrix.
    if (ImGui::IsItemHovered()) {
        const ImGuiIO& io = ImGui::GetIO();
        const ImVec2 at{io.MousePos.x - hit.cells_min.x, io.MousePos.y - hit.cells_min.y};
        if (io.MouseWheel != 0) viewer_zoom(panel, std::pow(1.25f, io.MouseWheel), at, rows, cols, cells);
    }
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f))
        viewer_pan(panel, ImGui::GetIO().MouseDelta, rows, cols, cells);
    ImGui::EndChild();
    draw_hovered_cell(state, panel, v, *m, hit);

    const core::ColorRange range = heatmap_range(ui, *m, ref.id, state.generation());
    const float legend_w = one_line ? std::min(avail.x - combo_w - font, font * 30) : avail.x;
    const bool clipped = ui.clips_outliers(ref.id, m->cols()) &&
                         core::max_is_outlier(ui.heatmaps.stats(*m, state.generation(), true));
    const std::string note = std::string(clipped ? "top: 99th pct" : "") +
                             pooling_note(ui, ref.id, hit.cells_per_pixel);
    colormap_legend(ui.colormap(ref.id), range, legend_w,
                    note.empty() ? nullptr : note.c_str() + (note.starts_with("; ") ? 2 : 0));
    if (one_line) ImGui::SameLine(0, font);
    scaling_combo(ui, ref.id, m->cols(), combo_w);
    draw_arithmetic(state);
}

}  // namespace attnviz::app
