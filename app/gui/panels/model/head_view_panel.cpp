#include "panels/model/head_view_panel.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <imgui.h>
#include <string>

#include "core/attention/session.hpp"
#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// The most lines a frame draws: beyond this the weakest are dropped (core::LineOptions::max_lines).
constexpr std::size_t max_lines_drawn = 20000;

// Beyond this many lines, the lines are painted into a picture (when textures can be made).
constexpr std::size_t max_vector_lines = 1500;

struct PaintedLine {
    ImVec2 a, b;  // in texels
    ImU32 colour;
};

// Paints lines into RGBA texels (rows×cols, row-major), anti-aliased (each step along the longer
// axis shares its coverage between the two nearest texels) and blended in order, the later over
// the earlier, as the GPU would draw them.
void paint_lines(std::vector<std::uint32_t>& rgba, int cols, int rows, const std::vector<PaintedLine>& lines) {
    std::vector<float> premultiplied(static_cast<std::size_t>(cols) * static_cast<std::size_t>(rows) * 4, 0.0f);
    for (const PaintedLine& l : lines) {
        const ImVec4 c = ImGui::ColorConvertU32ToFloat4(l.colour);
        const auto splat = [&](int x, int y, float coverage) {
            if (x < 0 || y < 0 || x >= cols || y >= rows || coverage <= 0) return;
            float* t = &premultiplied[(static_cast<std::size_t>(y) * static_cast<std::size_t>(cols) +
                                       static_cast<std::size_t>(x)) *
                                      4];
            const float a = c.w * coverage;
            t[0] = c.x * a + t[0] * (1 - a);
            t[1] = c.y * a + t[1] * (1 - a);
            t[2] = c.z * a + t[2] * (1 - a);
            t[3] = a + t[3] * (1 - a);
        };
        const float dx = l.b.x - l.a.x, dy = l.b.y - l.a.y;
        const bool along_x = std::abs(dx) >= std::abs(dy);
        const float from = along_x ? std::min(l.a.x, l.b.x) : std::min(l.a.y, l.b.y);
        const float to = along_x ? std::max(l.a.x, l.b.x) : std::max(l.a.y, l.b.y);
        const float length = along_x ? dx : dy;
        for (int step = static_cast<int>(std::floor(from)); step < static_cast<int>(std::ceil(to)); ++step) {
            // At the texel's centre along the major axis, the line's position across it.
            const float t = length == 0
                                ? 0
                                : std::clamp((static_cast<float>(step) + 0.5f - (along_x ? l.a.x : l.a.y)) / length,
                                             0.0f, 1.0f);
            const float across = (along_x ? l.a.y + t * dy : l.a.x + t * dx) - 0.5f;
            const int near = static_cast<int>(std::floor(across));
            const float f = across - static_cast<float>(near);
            if (along_x) {
                splat(step, near, 1 - f);
                splat(step, near + 1, f);
            } else {
                splat(near, step, 1 - f);
                splat(near + 1, step, f);
            }
        }
    }
    for (std::size_t k = 0; k < rgba.size(); ++k) {
        const float* t = &premultiplied[k * 4];
        if (t[3] <= 0) continue;
        const auto channel = [](float v) { return static_cast<ImU32>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255)); };
        rgba[k] = IM_COL32(channel(t[0] / t[3]), channel(t[1] / t[3]), channel(t[2] / t[3]), channel(t[3]));
    }
}

// "147 456": a count with its thousands apart (by a narrow space where the font has one).
std::string grouped(std::size_t count, bool unicode) {
    const std::string digits = std::to_string(count);
    std::string out;
    for (std::size_t k = 0; k < digits.size(); ++k) {
        if (k > 0 && (digits.size() - k) % 3 == 0) out += unicode ? "\u202f" : " ";
        out += digits[k];
    }
    return out;
}

// A token's label as the view writes it (cut to core::max_label_characters), "#4" past the labels.
std::string token_label(const std::vector<std::string>& tokens, int t) {
    return t >= 0 && t < static_cast<int>(tokens.size())
               ? core::bounded_text(tokens[static_cast<std::size_t>(t)], core::max_label_characters)
               : "#" + std::to_string(t + 1);
}

// "x1 + x3 + x4 + 2 more": the selected tokens by name, the first few.
std::string token_list(const std::vector<std::string>& tokens, const std::vector<int>& selected) {
    std::string out;
    for (std::size_t k = 0; k < selected.size() && k < 3; ++k)
        out += (k ? " + " : "") + token_label(tokens, selected[k]);
    if (selected.size() > 3) out += " + " + std::to_string(selected.size() - 3) + " more";
    return out;
}

// A column of tokens: their labels' room, and token t's row [top + t·pitch, top + (t + 1)·pitch].
struct Column {
    float x0 = 0, x1 = 0;
    float top = 0, pitch = 1;
    int count = 0;
    float y(int t) const { return top + (static_cast<float>(t) + 0.5f) * pitch; }
    float bottom() const { return top + static_cast<float>(count) * pitch; }
    int at(float y) const {
        return std::clamp(static_cast<int>(std::floor((y - top) / pitch)), 0, std::max(count - 1, 0));
    }
};

float widest_label(const std::vector<std::string>& tokens) {
    float w = 0;
    for (const std::string& t : tokens) w = std::max(w, ImGui::CalcTextSize(t.c_str()).x);
    return w;
}

