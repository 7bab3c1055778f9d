#include "panels/layer/heads_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>

#include "core/attention/session.hpp"
#include "core/base/format.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

HeadsGrid heads_grid(int heads, int rows, int cols, ImVec2 labels, ImVec2 avail, float title_h, float gap,
                     float min_cell, float max_cell) {
    const float r = static_cast<float>(std::max(rows, 1)), c = static_cast<float>(std::max(cols, 1));
    HeadsGrid best;
    for (int columns = 1; columns <= std::max(heads, 1); ++columns) {
        const int lines = (heads + columns - 1) / columns;
        const float box_w = (avail.x - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns);
        const float box_h = (avail.y - gap * static_cast<float>(lines - 1)) / static_cast<float>(lines) - title_h;
        const float cell = std::min({max_cell, (box_w - labels.x) / c, (box_h - labels.y) / r});
        // Larger cells win; where they reach max_cell either way, more heads a row (read across,
        // rather than a column of heads beside an empty panel).
        if (cell > best.cell + 0.01f || (cell >= max_cell && best.cell >= max_cell)) best = {columns, cell};
    }
    if (best.cell >= min_cell) return best;
    // Too many heads for the height: as many columns of min_cell as the width takes, scrolling down.
    const float box_w = labels.x + c * min_cell;
    const int columns = std::clamp(static_cast<int>((avail.x + gap) / (box_w + gap)), 1, std::max(heads, 1));
    const float by_width = ((avail.x - gap * static_cast<float>(columns - 1)) / columns - labels.x) / c;
    return {columns, std::clamp(by_width, min_cell, std::max(min_cell, max_cell))};
}

std::vector<std::string> summary_parts(const core::HeadSummary& s) {
    char h[32], distance[32], diag[32], first[32];
    // Two significant digits, but whole numbers from 10 on ("170", not "1.7e+02").
    const auto digits = [](double v) { return std::abs(v) >= 10 ? static_cast<int>(std::log10(std::abs(v))) + 1 : 2; };
    std::snprintf(h, sizeof h, "H %.*g", digits(s.mean_entropy), s.mean_entropy);
    std::snprintf(distance, sizeof distance, "|i-j| %.*g", digits(s.mean_distance), s.mean_distance);
    std::snprintf(diag, sizeof diag, "diag %.0f%%", s.diagonal_share * 100);
    std::snprintf(first, sizeof first, "first %.0f%%", s.first_share * 100);
    return {h, distance, diag, first};
}

std::string summary_line(const core::HeadSummary& s) {
    std::string line;
    for (const std::string& part : summary_parts(s)) line += (line.empty() ? "" : "  ") + part;
    return line;
}

namespace {

// The summary's parts in at most `most` lines no wider than `width`, two spaces apart on a line;
// what they do not hold ends the last in "…" (the tooltip has it all).
std::vector<std::string> summary_lines(const core::HeadSummary& s, float width, size_t most) {
    std::vector<std::string> lines;
    for (const std::string& part : summary_parts(s)) {
        if (!lines.empty() &&
            (lines.size() == most || ImGui::CalcTextSize((lines.back() + "  " + part).c_str()).x <= width))
            lines.back() += "  " + part;
        else
            lines.push_back(part);
    }
    for (std::string& line : lines) line = fitted_text(line, width);
    return lines;
}

// The font of the summaries: the small numbers font where there is one (two lines of it cost the
// cells less than two of the UI font).
ImFont* summary_font(const UiContext& ui) { return ui.fonts.numbers ? ui.fonts.numbers : ImGui::GetFont(); }

// Under a head's weights: its summary, wrapped to the heatmap's width; the meaning in a tooltip.
void summary_below(UiContext& ui, const core::HeadSummary& s, int head, float width, size_t lines, int keys) {
    const std::string line = summary_line(s);
    ImGui::BeginGroup();
    ImGui::PushFont(summary_font(ui));
    std::string shown;
    for (const std::string& part : summary_lines(s, width, lines)) {
        ImGui::TextDisabled("%s", part.c_str());
        shown += (shown.empty() ? "" : "  ") + part;
    }
    ImGui::PopFont();
    ImGui::EndGroup();
    ui.report_item("heads: summary " + std::to_string(head + 1) + (shown == line ? "" : " (cut)"));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Head %d: %s\nH: mean entropy of a row, in nats (0: each query on one key; ln %d = %.3g: "
            "uniform over every key)\n"
            "|i-j|: mean distance from query to key it attends to\n"
            "diag: mean weight of a token on itself; first: mean weight on the first token",
            head + 1, line.c_str(), keys, std::log(static_cast<double>(keys)));
}

// The switch between what the heads show: a combo as wide as its choice, so the controls keep to
// one line where they did.
void draw_shown_choice(UiContext& ui, HeadsPanel& panel) {
    static constexpr const char* names[] = {"weights", "norm-weighted", "scores"};
    ImGui::SetNextItemWidth(ImGui::CalcTextSize(names[static_cast<int>(panel.shown)]).x +
                            ImGui::GetFrameHeight() * 1.6f);
    if (ImGui::BeginCombo("##shown", names[static_cast<int>(panel.shown)])) {
        for (int k = 0; k < 3; ++k)
            if (ImGui::Selectable(names[k], static_cast<int>(panel.shown) == k))
                panel.shown = static_cast<HeadsShown>(k);
        ImGui::EndCombo();
    }
    ui.report_item("heads: shown");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "What each head shows:\n"
            "weights: its attention weights α_ij (after the softmax)\n"
            "norm-weighted: ‖α_ij·f_h(x_j)‖ = α_ij·‖f_h(x_j)‖ with f_h(x_j) = V_j·W_O⁽ʰ⁾ (V_j without the output\n"
            "  projection): how far key j moves query i's output, which a large weight on a small value does not\n"
            "  (Kobayashi et al. 2020); every head on one scale from 0\n"
            "scores: its scores (before the softmax)");
}

