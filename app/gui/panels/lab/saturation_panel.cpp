#include "panels/lab/saturation_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/base/format.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/line_plot.hpp"

namespace attnviz::app {

namespace {

// The √d_k experiment's rows: 1, 2, 4, …, 1024, and the session's d_k when it is not one of them.
std::vector<int> experiment_dims(int d_k) {
    std::vector<int> dims = core::power_of_two_dims(1024);
    if (d_k <= 1024 && std::find(dims.begin(), dims.end(), d_k) == dims.end())
        dims.insert(std::lower_bound(dims.begin(), dims.end(), d_k), d_k);
    return dims;
}

// One missing row of the experiment per frame (the largest, d_k = 1024, takes about 20 ms).
void advance_variance(SaturationPanel& p, int d_k) {
    for (int d : experiment_dims(d_k))
        if (!p.variance.contains(d)) {
            p.variance[d] = core::dot_product_variance(d, variance_samples, variance_seed);
            return;
        }
}

ImU32 dimmed(ImU32 color) { return (color & ~IM_COL32_A_MASK) | (IM_COL32(0, 0, 0, 90) & IM_COL32_A_MASK); }

// The lines of `text` in `width` pixels, broken at spaces only (ImGui's wrapping also breaks
// after a '.', which would cut "0.972" in two; a no-break space, U+00A0, keeps "max ≥ 0.99"
// whole). A word wider than the width gets a line of its own.
std::vector<std::string> lines_of(const std::string& text, float width) {
    std::vector<std::string> lines;
    std::string line;
    size_t at = 0;
    while (at < text.size()) {
        const size_t end = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, end - at);
        const std::string longer = line.empty() ? word : line + " " + word;
        if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
            lines.push_back(line);
            line = word;
        } else {
            line = longer;
        }
        at = end + 1;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

// A paragraph wrapped at spaces to the room left in the panel.
void paragraph(const std::string& text) {
    for (const std::string& line : lines_of(text, ImGui::GetContentRegionAvail().x))
        ImGui::TextUnformatted(line.c_str());
}

// A box with a border around text wrapped at spaces, across the panel.
void draw_callout(const UiContext& ui, const std::string& text) {
    const float pad = ImGui::GetFontSize() * 0.5f, width = ImGui::GetContentRegionAvail().x;
    const std::vector<std::string> lines = lines_of(text, std::max(width - 2 * pad, ImGui::GetFontSize() * 4));
    const float line_h = ImGui::GetTextLineHeight(), height = line_h * static_cast<float>(lines.size()) + 2 * pad;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::Dummy({width, height});
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(at, {at.x + width, at.y + height}, ui.color(Color::callout), 4);
    dl->AddRect(at, {at.x + width, at.y + height}, ui.color(Color::callout_border), 4);
    for (size_t k = 0; k < lines.size(); ++k)
        dl->AddText({at.x + pad, at.y + pad + line_h * static_cast<float>(k)}, ImGui::GetColorU32(ImGuiCol_Text),
                    lines[k].c_str());
}

// A legend entry: a short line in the series' colour and its label; wraps to the next line when
// the panel is narrow. Returns whether it is hovered.
bool legend_entry(const char* label, ImU32 color, float thickness, bool dashed, bool first) {
    const float font = ImGui::GetFontSize(), line_w = font * 1.3f;
    const float inner = ImGui::GetStyle().ItemInnerSpacing.x;
    if (!first) same_line_if_fits(line_w + inner + ImGui::CalcTextSize(label).x);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float y = at.y + ImGui::GetTextLineHeight() / 2;
    ImGui::BeginGroup();
    ImGui::Dummy({line_w, ImGui::GetTextLineHeight()});
    ImDrawList* dl = ImGui::GetWindowDrawList();
    if (dashed)
        for (float x = 0; x < line_w; x += 7)
            dl->AddLine({at.x + x, y}, {at.x + std::min(x + 4, line_w), y}, color, thickness);
    else
        dl->AddLine({at.x, y}, {at.x + line_w, y}, color, thickness);
    ImGui::SameLine(0, inner);
    ImGui::TextUnformatted(label);
    ImGui::EndGroup();
    return ImGui::IsItemHovered();
}

// A number rounded to 3 significant digits: a divisor picked with the mouse reads 2.5, not 2.4973.
double round_to_3_digits(double v) {
    if (!(v > 0)) return v;
    const double scale = std::pow(10.0, 2 - std::floor(std::log10(v)));
    return std::round(v * scale) / scale;
}

}  // namespace

ScoresProfile scores_profile(const core::Trace& t) {
    ScoresProfile p;
    p.counts = {t.config.d_k, static_cast<std::int64_t>(t.heads.size()), static_cast<std::int64_t>(t.config.softmax)};
    Eigen::VectorXd w;
    for (const core::HeadTrace& head : t.heads) {
        const Eigen::Index n = head.scores_raw.rows(), keys = head.scores_raw.cols();
        p.counts.push_back(n);
        p.counts.push_back(keys);
        p.keys.emplace_back();
        if (w.size() != keys) {
            w.resize(keys);
            for (Eigen::Index j = 0; j < keys; ++j)
                w(j) = 1 + std::fmod(static_cast<double>(j) * 0.6180339887498949, 1.0);
        }
        const Eigen::VectorXd weighted = head.scores_raw * w;
        const Eigen::VectorXd abs = head.scores_raw.cwiseAbs().rowwise().sum();
        const auto masked = head.scores.array().isInf().rowwise().count();
        for (Eigen::Index i = 0; i < n; ++i) {
            p.keys.back().push_back(static_cast<int>(keys - masked(i)));
            p.sums.push_back({weighted(i), 2 * abs(i)});
            p.sums.push_back({abs(i), abs(i)});
        }
    }
    return p;
}

bool ScoresProfile::same_as(const ScoresProfile& o) const {
    if (counts != o.counts || keys != o.keys || sums.size() != o.sums.size()) return false;
    for (size_t k = 0; k < sums.size(); ++k) {
        const double magnitude = std::max(sums[k][1], o.sums[k][1]);
        if (std::abs(sums[k][0] - o.sums[k][0]) > 1e-11 * magnitude) return false;
    }
    return true;
}

bool apply_divisor(AppState& state, double s) {
    core::Config c = state.config();
    c.scale = {core::Scale::Kind::divisor, s};
    return state.set_config(c, "saturation lab divisor");
}

bool back_to_sqrt_dk(AppState& state) {
    core::Config c = state.config();
    c.scale.kind = core::Scale::Kind::sqrt_dk;
    return state.set_config(c);
}

bool advance_saturation(const AppState& state, SaturationPanel& p, double budget) {
    const core::Trace& t = state.trace();
    const int heads = static_cast<int>(t.heads.size());
    bool reset = false;
    if (p.checked != state.generation() || p.current.size() != t.heads.size()) {
        p.checked = state.generation();
        if (ScoresProfile now = scores_profile(t);
            !now.same_as(p.profile) || static_cast<int>(p.curves.size()) != heads) {
            p.profile = std::move(now);
            p.divisors = core::divisor_grid(t.config.d_k, saturation_points);
            p.curves.assign(t.heads.size(), std::vector<core::SaturationSummary>(p.divisors.size()));
            p.next_head = 0;
            p.next_row = 0;
            p.masked.resize(0, 0);
            p.compute_ms = 0;
            p.compute_frames = 0;
            reset = true;
        }
        // The rows at the trace's divisor: its own statistics (core::summarize(head, rows), with
        // the keys of each row already counted in the profile).
        p.current.clear();
        p.current_all = {};
        std::vector<core::RowSaturation> rows;
        for (size_t h = 0; h < t.heads.size(); ++h) {
            rows.clear();
            for (size_t i = 0; i < t.rows[h].size(); ++i)
                rows.push_back({t.rows[h][i].entropy, t.rows[h][i].max, p.profile.keys[h][i]});
            p.current.push_back(core::summarize(rows));
            p.current_all += p.current.back();
        }
    }
    // The frame that found new scores has compared them (and summarized the rows): the curves
    // start in the next one.
    if (p.next_head >= heads || reset) return p.next_head >= heads;
    const auto start = std::chrono::steady_clock::now();
    double spent = 0;
    while (p.next_head < heads && (spent == 0 || spent < budget)) {
        std::vector<core::SaturationSummary>& curve = p.curves[static_cast<size_t>(p.next_head)];
        if (p.next_row == 0) p.masked = core::masked_scores_raw(t.heads[static_cast<size_t>(p.next_head)]);
        const Eigen::Index n = p.masked.rows();
        if (p.next_row < n) {
            const double per_row = static_cast<double>(std::max<Eigen::Index>(p.masked.cols(), 1)) *
                                   static_cast<double>(p.divisors.size());
            const Eigen::Index rows = std::clamp(static_cast<Eigen::Index>((budget - spent) / per_row), Eigen::Index{1},
                                                 n - p.next_row);
            const core::SaturationCurves block = core::saturation_curves(p.masked.middleRows(p.next_row, rows),
                                                                         p.divisors, t.config.softmax);
            for (size_t k = 0; k < curve.size(); ++k) curve[k] += block.summaries[k];
            spent += static_cast<double>(rows) * per_row;
            p.next_row += rows;
        }
        if (p.next_row >= n) {
            ++p.next_head;
            p.next_row = 0;
            p.masked.resize(0, 0);
        }
    }
    p.compute_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++p.compute_frames;
    return p.next_head >= heads;
}

bool saturation_busy(const SaturationPanel& p) {
    return p.next_head < static_cast<int>(p.curves.size()) || p.variance.size() < core::power_of_two_dims(1024).size();
}

std::string saturation_callout(const core::SaturationSummary& all, core::Notation notation) {
    if (!all.saturated()) return "";
    const char* at_least = notation == core::Notation::unicode ? "≥" : ">=";
    return std::to_string(all.one_hot) + " of " + std::to_string(all.choosing) + " rows put " + at_least +
           "\u00a099% of their weight on one key: the softmax is saturated, its gradient vanishes (every entry of its "
           "Jacobian is below 0.01) and those rows barely learn.";
}

namespace {

// The slider: the editable session's divisor, on a log scale over the plots' range; then the
// shown divisor against √d_k.
void draw_divisor(AppState& state, UiContext& ui, const SaturationPanel& panel, const core::Trace& t, double root) {
    const core::Symbols& sym = ui.symbols();
    const float font = ImGui::GetFontSize();
    double lo = panel.divisors.front(), hi = panel.divisors.back();
    double s_edit = state.config().scale.value(state.config().d_k);
    ImGui::SetNextItemWidth(std::max(font * 6, std::min(font * 14, ImGui::GetContentRegionAvail().x)));
    if (ImGui::SliderScalar("##divisor", ImGuiDataType_Double, &s_edit, &lo, &hi, "s = %.3g",
                            ImGuiSliderFlags_Logarithmic) &&
        s_edit > 0)
        apply_divisor(state, s_edit);
    ui.report_item("saturation: divisor");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The divisor s of scores = QK%s / s (a temperature), on a log scale; Ctrl+click to type one.\n"
            "Smaller s: sharper rows. The seeds' choice is s = %s.",
            sym.transpose, sym.sqrt_dk);
    const std::string back = std::string("back to ") + sym.sqrt_dk;
    same_line_if_fits(ImGui::CalcTextSize(back.c_str()).x + ImGui::GetStyle().FramePadding.x * 2);
    ImGui::BeginDisabled(state.config().scale.kind == core::Scale::Kind::sqrt_dk);
    if (ImGui::Button(back.c_str())) back_to_sqrt_dk(state);
    ImGui::EndDisabled();
    ui.report_item("saturation: back to sqrt(d_k)");