bool contains(const std::vector<int>& sorted, int t) { return std::binary_search(sorted.begin(), sorted.end(), t); }

// The selection without tokens that no longer exist (the session shrank).
void prune(std::vector<int>& selected, int count) {
    std::erase_if(selected, [count](int t) { return t < 0 || t >= count; });
}

// What the head view shows this frame before its own options: a layer's heads' weights and their
// tokens, and the layers it can switch between.
struct HeadViewSource {
    int layers = 1;                          // > 1: a layer selector
    int layer = 0;                           // the one shown; in model mode −1: the session, no block
    std::vector<std::string> layer_names;    // the selector's entries
    std::vector<const core::Matrix*> heads;  // the layer's heads' weights, q × k each
    const std::vector<std::string>* queries = nullptr;
    const std::vector<std::string>* keys = nullptr;
    HeadViewPanel::WeightsKey key;
    std::string note;                    // what the weights are, over the view (opened attentions: weights only)
    bool can_norm = false;               // norm-weighted is offered (the session's layer)
    const NormWeighted* norm = nullptr;  // drawn in place of the weights (rows normalised)
};

// What "hide special tokens" can do with the tokens shown.
struct SpecialTokens {
    bool any = false;       // some token is one
    bool can_hide = false;  // hiding them leaves a query and a key
    bool hidden = false;    // they are hidden this frame
};

// A chip of the legend: a swatch (filled while on) and its text; returns whether it was clicked.
bool legend_chip(UiContext& ui, const std::string& id, const std::string& text, ImU32 colour, bool on) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float chip = ImGui::GetFrameHeight();
    const float w = chip + style.ItemInnerSpacing.x + ImGui::CalcTextSize(text.c_str()).x;
    same_line_if_fits(w);
    const bool clicked = ImGui::InvisibleButton(id.c_str(), {w, chip});
    ui.report_item("head view: " + id.substr(2));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 a = ImGui::GetItemRectMin();
    const float inset = chip * 0.18f;
    const ImVec2 c0{a.x + inset, a.y + inset}, c1{a.x + chip - inset, a.y + chip - inset};
    if (on)
        dl->AddRectFilled(c0, c1, colour, 2);
    else
        dl->AddRect(c0, c1, colour, 2, 0, 1.5f);
    dl->AddText({a.x + chip + style.ItemInnerSpacing.x, a.y + style.FramePadding.y},
                ImGui::GetColorU32(on ? ImGuiCol_Text : ImGuiCol_TextDisabled), text.c_str());
    return clicked;
}

// The layer shown, when there are several (a combo); nothing with one.
void draw_layer_choice(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s) {
    if (s.layers <= 1) return;
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("layer");
    ImGui::SameLine();
    const std::string current = s.layer >= 0 ? s.layer_names[static_cast<std::size_t>(s.layer)] : "this session";
    float widest = ImGui::CalcTextSize(current.c_str()).x;
    for (const std::string& name : s.layer_names) widest = std::max(widest, ImGui::CalcTextSize(name.c_str()).x);
    ImGui::SetNextItemWidth(std::min(widest + ImGui::GetFrameHeight() * 1.5f, font * 12));
    if (ImGui::BeginCombo("##layer", current.c_str())) {
        for (int l = 0; l < s.layers; ++l)
            if (ImGui::Selectable(s.layer_names[static_cast<std::size_t>(l)].c_str(), l == s.layer)) p.layer = l;
        ImGui::EndCombo();
    }
    ui.report_item("head view: layer");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The layer whose heads are drawn (%d layers)", s.layers);
    ImGui::SameLine();
}

// The switch "weights | norm-weighted"; norm-weighted only for the session's layer (it needs V and W_O).
void draw_norm_choice(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s) {
    same_line_if_fits(toggle_width("weights") + toggle_width("norm-weighted") + ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::RadioButton("weights", !p.norm_weighted)) p.norm_weighted = false;
    ui.report_item("head view: weights");
    ImGui::SameLine();
    ImGui::BeginDisabled(!s.can_norm);
    if (ImGui::RadioButton("norm-weighted", p.norm_weighted && s.can_norm)) p.norm_weighted = true;
    ImGui::EndDisabled();
    ui.report_item("head view: norm-weighted");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", s.can_norm ? "Lines of each head's norm-weighted attention ‖α_ij·f_h(x_j)‖ (f_h(x_j) = "
                                             "V_j·W_O⁽ʰ⁾: how far key j moves query i's output),\neach query row "
                                             "divided by its sum: the lines show relative strength. Hover a token "
                                             "for ‖f_h(x_j)‖, α_ij and their product."
                                           : "Norm-weighted needs the layer's V and W_O: only the session's own "
                                             "layer has them (not opened attentions, nor a model's other blocks)");
}

