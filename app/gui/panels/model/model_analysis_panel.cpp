#include "panels/model/model_analysis_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// A stream's name: row 0 the embeddings, row l the output of block l − 1.
std::string stream_name(int l) { return l == 0 ? "embeddings" : "layer " + std::to_string(l - 1); }

// The tokens as the grids' columns show them.
std::vector<std::string> visible_tokens(const ModelResults& r) {
    std::vector<std::string> out;
    for (const std::string& t : r.texts) out.push_back(visible_token(t));
    return out;
}

// A grid's measures: a label column, a header row, cells at least `min_cell` wide (else it scrolls).
struct Grid {
    ImVec2 origin;
    float label_w = 0, header_h = 0, cell_w = 0, cell_h = 0;
};

Grid grid_for(int rows, int cols, float min_cell_w, float min_cell_h, float label_w) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    Grid g;
    g.origin = ImGui::GetCursorScreenPos();
    g.label_w = label_w;
    g.header_h = ImGui::GetTextLineHeightWithSpacing();
    g.cell_w = std::max(min_cell_w, std::floor((avail.x - label_w - ImGui::GetStyle().ScrollbarSize) / cols));
    g.cell_h = std::max(min_cell_h, std::floor((avail.y - g.header_h) / rows));
    g.cell_h = std::min(g.cell_h, std::max(min_cell_h, g.cell_w));
    return g;
}

// The tokens along the top of a grid, and the names of its rows at its left.
void draw_labels(const Grid& g, const std::vector<std::string>& columns, const std::vector<std::string>& rows) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    for (size_t j = 0; j < columns.size(); ++j)
        draw->AddText({g.origin.x + g.label_w + static_cast<float>(j) * g.cell_w + 2, g.origin.y}, dim,
                      fitted_text(columns[j], g.cell_w - 4).c_str());
    for (size_t i = 0; i < rows.size(); ++i)
        draw->AddText({g.origin.x, g.origin.y + g.header_h + static_cast<float>(i) * g.cell_h +
                                       (g.cell_h - ImGui::GetFontSize()) / 2},
                      dim, fitted_text(rows[i], g.label_w - 4).c_str());
}

// A cell's rectangle; whether the pointer is on it.
bool cell(const Grid& g, int i, int j, ImVec2& a, ImVec2& b) {
    a = {g.origin.x + g.label_w + static_cast<float>(j) * g.cell_w,
         g.origin.y + g.header_h + static_cast<float>(i) * g.cell_h};
    b = {a.x + g.cell_w - 1, a.y + g.cell_h - 1};
    return ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b);
}

// Reserves the grid's room in the window (for scrolling).
void end_grid(const Grid& g, int rows, int cols) {
    ImGui::SetCursorScreenPos(g.origin);
    ImGui::Dummy({g.label_w + static_cast<float>(cols) * g.cell_w, g.header_h + static_cast<float>(rows) * g.cell_h});
}

