#include "pipeline_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <vector>

#include "../widgets/fitted_text.hpp"
#include "core/base/format.hpp"

namespace attnviz::app {

namespace {

struct Node {
    MatrixRef ref;
    std::string operation;  // what produced it: "X·W_Q", "softmax of each row"
    ImVec2 min{}, max{};
};

// A one-line node "Q⁽¹⁾ 2×2" ("Q⁽¹⁾" alone where the shape does not fit; the tooltip has it);
// returns true when clicked.
bool node(AppState& state, const UiContext& ui, Node& n, ImVec2 pos, float width) {
    std::string text = state.label(n.ref) + " " + state.shape_text(n.ref);
    if (ImGui::CalcTextSize(text.c_str()).x + 6 > width) text = fitted_text(state.label(n.ref), width - 6);
    n.min = pos;
    n.max = {pos.x + width, pos.y + ImGui::GetTextLineHeight() + 6};
    ImGui::SetCursorScreenPos(n.min);
    ImGui::PushID(static_cast<int>(n.ref.id));
    const bool clicked = ImGui::InvisibleButton("node", {width, n.max.y - n.min.y});
    ImGui::PopID();
    const bool hovered = ImGui::IsItemHovered();
    const bool viewed = state.viewed() == n.ref;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 fill = ui.color(viewed ? Color::node_viewed : hovered ? Color::node_hovered : Color::node);
    draw->AddRectFilled(n.min, n.max, fill, 5);
    draw->AddRect(n.min, n.max, ui.color(Color::node_border), 5);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    draw->AddText({n.min.x + std::max(3.0f, (width - ts.x) / 2), n.min.y + 3}, ui.color(Color::node_text),
                  text.c_str());
    if (hovered)
        ImGui::SetTooltip("%s = %s, %s\nClick to open it in the matrix viewer.", state.label(n.ref).c_str(),
                          n.operation.c_str(), state.shape_text(n.ref).c_str());
    return clicked;
}

void arrow(ImU32 color, ImVec2 from, ImVec2 to) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddLine(from, {to.x, to.y - 5}, color, 1.5f);
    draw->AddTriangleFilled({to.x - 4, to.y - 6}, {to.x + 4, to.y - 6}, to, color);
}

// A small grey note beside an arrow.
void annotate(ImU32 color, ImVec2 at, const std::string& text) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddText({at.x + 8, at.y - ImGui::GetTextLineHeight() / 2}, color, text.c_str());
}