// The legend (a colour chip per head: click to hide or show its lines; all, none; the mean of the
// heads shown) and the controls.
void draw_controls(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s, const SpecialTokens& special,
                   float min_weight, int top_k, bool scaled) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = ImGui::GetFontSize();
    const int heads = static_cast<int>(s.heads.size());
    draw_layer_choice(ui, p, s);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("heads");
    for (int h = 0; h < heads; ++h) {
        const std::string number = std::to_string(h + 1);
        const bool shown = head_shown(p, h);
        if (legend_chip(ui, "##head " + number, number, head_color(h, heads), shown)) set_head_shown(p, h, !shown);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Head %d: click to %s its lines", h + 1, shown ? "hide" : "show");
    }
    const auto button = [&](const char* label, const char* tip) {
        same_line_if_fits(ImGui::CalcTextSize(label).x + style.FramePadding.x * 2);
        const bool pressed = ImGui::Button(label);
        ui.report_item(std::string("head view: ") + label);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
        return pressed;
    };
    if (button("all", "Show every head's lines"))
        for (int h = 0; h < heads; ++h) set_head_shown(p, h, true);
    if (button("none", "Hide every head's lines (then click a head to see it alone)"))
        for (int h = 0; h < heads; ++h) set_head_shown(p, h, false);
    if (legend_chip(ui, "##mean of heads", "mean", ui.color(Color::heads_mean), p.heads_mean))
        p.heads_mean = !p.heads_mean;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: one set of lines, the mean of the heads shown (cell by cell). Off: each head's lines in its colour.");
    draw_norm_choice(ui, p, s);

    const bool unicode = ui.notation() == core::Notation::unicode;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(unicode ? "weight ≥" : "weight >=");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5);
    if (ImGui::SliderFloat("##min weight", &min_weight, 0, 1, min_weight < 0.01f ? "%.4f" : "%.3f",
                           ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
        p.min_weight = min_weight;
    ui.report_item("head view: min weight");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Lines of a smaller weight are not drawn (Ctrl+click to type a value)");
    same_line_if_fits(font * 6 + ImGui::CalcTextSize("top-k").x);
    ImGui::SetNextItemWidth(font * 5.5f);
    if (ImGui::InputInt("top-k", &top_k)) p.top_k = std::max(top_k, 0);
    ui.report_item("head view: top-k");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each query keeps only its k strongest keys in each head (0: all)");
    same_line_if_fits(toggle_width("sum") + toggle_width("mean") + style.ItemSpacing.x);
    if (ImGui::RadioButton("sum", !p.mean)) p.mean = false;
    ui.report_item("head view: sum");
    ImGui::SameLine();
    if (ImGui::RadioButton("mean", p.mean)) p.mean = true;
    ui.report_item("head view: mean");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Several selected tokens: their weights added (sum), or added and divided by their number");
    if (checkbox_on_line("scale opacity", &scaled)) p.scaled_opacity = scaled;
    ui.report_item("head view: scale opacity");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: opacity = weight / the 99th percentile of the weights drawn, so lines stay visible\n"
            "when every weight is small (at large n). Off: opacity = weight.");
    const bool any = !p.queries.empty() || !p.keys.empty();
    same_line_if_fits(ImGui::CalcTextSize("clear").x + style.FramePadding.x * 2);
    ImGui::BeginDisabled(!any);
    if (ImGui::Button("clear")) clear_selection(p);
    ImGui::EndDisabled();
    ui.report_item("head view: clear");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Clear the selection (Esc)");
    ImGui::BeginDisabled(!special.can_hide);
    bool hide = special.hidden;
    if (checkbox_on_line("hide special tokens", &hide)) {
        p.hide_special = hide;
        clear_selection(p);  // the tokens shown are others now
    }
    ImGui::EndDisabled();
    ui.report_item("head view: hide special tokens");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", !special.any
                                    ? "No token here is a special one ([CLS], [SEP], <s>, </s>, <|endoftext|>, ...)"
                                : !special.can_hide
                                    ? "Every query or every key is a special token: hiding them would leave nothing"
                                    : "Leave [CLS], [SEP], <s>, <|endoftext|> and the like out: their rows and "
                                      "columns go, and each row is renormalised over the keys left (divided by "
                                      "its sum), so it is again a distribution");
}

// The selection's attention, the shown heads averaged and per head.
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

// The strongest of a hovered token's other side, in a tooltip: its keys (a query) or the queries
// attending to it (a key), the shown heads averaged; norm-weighted, each head's numbers under each.
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

// The bars of a selection's attention beside a column: bar length = value / the largest value, the
// number printed where the column has room for labels. `outward` is +1 (bars grow right, from x)
// or −1 (left).
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

}  // namespace

bool head_shown(const HeadViewPanel& p, int head) {
    return head < 0 || static_cast<std::size_t>(head) >= p.hidden.size() || !p.hidden[static_cast<std::size_t>(head)];
}

void set_head_shown(HeadViewPanel& p, int head, bool shown) {
    if (head < 0) return;
    if (static_cast<std::size_t>(head) >= p.hidden.size()) p.hidden.resize(static_cast<std::size_t>(head) + 1, 0);
    p.hidden[static_cast<std::size_t>(head)] = !shown;
}

void click_token(HeadViewPanel& p, TokenSide side, int token, bool add) {
    std::vector<int>& own = side == TokenSide::query ? p.queries : p.keys;
    std::vector<int>& other = side == TokenSide::query ? p.keys : p.queries;
    const auto at = std::lower_bound(own.begin(), own.end(), token);
    const bool in = at != own.end() && *at == token;
    if (add) {
        if (in)
            own.erase(at);
        else
            own.insert(at, token);
        return;
    }
    const bool alone = in && own.size() == 1 && other.empty();
    clear_selection(p);
    if (!alone) own.push_back(token);
}

void clear_selection(HeadViewPanel& p) {
    p.queries.clear();
    p.keys.clear();
}

