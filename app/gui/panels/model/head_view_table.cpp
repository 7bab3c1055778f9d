#include "panels/model/head_view_detail.hpp"

#include <algorithm>
#include <cfloat>
#include <imgui.h>
#include <string>
#include <vector>

#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app::head_view_detail {

namespace {

// "x1 + x3 + x4 + 2 more": the selected tokens by name, the first few.
std::string token_list(const std::vector<std::string>& tokens, const std::vector<int>& selected) {
    std::string out;
    for (std::size_t k = 0; k < selected.size() && k < 3; ++k)
        out += (k ? " + " : "") + token_label(tokens, selected[k]);
    if (selected.size() > 3) out += " + " + std::to_string(selected.size() - 3) + " more";
    return out;
}

// Norm-weighted: for query i and key j of the view (`kept`: the tokens kept of the session's, null
// when every one is), each shown head's ‖f_h(x_j)‖, α_ij and their product, in a tooltip and the report.
void norm_lines(UiContext& ui, const NormWeighted& nw, core::HeadWeights given, const core::KeptTokens* kept, int i,
                int j) {
    const int qi = kept ? kept->queries[static_cast<std::size_t>(i)] : i;
    const int kj = kept ? kept->keys[static_cast<std::size_t>(j)] : j;
    for (std::size_t h = 0; h < given.size() && h < nw.heads.size(); ++h) {
        if (!given[h]) continue;
        const double norm = nw.value_norms[h](kj), weight = nw.snapshot->trace.heads[h].weights(qi, kj);
        const double product = nw.heads[h](qi, kj);
        ImGui::TextDisabled("      head %d: ‖f_h(x_%d)‖ %s × α %s = %s", static_cast<int>(h) + 1, kj,
                            core::format_compact(norm, 3).c_str(), core::format_compact(weight, 3).c_str(),
                            core::format_compact(product, 3).c_str());
        const std::string at = " " + std::to_string(h + 1) + " " + std::to_string(qi) + " " + std::to_string(kj);
        ui.report_value("head view hover value norm" + at, norm);
        ui.report_value("head view hover weight" + at, weight);
        ui.report_value("head view hover product" + at, product);
    }
}

// One table of a selection's attention: a row per token of the other side, strongest first, then
// the shown heads averaged and each head (its number in its colour).
void selection_table(const char* id, const std::string& title, const char* explanation, const Eigen::VectorXd& combined,
                     const std::vector<Eigen::VectorXd>& per_head, const std::vector<std::string>& labels,
                     const char* token_heading, const char* combined_heading, ImVec2 size) {
    const float font = ImGui::GetFontSize();
    ImGui::BeginGroup();
    ImGui::TextUnformatted(fitted_text(title, size.x).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", title.c_str(), explanation);
    std::vector<int> heads;
    for (std::size_t h = 0; h < per_head.size(); ++h)
        if (per_head[h].size() == combined.size()) heads.push_back(static_cast<int>(h));
    const ImGuiTableFlags flags = ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    const float table_h = std::max(size.y - ImGui::GetTextLineHeightWithSpacing(), ImGui::GetFrameHeight() * 2);
    if (ImGui::BeginTable(id, 2 + static_cast<int>(heads.size()), flags, {size.x, table_h})) {
        ImGui::TableSetupScrollFreeze(1, 1);
        ImGui::TableSetupColumn(token_heading, ImGuiTableColumnFlags_WidthFixed, font * 4.5f);
        ImGui::TableSetupColumn(combined_heading);
        for (int h : heads) ImGui::TableSetupColumn(("h" + std::to_string(h + 1)).c_str());
        ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
        for (int c = 0; c < 2 + static_cast<int>(heads.size()); ++c) {
            ImGui::TableSetColumnIndex(c);
            const bool head = c >= 2;
            if (head)
                ImGui::PushStyleColor(ImGuiCol_Text, head_color(heads[static_cast<std::size_t>(c - 2)],
                                                                static_cast<int>(per_head.size())));
            ImGui::TableHeader(ImGui::TableGetColumnName(c));
            if (head) ImGui::PopStyleColor();
        }
        const std::vector<core::Ranked> order =
            core::strongest({combined.data(), static_cast<std::size_t>(combined.size())}, 0);
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(order.size()));
        while (clipper.Step()) {
            for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
                const core::Ranked& e = order[static_cast<std::size_t>(r)];
                ImGui::TableNextRow();
                ImGui::TableSetColumnIndex(0);
                const std::string label = token_label(labels, e.index);
                ImGui::TextUnformatted(fitted_text(label, font * 4.5f).c_str());
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (%d)", label.c_str(), e.index);
                ImGui::TableSetColumnIndex(1);
                ImGui::TextUnformatted(core::format_compact(e.value, 3).c_str());
                for (std::size_t c = 0; c < heads.size(); ++c) {
                    ImGui::TableSetColumnIndex(static_cast<int>(c) + 2);
                    ImGui::TextUnformatted(
                        core::format_compact(per_head[static_cast<std::size_t>(heads[c])](e.index), 3).c_str());
                }
            }
        }
        ImGui::EndTable();
    }
    ImGui::EndGroup();
}

}  // namespace

