#include "line_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fitted_text.hpp"

namespace attnviz::app {

std::string tick_text(double value) {
    char buf[32];
    if (value == std::round(value) && std::abs(value) < 1e6)
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else
        std::snprintf(buf, sizeof buf, "%.3g", value);
    return buf;
}

std::vector<double> log_ticks(double lo, double hi, int max_ticks) {
    if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi) || max_ticks < 1) return {};
    const int first = static_cast<int>(std::floor(std::log10(lo))), last = static_cast<int>(std::ceil(std::log10(hi)));
    const auto inside = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
    const std::vector<double> mantissas[] = {{1, 2, 5}, {1, 3}, {1}};
    for (const std::vector<double>& m : mantissas) {
        std::vector<double> ticks;
        for (int e = first; e <= last; ++e)
            for (double k : m)
                if (const double v = k * std::pow(10.0, e); inside(v)) ticks.push_back(v);
        if (static_cast<int>(ticks.size()) <= max_ticks) return ticks;
    }
    // Decades only, every `step`-th one.
    for (int step = 2;; ++step) {
        std::vector<double> ticks;
        for (int e = first; e <= last; ++e)
            if (e % step == 0 && inside(std::pow(10.0, e))) ticks.push_back(std::pow(10.0, e));
        if (static_cast<int>(ticks.size()) <= max_ticks) return ticks;
    }
}

std::vector<double> linear_ticks(double lo, double hi, int max_ticks) {
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || max_ticks < 1) return {};
    const double magnitude = std::pow(10.0, std::floor(std::log10((hi - lo) / max_ticks)));
    double step = magnitude;
    for (double k : {1.0, 2.0, 5.0, 10.0, 20.0}) {
        step = k * magnitude;
        if ((hi - lo) / step <= max_ticks) break;
    }
    std::vector<double> ticks;
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);  // no "-0" from rounding
    return ticks;
}

namespace {

void dashed_line(ImDrawList* dl, ImVec2 p, ImVec2 q, ImU32 color, float thickness = 1) {
    const float dx = q.x - p.x, dy = q.y - p.y, length = std::sqrt(dx * dx + dy * dy);
    constexpr float dash = 5, gap = 4;
    for (float t = 0; t < length; t += dash + gap) {
        const float u = std::min(t + dash, length);
        dl->AddLine({p.x + dx * t / length, p.y + dy * t / length}, {p.x + dx * u / length, p.y + dy * u / length},
                    color, thickness);
    }
}

// The room above the plot (its title) and below it (the x numbers, and a row for the vertical
// markers' labels under them, where no line can cover them).
ImVec2 margins(const LinePlot& p) {
    const float line = ImGui::GetTextLineHeight();
    return {line * 1.3f, line * (p.vertical.empty() ? 1.3f : 2.4f)};
}

std::vector<double> y_axis_ticks(const LinePlot& p, ImVec2 size) {
    const float line = ImGui::GetTextLineHeight();
    const float plot_h = size.y - margins(p).x - margins(p).y;
    return linear_ticks(p.y_min, p.y_max, std::clamp(static_cast<int>(plot_h / (line * 1.6f)), 1, 8));
}

}  // namespace

float y_labels_width(const LinePlot& plot, ImVec2 size) {
    float width = 0;
    for (double v : y_axis_ticks(plot, size)) width = std::max(width, ImGui::CalcTextSize(tick_text(v).c_str()).x);
    return width;
}