std::string select_tokens(HeadViewPanel& p, const std::string& text, int n, int n_keys) {
    core::TokenChoice chosen = core::parse_token_choice(text, n, n_keys);
    for (auto [from, own] : {std::pair{&chosen.queries, &p.queries}, std::pair{&chosen.keys, &p.keys}})
        for (int t : *from)
            if (!contains(*own, t)) own->insert(std::lower_bound(own->begin(), own->end(), t), t);
    return chosen.problem;
}

int label_step(int count, float pitch, float line_height) {
    if (count <= 0 || pitch >= line_height) return 1;
    for (int decade = 1;; decade *= 10)
        for (int m : {1, 2, 5}) {
            const int step = m * decade;
            if (pitch * static_cast<float>(step) >= line_height || step >= count) return step;
        }
}

namespace {

// What the head view shows this frame: the tokens, the heads and the filters in force.
struct HeadViewFrame {
    const std::vector<std::string>& query_tokens;
    const std::vector<std::string>& key_tokens;
    int heads = 0, n = 0, n_keys = 0;
    float min_weight = 0;
    int top_k = 0;
    bool scaled = false;
    std::vector<const core::Matrix*> given;  // each head's weights (n×n_keys), null where hidden
    std::vector<char> hidden;
    HeadViewPanel::WeightsKey weights;       // what the weights are
    const core::Matrix* mean = nullptr;      // the mean of the heads shown, when its lines are drawn
    const NormWeighted* norm = nullptr;      // norm-weighted: the numbers the lines are of
    const core::KeptTokens* kept = nullptr;  // the session's tokens kept, when special ones are hidden
};

// Where the head view's parts go this frame.
struct HeadViewLayout {
    ImVec2 origin, avail;
    float font = 0, line_h = 0, row_h = 0, pad = 0;
    float bar_w = 0, block_w = 0, table_h = 0, columns_h = 0, top = 0;
    bool selection = false, tables_beside = false;
    Column q, k;                 // the query and key columns
    float x0 = 0, x1 = 0;        // the lines run between these
    int step_q = 1, step_k = 1;  // every step-th label is drawn
    ImU32 disabled = 0, text = 0;
};

// The room: a header line, the two columns with the lines between them (the block), a line
// saying what is drawn, and the selection's tables: beside the block when the panel is wide
// enough, else under it.
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

// The header: the columns' names, and over the bars what they show.
void draw_header(const HeadViewPanel& p, const HeadViewLayout& l) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddText({l.q.x1 - l.pad * 0.5f - ImGui::CalcTextSize("queries").x, l.origin.y}, l.disabled, "queries");
    dl->AddText({l.k.x0 + l.pad * 0.5f, l.origin.y}, l.disabled, "keys");
    if (l.bar_w > 0 && !p.keys.empty()) dl->AddText({l.origin.x, l.origin.y}, l.disabled, p.mean ? "mean" : "share");
    if (l.bar_w > 0 && !p.queries.empty()) {
        const char* heading = p.mean ? "mean" : "sum";
        dl->AddText({l.origin.x + l.block_w - ImGui::CalcTextSize(heading).x, l.origin.y}, l.disabled, heading);
    }
}

// The columns take the pointer: hover a token for its lines, click to keep them, Ctrl+click to
// select several. Then the hovered token's tooltip and the selection's sums, after this frame's
// clicks.
void take_pointer(UiContext& ui, HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l) {
    const ImGuiIO& io = ImGui::GetIO();
    const Column &q = l.q, &k = l.k;
    p.hovered_query = p.hovered_key = -1;
    ImGui::SetCursorScreenPos({l.origin.x, l.top});
    if (ImGui::InvisibleButton("##query tokens", {q.x1 - l.origin.x, q.bottom() - l.top}))
        click_token(p, TokenSide::query, q.at(io.MousePos.y), io.KeyCtrl);
    if (ImGui::IsItemHovered()) p.hovered_query = q.at(io.MousePos.y);
    ImGui::SetCursorScreenPos({k.x0, l.top});
    if (ImGui::InvisibleButton("##key tokens", {l.origin.x + l.block_w - k.x0, k.bottom() - l.top}))
        click_token(p, TokenSide::key, k.at(io.MousePos.y), io.KeyCtrl);
    if (ImGui::IsItemHovered()) p.hovered_key = k.at(io.MousePos.y);
    // Every step-th label is drawn where they are too close for all, and the highlighted ones.
    const auto labelled = [](int t, int step, const std::vector<int>& selected, int hovered) {
        return t % step == 0 || t == hovered || contains(selected, t);
    };
    if (ui.report) {
        // Each token where it is: its label's box when its label is drawn, else its row (which may
        // be less than a pixel high).
        const auto report = [&](const Column& c, const std::string& name, int t, bool label) {
            const float half = label ? std::max(c.pitch, l.line_h) / 2 : c.pitch / 2;
            ui.report->items.push_back({name, {c.x0, c.y(t) - half}, {c.x1, c.y(t) + half}});
        };
        for (int t = 0; t < f.n; ++t)
            report(q, "head view: query " + token_label(f.query_tokens, t), t,
                   labelled(t, l.step_q, p.queries, p.hovered_query));
        for (int t = 0; t < f.n_keys; ++t)
            report(k, "head view: key " + token_label(f.key_tokens, t), t,
                   labelled(t, l.step_k, p.keys, p.hovered_key));
    }
    if (p.hovered_query >= 0 || p.hovered_key >= 0)
        token_tooltip(ui, p, f.top_k, f.given, f.query_tokens, f.key_tokens, f.norm, f.kept);
    compute_selection(p, f.given);  // after this frame's clicks
}

