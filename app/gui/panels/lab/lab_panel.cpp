#include "panels/lab/lab_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <numeric>

#include "core/attention/forward.hpp"
#include "core/base/format.hpp"
#include "panels/lab/lab_heatmap.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/line_plot.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

LabResult compute_lab(std::shared_ptr<const Snapshot> snapshot, int head, const Snapshot* pinned) {
    const core::Config& c = snapshot->session.config;
    const core::Params& p = snapshot->session.params;
    const core::Trace& t = snapshot->trace;
    LabResult r;
    r.head = head;
    r.norm_weighted = core::norm_weighted(c, p, t, head);
    r.value_norms = core::value_outputs(c, p, t, head).rowwise().norm();
    r.circuits = core::circuits(c, p, head);
    r.ablation_zero_delta = core::ablation_delta(c, p, t, head, core::Ablation::zero);
    const bool patch = pinned && pinned->session.config == c && pinned->trace.heads.size() == t.heads.size();
    for (int h = 0; h < c.heads; ++h) {
        r.ablation_zero.push_back(core::ablation_delta(c, p, t, h, core::Ablation::zero).norm());
        r.ablation_mean.push_back(core::ablation_delta(c, p, t, h, core::Ablation::mean).norm());
        if (patch) r.patching.push_back(core::patching_delta(c, p, t, pinned->trace, h).norm());
        r.sinks.push_back(core::sink(t, h));
    }
    r.rope = core::rope_split(c, t, head);
    r.rope_profiles = core::rope_pair_profiles(c, r.rope);
    r.rope_rest = core::rope_rest_profile(r.rope);
    for (const core::RopePairProfile& profile : r.rope_profiles) r.rope_thetas.push_back(profile.theta);
    r.snapshot = std::move(snapshot);
    return r;
}

void update_lab(const AppState& state, LabPanel& p, const Snapshot* pinned) {
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Config& c = shown->session.config;
    p.head = std::clamp(p.head, 0, std::max(0, c.heads - 1));
    if (p.job.ready()) {
        std::optional<LabResult> done = p.job.take();
        if (done) p.result = std::move(*done);
    }
    const std::uint64_t pinned_generation = pinned ? pinned->generation : 0;
    if (p.result && p.result->snapshot->generation == shown->generation && p.result->head == p.head &&
        p.pinned_generation == pinned_generation)
        return;
    if (shown->trace.heads.empty() || shown->out_of_memory) return;
    if (p.job.valid() && p.job_generation == shown->generation && p.job_head == p.head) return;  // on its way
    p.pinned_generation = pinned_generation;
    if (core::forward_flops(c) <= state.sync_limit()) {
        p.job.cancel();
        p.result = compute_lab(shown, p.head, pinned);
        return;
    }
    // The pinned snapshot is shared with the job, so the Compare panel may replace its own meanwhile.
    std::shared_ptr<const Snapshot> pin;
    if (pinned) pin = std::make_shared<const Snapshot>(*pinned);
    p.job = p.worker.submit(
        [shown, head = p.head, pin](const Worker::Stop&) { return compute_lab(shown, head, pin.get()); });
    p.job_generation = shown->generation;
    p.job_head = p.head;
}

bool lab_busy(const LabPanel& p) { return p.job.valid() || model_ablation_busy(p.model) || lab_tokens_busy(p.tokens); }