void compute_selection(HeadViewPanel& p, core::HeadWeights given) {
    const core::Aggregate how = p.mean ? core::Aggregate::mean : core::Aggregate::sum;
    const auto fill = [&](const std::vector<int>& selected, Eigen::VectorXd& combined,
                          std::vector<Eigen::VectorXd>& per_head, auto attention) {
        combined.resize(0);
        per_head.assign(given.size(), Eigen::VectorXd());
        if (selected.empty()) return;
        if (core::Result<Eigen::VectorXd> all = attention(given, selected); all) combined = std::move(*all.value);
        for (std::size_t h = 0; h < given.size(); ++h)
            if (given[h])
                if (core::Result<Eigen::VectorXd> one = attention(*given[h], selected); one)
                    per_head[h] = std::move(*one.value);
    };
    fill(p.queries, p.of_queries, p.of_queries_per_head,
         [how](const auto& w, const std::vector<int>& s) { return core::attention_of_queries(w, s, how); });
    fill(p.keys, p.to_keys, p.to_keys_per_head,
         [how](const auto& w, const std::vector<int>& s) { return core::attention_to_keys(w, s, how); });
}

void token_tooltip(UiContext& ui, const HeadViewPanel& p, int top_k, core::HeadWeights given,
                   const std::vector<std::string>& queries, const std::vector<std::string>& keys,
                   const NormWeighted* norm, const core::KeptTokens* kept) {
    const bool query = p.hovered_query >= 0;
    const int t = query ? p.hovered_query : p.hovered_key;
    const int one[] = {t};
    const core::Result<Eigen::VectorXd> r = query ? core::attention_of_queries(given, one, core::Aggregate::sum)
                                                  : core::attention_to_keys(given, one, core::Aggregate::sum);
    ImGui::BeginTooltip();
    ImGui::Text("%s %s (%s %d)", query ? "query" : "key", token_label(query ? queries : keys, t).c_str(),
                query ? "row" : "column", t);
    if (r) {
        const int k = top_k > 0 ? std::min(top_k, 8) : 5;
        ImGui::TextDisabled(query ? "attends most to (heads shown, averaged):"
                                  : "attended most by (heads shown, averaged):");
        for (const core::Ranked& e : core::strongest({r.value->data(), static_cast<std::size_t>(r.value->size())}, k)) {
            ImGui::Text("  %-10s %s", token_label(query ? keys : queries, e.index).c_str(),
                        core::format_compact(e.value, 3).c_str());
            if (norm) norm_lines(ui, *norm, given, kept, query ? t : e.index, query ? e.index : t);
        }
        if (norm)
            ImGui::TextDisabled(
                "Norm-weighted, each query row divided by its sum; per head ‖f_h(x_j)‖ × α_ij = the "
                "product before that.");
    } else {
        ImGui::TextDisabled("no head is shown");
    }
    ImGui::TextDisabled("Click: keep its lines.  Ctrl+click: add it to the selection.");
    ImGui::EndTooltip();
}