// The lines: of the hovered token, else of the selection, else all; recomputed on a change only.
// Then the weight drawn opaque.
void update_lines(HeadViewPanel& p, const HeadViewFrame& f) {
    HeadViewPanel::LinesKey key{f.weights, f.mean != nullptr, f.hidden, f.min_weight, f.top_k, {}, {}};
    if (p.hovered_query >= 0)
        key.queries = {p.hovered_query};
    else if (p.hovered_key >= 0)
        key.keys = {p.hovered_key};
    else
        key.queries = p.queries, key.keys = p.keys;
    if (!(key == p.lines_of)) {
        // The whole view's lines are kept aside: the pointer leaving a token brings them back at
        // once (at n in the thousands they take a pass over every weight).
        const bool whole = key.queries.empty() && key.keys.empty();
        if (whole && key == p.whole_of) {
            p.lines = p.whole_lines;
        } else {
            core::LineOptions o;
            o.min_weight = key.min_weight;
            o.top_k = key.top_k;
            o.max_lines = max_lines_drawn;
            o.queries = key.queries;
            o.keys = key.keys;
            const core::Matrix* mean_only[] = {f.mean};
            p.lines = f.mean ? core::head_lines(mean_only, o) : core::head_lines(f.given, o);
            if (whole) {
                p.whole_lines = p.lines;
                p.whole_of = key;
            }
        }
        p.lines_of = std::move(key);
    }
    p.opacity_of_1 = core::opaque_weight(p.lines, f.scaled);  // the 99th percentile, when scaled
}

// The lines, each in its head's colour at an opacity of its weight. Many lines are painted into a
// picture once (a software OpenGL spends far longer on thousands of long thin triangles every
// frame); a few, or without textures, are drawn as lines.
void draw_lines(UiContext& ui, HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Column &q = l.q, &k = l.k;
    const float x0 = l.x0, x1 = l.x1;
    p.drawn.assign(f.mean ? 1 : static_cast<std::size_t>(f.heads), 0);
    for (const core::HeadLine& line : p.lines.lines) ++p.drawn[static_cast<std::size_t>(line.head)];
    const auto line_colour = [&](const core::HeadLine& line) {
        const auto alpha = static_cast<ImU32>(std::lround(std::clamp(line.weight / p.opacity_of_1, 0.0, 1.0) * 255));
        const ImU32 rgb = f.mean ? ui.color(Color::heads_mean) : head_color(line.head, f.heads);
        return (rgb & ~IM_COL32_A_MASK) | (alpha << IM_COL32_A_SHIFT);
    };
    // The lines' weights, for tests to check against the weights read (a few thousand at most).
    if (ui.report && p.lines.lines.size() <= 5000)
        for (const core::HeadLine& line : p.lines.lines)
            ui.report_value("head view line " + (f.mean ? std::string("mean") : std::to_string(line.head + 1)) + " " +
                                std::to_string(line.query) + " " + std::to_string(line.key),
                            line.weight);
    const float lines_bottom = std::max(q.bottom(), k.bottom());
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    const ImVec2 corner{std::floor(x0), std::floor(l.top)};
    const int cols = static_cast<int>(std::ceil((x1 - corner.x) * scale.x));
    const int rows = static_cast<int>(std::ceil((lines_bottom - corner.y) * scale.y)) + 1;
    ImTextureID picture = nullptr;
    if (p.lines.lines.size() > max_vector_lines) {
        if (p.lines_of != p.painted_of || p.opacity_of_1 != p.painted_opacity) {
            ++p.painted_version;
            p.painted_of = p.lines_of;
            p.painted_opacity = p.opacity_of_1;
        }
        const auto texel = [&](ImVec2 at) { return ImVec2{(at.x - corner.x) * scale.x, (at.y - corner.y) * scale.y}; };
        picture = ui.heatmaps.image(
            ImGui::GetID("##lines"), p.painted_version, cols, rows, [&](std::vector<std::uint32_t>& rgba) {
                std::vector<PaintedLine> painted;
                painted.reserve(p.lines.lines.size());
                for (const core::HeadLine& line : p.lines.lines)
                    painted.push_back({texel({x0, q.y(line.query)}), texel({x1, k.y(line.key)}), line_colour(line)});
                paint_lines(rgba, cols, rows, painted);
            });
    }
    if (picture) {
        dl->AddImage(picture, corner,
                     {corner.x + static_cast<float>(cols) / scale.x, corner.y + static_cast<float>(rows) / scale.y});
    } else {
        dl->PushClipRect({x0, l.top}, {x1, lines_bottom + 1}, true);
        const float thickness = std::max(f.n, f.n_keys) <= 48 ? 1.5f : 1.0f;
        for (const core::HeadLine& line : p.lines.lines)
            dl->AddLine({x0, q.y(line.query)}, {x1, k.y(line.key)}, line_colour(line), thickness);
        dl->PopClipRect();
    }
}

