#include "panels/layer/pipeline_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <vector>

#include "core/render/pipeline_layout.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// A node of the layout, as placed in the window.
struct Place {
    ImVec2 min{}, max{};
};

ImVec2 bottom(const Place& p) { return {(p.min.x + p.max.x) / 2, p.max.y}; }
ImVec2 top(const Place& p) { return {(p.min.x + p.max.x) / 2, p.min.y}; }

// A one-line node "Q⁽¹⁾ 2×2" ("Q⁽¹⁾" alone where the shape does not fit; the tooltip has it);
// returns true when clicked.
bool node(const AppState& state, const UiContext& ui, const core::PipelineNode& n, Place& p, ImVec2 pos, float width) {
    std::string text = n.caption();
    if (ImGui::CalcTextSize(text.c_str()).x + 6 > width) text = fitted_text(n.label, width - 6);
    p.min = pos;
    p.max = {pos.x + width, pos.y + ImGui::GetTextLineHeight() + 6};
    ImGui::SetCursorScreenPos(p.min);
    ImGui::PushID(static_cast<int>(n.ref.id));
    const bool clicked = ImGui::InvisibleButton("node", {width, p.max.y - p.min.y});
    ImGui::PopID();
    const bool hovered = ImGui::IsItemHovered();
    const bool viewed = state.viewed() == n.ref;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 fill = ui.color(viewed ? Color::node_viewed : hovered ? Color::node_hovered : Color::node);
    draw->AddRectFilled(p.min, p.max, fill, 5);
    draw->AddRect(p.min, p.max, ui.color(Color::node_border), 5);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    draw->AddText({p.min.x + std::max(3.0f, (width - ts.x) / 2), p.min.y + 3}, ui.color(Color::node_text),
                  text.c_str());
    if (hovered)
        ImGui::SetTooltip("%s = %s, %s\nClick to open it in the matrix viewer.", n.label.c_str(), n.operation.c_str(),
                          n.shape.c_str());
    return clicked;
}

// Lines and arrowheads grow with the text (ui.px).
void arrow(const UiContext& ui, ImU32 color, ImVec2 from, ImVec2 to) {
    const auto px = [&ui](float pixels) { return ui.px(pixels); };
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddLine(from, {to.x, to.y - px(5)}, color, px(1.5f));
    draw->AddTriangleFilled({to.x - px(4), to.y - px(6)}, {to.x + px(4), to.y - px(6)}, to, color);
}

// A small grey note beside an arrow.
void annotate(ImU32 color, ImVec2 at, const std::string& text) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddText({at.x + 8, at.y - ImGui::GetTextLineHeight() / 2}, color, text.c_str());
}

// V joins at the weighted sum: a line down the right side (at most at `right`) into Z.
void side_line(const UiContext& ui, ImU32 color, const Place& v, const Place& z, float right, float gap) {
    const auto px = [&ui](float pixels) { return ui.px(pixels); };
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 v_out = bottom(v);
    const float side = std::min(right, v.max.x - 8);
    const float z_mid = (z.min.y + z.max.y) / 2;
    draw->AddLine(v_out, {v_out.x, v_out.y + gap / 2}, color, px(1.5f));
    draw->AddLine({v_out.x, v_out.y + gap / 2}, {side, v_out.y + gap / 2}, color, px(1.5f));
    draw->AddLine({side, v_out.y + gap / 2}, {side, z_mid}, color, px(1.5f));
    draw->AddLine({side, z_mid}, {z.max.x + px(6), z_mid}, color, px(1.5f));
    draw->AddTriangleFilled({z.max.x + px(6), z_mid - px(4)}, {z.max.x + px(6), z_mid + px(4)}, {z.max.x, z_mid},
                            color);
}

}  // namespace