namespace {

// Where a plot is drawn this frame: the whole box at `at` of `size`, the plot's area from a to b.
struct PlotArea {
    const LinePlot& p;
    ImVec2 at, size;
    ImVec2 a, b;
    float line = 0, font = 0;
    ImU32 axis = 0, grid = 0;
    float px = 1;  // pixels per pixel at 16 px text (UiContext::scale): ticks and marks grow with the text
    double to_unit(double x) const {
        return p.log_x ? (std::log(x) - std::log(p.x_min)) / (std::log(p.x_max) - std::log(p.x_min))
                       : (x - p.x_min) / (p.x_max - p.x_min);
    }
    float fx(double x) const { return a.x + static_cast<float>(to_unit(x)) * (b.x - a.x); }
    float fy(double y) const { return b.y - static_cast<float>((y - p.y_min) / (p.y_max - p.y_min)) * (b.y - a.y); }
};

// Grid, ticks and their numbers, and the axes.
void draw_axes(ImDrawList* dl, const PlotArea& g, const std::vector<double>& y_ticks) {
    const LinePlot& p = g.p;
    const ImVec2 a = g.a, b = g.b;
    for (double v : y_ticks) {
        const float y = g.fy(v);
        const std::string t = tick_text(v);
        dl->AddLine({a.x, y}, {b.x, y}, g.grid);
        dl->AddLine({a.x - 3 * g.px, y}, {a.x, y}, g.axis, g.px);
        dl->AddText({a.x - 4 - ImGui::CalcTextSize(t.c_str()).x, y - g.line / 2}, g.axis, t.c_str());
    }
    const float x_label_w = ImGui::CalcTextSize("0.005").x + g.font;
    const int max_x_ticks = std::max(2, static_cast<int>((b.x - a.x) / x_label_w));
    const std::vector<double> x_ticks = p.log_x ? log_ticks(p.x_min, p.x_max, max_x_ticks)
                                                : linear_ticks(p.x_min, p.x_max, max_x_ticks);
    for (double v : x_ticks) {
        const float x = g.fx(v);
        const std::string t = tick_text(v);
        const float w = ImGui::CalcTextSize(t.c_str()).x;
        dl->AddLine({x, a.y}, {x, b.y}, g.grid);
        dl->AddLine({x, b.y}, {x, b.y + 3 * g.px}, g.axis, g.px);
        dl->AddText({std::clamp(x - w / 2, g.at.x, g.at.x + g.size.x - w), b.y + 3 * g.px}, g.axis, t.c_str());
    }
    dl->AddLine({a.x, a.y}, {a.x, b.y}, g.axis);
    dl->AddLine({a.x, b.y}, {b.x, b.y}, g.axis);
}

// The horizontal marks' lines, the series over them, then the marks' labels and the vertical marks.
void draw_lines(ImDrawList* dl, const PlotArea& g) {
    const LinePlot& p = g.p;
    const ImVec2 a = g.a, b = g.b;
    for (const PlotMark& m : p.horizontal) {
        if (m.value < p.y_min || m.value > p.y_max) continue;
        const float y = g.fy(m.value);
        if (m.dashed)
            dashed_line(dl, {a.x, y}, {b.x, y}, m.color);
        else
            dl->AddLine({a.x, y}, {b.x, y}, m.color);
    }
    std::vector<ImVec2> points;
    for (const PlotSeries& s : p.series) {
        points.clear();
        const auto flush = [&] {
            if (points.size() > 1)
                dl->AddPolyline(points.data(), static_cast<int>(points.size()), s.color, 0, s.thickness);
            points.clear();
        };
        for (size_t k = 0; k < p.x.size() && k < s.y.size(); ++k) {
            if (!std::isfinite(s.y[k])) {
                flush();
                continue;
            }
            points.push_back({g.fx(p.x[k]), g.fy(s.y[k])});
        }
        flush();
    }
    // The horizontal lines' labels over the series, each on a box of the window's background, so
    // that a line passing under one leaves it readable.
    for (const PlotMark& m : p.horizontal) {
        if (m.value < p.y_min || m.value > p.y_max) continue;
        const float y = g.fy(m.value);
        const ImVec2 t = ImGui::CalcTextSize(m.label.c_str());
        // Above the line; below it when the line is at the top.
        const ImVec2 at_label{m.label_left ? a.x + 3 : b.x - t.x - 3, y - t.y - 1 < a.y ? y + 1 : y - t.y - 1};
        dl->AddRectFilled({at_label.x - 2, at_label.y}, {at_label.x + t.x + 2, at_label.y + t.y},
                          (ImGui::GetColorU32(ImGuiCol_WindowBg) & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 200));
        dl->AddText(at_label, m.color, m.label.c_str());
    }
    for (size_t k = 0; k < p.vertical.size(); ++k) {
        const PlotMark& m = p.vertical[k];
        const bool below = m.value < p.x_min;
        const bool above = m.value > p.x_max;
        const float x = below ? a.x + 1 : above ? b.x - 1 : g.fx(m.value);
        if (m.dashed)
            dashed_line(dl, {x, a.y}, {x, b.y}, m.color, 1.5f * g.px);
        else
            dl->AddLine({x, a.y}, {x, b.y}, m.color, 2 * g.px);
    }
}

// Under the pointer: the x, the nearest grid point (marked) and the series passing nearest.
void hover_plot(ImDrawList* dl, const PlotArea& g, PlotHover& hover) {
    const LinePlot& p = g.p;
    const ImVec2 a = g.a, b = g.b;
    const ImVec2 mouse = ImGui::GetMousePos();
    const double u = std::clamp((mouse.x - a.x) / (b.x - a.x), 0.0f, 1.0f);
    hover.hovered = true;
    hover.x = p.log_x ? std::exp(std::log(p.x_min) + u * (std::log(p.x_max) - std::log(p.x_min)))
                      : p.x_min + u * (p.x_max - p.x_min);
    float best = 1e30f;
    for (size_t k = 0; k < p.x.size(); ++k)
        if (const float d = std::abs(g.fx(p.x[k]) - mouse.x); d < best) {
            best = d;
            hover.point = static_cast<int>(k);
        }
    const float gx = g.fx(p.x[static_cast<size_t>(hover.point)]);
    dashed_line(dl, {gx, a.y}, {gx, b.y}, g.axis);
    float nearest = g.font * 0.6f;
    for (size_t s = 0; s < p.series.size(); ++s) {
        const std::vector<double>& y = p.series[s].y;
        if (static_cast<size_t>(hover.point) >= y.size() || !std::isfinite(y[static_cast<size_t>(hover.point)]))
            continue;
        if (const float d = std::abs(g.fy(y[static_cast<size_t>(hover.point)]) - mouse.y); d < nearest) {
            nearest = d;
            hover.nearest_series = static_cast<int>(s);
        }
    }
}

// The markers' labels, under the axis: the first ends at its line, the second starts at its
// line, and so on, so two markers at one x read "s|√d_k". Outside the range a label points
// the way.
void draw_marker_labels(ImDrawList* dl, const PlotArea& g, const UiContext& ui) {
    const LinePlot& p = g.p;
    const bool unicode = ui.notation() == core::Notation::unicode;
    for (size_t k = 0; k < p.vertical.size(); ++k) {
        const PlotMark& m = p.vertical[k];
        const bool below = m.value < p.x_min;
        const bool above = m.value > p.x_max;
        const float x = below ? g.a.x : above ? g.b.x : g.fx(m.value);
        const std::string label = below   ? (unicode ? "← " : "<- ") + m.label
                                  : above ? m.label + (unicode ? " →" : " ->")
                                          : m.label;
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        const bool before = below ? false : above ? true : k % 2 == 0;
        const float tx = std::clamp(before ? x - 2 - w : x + 2, g.at.x, g.at.x + g.size.x - w);
        dl->AddLine({x, g.b.y + g.line * 1.1f}, {x, g.b.y + g.line * 2.2f}, m.color, 2 * g.px);
        dl->AddText({tx, g.b.y + g.line * 1.1f}, m.color, label.c_str());
    }
}

}  // namespace