// The labels, the highlighted ones last (over their neighbours); then the selection's bars.
void draw_labels(UiContext& ui, const HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Column &q = l.q, &k = l.k;
    const float pad = l.pad, line_h = l.line_h;
    const auto label = [&](const Column& c, const std::vector<std::string>& tokens, int t, bool right_aligned) {
        const std::string s = fitted_text(token_label(tokens, t), c.x1 - c.x0 - pad);
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        const float x = right_aligned ? c.x1 - pad * 0.5f - w : c.x0 + pad * 0.5f;
        dl->AddText({x, c.y(t) - line_h / 2}, l.text, s.c_str());
    };
    // A label is left out where a highlighted token's box covers it, rather than showing through.
    const auto covered = [&](const Column& c, const std::vector<int>& selected, int hovered, int t) {
        const auto near = [&](int s) { return s >= 0 && std::abs(c.y(t) - c.y(s)) < line_h; };
        return near(hovered) || std::any_of(selected.begin(), selected.end(), near);
    };
    for (int t = 0; t < f.n; t += l.step_q)
        if (!covered(q, p.queries, p.hovered_query, t)) label(q, f.query_tokens, t, true);
    for (int t = 0; t < f.n_keys; t += l.step_k)
        if (!covered(k, p.keys, p.hovered_key, t)) label(k, f.key_tokens, t, false);
    // The selected tokens and the hovered one on a coloured box over their neighbours' labels.
    const auto highlighted = [&](const Column& c, const std::vector<std::string>& tokens, int t, bool right_aligned,
                                 Color colour) {
        const float h = std::max(c.pitch, line_h) / 2;
        dl->AddRectFilled({c.x0, c.y(t) - h}, {c.x1, c.y(t) + h}, ui.color(colour), 3);
        label(c, tokens, t, right_aligned);
    };
    for (int t : p.queries) highlighted(q, f.query_tokens, t, true, Color::token_selected);
    for (int t : p.keys) highlighted(k, f.key_tokens, t, false, Color::token_selected);
    if (p.hovered_query >= 0) highlighted(q, f.query_tokens, p.hovered_query, true, Color::token_hovered);
    if (p.hovered_key >= 0) highlighted(k, f.key_tokens, p.hovered_key, false, Color::token_hovered);

    // The selection's bars: beside the keys what the selected queries attend to, beside the
    // queries how much of their attention goes to the selected keys.
    const ImFont* numbers = ui.fonts.numbers ? ui.fonts.numbers : ImGui::GetFont();
    draw_bars(dl, k, p.of_queries, k.x1, l.bar_w, 1, l.step_k, numbers, ui.color(Color::selection_bar), l.text);
    draw_bars(dl, q, p.to_keys, q.x0, l.bar_w, -1, l.step_q, numbers, ui.color(Color::selection_bar), l.text);
}

// What is drawn, and what is not.
void draw_drawn_line(UiContext& ui, const HeadViewPanel& p, const HeadViewLayout& l, const std::string& options) {
    if (!options.empty()) {  // what changes what a line is, whole (wrapped)
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + l.avail.x);
        ImGui::TextUnformatted(options.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
        ui.report_item("head view: options");
    }
    const core::HeadLines& lines = p.lines;
    const bool isolated = !p.lines_of.queries.empty() || !p.lines_of.keys.empty();
    const bool unicode = ui.notation() == core::Notation::unicode;
    char filters[96];
    std::snprintf(filters, sizeof filters, "weight %s %.3g%s", unicode ? "≥" : ">=", p.lines_of.min_weight,
                  p.lines_of.top_k > 0 ? (", top " + std::to_string(p.lines_of.top_k) + " per query").c_str() : "");
    std::string tail =
        (isolated ? "lines of the " +
                        std::string(p.hovered_query >= 0 || p.hovered_key >= 0 ? "hovered token" : "selection") + ": "
                  : std::string()) +
        "showing " + grouped(lines.lines.size(), unicode) + " of " + grouped(lines.considered, unicode) + " lines (" +
        filters + ")";
    if (p.opacity_of_1 < 1) {
        char scale[48];
        std::snprintf(scale, sizeof scale, "; opacity = weight / %.3g", p.opacity_of_1);
        tail += scale;
    }
    if (l.step_q > 1 || l.step_k > 1) tail += "; one label in " + std::to_string(std::max(l.step_q, l.step_k));
    ImGui::TextDisabled("%s", fitted_text(tail, l.avail.x).c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s\n%s lines considered: %s below the threshold, %s beyond the top k of their query, %s "
            "over the bound of %s lines a frame (the weakest)",
            tail.c_str(), grouped(lines.considered, unicode).c_str(), grouped(lines.below_min, unicode).c_str(),
            grouped(lines.beyond_top_k, unicode).c_str(), grouped(lines.over_bound, unicode).c_str(),
            grouped(max_lines_drawn, unicode).c_str());
}

// The selection's tables, side by side when both columns have a selection.
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

}  // namespace

