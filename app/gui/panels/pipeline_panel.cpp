#include "pipeline_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <vector>

#include "core/format.hpp"


namespace attnviz::app {

namespace {

struct Node {
    MatrixRef ref;
    std::string operation;  // what produced it: "X·W_Q", "softmax of each row"
    ImVec2 min{}, max{};
};

const ImU32 line_color = IM_COL32(150, 160, 180, 255);

// A one-line node "Q⁽¹⁾ 2×2"; returns true when clicked.
bool node(AppState& state, Node& n, ImVec2 pos, float width) {
    const std::string text = state.label(n.ref) + " " + state.shape_text(n.ref);
    n.min = pos;
    n.max = {pos.x + width, pos.y + ImGui::GetTextLineHeight() + 6};
    ImGui::SetCursorScreenPos(n.min);
    ImGui::PushID(static_cast<int>(n.ref.id));
    const bool clicked = ImGui::InvisibleButton("node", {width, n.max.y - n.min.y});
    ImGui::PopID();
    const bool hovered = ImGui::IsItemHovered();
    const bool viewed = state.viewed() == n.ref;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 fill = viewed ? IM_COL32(66, 110, 170, 255) : hovered ? IM_COL32(60, 70, 90, 255)
                                                                      : IM_COL32(42, 48, 60, 255);
    draw->AddRectFilled(n.min, n.max, fill, 5);
    draw->AddRect(n.min, n.max, IM_COL32(120, 140, 170, 255), 5);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    draw->AddText({n.min.x + std::max(3.0f, (width - ts.x) / 2), n.min.y + 3}, IM_COL32(255, 255, 255, 255),
                  text.c_str());
    if (hovered)
        ImGui::SetTooltip("%s = %s, %s\nClick to open it in the matrix viewer.", state.label(n.ref).c_str(),
                          n.operation.c_str(), state.shape_text(n.ref).c_str());
    return clicked;
}

void arrow(ImVec2 from, ImVec2 to) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddLine(from, {to.x, to.y - 5}, line_color, 1.5f);
    draw->AddTriangleFilled({to.x - 4, to.y - 6}, {to.x + 4, to.y - 6}, to, line_color);
}

// A small grey note beside an arrow.
void annotate(ImVec2 at, const std::string& text) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddText({at.x + 8, at.y - ImGui::GetTextLineHeight() / 2}, IM_COL32(170, 180, 195, 255), text.c_str());
}

ImVec2 bottom(const Node& n) { return {(n.min.x + n.max.x) / 2, n.max.y}; }
ImVec2 top(const Node& n) { return {(n.min.x + n.max.x) / 2, n.min.y}; }

}  // namespace

