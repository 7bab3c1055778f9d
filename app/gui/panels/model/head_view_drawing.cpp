#include "panels/model/head_view_detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <imgui.h>
#include <string>
#include <vector>

#include "panels/model/head_view_panel.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app::head_view_detail {

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

}  // namespace

std::string token_label(const std::vector<std::string>& tokens, int t) {
    return t >= 0 && t < static_cast<int>(tokens.size())
               ? core::bounded_text(tokens[static_cast<std::size_t>(t)], core::max_label_characters)
               : "#" + std::to_string(t + 1);
}

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

}  // namespace attnviz::app::head_view_detail