namespace {

enum : int { from_session = 0, from_model_block = 1, from_attentions = 2 };

// The opened attentions' layer.
HeadViewSource attentions_source(const HeadViewPanel& p, const AttentionsMode& mode) {
    HeadViewSource s;
    const core::Attentions& a = *mode.weights;
    s.layers = static_cast<int>(a.layers.size());
    s.layer = std::clamp(p.layer.value_or(0), 0, s.layers - 1);
    for (int l = 0; l < s.layers; ++l) s.layer_names.push_back("layer " + std::to_string(l));
    for (const core::Matrix& w : a.layers[static_cast<std::size_t>(s.layer)]) s.heads.push_back(&w);
    s.queries = &a.query_tokens;
    s.keys = &a.key_tokens;
    s.key = {from_attentions, mode.serial, s.layer, p.hide_special};
    s.note = "Weights only: no X and no weight to edit (" + attentions_summary(mode) + ").";
    return s;
}

// The session's layer, or in model mode a block of the run: the block being edited is the session
// (its edits show at once), another block its run's weights.
HeadViewSource session_source(const AppState& state, HeadViewPanel& p, const ModelRun* run) {
    HeadViewSource s;
    const ModelResults* r = run ? run->results() : nullptr;
    const int edited = run ? run->editing_layer() : -1;
    const int blocks = r ? static_cast<int>(r->run->layers.size()) : 0;
    if (r) {
        s.layers = blocks;
        for (int l = 0; l < blocks; ++l)
            s.layer_names.push_back("layer " + std::to_string(l) + (l == edited ? " (edited)" : ""));
    }
    if (r && p.layer && *p.layer >= 0 && *p.layer < blocks && *p.layer != edited) {
        const int l = *p.layer;
        const HeadViewPanel::WeightsKey block{from_model_block, r->serial, l, false};
        if (!(p.block_of == block)) {  // its weights in double, once per run and layer
            p.block_weights.clear();
            for (const core::HeadTraceT<float>& h : r->run->layers[static_cast<std::size_t>(l)].trace.heads)
                p.block_weights.push_back(h.weights.cast<double>());
            p.block_of = block;
        }
        for (const core::Matrix& w : p.block_weights) s.heads.push_back(&w);
        s.layer = l;
        s.queries = s.keys = &r->run->tokens;
        s.key = {from_model_block, r->serial, l, p.hide_special};
        return s;
    }
    const Snapshot& shown = state.shown();
    s.layer = r ? edited : 0;
    s.can_norm = true;
    s.norm = p.norm_weighted ? p.norm.get(state) : nullptr;
    if (s.norm) {  // the rows of the snapshot they are of (the shown one, or the last while it is computed)
        for (const core::Matrix& m : s.norm->rows) s.heads.push_back(&m);
        s.queries = &s.norm->snapshot->session.tokens;
        s.keys = &core::key_tokens(s.norm->snapshot->session);
        s.key = {from_session, s.norm->generation, s.layer, p.hide_special, true};
        s.note =
            "Norm-weighted: each line is ‖α_ij·f_h(x_j)‖, how far key j moves query i's output, with each query "
            "row divided by its sum (the lines show relative strength). Hover a token for ‖f_h(x_j)‖, α_ij "
            "and their product.";
        return s;
    }
    for (const core::HeadTrace& h : shown.trace.heads) s.heads.push_back(&h.weights);
    s.queries = &shown.session.tokens;
    s.keys = &core::key_tokens(shown.session);
    s.key = {from_session, state.generation(), s.layer, p.hide_special};
    if (p.norm_weighted) s.note = "Norm-weighted: computing... (the weights meanwhile)";
    return s;
}

HeadViewSource source_of(const AppState& state, HeadViewPanel& p, const AttentionsMode* attentions,
                         const ModelRun* run) {
    return attentions && attentions->on() ? attentions_source(p, *attentions) : session_source(state, p, run);
}

// The tokens that are not special, once per weights shown.
const core::KeptTokens& ordinary_tokens(HeadViewPanel& p, const HeadViewSource& s) {
    HeadViewPanel::WeightsKey key = s.key;
    key.hide_special = true;
    if (!(p.ordinary_of == key)) {
        p.ordinary = core::kept_tokens(*s.queries, *s.keys, true);
        p.ordinary_of = key;
    }
    return p.ordinary;
}

SpecialTokens special_tokens(HeadViewPanel& p, const HeadViewSource& s) {
    const core::KeptTokens& kept = ordinary_tokens(p, s);
    SpecialTokens special;
    special.any = kept.queries.size() < s.queries->size() || kept.keys.size() < s.keys->size();
    special.can_hide = special.any && !kept.queries.empty() && !kept.keys.empty();
    special.hidden = p.hide_special && special.can_hide;
    return special;
}

// The source's heads with special tokens left out, each row renormalised (core::renormalised_weights),
// made again when the weights change.
void hide_special_tokens(HeadViewPanel& p, HeadViewSource& s) {
    if (!(p.renormalised_of == s.key)) {
        const core::KeptTokens& kept = ordinary_tokens(p, s);
        p.renormalised.clear();
        for (const core::Matrix* w : s.heads) p.renormalised.push_back(core::renormalised_weights(*w, kept));
        p.kept_queries.clear();
        p.kept_keys.clear();
        for (int q : kept.queries) p.kept_queries.push_back((*s.queries)[static_cast<std::size_t>(q)]);
        for (int k : kept.keys) p.kept_keys.push_back((*s.keys)[static_cast<std::size_t>(k)]);
        p.renormalised_of = s.key;
    }
    for (std::size_t h = 0; h < s.heads.size(); ++h) s.heads[h] = &p.renormalised[h];
    s.queries = &p.kept_queries;
    s.keys = &p.kept_keys;
}

// The mean of the heads shown, made again when they or their weights change; null when none is shown.
const core::Matrix* heads_mean(HeadViewPanel& p, const HeadViewFrame& f) {
    if (!(p.heads_mean_of == f.weights) || p.heads_mean_hidden != f.hidden) {
        core::Result<core::Matrix> mean = core::mean_of_heads(f.given);
        p.heads_mean_weights = mean ? std::move(*mean.value) : core::Matrix();
        p.heads_mean_of = f.weights;
        p.heads_mean_hidden = f.hidden;
    }
    return p.heads_mean_weights.size() > 0 ? &p.heads_mean_weights : nullptr;
}

// The legend of the options that change what a line is: the mean, hidden special tokens ("" for neither).
std::string options_note(const HeadViewFrame& f, const SpecialTokens& special) {
    std::string note;
    if (f.mean) note = "Lines: the mean of the heads shown (cell by cell).";
    if (special.hidden)
        note += std::string(note.empty() ? "" : " ") +
                "Special tokens hidden: each row is renormalised over the keys left (divided by its sum).";
    return note;
}

// The numbers the view shows, for tests: its shape, its options and the selection's attention.
void report_values(UiContext& ui, const HeadViewPanel& p, const HeadViewSource& s, const HeadViewFrame& f,
                   const SpecialTokens& special) {
    if (!ui.report) return;
    ui.report_value("head view layers", s.layers);
    ui.report_value("head view layer", s.layer);
    ui.report_value("head view heads", f.heads);
    ui.report_value("head view queries", f.n);
    ui.report_value("head view keys", f.n_keys);
    ui.report_value("head view special hidden", special.hidden);
    ui.report_value("head view mean", f.mean != nullptr);
    ui.report_value("head view norm-weighted", f.norm != nullptr);
    for (Eigen::Index j = 0; j < p.of_queries.size(); ++j)
        ui.report_value("head view of queries " + std::to_string(j), p.of_queries(j));
    for (Eigen::Index i = 0; i < p.to_keys.size(); ++i)
        ui.report_value("head view to keys " + std::to_string(i), p.to_keys(i));
}

}  // namespace