// Head h's norm-weighted attention as a heatmap in `room` (its cells up to `cell` pixels), titled;
// a hovered cell's ‖f_h(x_j)‖, α_ij and product in a tooltip (and the report). Returns the cells a
// pixel covers.
float draw_norm_weighted_head(const AppState& state, UiContext& ui, const NormWeighted& nw, int h, ImVec2 room,
                              float cell, core::ColorRange range, const std::string& title) {
    const core::Session& session = nw.snapshot->session;
    const core::Matrix& product = nw.heads[static_cast<std::size_t>(h)];  // n×m
    const core::Matrix& weights = nw.snapshot->trace.heads[static_cast<std::size_t>(h)].weights;
    const Eigen::VectorXd& value_norms = nw.value_norms[static_cast<std::size_t>(h)];
    const std::vector<std::string>& keys = core::key_tokens(session);
    const bool t = state.column_vectors();
    ImGui::TextUnformatted(fitted_text(title, room.x).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Head %d: norm-weighted attention α_ij·‖f_h(x_j)‖", h + 1);
    HeatmapOptions o;
    o.colormap = ui.colormap(core::MatrixId::weights);
    o.range = range;
    o.pooling = core::Pooling::mean;
    o.max_size = room;
    o.max_cell = cell;
    o.row_labels = t ? &keys : &session.tokens;
    o.col_labels = t ? &session.tokens : &keys;
    o.generation = nw.generation;
    o.transposed = t;
    const std::string name = "heads: norm-weighted " + std::to_string(h + 1);
    const HeatmapHit hit = heatmap(ui, name.c_str(), product, o, name.c_str());
    if (ui.report) ui.report->heatmaps.push_back({name, hit.cells_min, hit.cells_max});
    if (ui.report && product.size() <= 4096)  // the values drawn, for tests
        for (Eigen::Index i = 0; i < product.rows(); ++i)
            for (Eigen::Index j = 0; j < product.cols(); ++j)
                ui.report_value(name + " " + std::to_string(i) + " " + std::to_string(j), product(i, j));
    if (hit.hovered && hit.row >= 0 && hit.col >= 0) {
        const int i = t ? hit.col : hit.row, j = t ? hit.row : hit.col;
        ImGui::BeginTooltip();
        ImGui::Text("Head %d, query %d (%s), key %d (%s)", h + 1, i,
                    session.tokens[static_cast<std::size_t>(i)].c_str(), j, keys[static_cast<std::size_t>(j)].c_str());
        ImGui::Text("‖f_h(x_%d)‖ = %s", j, core::format_number(value_norms(j), 4).c_str());
        ImGui::Text("α_%d,%d = %s", i, j, core::format_number(weights(i, j), 4).c_str());
        ImGui::Text("α·‖f‖ = %s", core::format_number(product(i, j), 4).c_str());
        ImGui::TextDisabled("How far key %d moves query %d's output: its weight times the length of what it adds", j,
                            i);
        ImGui::EndTooltip();
        ui.report_value("heads: hovered head", h);
        ui.report_value("heads: hovered query", i);
        ui.report_value("heads: hovered key", j);
        ui.report_value("heads: hovered value norm", value_norms(j));
        ui.report_value("heads: hovered weight", weights(i, j));
        ui.report_value("heads: hovered product", product(i, j));
    }
    return hit.cells_per_pixel;
}

// What the axes are, on the controls' line: in words, or as arrows where the words do not fit
// (a line less for the heads); the words in its tooltip.
void draw_axes_note(const AppState& state, const UiContext& ui) {
    const char* axes = state.column_vectors() ? "rows: keys, columns: queries" : "rows: queries, columns: keys";
    const char* arrows = state.column_vectors() ? "↓ keys → queries" : "↓ queries → keys";
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const float after = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
    const char* shown =
        after + ImGui::CalcTextSize(axes).x <= right || ui.notation() != core::Notation::unicode ? axes : arrows;
    same_line_if_fits(ImGui::CalcTextSize(shown).x);
    ImGui::TextDisabled("%s", shown);
    if (shown != axes && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", axes);
}

// One range for all heads, so they can be compared: every head's statistics combined into `all`
// (norm-weighted, `nw` given: from 0 to the largest of every head).
core::ColorRange heads_range(const AppState& state, UiContext& ui, core::MatrixId id, const NormWeighted* nw, bool clip,
                             core::Scaling scaling, core::ValueStats& all) {
    if (nw) return core::ColorRange{0, nw->top > 0 ? nw->top : 1.0, false};
    for (const core::HeadTrace& head : state.trace().heads)
        all = core::combine(all, ui.heatmaps.stats(id == core::MatrixId::scores ? head.scores : head.weights,
                                                   state.generation(), clip || scaling == core::Scaling::percentile));
    return clip ? core::auto_outlier_range(all) : core::color_range(core::info(id).colors, scaling, all);
}

}  // namespace

void draw_heads_panel(AppState& state, UiContext& ui, HeadsPanel& panel) {
    const core::Config& c = state.shown_config();
    draw_shown_choice(ui, panel);
    const bool scores = panel.shown == HeadsShown::scores, norm = panel.shown == HeadsShown::norm_weighted;
    const NormWeighted* nw = norm ? panel.norm.get(state) : nullptr;
    if (norm && !nw) {
        ImGui::TextDisabled("Computing the norm-weighted attention...");
        return;
    }
    const core::MatrixId id = scores ? core::MatrixId::scores : core::MatrixId::weights;
    const float font = ImGui::GetFontSize();
    if (!norm) {
        same_line_if_fits(font * 9);
        scaling_combo(ui, id, c.kv_len(), font * 9);
    }
    draw_axes_note(state, ui);

    const core::Scaling scaling = ui.scaling(id, c.kv_len());
    const bool clip = !norm && ui.clips_outliers(id, c.kv_len());
    core::ValueStats all;
    MatrixViewOptions o;
    o.range = heads_range(state, ui, id, nw, clip, scaling, all);
    o.token_rows = o.token_cols = true;

    // The grid: the largest cells (up to 80 pixels) with which every head fits the panel, token
    // labels and titles included; each head's summary under it in as many lines as its width needs.
    const bool t = state.column_vectors();
    const int rows = t ? c.kv_len() : c.n, cols = t ? c.n : c.kv_len();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // The legend: its bar (0.7 of a line), its values (a line), the spacing after the grid.
    const float legend_h = ImGui::GetTextLineHeight() * 1.7f + 1 + ImGui::GetStyle().ItemSpacing.y;
    ImVec2 labels = matrix_view_gutters(state, {id, 0}, o);
    const float line = ImGui::GetTextLineHeightWithSpacing(), spacing = ImGui::GetStyle().ItemSpacing.y;
    const float gap = font;
    const ImVec2 room{avail.x, avail.y - legend_h};
    // Small heads keep cells that print their numbers (the grid then scrolls down); larger ones
    // shrink to fit the panel, each at least two ems a side.
    const int side = std::max({rows, cols, 1});
    const float min_cell = side <= 16 ? std::round(font * 1.25f) : font * 2 / static_cast<float>(side);
    if (side > 16) labels.x = 0;  // cells under a line's height show no row labels (heatmap)
    // A head's column: its heatmap, and under it its summary, whole on two lines where the column is
    // narrow, unless that costs more than a sixth of the cells and leaves them under 1.75 ems (many
    // heads of many tokens): then on one line, cut (its tooltip has it all). Planned without a vertical scrollbar, then
    // again with one when the grid needs it.
    // Each head's summary under its weights, made with the trace on its worker (Snapshot).
    const std::vector<core::HeadSummary>& head_summaries = state.shown().head_summaries;
    const bool summaries = panel.shown == HeadsShown::weights && !head_summaries.empty();
    const auto column_w = [&](const HeadsGrid& g, float width) {
        return (width - gap * static_cast<float>(g.columns - 1)) / static_cast<float>(g.columns);
    };
    const float summary_line_h = summary_font(ui)->FontSize + spacing;
    const auto grid_with = [&](float width, size_t lines) {
        return heads_grid(c.heads, rows, cols, labels, {width, room.y},
                          line + summary_line_h * static_cast<float>(lines) + spacing, gap, min_cell, font * 5);
    };
    struct Plan {
        HeadsGrid grid;
        size_t lines;
    };
    const auto plan_for = [&](float width) -> Plan {
        if (!summaries) return {grid_with(width, 0), 0};
        const HeadsGrid one = grid_with(width, 1);
        ImGui::PushFont(summary_font(ui));
        const size_t lines = summary_lines(head_summaries.front(), column_w(one, width), 2).size();
        ImGui::PopFont();
        if (lines <= 1) return {one, 1};
        const HeadsGrid two = grid_with(width, lines);
        return two.cell >= std::min(one.cell * 0.85f, font * 1.75f) ? Plan{two, lines} : Plan{one, 1};
    };
    Plan plan = plan_for(room.x);
    const int grid_rows = (c.heads + plan.grid.columns - 1) / plan.grid.columns;
    const float grid_h = static_cast<float>(grid_rows) *
                             (line + summary_line_h * static_cast<float>(plan.lines) + labels.y +
                              static_cast<float>(rows) * plan.grid.cell + spacing * 2) +
                         static_cast<float>(grid_rows - 1) * gap;
    const float width = grid_h > room.y ? room.x - ImGui::GetStyle().ScrollbarSize : room.x;  // a scrollbar's room
    if (width < room.x) plan = plan_for(width);
    const HeadsGrid& grid = plan.grid;
    const float column = std::max(labels.x + static_cast<float>(cols) * grid.cell, column_w(grid, width));
    o.max_size = {column, labels.y + static_cast<float>(rows) * grid.cell};  // the title may take the column
    o.max_cell = grid.cell;
    ImGui::BeginChild("heads", {0, room.y});
    const float x0 = ImGui::GetCursorPosX();
    float cells_per_pixel = 1;
    for (int h = 0; h < c.heads; ++h) {
        if (h % grid.columns) {
            ImGui::SameLine();
            ImGui::SetCursorPosX(x0 + static_cast<float>(h % grid.columns) * (column + gap));
        }
        ImGui::BeginGroup();
        // A column too narrow for "weights⁽¹²⁾" is titled by the head's number (its tooltip names it).
        const std::string title = norm ? "norm-weighted " + std::to_string(h + 1) : state.label({id, h});
        o.title_text = ImGui::CalcTextSize(title.c_str()).x > column ? std::to_string(h + 1) : "";
        if (norm)
            cells_per_pixel = std::max(
                cells_per_pixel,
                draw_norm_weighted_head(state, ui, *nw, h, {column - labels.x, static_cast<float>(rows) * grid.cell},
                                        grid.cell, *o.range, o.title_text.empty() ? title : o.title_text));
        else
            cells_per_pixel = std::max(cells_per_pixel, matrix_view(state, ui, {id, h}, o).cells_per_pixel);
        if (summaries && h < static_cast<int>(head_summaries.size()))
            summary_below(ui, head_summaries[static_cast<size_t>(h)], h, column, plan.lines, c.kv_len());
        ImGui::EndGroup();
        if ((h + 1) % grid.columns == 0 && h + 1 < c.heads) ImGui::Dummy({0, gap - 2 * spacing});
    }
    ImGui::EndChild();
    const std::string note = norm ? "norm-weighted α·‖f_h(x_j)‖, one scale for every head" +
                                        pooling_note(ui, core::MatrixId::weights, cells_per_pixel)
                                  : std::string(core::scaling_name(scaling)) +
                                        (clip && core::max_is_outlier(all) ? ", top at the 99th percentile" : "") +
                                        pooling_note(ui, id, cells_per_pixel);
    colormap_legend(ui.colormap(id), *o.range, std::min(avail.x, font * 30), note.c_str());
}

}  // namespace attnviz::app
