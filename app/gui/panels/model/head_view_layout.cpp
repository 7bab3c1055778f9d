#include "panels/model/head_view_detail.hpp"

#include <algorithm>
#include <imgui.h>
#include <string>
#include <vector>

#include "panels/model/head_view_panel.hpp"

namespace attnviz::app {

int label_step(int count, float pitch, float line_height) {
    if (count <= 0 || pitch >= line_height) return 1;
    for (int decade = 1;; decade *= 10)
        for (int m : {1, 2, 5}) {
            const int step = m * decade;
            if (pitch * static_cast<float>(step) >= line_height || step >= count) return step;
        }
}

namespace head_view_detail {

namespace {

float widest_label(const std::vector<std::string>& tokens) {
    float w = 0;
    for (const std::string& t : tokens) w = std::max(w, ImGui::CalcTextSize(t.c_str()).x);
    return w;
}

}  // namespace

HeadViewLayout layout_head_view(const HeadViewPanel& p, const HeadViewFrame& f, const std::string& options) {
    HeadViewLayout l;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = l.font = ImGui::GetFontSize(), line_h = l.line_h = ImGui::GetTextLineHeight();
    const float row_h = l.row_h = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = l.origin = ImGui::GetCursorScreenPos();
    const ImVec2 avail = l.avail = ImGui::GetContentRegionAvail();
    const bool selection = l.selection = !p.queries.empty() || !p.keys.empty();
    const float pad = l.pad = font * 0.4f;
    const int n = f.n, n_keys = f.n_keys;
    // Each column at least as wide as its heading.
    float query_w = std::clamp(widest_label(f.query_tokens), ImGui::CalcTextSize("queries").x, font * 7) + pad;
    float key_w = std::clamp(widest_label(f.key_tokens), ImGui::CalcTextSize("keys").x, font * 7) + pad;
    float bar_w = font * 3.2f;
    if (avail.x < query_w + key_w + 2 * bar_w + font * 6) bar_w = 0;
    l.bar_w = bar_w;
    const float labels_w = query_w + key_w + 2 * bar_w;
    if (avail.x - labels_w < font * 4) {  // too narrow: the labels give up some of their room
        const float shrink = std::max(0.3f, (avail.x - 2 * bar_w - font * 4) / (query_w + key_w));
        query_w *= shrink;
        key_w *= shrink;
    }
    // Lines longer than 22 em only flatten the picture. With a selection, the tables go beside the
    // block when the panel is wide enough: they take what their natural width needs (a token
    // column and a column of numbers for the mean and each shown head) of the room the labels
    // leave, but at least 12 em, and the lines keep at least a third of it.
    float lines_w = std::clamp(avail.x - query_w - key_w - 2 * bar_w, font * 4, font * 22);
    if (selection) {
        int shown_heads = 0;
        for (const core::Matrix* w : f.given) shown_heads += w != nullptr;
        const float tables = static_cast<float>(!p.queries.empty() + !p.keys.empty()) * font *
                             (4.5f + 3.5f * static_cast<float>(1 + shown_heads));
        const float spare = avail.x - query_w - key_w - 2 * bar_w - style.ItemSpacing.x;
        if (spare * 2 / 3 >= font * 12) {
            l.tables_beside = true;
            lines_w = std::clamp(spare - tables, std::max(font * 5, spare / 3), font * 22);
        }
    }
    const float block_w = l.block_w = std::min(avail.x, query_w + key_w + 2 * bar_w + lines_w);
    if (selection && !l.tables_beside) {
        const int rows = std::min(std::max(p.queries.empty() ? 0 : n_keys, p.keys.empty() ? 0 : n), 6);
        l.table_h = row_h + static_cast<float>(rows + 1) * (line_h + style.CellPadding.y * 2) + style.ScrollbarSize +
                    style.ItemSpacing.y;
        l.table_h = std::min(l.table_h, avail.y * 0.45f);
    }
    // The options' note (wrapped) and the line saying what is drawn, then the tables or a hint.
    const float notes =
        options.empty() ? 0 : ImGui::CalcTextSize(options.c_str(), nullptr, false, avail.x).y + style.ItemSpacing.y;
    const float below = notes + row_h + (selection ? l.table_h : row_h);
    // Up to 10 tokens a column keep a line each however small the panel (it scrolls then).
    l.columns_h = std::max(avail.y - row_h - below, static_cast<float>(std::min(std::max(n, n_keys), 10)) * line_h);
    const float top = l.top = origin.y + row_h;
    const float max_pitch = row_h * 1.5f;
    l.q = {origin.x + bar_w, origin.x + bar_w + query_w, top, std::min(l.columns_h / static_cast<float>(n), max_pitch),
           n};
    l.k = {origin.x + block_w - bar_w - key_w, origin.x + block_w - bar_w, top,
           std::min(l.columns_h / static_cast<float>(n_keys), max_pitch), n_keys};
    l.x0 = l.q.x1 + pad * 0.5f;
    l.x1 = l.k.x0 - pad * 0.5f;
    l.step_q = label_step(n, l.q.pitch, line_h);
    l.step_k = label_step(n_keys, l.k.pitch, line_h);
    l.disabled = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    l.text = ImGui::GetColorU32(ImGuiCol_Text);
    return l;
}

}  // namespace head_view_detail

}  // namespace attnviz::app