void draw_lens(const ModelResults& r, const ModelRun& run, core::Colormap map) {
    if (!r.lens) {
        if (r.lens_to_come)
            ImGui::TextDisabled("Computing the logit lens (every stream and position through the LM head)...");
        else
            ImGui::TextWrapped("No logit lens: %s.", r.lens_problem.c_str());
        return;
    }
    const model::LogitLens& lens = *r.lens;
    const int rows = static_cast<int>(lens.ids.rows()), cols = static_cast<int>(lens.ids.cols());
    std::vector<std::string> names;
    for (int l = 0; l < rows; ++l) names.push_back(stream_name(l));
    const float font = ImGui::GetFontSize();
    ImGui::BeginChild("lens", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
    const Grid g = grid_for(rows, cols, font * 3.5f, ImGui::GetTextLineHeightWithSpacing(), font * 6);
    draw_labels(g, visible_tokens(r), names);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (int l = 0; l < rows; ++l)
        for (int i = 0; i < cols; ++i) {
            ImVec2 a, b;
            const bool hovered = cell(g, rows - 1 - l, i, a, b);  // the model's prediction at the bottom
            if (!ImGui::IsRectVisible(a, b)) continue;            // scrolled out of view: nothing to draw
            const double p = lens.p(l, i);
            const ImU32 fill = colormap_color(map, static_cast<float>(p));
            draw->AddRectFilled(a, b, fill);
            const ImU32 ink = text_color_on(fill);
            const std::string text = run.token_text(lens.ids(l, i));
            draw->AddText({a.x + 2, a.y + (g.cell_h - font) / 2}, ink,
                          fitted_text(visible_token(text), g.cell_w - 5).c_str());
            if (hovered)
                ImGui::SetTooltip("%s, position %d (%s):\ntop token %s (id %d), p = %.4f", stream_name(l).c_str(), i,
                                  quoted_label(r.texts[static_cast<size_t>(i)]).c_str(), quoted_label(text).c_str(),
                                  lens.ids(l, i), p);
        }
    end_grid(g, rows, cols);
    ImGui::EndChild();
}

// A heatmap of `m` on 0..hi (rows named `rows`, columns the tokens), each value in its tooltip.
void draw_heatmap(const core::Matrix& m, double hi, const std::vector<std::string>& columns,
                  const std::vector<std::string>& rows, const char* what, core::Colormap map) {
    const float font = ImGui::GetFontSize();
    ImGui::BeginChild(what, {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
    const Grid g = grid_for(static_cast<int>(m.rows()), static_cast<int>(m.cols()), font * 0.8f, font * 0.8f, font * 6);
    draw_labels(g, columns, rows);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            ImVec2 a, b;
            const bool hovered = cell(g, static_cast<int>(i), static_cast<int>(j), a, b);
            if (!ImGui::IsRectVisible(a, b)) continue;
            draw->AddRectFilled(a, b, colormap_color(map, static_cast<float>(m(i, j) / hi)));
            if (hovered)
                ImGui::SetTooltip("%s\n%s, position %d (%s): %.4g", what, rows[static_cast<size_t>(i)].c_str(),
                                  static_cast<int>(j), quoted_label(columns[static_cast<size_t>(j)]).c_str(), m(i, j));
        }
    end_grid(g, static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    ImGui::EndChild();
}

void draw_rollout(ModelAnalysisPanel& p, const ModelResults& r, core::Colormap map) {
    const int blocks = static_cast<int>(r.rollout.size());
    if (blocks == 0) return;
    int& layer = p.rollout_layer;
    if (layer < 0 || layer >= blocks) layer = blocks - 1;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("after layer");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    ImGui::SliderInt("##rollout layer", &layer, 0, blocks - 1);
    layer = std::clamp(layer, 0, blocks - 1);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Attention rollout after this layer (Abnar & Zuidema 2020): row i, how much of position i "
            "comes from each input position; rows sum to 1");
    const std::vector<std::string> tokens = visible_tokens(r);  // rows and columns named alike (·the)
    draw_heatmap(r.rollout[static_cast<size_t>(layer)], 1.0, tokens, tokens, "Attention rollout", map);
}

void draw_norms(const ModelResults& r, core::Colormap map) {
    std::vector<std::string> rows;
    for (Eigen::Index l = 0; l < r.norms.rows(); ++l) rows.push_back(stream_name(static_cast<int>(l)));
    const double hi = r.norms.size() ? r.norms.maxCoeff() : 1.0;
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("||x|| per stream and position; colours 0 to %.3g", hi);
    ImGui::PopTextWrapPos();
    draw_heatmap(r.norms, hi > 0 ? hi : 1.0, visible_tokens(r), rows, "Residual stream norm", map);
}

// The numbers of every view in the draw report (tests compare them with a reference).
void report(UiContext& ui, const ModelResults& r) {
    if (!ui.report) return;
    if (r.lens)
        for (Eigen::Index l = 0; l < r.lens->ids.rows(); ++l)
            for (Eigen::Index i = 0; i < r.lens->ids.cols(); ++i) {
                const std::string at = std::to_string(l) + " " + std::to_string(i);
                ui.report_value("lens id " + at, r.lens->ids(l, i));
                ui.report_value("lens p " + at, r.lens->p(l, i));
            }
    for (size_t l = 0; l < r.rollout.size(); ++l)
        for (Eigen::Index i = 0; i < r.rollout[l].rows(); ++i)
            for (Eigen::Index j = 0; j < r.rollout[l].cols(); ++j)
                ui.report_value("rollout " + std::to_string(l) + " " + std::to_string(i) + " " + std::to_string(j),
                                r.rollout[l](i, j));
    for (Eigen::Index l = 0; l < r.norms.rows(); ++l)
        for (Eigen::Index i = 0; i < r.norms.cols(); ++i)
            ui.report_value("norm " + std::to_string(l) + " " + std::to_string(i), r.norms(l, i));
}

}  // namespace

void draw_model_analysis_panel(AppState&, UiContext& ui, ModelAnalysisPanel& p, const ModelRun& run) {
    const ModelResults* r = run.results();
    if (!r) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("%s", run.opening().empty()
                                      ? "No model is open. File > Open model... (a Hugging Face model folder) shows "
                                        "here the logit lens, attention rollout and residual-stream norms of its run."
                                      : "Opening the model...");
        ImGui::PopTextWrapPos();
        return;
    }
    const bool no_lens = !r->lens && !r->lens_to_come;
    if (no_lens && p.view == ModelAnalysisPanel::lens) p.view = ModelAnalysisPanel::rollout;
    ImGui::BeginDisabled(no_lens);
    ImGui::RadioButton("Logit lens", &p.view, ModelAnalysisPanel::lens);
    ImGui::EndDisabled();
    ui.report_item("analysis: lens");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", !no_lens ? "The top token of each layer's residual stream through the final norm and "
                                           "the LM head (rows: the stream after each layer; columns: positions); "
                                           "shade: its p"
                                         : ("No logit lens: " + r->lens_problem).c_str());
    ImGui::SameLine();
    ImGui::RadioButton("Attention rollout", &p.view, ModelAnalysisPanel::rollout);
    ui.report_item("analysis: rollout");
    ImGui::SameLine();
    ImGui::RadioButton("Residual norms", &p.view, ModelAnalysisPanel::norms);
    ui.report_item("analysis: norms");
    if (run.computing() || r->lens_to_come) {
        ImGui::SameLine();
        ImGui::TextDisabled("computing...");
    }
    report(ui, *r);
    switch (p.view) {
        default:
        case ModelAnalysisPanel::lens:
            ImGui::TextDisabled("Each stream's top next token (hover: token and p); shade: its p");
            draw_lens(*r, run, ui.look.weights);
            break;
        case ModelAnalysisPanel::rollout: draw_rollout(p, *r, ui.look.weights); break;
        case ModelAnalysisPanel::norms: draw_norms(*r, ui.look.weights); break;
    }
}

}  // namespace attnviz::app