std::pair<int, int> head_view_tokens(const AppState& state, const HeadViewPanel& p, const AttentionsMode* attentions) {
    const bool opened = attentions && attentions->on();
    const std::vector<std::string>& queries = opened ? attentions->weights->query_tokens : state.shown().session.tokens;
    const std::vector<std::string>& keys = opened ? attentions->weights->key_tokens
                                                  : core::key_tokens(state.shown().session);
    const core::KeptTokens kept = core::kept_tokens(queries, keys, p.hide_special);
    if (kept.queries.empty() || kept.keys.empty())
        return {static_cast<int>(queries.size()), static_cast<int>(keys.size())};
    return {static_cast<int>(kept.queries.size()), static_cast<int>(kept.keys.size())};
}

void draw_head_view_panel(AppState& state, UiContext& ui, HeadViewPanel& p, const AttentionsMode* attentions,
                          const ModelRun* run) {
    HeadViewSource s = source_of(state, p, attentions, run);
    if (!s.note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("%s", s.note.c_str());
        ImGui::PopStyleColor();
        ui.report_item(s.can_norm ? "head view: norm-weighted note" : "head view: weights only");
    }
    const int heads = static_cast<int>(s.heads.size());
    if (heads == 0 || s.heads[0]->size() == 0) {
        ImGui::TextDisabled("No weights to show: the trace is empty.");
        return;
    }
    const SpecialTokens special = special_tokens(p, s);
    if (special.hidden) hide_special_tokens(p, s);
    const int n = static_cast<int>(s.heads[0]->rows());
    const int n_keys = static_cast<int>(s.heads[0]->cols());
    prune(p.queries, n);
    prune(p.keys, n_keys);
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && !ImGui::GetIO().WantTextInput &&
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
        clear_selection(p);

    const float min_weight = p.min_weight.value_or(static_cast<float>(core::default_min_weight(n_keys)));
    const int top_k = p.top_k.value_or(core::default_top_k(n_keys));
    const bool scaled = p.scaled_opacity.value_or(core::default_scaled_opacity(n_keys));
    draw_controls(ui, p, s, special, min_weight, top_k, scaled);
    HeadViewFrame f{*s.queries,
                    *s.keys,
                    heads,
                    n,
                    n_keys,
                    min_weight,
                    top_k,
                    scaled,
                    std::vector<const core::Matrix*>(static_cast<std::size_t>(heads)),
                    std::vector<char>(static_cast<std::size_t>(heads)),
                    s.key};
    f.weights.hide_special = special.hidden;
    f.norm = s.norm;
    if (special.hidden) f.kept = &p.ordinary;
    for (int h = 0; h < heads; ++h) {
        f.hidden[static_cast<std::size_t>(h)] = !head_shown(p, h);
        if (head_shown(p, h)) f.given[static_cast<std::size_t>(h)] = s.heads[static_cast<std::size_t>(h)];
    }
    if (p.heads_mean) f.mean = heads_mean(p, f);

    const std::string options = options_note(f, special);
    const HeadViewLayout l = layout_head_view(p, f, options);
    draw_header(p, l);
    ImGui::Dummy({l.avail.x, l.row_h + l.columns_h});
    const ImVec2 after = ImGui::GetCursorScreenPos();
    take_pointer(ui, p, f, l);
    update_lines(p, f);
    draw_lines(ui, p, f, l);
    draw_labels(ui, p, f, l);
    report_values(ui, p, s, f, special);

    ImGui::SetCursorScreenPos(after);
    draw_drawn_line(ui, p, l, options);
    if (!l.selection) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        text_fitted("Hover a token: its lines. Click: keep them. Ctrl+click: select several. Esc: clear.");
        ImGui::PopStyleColor();
        return;
    }
    draw_selection_tables(ui, p, f, l);
}

}  // namespace attnviz::app