ImVec2 bottom(const Node& n) { return {(n.min.x + n.max.x) / 2, n.max.y}; }
ImVec2 top(const Node& n) { return {(n.min.x + n.max.x) / 2, n.min.y}; }

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
    // Which convention is shown: seed 001 projects the concatenation with W_O, seed 000 does not.
    const core::Notation notation = ui.notation();
    const bool cols = state.column_vectors();
    const std::string convention = c.output_projection
                                       ? "output = " + core::operation_text(core::MatrixId::output, c, notation, cols) +
                                             " (with output projection W_O)"
                                       : std::string("output = concat (no output projection)");
    if (c.heads > 1 &&
        ImGui::GetContentRegionAvail().x > ImGui::CalcTextSize(convention.c_str()).x + ImGui::GetFontSize() * 13)
        ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", convention.c_str());
    ImGui::PopTextWrapPos();
    // One node per matrix of the layer, each with what computes it in the shown convention:
    // X (and Y beside it under cross-attention: the keys' and values' input); Q, K, V side by side;
    // with RoPE, Q_rot and K_rot below Q and K; then the chain from scores_raw to output. The
    // weights and biases are on the arrows.
    std::vector<Node> nodes;
    for (core::MatrixId id : core::all_matrix_ids) {
        const bool shown_input = id == core::MatrixId::X || id == core::MatrixId::Y;
        if ((core::is_input(id) && !shown_input) || !core::exists(id, c)) continue;
        nodes.push_back({{id, core::is_per_head(id) ? panel.head : 0}, core::operation_text(id, c, notation, cols)});
    }
    auto at = [&](core::MatrixId id) -> Node& {
        for (Node& n : nodes)
            if (n.ref.id == id) return n;
        return nodes.front();  // not reached: every id asked for exists
    };
    const bool rope = c.rope.on, cross = c.cross();
    const size_t inputs = cross ? 2 : 1;
    const size_t chain = inputs + (rope ? 5 : 3);  // the first node of the chain: scores_raw
    const ImU32 line_color = ui.color(Color::arrow), note_color = ui.color(Color::note);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float font = ImGui::GetFontSize();
    const float gap = ImGui::GetTextLineHeight() - 2;
    const float node_h = ImGui::GetTextLineHeight() + 6;
    // Chain nodes as wide as their longest label ("scores_raw⁽¹⁾ 512×512"), leaving room on the
    // right for V's line into Z and for the notes beside the arrows.
    float widest = 0;
    for (size_t k = chain; k < nodes.size(); ++k)
        widest = std::max(
            widest, ImGui::CalcTextSize((state.label(nodes[k].ref) + " " + state.shape_text(nodes[k].ref)).c_str()).x);
    const float wide = std::clamp(widest + 12, font * 8.0f, avail * 0.75f);
    const float narrow = (avail - 2 * 6) / 3;
    const float x_chain = origin.x + font * 0.5f;
    float y = origin.y + 2;
    auto place = [&](Node& n, float x, float w) {
        if (node(state, ui, n, {x, y}, w)) state.view(n.ref);
    };
    if (cross) {
        place(at(core::MatrixId::X), origin.x, narrow);                       // above Q
        place(at(core::MatrixId::Y), origin.x + narrow + 6, 2 * narrow + 6);  // above K and V
    } else {
        place(nodes[0], x_chain, wide);
    }
    y += node_h + gap;
    for (size_t k = 0; k < 3; ++k) place(nodes[inputs + k], origin.x + static_cast<float>(k) * (narrow + 6), narrow);
    y += node_h + gap;
    if (rope) {
        place(at(core::MatrixId::Q_rot), origin.x, narrow);
        place(at(core::MatrixId::K_rot), origin.x + narrow + 6, narrow);
        y += node_h + gap;
    }
    for (size_t k = chain; k < nodes.size(); ++k) {
        place(nodes[k], x_chain, wide);
        y += node_h + gap;
    }
    Node &q = at(core::MatrixId::Q), &k_node = at(core::MatrixId::K), &v = at(core::MatrixId::V);
    Node& scores_raw = at(core::MatrixId::scores_raw);
    const Node& x_node = at(core::MatrixId::X);
    const Node& kv_source = cross ? at(core::MatrixId::Y) : x_node;
    arrow(line_color, bottom(x_node), top(q));
    for (Node* n : {&k_node, &v}) arrow(line_color, bottom(kv_source), top(*n));
    Node& q_in = rope ? at(core::MatrixId::Q_rot) : q;
    Node& k_in = rope ? at(core::MatrixId::K_rot) : k_node;
    if (rope) {
        arrow(line_color, bottom(q), top(q_in));
        arrow(line_color, bottom(k_node), top(k_in));
        annotate(note_color, {bottom(q).x, bottom(q).y + gap / 2}, "RoPE");
    }
    arrow(line_color, bottom(q_in), top(scores_raw));
    arrow(line_color, bottom(k_in), top(scores_raw));
    annotate(note_color, {bottom(k_in).x, bottom(k_in).y + gap / 2}, scores_raw.operation);
    for (size_t k = chain; k + 1 < nodes.size(); ++k) {
        arrow(line_color, bottom(nodes[k]), top(nodes[k + 1]));
        const ImVec2 from = bottom(nodes[k]);
        annotate(note_color, {from.x, from.y + gap / 2}, nodes[k + 1].operation);
    }
    // V joins at the weighted sum: a line down the right side into Z.
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const Node& z = at(core::MatrixId::Z);
    const ImVec2 v_out = bottom(v);
    const float side = std::min(origin.x + avail - 4, v.max.x - 8);
    const float z_mid = (z.min.y + z.max.y) / 2;
    draw->AddLine(v_out, {v_out.x, v_out.y + gap / 2}, line_color, 1.5f);
    draw->AddLine({v_out.x, v_out.y + gap / 2}, {side, v_out.y + gap / 2}, line_color, 1.5f);
    draw->AddLine({side, v_out.y + gap / 2}, {side, z_mid}, line_color, 1.5f);
    draw->AddLine({side, z_mid}, {z.max.x + 6, z_mid}, line_color, 1.5f);
    draw->AddTriangleFilled({z.max.x + 6, z_mid - 4}, {z.max.x + 6, z_mid + 4}, {z.max.x, z_mid}, line_color);
    ImGui::SetCursorScreenPos({origin.x, y});
    ImGui::Dummy({avail, 0});
}

}  // namespace attnviz::app