namespace {

void draw_norm_weighted(const Snapshot& s, UiContext& ui, const LabResult& r) {
    const core::Matrix& weights = s.trace.heads[static_cast<size_t>(r.head)].weights;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 room{avail.x / 2 - ImGui::GetFontSize() * 5, avail.y - ImGui::GetFontSize() * 3};
    const std::vector<std::string>& keys = core::key_tokens(s.session);
    lab_heatmap(ui, "weights", weights, ui.colormap(core::MatrixId::weights), {0, 1, false}, room, &s.session.tokens,
                &keys);
    ImGui::SameLine();
    const double top = r.norm_weighted.size() > 0 ? std::max(r.norm_weighted.maxCoeff(), 1e-300) : 1.0;
    const HeatmapHit hit = lab_heatmap(ui, "norm-weighted", r.norm_weighted, ui.colormap(core::MatrixId::weights),
                                       {0, top, false}, room, &s.session.tokens, &keys);
    if (hit.hovered && hit.row >= 0 && hit.col >= 0) {
        ImGui::BeginTooltip();
        ImGui::Text(
            "\xe2\x80\x96"
            "f(x_%d)\xe2\x80\x96 = %s, \xce\xb1 = %s, product = %s",
            hit.col, core::format_number(r.value_norms(hit.col), 4).c_str(),
            core::format_number(weights(hit.row, hit.col), 4).c_str(),
            core::format_number(r.norm_weighted(hit.row, hit.col), 4).c_str());
        ImGui::EndTooltip();
    }
    ui.report_value("lab: norm-weighted max", top);
}

// Bars of descending values, one per singular value, in a box of `size`.
void bars(const char* title, const Eigen::VectorXd& values, ImVec2 size, ImU32 color) {
    ImGui::TextUnformatted(title);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(title, size);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRect(at, {at.x + size.x, at.y + size.y}, ImGui::GetColorU32(ImGuiCol_Border));
    if (values.size() == 0) return;
    const double top = std::max(values.maxCoeff(), 1e-300);
    const float w = size.x / static_cast<float>(values.size());
    for (Eigen::Index k = 0; k < values.size(); ++k) {
        const float h = static_cast<float>(values(k) / top) * (size.y - 2);
        const float x0 = at.x + w * static_cast<float>(k);
        draw->AddRectFilled({x0 + 1, at.y + size.y - h}, {x0 + std::max(2.0f, w - 1), at.y + size.y},
                            color);  // 1 px gaps
    }
    ImGui::SameLine();
    ImGui::Text("largest %s", core::format_number(top, 3).c_str());
}

// The eigenvalues as points in the complex plane, the unit circle's scale set by the largest.
void eigenvalue_plot(const std::vector<std::complex<double>>& lambda, float side, ImU32 color) {
    ImGui::TextUnformatted("W_OV eigenvalues (complex plane)");
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##eigenvalues", {side, side});
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 mid{at.x + side / 2, at.y + side / 2};
    const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Border);
    draw->AddRect(at, {at.x + side, at.y + side}, axis);
    draw->AddLine({at.x, mid.y}, {at.x + side, mid.y}, axis);
    draw->AddLine({mid.x, at.y}, {mid.x, at.y + side}, axis);
    double top = 1e-300;
    for (const std::complex<double>& l : lambda) top = std::max(top, std::abs(l));
    const float scale = (side / 2 - ImGui::GetFontSize() * 0.4f) / static_cast<float>(top);
    for (const std::complex<double>& l : lambda)
        draw->AddCircleFilled(
            {mid.x + static_cast<float>(l.real()) * scale, mid.y - static_cast<float>(l.imag()) * scale}, 3.5f, color);
    draw->AddText({at.x + 3, at.y + 2}, ImGui::GetColorU32(ImGuiCol_Text),
                  ("|\xce\xbb| \xe2\x89\xa4 " + core::format_number(top, 3)).c_str());
}