void draw_bars(ImDrawList* dl, const Column& c, const Eigen::VectorXd& values, float x, float width, float outward,
               int step, const ImFont* numbers, ImU32 bar, ImU32 text) {
    if (values.size() != c.count || width <= 0) return;
    const double largest = std::max(values.maxCoeff(), 1e-300);
    const float h = std::max(1.0f, std::min(c.pitch * 0.8f, ImGui::GetTextLineHeight()));
    const float room = width - 2;
    for (int t = 0; t < c.count; ++t) {
        const float len = room * static_cast<float>(std::clamp(values(t) / largest, 0.0, 1.0));
        const float y = c.y(t);
        const float a = x + outward, b = x + outward * (1 + len);
        dl->AddRectFilled({std::min(a, b), y - h / 2}, {std::max(a, b), y + h / 2}, bar);
    }
    // The numbers after every bar, so no later bar covers one.
    for (int t = 0; t < c.count; t += step) {
        const float y = c.y(t);
        const std::string number = core::format_compact(values(t), 3);
        const float size = numbers->FontSize;
        const float w = numbers->CalcTextSizeA(size, FLT_MAX, 0, number.c_str()).x;
        if (w > room) continue;
        // At the bar's outer end of its room, on a backing of the window's colour where the bar
        // runs under it, so the number reads over any bar.
        const float tx = outward > 0 ? x + width - w - 1 : x - width + 1;
        dl->AddRectFilled({tx - 1, y - size / 2}, {tx + w + 1, y + size / 2},
                          ImGui::GetColorU32(ImGuiCol_WindowBg, 0.8f));
        dl->AddText(numbers, size, {tx, y - size / 2}, text, number.c_str());
    }
}

void draw_selection_tables(UiContext& ui, const HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l) {
    const ImGuiStyle& style = ImGui::GetStyle();
    ImVec2 room{l.avail.x, std::max(l.table_h - style.ItemSpacing.y, ImGui::GetFrameHeight() * 3)};
    if (l.tables_beside) {
        ImGui::SetCursorScreenPos({l.origin.x + l.block_w + style.ItemSpacing.x, l.origin.y});
        room = {l.avail.x - l.block_w - style.ItemSpacing.x, l.row_h + l.columns_h};
    }
    // Two tables side by side when each still shows a token and a number, else one above the other.
    const bool both = !p.queries.empty() && !p.keys.empty();
    const bool side_by_side = both && (room.x - style.ItemSpacing.x) / 2 >= l.font * 9;
    const ImVec2 size{side_by_side ? (room.x - style.ItemSpacing.x) / 2 : room.x,
                      both && !side_by_side ? (room.y - style.ItemSpacing.y) / 2 : room.y};
    const ImVec2 room_at = ImGui::GetCursorScreenPos();
    const char* how = p.mean ? "mean" : "sum";
    const std::string arrow = ui.notation() == core::Notation::unicode ? " → " : " -> ";
    if (!p.queries.empty())
        selection_table(
            "##of queries", token_list(f.query_tokens, p.queries) + arrow + "each key: " + how + ", heads averaged",
            p.mean ? "For each key: the mean of the selected queries' weights on it (their rows added, divided "
                     "by their number), averaged over the shown heads; then each head's own."
                   : "For each key: the sum of the selected queries' weights on it (their rows added), "
                     "averaged over the shown heads; then each head's own.",
            p.of_queries, p.of_queries_per_head, f.key_tokens, "key", how, size);
    if (side_by_side)
        ImGui::SameLine();
    else if (both)  // under the first, in the same room (which may be beside the columns)
        ImGui::SetCursorScreenPos({room_at.x, room_at.y + size.y + style.ItemSpacing.y});
    if (!p.keys.empty())
        selection_table("##to keys",
                        "each query" + arrow + token_list(f.key_tokens, p.keys) + ": " + (p.mean ? "mean" : "share") +
                            ", heads averaged",
                        p.mean ? "For each query: the mean of its weights on the selected keys (its weights on them "
                                 "added, divided by their number), averaged over the shown heads; then each head's own."
                               : "For each query: the share of its attention on the selected keys (its weights on them "
                                 "added), averaged over the shown heads; then each head's own.",
                        p.to_keys, p.to_keys_per_head, f.query_tokens, "query", p.mean ? "mean" : "share", size);
}

}  // namespace attnviz::app::head_view_detail