PlotHover draw_line_plot(const char* id, const LinePlot& p, ImVec2 size, const UiContext& ui) {
    PlotHover hover;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    size = {std::max(size.x, 1.0f), std::max(size.y, 1.0f)};
    ImGui::InvisibleButton(id, size);
    const bool hovered = ImGui::IsItemHovered();
    hover.held = ImGui::IsItemActive() && ImGui::IsMouseDown(0);
    const float line = ImGui::GetTextLineHeight(), font = ImGui::GetFontSize();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddText(at, text, fitted_text(p.title, size.x).c_str());

    // The room around the plot: its title above, the x numbers below, the y numbers at the left.
    const float top = margins(p).x, bottom = margins(p).y;
    const std::vector<double> y_ticks = y_axis_ticks(p, size);
    const float label_w = std::max(y_labels_width(p, size), p.y_labels_min_width);
    const ImVec2 a{at.x + label_w + font * 0.5f, at.y + top}, b{at.x + size.x - font * 0.8f, at.y + size.y - bottom};
    const bool ranges = p.x_max > p.x_min && p.y_max > p.y_min && (!p.log_x || p.x_min > 0);
    if (b.x - a.x < font * 2 || b.y - a.y < line || !ranges) return hover;  // no room to draw in
    const PlotArea g{p, at, size, a, b, line, font, ui.color(Color::plot_axis), ui.color(Color::plot_grid), ui.scale()};

    draw_axes(dl, g, y_ticks);
    dl->PushClipRect(a, {b.x + 1, b.y + 1}, true);
    draw_lines(dl, g);
    if (hovered && !p.x.empty()) hover_plot(dl, g, hover);
    dl->PopClipRect();
    draw_marker_labels(dl, g, ui);
    return hover;
}

}  // namespace attnviz::app