    char where[192];
    std::snprintf(where, sizeof where, "s = %.3g = %.3g%s%s, %s = %.3g%s", t.scale, t.scale / root, sym.dot,
                  sym.sqrt_dk, sym.sqrt_dk, root, state.computing() ? "  (computing" : "");
    std::string where_text = where;
    if (state.computing()) where_text += std::string(sym.ellipsis) + ")";
    ImGui::TextDisabled("%s", fitted_text(where_text, ImGui::GetContentRegionAvail().x).c_str());
}

// The rows at the shown divisor, from the trace's own statistics; a callout when they saturate.
void draw_rows_now(UiContext& ui, const SaturationPanel& panel, double scale, double root) {
    const core::Symbols& sym = ui.symbols();
    const char* at_least = ui.notation() == core::Notation::unicode ? "≥" : ">=";
    const core::SaturationSummary& all = panel.current_all;
    char now[320];
    if (all.choosing == 0)
        std::snprintf(now, sizeof now, "Each query has a single key to look at: its weight is 1 whatever s is.");
    else
        std::snprintf(now, sizeof now,
                      "At this s: %d of %d rows nearly one-hot (max\u00a0%s\u00a00.99); mean entropy %.3g nats "
                      "(uniform:\u00a0%.3g), mean max weight %.3g.",
                      all.one_hot, all.choosing, at_least, all.mean_entropy, all.mean_uniform_entropy, all.mean_max);
    paragraph(now);
    if (const std::string callout = saturation_callout(all, ui.notation()); !callout.empty()) {
        char hint[160];
        if (scale < root)
            std::snprintf(hint, sizeof hint, " A larger s (%s = %.3g) softens them.", sym.sqrt_dk, root);
        else
            std::snprintf(hint, sizeof hint, " Even at this s: these scores are far apart.");
        draw_callout(ui, callout + hint);
        ui.report_item("saturation: callout");
    }
}

// The two plots' lines: one per head whose curve is complete, and their mean once all are.
// plots = {mean entropy, mean max weight}.
void plot_curves(const UiContext& ui, const SaturationPanel& panel, int heads, int complete, LinePlot& entropy_plot,
                 LinePlot& max_plot) {
    for (int h = 0; h < complete; ++h) {
        const bool lit = panel.highlighted == h;
        ImU32 color = head_color(h, heads);
        if (panel.highlighted >= 0 && !lit) color = dimmed(color);
        PlotSeries e{{}, color, ui.px(lit ? 3.0f : 1.5f)}, m{{}, color, ui.px(lit ? 3.0f : 1.5f)};
        for (const core::SaturationSummary& s : panel.curves[static_cast<size_t>(h)]) {
            e.y.push_back(s.mean_entropy);
            m.y.push_back(s.mean_max);
        }
        entropy_plot.series.push_back(std::move(e));
        max_plot.series.push_back(std::move(m));
    }
    if (heads > 1 && complete == heads) {  // the mean of the heads (their rows are as many)
        PlotSeries e{{}, ui.color(Color::plot_mean), ui.px(2.5f)}, m{{}, ui.color(Color::plot_mean), ui.px(2.5f)};
        for (size_t k = 0; k < panel.divisors.size(); ++k) {
            core::SaturationSummary sum;
            for (const auto& curve : panel.curves) sum += curve[k];
            e.y.push_back(sum.mean_entropy);
            m.y.push_back(sum.mean_max);
        }
        entropy_plot.series.push_back(std::move(e));
        max_plot.series.push_back(std::move(m));
    }
}

// The numbers at the grid point under the pointer: the highlighted head first, then each.
void plot_tooltip(const UiContext& ui, const SaturationPanel& panel, const PlotHover& hover, int highlight, int heads,
                  int complete, double root) {
    const core::Symbols& sym = ui.symbols();
    const size_t at = static_cast<size_t>(hover.point);
    std::string tip;
    char buf[160];
    std::snprintf(buf, sizeof buf, "s = %.3g = %.3g%s%s  (click or drag to use s = %.3g)\n", panel.divisors[at],
                  panel.divisors[at] / root, sym.dot, sym.sqrt_dk, round_to_3_digits(hover.x));
    tip += buf;
    for (int h = 0; h < complete && h < 16; ++h) {
        const core::SaturationSummary& s = panel.curves[static_cast<size_t>(h)][at];
        std::snprintf(buf, sizeof buf, "%shead %d: entropy %.3g, max %.3g, %d of %d rows one-hot\n",
                      h == highlight ? "> " : "  ", h + 1, s.mean_entropy, s.mean_max, s.one_hot, s.choosing);
        tip += buf;
    }
    if (complete > 16) tip += std::string("  ") + sym.ellipsis + "\n";
    if (complete < heads) tip += "  (the other heads are being computed)\n";
    tip.pop_back();
    ImGui::SetTooltip("%s", tip.c_str());
}

// The two plots, a line per head (and their mean), the current s and √d_k marked. Returns the
// head whose line is under the pointer, or -1.
int draw_plots(AppState& state, UiContext& ui, const SaturationPanel& panel, const core::Trace& t, double root,
               int complete) {
    const core::Symbols& sym = ui.symbols();
    const float font = ImGui::GetFontSize();
    const int heads = static_cast<int>(t.heads.size());
    const float legend_h = ImGui::GetTextLineHeightWithSpacing() * (heads > 6 ? 3 : 2);
    const float avail_y = ImGui::GetContentRegionAvail().y - legend_h - ImGui::GetStyle().ItemSpacing.y * 2;
    const ImVec2 plot_size{ImGui::GetContentRegionAvail().x, std::clamp(avail_y / 2, font * 8, font * 16)};
    LinePlot entropy_plot, max_plot;
    entropy_plot.title = "mean entropy of a row (nats) against s";
    max_plot.title = "mean max weight of a row against s";
    double uniform = 0;
    for (const core::SaturationSummary& s : panel.current) uniform = std::max(uniform, s.mean_uniform_entropy);
    for (LinePlot* p : {&entropy_plot, &max_plot}) {
        p->x = panel.divisors;
        p->x_min = panel.divisors.front();
        p->x_max = panel.divisors.back();
        p->vertical = {{t.scale, ui.color(Color::plot_current), "s", false},
                       {root, ui.color(Color::plot_reference), sym.sqrt_dk, true}};
    }
    entropy_plot.y_max = std::max(uniform, 0.1) * 1.08;
    // Labels where the lines are not: the entropy reaches uniform at large s (right), the max
    // weight one-hot at small s (left).
    entropy_plot.horizontal = {{uniform, ui.color(Color::plot_reference), "uniform", true, true}};
    max_plot.y_max = 1.08;
    max_plot.horizontal = {{core::one_hot_threshold, ui.color(Color::callout_border), "one-hot (0.99)", true, false}};
    plot_curves(ui, panel, heads, complete, entropy_plot, max_plot);
    int highlight = -1;
    const char* ids[] = {"##entropy plot", "##max plot"};
    const char* names[] = {"saturation: entropy plot", "saturation: max plot"};
    // One width for both plots' y numbers, so their x axes (and the s markers) line up.
    const float y_labels = std::max(y_labels_width(entropy_plot, plot_size), y_labels_width(max_plot, plot_size));
    entropy_plot.y_labels_min_width = max_plot.y_labels_min_width = y_labels;
    const LinePlot* plots[] = {&entropy_plot, &max_plot};
    for (int k = 0; k < 2; ++k) {
        const PlotHover hover = draw_line_plot(ids[k], *plots[k], plot_size, ui);
        ui.report_item(names[k]);
        if (!hover.hovered || hover.point < 0) continue;
        if (hover.nearest_series >= 0 && hover.nearest_series < complete) highlight = hover.nearest_series;
        if (hover.held) apply_divisor(state, round_to_3_digits(hover.x));
        plot_tooltip(ui, panel, hover, highlight, heads, complete, root);
    }
    return highlight;
}

// The legend: hovering a head's entry highlights its lines. Then how far the curves are.
void draw_legend(UiContext& ui, SaturationPanel& panel, int heads, int complete, int highlight) {
    const core::Symbols& sym = ui.symbols();
    bool first = true;
    if (heads > 1 && complete == heads) {
        legend_entry("mean of the heads", ui.color(Color::plot_mean), ui.px(2.5f), false, first);
        first = false;
    }
    for (int h = 0; h < complete; ++h) {
        const std::string label = "head " + std::to_string(h + 1);
        if (legend_entry(label.c_str(), head_color(h, heads), ui.px(h == panel.highlighted ? 3.0f : 2.0f), false,
                         first))
            highlight = h;
        first = false;
    }
    legend_entry("s in use", ui.color(Color::plot_current), 2, false, first);
    legend_entry(sym.sqrt_dk, ui.color(Color::plot_reference), 2, true, false);
    panel.highlighted = highlight;
    if (complete < heads)
        ImGui::TextDisabled("computing the curves: head %d of %d%s", complete + 1, heads, sym.ellipsis);
    else
        ImGui::TextDisabled("%d head%s %s %d divisors: %s over %d frame%s", heads, heads == 1 ? "" : "s",
                            ui.notation() == core::Notation::unicode ? "×" : "x",
                            static_cast<int>(panel.divisors.size()), core::format_duration(panel.compute_ms).c_str(),
                            panel.compute_frames, panel.compute_frames == 1 ? "" : "s");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The curves depend on scores_raw and the mask only: they are computed again when those change,\n"
            "not when s moves, a block of rows per frame so that the window stays responsive.");
}