void draw_pipeline_panel(AppState& state, UiContext& ui, PipelinePanel& panel) {
    const core::Config& c = state.shown_config();
    if (const CellRef* selected = state.selection(); selected && panel.followed != *selected) {
        if (core::is_per_head(selected->matrix.id)) panel.head = selected->matrix.head;
        panel.followed = *selected;
    }
    panel.head = std::clamp(panel.head, 0, c.heads - 1);
    if (c.heads > 1) {
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
        int shown = panel.head + 1;
        if (ImGui::SliderInt("head", &shown, 1, c.heads)) panel.head = shown - 1;
    }
    // The pipeline's layout (core/render/pipeline_layout.hpp) for the head shown, in the shown
    // convention, without weight nodes: their steps are on the arrows.
    core::PipelineLayoutOptions options;
    options.notation = ui.notation();
    options.column_vectors = state.column_vectors();
    options.weight_nodes = false;
    options.heads = {panel.head};
    const Snapshot& shown = state.shown();
    const core::PipelineLayout layout = core::pipeline_layout(shown.session, shown.trace, options);
    const std::string& convention = layout.convention;
    if (c.heads > 1 &&
        ImGui::GetContentRegionAvail().x > ImGui::CalcTextSize(convention.c_str()).x + ImGui::GetFontSize() * 13)
        ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", convention.c_str());
    ImGui::PopTextWrapPos();

    // Rows one under the other (those with nodes); columns a third of the width, the chain (and X
    // above it) as wide as its longest caption ("scores_raw⁽¹⁾ 512×512"), leaving room on the right
    // for V's line into Z and for the notes beside the arrows.
    const ImU32 line_color = ui.color(Color::arrow), note_color = ui.color(Color::note);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float font = ImGui::GetFontSize();
    // A maximised panel on a wide screen keeps the diagram's proportions: its columns stop growing
    // at about 40 characters across, so Q, K and V stay boxes and the lines stay short.
    const float avail = std::min(ImGui::GetContentRegionAvail().x, font * 40);
    const float gap = ImGui::GetTextLineHeight() - 2;
    const float node_h = ImGui::GetTextLineHeight() + 6;
    float widest = 0;
    bool used[core::pipeline_row::output + 1] = {};
    for (const core::PipelineNode& n : layout.nodes) {
        used[n.row] = true;
        if (n.row >= core::pipeline_row::scores_raw)
            widest = std::max(widest, ImGui::CalcTextSize(n.caption().c_str()).x);
    }
    const float wide = std::clamp(widest + 12, font * 8.0f, avail * 0.75f);
    const float narrow = (avail - 2 * 6) / 3;
    const float x_chain = origin.x + font * 0.5f;
    float row_y[core::pipeline_row::output + 1] = {};
    float y = origin.y + 2;
    for (int r = 0; r <= core::pipeline_row::output; ++r)
        if (used[r]) row_y[r] = y, y += node_h + gap;
    std::vector<Place> at(layout.nodes.size());
    for (std::size_t k = 0; k < layout.nodes.size(); ++k) {
        const core::PipelineNode& n = layout.nodes[k];
        const bool chain = n.column == 0 && n.span == 2;
        const float x = chain ? x_chain : origin.x + static_cast<float>(n.column) * (narrow + 6);
        const float w = chain ? wide : static_cast<float>(n.span) * narrow + static_cast<float>(n.span - 1) * 6;
        if (node(state, ui, n, at[k], {x, row_y[n.row]}, w)) state.view(n.ref);
        ui.report_item("pipeline: " + n.title());
    }
    for (const core::PipelineEdge& e : layout.edges) {
        const Place &from = at[static_cast<std::size_t>(e.from)], &to = at[static_cast<std::size_t>(e.to)];
        if (e.route == core::PipelineRoute::side) {
            side_line(ui, line_color, from, to, origin.x + avail - 4, gap);
            continue;
        }
        arrow(ui, line_color, bottom(from), top(to));
        if (!e.note.empty()) annotate(note_color, {bottom(from).x, bottom(from).y + gap / 2}, e.note);
    }
    ImGui::SetCursorScreenPos({origin.x, y});
    ImGui::Dummy({avail, 0});
}

}  // namespace attnviz::app