void draw_circuits(UiContext& ui, const LabResult& r) {
    const core::Circuits& c = r.circuits;
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool ov = c.W_OV.size() > 0;
    const float side = std::max(font * 8, std::min(avail.y - font * 3, avail.x / (ov ? 3.2f : 2.2f)));
    lab_heatmap(ui, "W_QK = W_Q\xc2\xb7W_K\xe1\xb5\x80", c.W_QK, core::Colormap::diverging, symmetric(c.W_QK),
                {side, side}, nullptr, nullptr);
    if (ov) {
        ImGui::SameLine();
        lab_heatmap(ui, "W_OV = W_V\xc2\xb7W_O\xe2\x81\xbd\xca\xb0\xe2\x81\xbe", c.W_OV, core::Colormap::diverging,
                    symmetric(c.W_OV), {side, side}, nullptr, nullptr);
    }
    ImGui::SameLine();
    ImGui::BeginGroup();
    const ImVec2 bar_size{std::max(font * 8, avail.x - (side + font * 2) * (ov ? 2 : 1) - font * 8), font * 4};
    bars("W_QK singular values (its first d_k)", c.qk_singular, bar_size, ui.color(Color::plot_mean));
    if (ov) {
        bars("W_OV singular values (its first d_v)", c.ov_singular, bar_size, ui.color(Color::plot_current));
        eigenvalue_plot(c.ov_eigenvalues, std::min(bar_size.x, font * 9), ui.color(Color::plot_current));
        ImGui::Text("copying score trace(W_OV) / \xce\xa3|\xce\xbb| = %s", core::format_number(c.copying, 3).c_str());
        ImGui::TextDisabled("positive: the head copies what it attends to");
        ui.report_value("lab: copying", c.copying);
    } else {
        ImGui::TextDisabled("No W_O: no OV circuit to show.");
    }
    ImGui::EndGroup();
    if (c.qk_singular.size() > 0) ui.report_value("lab: qk singular 0", c.qk_singular(0));
}

}  // namespace

namespace {

// Every head's effect, the largest first; a click on a row shows that head.
void draw_ablation(const Snapshot& s, UiContext& ui, LabPanel& p, const LabResult& r) {
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool patched = !r.patching.empty();
    std::vector<int> order(r.ablation_zero.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return r.ablation_zero[static_cast<size_t>(a)] > r.ablation_zero[static_cast<size_t>(b)];
    });
    ImGui::BeginChild("##ablation table", {std::min(avail.x * 0.45f, font * (patched ? 26 : 20)), 0}, false);
    ImGui::TextWrapped("\xe2\x80\x96\xce\x94output\xe2\x80\x96_F when a head's Z is replaced%s:",
                       patched ? ", or taken from the pinned session A (Compare)" : "");
    if (ImGui::BeginTable("##ablation", patched ? 4 : 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("head");
        ImGui::TableSetupColumn("by zeros");
        ImGui::TableSetupColumn("by its mean row");
        if (patched) ImGui::TableSetupColumn("patched from A");
        ImGui::TableHeadersRow();
        for (int h : order) {
            const size_t k = static_cast<size_t>(h);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(h);
            if (ImGui::Selectable(std::to_string(h + 1).c_str(), h == p.head, ImGuiSelectableFlags_SpanAllColumns))
                p.head = h;
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(core::format_number(r.ablation_zero[k], 4).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(core::format_number(r.ablation_mean[k], 4).c_str());
            if (patched) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(core::format_number(r.patching[k], 4).c_str());
            }
            ui.report_value("lab: ablation zero " + std::to_string(h + 1), r.ablation_zero[k]);
            ui.report_value("lab: ablation mean " + std::to_string(h + 1), r.ablation_mean[k]);
        }
        ImGui::EndTable();
    }
    if (!patched) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Pin a session in Compare to patch each head's Z from it.");
        ImGui::PopStyleColor();
    }
    ImGui::EndChild();
    ImGui::SameLine();
    const ImVec2 room{ImGui::GetContentRegionAvail().x - font * 4, avail.y - font * 3};
    const std::string title = "\xce\x94output, head " + std::to_string(r.head + 1) + "'s Z zeroed";
    lab_heatmap(ui, title.c_str(), r.ablation_zero_delta, core::Colormap::diverging, symmetric(r.ablation_zero_delta),
                room, &s.session.tokens, nullptr);
}