void draw_pipeline_panel(AppState& state, PipelinePanel& panel) {
    const core::Config& c = state.config();
    panel.head = std::clamp(panel.head, 0, c.heads - 1);
    if (c.heads > 1) {
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
        int shown = panel.head + 1;
        if (ImGui::SliderInt("head", &shown, 1, c.heads)) panel.head = shown - 1;
    }
    // Which convention is shown: seed 001 projects the concatenation with W_O, seed 000 does not.
    const bool unicode = state.notation() == core::Notation::unicode;
    const char* convention = !c.output_projection ? "output = concat (seed 000)"
                             : state.column_vectors() ? (unicode ? "output = W_Oᵀ·concat (seed 001)" : "output = W_O^T*concat (seed 001)")
                             : unicode                ? "output = concat·W_O (seed 001)"
                                                      : "output = concat*W_O (seed 001)";
    if (c.heads > 1 && ImGui::GetContentRegionAvail().x > ImGui::CalcTextSize(convention).x + ImGui::GetFontSize() * 13)
        ImGui::SameLine();
    ImGui::TextDisabled("%s", convention);
    using core::MatrixId;
    const int h = panel.head;
    const char* dot = unicode ? "·" : "*";
    const std::string divide = c.scale.kind == core::Scale::Kind::sqrt_dk ? (unicode ? "÷ √d_k" : "/ sqrt(d_k)")
                               : c.scale.kind == core::Scale::Kind::none ? "÷ 1 (no scaling)"
                                                                         : "÷ " + core::format_number(c.scale.divisor);
    // The operation as the shown convention writes it: row vectors, or column vectors (seed 004).
    const bool cols = state.column_vectors();
    auto op = [&](const std::string& rows_form, const std::string& columns_form) {
        return cols ? columns_form : rows_form;
    };
    const std::string T = unicode ? "ᵀ" : "^T";
    std::vector<Node> nodes = {
        {{MatrixId::X, 0}, "the input"},
        {{MatrixId::Q, h}, op(std::string("X") + dot + "W_Q", "W_Q" + T + dot + "X")},
        {{MatrixId::K, h}, op(std::string("X") + dot + "W_K", "W_K" + T + dot + "X")},
        {{MatrixId::V, h}, op(std::string("X") + dot + "W_V", "W_V" + T + dot + "X")},
        {{MatrixId::scores_raw, h}, op(std::string("Q") + dot + "K" + T, "K" + T + dot + "Q")},
        {{MatrixId::scores, h}, divide + (c.mask == core::Mask::causal ? ", mask" : "")},
        {{MatrixId::weights, h}, op("softmax (rows)", "softmax (columns)")},
        {{MatrixId::Z, h}, op(std::string("weights") + dot + "V", std::string("V") + dot + "weights")},
        {{MatrixId::concat, 0}, "concat heads"},
        {{MatrixId::output, 0}, !c.output_projection ? "concat (no W_O)"
                                : op(std::string("concat") + dot + "W_O", "W_O" + T + dot + "concat")},
    };
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float font = ImGui::GetFontSize();
    const float gap = ImGui::GetTextLineHeight() - 2;
    const float node_h = ImGui::GetTextLineHeight() + 6;
    // Chain nodes as wide as their longest label ("scores_raw⁽¹⁾ 512×512"), leaving room on the
    // right for V's line into Z and for the notes beside the arrows.
    float widest = 0;
    for (size_t k = 4; k < nodes.size(); ++k)
        widest = std::max(widest, ImGui::CalcTextSize((state.label(nodes[k].ref) + " " + state.shape_text(nodes[k].ref)).c_str()).x);
    const float wide = std::clamp(widest + 12, font * 8.0f, avail * 0.75f);
    const float narrow = (avail - 2 * 6) / 3;
    const float x_chain = origin.x + font * 0.5f;
    float y = origin.y + 2;
    auto place = [&](size_t k, float x, float w) {
        if (node(state, nodes[k], {x, y}, w)) state.view(nodes[k].ref);
    };
    place(0, x_chain, wide);
    y += node_h + gap;
    for (int k = 0; k < 3; ++k) place(1 + k, origin.x + k * (narrow + 6), narrow);
    y += node_h + gap;
    for (size_t k = 4; k < nodes.size(); ++k) {
        place(k, x_chain, wide);
        y += node_h + gap;
    }
    for (int k = 1; k <= 3; ++k) arrow(bottom(nodes[0]), top(nodes[k]));
    arrow(bottom(nodes[1]), top(nodes[4]));
    arrow(bottom(nodes[2]), top(nodes[4]));
    for (size_t k = 4; k + 1 < nodes.size(); ++k) {
        arrow(bottom(nodes[k]), top(nodes[k + 1]));
        const ImVec2 from = bottom(nodes[k]);
        annotate({from.x, from.y + gap / 2}, nodes[k + 1].operation);
    }
    annotate({bottom(nodes[2]).x, bottom(nodes[2]).y + gap / 2}, nodes[4].operation);
    // V joins at the weighted sum: a line down the right side into Z.
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 v_out = bottom(nodes[3]);
    const float side = std::min(origin.x + avail - 4, nodes[3].max.x - 8);
    const float z_mid = (nodes[7].min.y + nodes[7].max.y) / 2;
    draw->AddLine(v_out, {v_out.x, v_out.y + gap / 2}, line_color, 1.5f);
    draw->AddLine({v_out.x, v_out.y + gap / 2}, {side, v_out.y + gap / 2}, line_color, 1.5f);
    draw->AddLine({side, v_out.y + gap / 2}, {side, z_mid}, line_color, 1.5f);
    draw->AddLine({side, z_mid}, {nodes[7].max.x + 6, z_mid}, line_color, 1.5f);
    draw->AddTriangleFilled({nodes[7].max.x + 6, z_mid - 4}, {nodes[7].max.x + 6, z_mid + 4},
                            {nodes[7].max.x, z_mid}, line_color);
    ImGui::SetCursorScreenPos({origin.x, y});
    ImGui::Dummy({avail, 0});
}

}  // namespace attnviz::app