// Why √d_k: the variance of q·k, with sampled numbers.
void draw_variance(const UiContext& ui, const SaturationPanel& panel, const core::Config& c) {
    const core::Symbols& sym = ui.symbols();
    ImGui::Spacing();
    const std::string header = std::string("Why ") + sym.sqrt_dk + "? The variance of q" + sym.dot + "k";
    if (!ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
    const std::vector<int> dims = experiment_dims(c.d_k);
    char text[512];
    std::snprintf(
        text, sizeof text,
        "q and k with d_k independent entries of mean 0 and variance 1 (%d samples per row, seed %d): q%sk is a sum "
        "of d_k products of variance 1, so its variance grows like d_k, and so does the spread of the scores; "
        "q%sk / %s keeps it near 1 whatever d_k is.",
        variance_samples, static_cast<int>(variance_seed), sym.dot, sym.dot, sym.sqrt_dk);
    paragraph(text);
    if (const auto last = panel.variance.find(1024); last != panel.variance.end()) {
        const core::DotVariance& v = last->second;
        std::snprintf(
            text, sizeof text,
            "At d_k = 1024: Var(q%sk) = %.4g, a standard deviation of %.3g, so of two keys one standard deviation "
            "apart the larger takes %.6f of the weight (one-hot). Divided by %s = 32: variance %.3g, and the "
            "larger takes %.2f.",
            sym.dot, v.var_dot, std::sqrt(v.var_dot), v.two_keys_raw, sym.sqrt_dk, v.var_scaled, v.two_keys_scaled);
        paragraph(text);
    }
    const std::string scaled_head = std::string("Var(q") + sym.dot + "k/" + sym.sqrt_dk + ")";
    const std::string dot_head = std::string("Var(q") + sym.dot + "k)";
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_BordersInnerV;
    if (!ImGui::BeginTable("variance", 5, flags)) return;
    ImGui::TableSetupColumn("d_k");
    ImGui::TableSetupColumn(dot_head.c_str());
    ImGui::TableSetupColumn(scaled_head.c_str());
    ImGui::TableSetupColumn("2 keys: raw");
    ImGui::TableSetupColumn("scaled");
    ImGui::TableHeadersRow();
    for (int d : dims) {
        ImGui::TableNextRow();
        if (d == c.d_k) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, dimmed(ui.color(Color::plot_current)));
        ImGui::TableNextColumn();
        ImGui::Text("%d%s", d, d == c.d_k ? " (this session)" : "");
        const auto found = panel.variance.find(d);
        if (found == panel.variance.end()) {
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%s", sym.ellipsis);
            continue;
        }
        const core::DotVariance& v = found->second;
        ImGui::TableNextColumn();
        ImGui::Text("%.4g", v.var_dot);
        ImGui::TableNextColumn();
        ImGui::Text("%.3f", v.var_scaled);
        ImGui::TableNextColumn();
        ImGui::Text("%.4f", v.two_keys_raw);
        ImGui::TableNextColumn();
        ImGui::Text("%.3f", v.two_keys_scaled);
    }
    ImGui::EndTable();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "2 keys: the larger weight of two keys whose scores are one standard deviation apart,\n"
            "1 / (1 + e^-sd): 0.5 is an even split, 1 is one-hot.");
}

}  // namespace

void draw_saturation_panel(AppState& state, UiContext& ui, SaturationPanel& panel) {
    advance_saturation(state, panel);
    // The slider below changes the scale, which may show a new trace at once: this frame keeps
    // drawing the snapshot it started with, held here so it outlives that.
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Trace& t = shown->trace;
    const core::Config& c = shown->session.config;
    advance_variance(panel, c.d_k);
    const double root = std::sqrt(static_cast<double>(c.d_k));
    const int heads = static_cast<int>(t.heads.size());
    draw_divisor(state, ui, panel, t, root);
    draw_rows_now(ui, panel, t.scale, root);
    const int complete = std::min(panel.next_head, heads);
    const int highlight = draw_plots(state, ui, panel, t, root, complete);
    draw_legend(ui, panel, heads, complete, highlight);
    draw_variance(ui, panel, c);
}

}  // namespace attnviz::app