// In model mode: whether the Ablation view shows the block alone or the effect through the model.
bool choose_in_block(UiContext& ui, ModelAblation& m) {
    int in_block = m.in_block ? 1 : 0;
    if (ImGui::RadioButton("through the model", &in_block, 0)) m.in_block = false;
    ui.report_item("lab: through the model");
    ImGui::SameLine();
    if (ImGui::RadioButton("in this block", &in_block, 1)) m.in_block = true;
    ui.report_item("lab: in this block");
    return m.in_block;
}

// The chosen pair's part of the scores, every pair's mean |part| by frequency, and the chosen
// pair's mean part by relative position.
// A part of scores_raw's mean at each relative position key − query (a RopePairProfile's by_offset,
// offsets −(n − 1) on), as a line; nothing when it has none.
void draw_by_offset(const char* id, const char* title, const core::RopePairProfile& profile, int n, ImVec2 size,
                    UiContext& ui) {
    if (profile.by_offset.empty()) return;
    std::vector<double> offsets;
    for (size_t o = 0; o < profile.by_offset.size(); ++o) offsets.push_back(static_cast<double>(o) - (n - 1));
    LinePlot structure;
    structure.title = title;
    structure.x = offsets;
    structure.log_x = false;
    structure.x_min = offsets.front(), structure.x_max = std::max(offsets.back(), offsets.front() + 1);
    const auto [lo, hi] = std::minmax_element(profile.by_offset.begin(), profile.by_offset.end());
    structure.y_min = std::min(0.0, *lo), structure.y_max = std::max(*hi, structure.y_min + 1e-12);
    structure.series.push_back({profile.by_offset, ui.color(Color::plot_current), 2});
    draw_line_plot(id, structure, size, ui);
}

// The columns partial rotary leaves alone (GPT-NeoX's rotary_pct, Phi's partial_rotary_factor):
// their part of scores_raw, and its mean by relative position, flat but for what the tokens say.
void draw_rope_rest(const Snapshot& s, UiContext& ui, const LabResult& r) {
    const core::Config& c = s.session.config;
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float side = std::max(font * 8, std::min(avail.y - font * 3, avail.x * 0.4f));
    lab_heatmap(ui, "the unrotated columns' part of scores_raw", r.rope.rest, core::Colormap::diverging,
                symmetric(r.rope.rest), {side, side}, &s.session.tokens, &core::key_tokens(s.session));
    ImGui::SameLine();
    ImGui::BeginGroup();
    const float plot_w = std::max(font * 12, ImGui::GetContentRegionAvail().x - font);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + plot_w);
    ImGui::TextDisabled(
        "Columns %d to %d of each head's Q and K pass through RoPE unturned: their part of the scores is the "
        "same for a pair of tokens at any distance. Mean |part| %s, against %s for the rotated pairs together.",
        c.rope.rotated(c.d_k), c.d_k - 1, core::format_number(r.rope_rest.mean_abs, 4).c_str(),
        core::format_number(r.rope.pairs.empty() ? 0.0
                                                 : std::accumulate(r.rope_profiles.begin(), r.rope_profiles.end(), 0.0,
                                                                   [](double a, const core::RopePairProfile& q) {
                                                                       return a + q.mean_abs;
                                                                   }),
                            4)
            .c_str());
    ImGui::PopTextWrapPos();
    const core::RopePairProfile& rest = r.rope_rest;
    draw_by_offset("##rope rest structure", "their mean part by relative position (key \xe2\x88\x92 query)", rest,
                   static_cast<int>(r.rope.rest.rows()),
                   {plot_w, std::max(font * 6, ImGui::GetContentRegionAvail().y - font)}, ui);
    ImGui::EndGroup();
    ui.report_value("lab: rope rest mean abs", rest.mean_abs);
}

void draw_rope(const Snapshot& s, UiContext& ui, LabPanel& p, const LabResult& r, const ModelRun* model_run) {
    if (r.rope.pairs.empty()) {
        ImGui::TextDisabled("This session has no RoPE (Dimensions > RoPE).");
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped(
            "%s", position_split_note(lab_in_model(model_run, s.session.config.heads) ? model_run : nullptr).c_str());
        ImGui::PopStyleColor();
        ui.report_item("lab: position split note");
        return;
    }
    const core::Config& c = s.session.config;
    const float font = ImGui::GetFontSize();
    const int pairs = static_cast<int>(r.rope.pairs.size());
    // Partial rotary: one more choice past the pairs, the columns left unrotated.
    const bool partial = c.rope.rotated(c.d_k) < c.d_k;
    p.pair = std::clamp(p.pair, 0, pairs - (partial ? 0 : 1));
    ImGui::SetNextItemWidth(font * 12);
    int shown = p.pair + 1;
    if (ImGui::SliderInt("##pair", &shown, 1, pairs + (partial ? 1 : 0),
                         shown > pairs ? "unrotated columns" : "pair %d", ImGuiSliderFlags_AlwaysClamp))
        p.pair = shown - 1;
    ui.report_item("lab: rope pair");
    const auto partial_note = [&] {
        if (!partial) return;
        ImGui::PushTextWrapPos(0);  // wrapped, never cut at a narrow panel's edge
        ImGui::TextDisabled("RoPE turns %d of d_k = %d columns (%d pairs); %d pass through unturned",
                            c.rope.rotated(c.d_k), c.d_k, pairs, c.d_k - c.rope.rotated(c.d_k));
        ImGui::PopTextWrapPos();
    };
    if (p.pair == pairs) {
        partial_note();
        draw_rope_rest(s, ui, r);
        return;
    }
    const core::RopePairProfile& profile = r.rope_profiles[static_cast<size_t>(p.pair)];
    ImGui::SameLine();
    ImGui::Text("\xce\xb8_p = %s rad per token", core::format_number(profile.theta, 4).c_str());
    partial_note();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float side = std::max(font * 8, std::min(avail.y - font * 3, avail.x * 0.4f));
    const core::Matrix& part = r.rope.pairs[static_cast<size_t>(p.pair)];
    lab_heatmap(ui, "the pair's part of scores_raw", part, core::Colormap::diverging, symmetric(part), {side, side},
                &s.session.tokens, &core::key_tokens(s.session));
    ImGui::SameLine();
    ImGui::BeginGroup();
    const float plot_w = std::max(font * 12, ImGui::GetContentRegionAvail().x - font);
    const float plot_h = std::max(font * 6, (avail.y - font * 4) / 2);
    std::vector<double> x = r.rope_thetas, mean_abs;
    for (const core::RopePairProfile& each : r.rope_profiles) mean_abs.push_back(each.mean_abs);
    std::vector<size_t> by_theta(x.size());
    std::iota(by_theta.begin(), by_theta.end(), size_t{0});
    std::sort(by_theta.begin(), by_theta.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> xs, ys;
    for (size_t k : by_theta) xs.push_back(x[k]), ys.push_back(mean_abs[k]);
    LinePlot freq;
    freq.title = "mean |part| of each pair against its frequency \xce\xb8_p";
    freq.x = xs;
    freq.x_min = xs.front() * 0.9, freq.x_max = xs.back() * 1.1;
    freq.y_max = std::max(1e-12, *std::max_element(ys.begin(), ys.end()) * 1.1);
    freq.series.push_back({ys, ui.color(Color::plot_mean), 2});
    freq.vertical.push_back({profile.theta, ui.color(Color::plot_current), "pair " + std::to_string(p.pair + 1)});
    draw_line_plot("##rope frequency", freq, {plot_w, plot_h}, ui);
    draw_by_offset("##rope structure", "the pair's mean part by relative position (key \xe2\x88\x92 query)", profile,
                   static_cast<int>(part.rows()), {plot_w, plot_h}, ui);
    ImGui::EndGroup();
    ui.report_value("lab: rope mean abs", profile.mean_abs);
}

void draw_sinks(const Snapshot& s, UiContext& ui, const LabResult& r) {
    ImGui::TextWrapped(
        "Per head: the key with the largest mean weight over the queries, and the share of queries "
        "giving it at least %.1f of their weight (an attention sink when more than half do).",
        core::sink_threshold);
    if (!ImGui::BeginTable("##sinks", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* head : {"head", "key", "mean weight", "share of queries"}) ImGui::TableSetupColumn(head);
    ImGui::TableHeadersRow();
    const std::vector<std::string>& keys = core::key_tokens(s.session);
    for (size_t h = 0; h < r.sinks.size(); ++h) {
        const core::Sink& sink = r.sinks[h];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%zu%s", h + 1, sink.share > 0.5 ? "  sink" : "");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(
            (std::to_string(sink.key) + " " +
             quoted_label(sink.key < static_cast<int>(keys.size()) ? keys[static_cast<size_t>(sink.key)] : ""))
                .c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::format_number(sink.mean, 3).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.1f%%", sink.share * 100);
        ui.report_value("lab: sink share " + std::to_string(h + 1), sink.share);
        ui.report_value("lab: sink key " + std::to_string(h + 1), sink.key);
    }
    ImGui::EndTable();
}

}  // namespace

void draw_lab_panel(AppState& state, UiContext& ui, LabPanel& p, const Snapshot* pinned, ModelRun* model_run) {
    update_lab(state, p, pinned);
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const int heads = shown->session.config.heads;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    int head = p.head + 1;
    if (ImGui::SliderInt("##head", &head, 1, std::max(1, heads), "head %d", ImGuiSliderFlags_AlwaysClamp))
        p.head = head - 1;
    ui.report_item("lab: head");
    update_lab(state, p, pinned);
    if (!p.result) {
        ImGui::TextDisabled(p.job.valid() ? "Computing the lab's numbers\xe2\x80\xa6" : "No trace to analyse.");
        return;
    }
    const LabResult& r = *p.result;
    if (r.snapshot->generation != shown->generation || r.head != p.head) {
        ImGui::SameLine();
        ImGui::TextDisabled("(updating\xe2\x80\xa6)");
    }
    // The result is drawn with its own snapshot while a newer one is computed: its sizes match.
    const Snapshot& s = *r.snapshot;
    if (!ImGui::BeginTabBar("##lab")) return;
    const char* titles[] = {"Norm-weighted", "Circuits", "Ablation", "RoPE", "Sinks"};
    for (int view = 0; view < 5; ++view) {
        const ImGuiTabItemFlags flags = p.show_view == view ? ImGuiTabItemFlags_SetSelected : 0;
        if (!ImGui::BeginTabItem(titles[view], nullptr, flags)) continue;
        if (p.show_view == view) p.show_view.reset();  // chosen (ImGui selects it a frame after asked)
        switch (view) {
            case 0: draw_norm_weighted(s, ui, r); break;
            case 1:
                if (!lab_in_model(model_run, heads) || !draw_token_circuits(ui, p.tokens, *model_run, p.head))
                    draw_circuits(ui, r);
                break;
            case 2:
                if (lab_in_model(model_run, heads) && !choose_in_block(ui, p.model))
                    draw_model_ablation(ui, p.model, *model_run, p.head);
                else
                    draw_ablation(s, ui, p, r);
                break;
            case 3:
                if (r.rope.pairs.empty() && lab_in_model(model_run, heads) && position_split_applies(*model_run))
                    draw_position_split(ui, p.tokens, *model_run, p.head);
                else
                    draw_rope(s, ui, p, r, model_run);
                break;
            default: draw_sinks(s, ui, r); break;
        }
        ui.report_item(std::string("lab: view ") + titles[view]);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app
