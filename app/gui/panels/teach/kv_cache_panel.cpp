#include "panels/teach/kv_cache_panel.hpp"

#include <algorithm>
#include <imgui.h>

#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

// Head, prefill and the step, with Prev and Next.
void draw_controls(const core::Config& c, UiContext& ui, KvCachePanel& p) {
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(font * 6);
    int head = p.head + 1;
    if (ImGui::SliderInt("head", &head, 1, std::max(1, c.heads))) p.head = std::clamp(head, 1, c.heads) - 1;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 8);
    ImGui::SliderInt("prefill", &p.prefill, 0, std::max(0, c.n - 1), "%d", ImGuiSliderFlags_AlwaysClamp);
    ui.report_item("kv cache: prefill");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The tokens run at once before the first decoding step");
    if (!p.run || p.run->steps.empty()) return;
    const int total = static_cast<int>(p.run->steps.size());
    if (ImGui::Button("< Prev")) p.step = std::max(0, p.step - 1);
    ImGui::SameLine();
    if (ImGui::Button("Next >")) p.step = std::min(total - 1, p.step + 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 12);
    int token = p.run->steps[static_cast<size_t>(p.step)].token;
    if (ImGui::SliderInt("##token", &token, p.run->prefill, c.n - 1, "token %d", ImGuiSliderFlags_AlwaysClamp))
        p.step = token - p.run->prefill;
    ui.report_item("kv cache: step");
}

HeatmapOptions small(UiContext& ui, const core::Matrix& m, core::MatrixId id, ImVec2 room,
                     const std::vector<std::string>* rows, const std::vector<std::string>* cols) {
    HeatmapOptions o;
    o.colormap = ui.colormap(id);
    o.range = heatmap_range(ui, m, id, 0);
    o.max_size = room;
    o.max_cell = ImGui::GetFontSize() * 4;
    o.row_labels = rows;
    o.col_labels = cols;
    return o;
}

// One matrix of the step with its title above.
void titled(UiContext& ui, const char* title, const core::Matrix& m, const HeatmapOptions& o, const char* report) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(title);
    const HeatmapHit hit = heatmap(ui, title, m, o, report);
    if (ui.report) ui.report->heatmaps.push_back({report, hit.cells_min, hit.cells_max});
    ImGui::EndGroup();
}

// The step: q_t, the cache's K and V (the appended row outlined), the weights over the cache, and
// the output row against the whole layer's.
void draw_step(const Snapshot& shown, UiContext& ui, const KvCachePanel& p) {
    const core::KvCacheStep& step = p.run->steps[static_cast<size_t>(p.step)];
    const core::HeadTrace& h = shown.trace.heads[static_cast<size_t>(p.head)];
    const int t = step.token;
    const bool rope = shown.session.config.rope.on;
    const core::Matrix q = step.q[static_cast<size_t>(p.head)];
    const core::Matrix K = (rope ? h.K_rot : h.K).topRows(t + 1);
    const core::Matrix V = h.V.topRows(t + 1);
    const core::Matrix weights = step.weights[static_cast<size_t>(p.head)];
    const std::vector<std::string>& tokens = shown.session.tokens;
    const std::vector<std::string> seen(tokens.begin(), tokens.begin() + std::min<size_t>(t + 1, tokens.size()));
    const std::vector<std::string> now{t < static_cast<int>(tokens.size()) ? tokens[static_cast<size_t>(t)] : ""};
    ImGui::PushTextWrapPos(0);
    ImGui::Text(
        "Token %d %s: its query against the %d keys and values in the cache (the last one its own, just "
        "appended). No mask: the cache holds no later token.",
        t, quoted_label(now.front()).c_str(), t + 1);
    ImGui::PopTextWrapPos();
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 room{std::max(font * 5, avail.x / 4.6f), std::max(font * 8, avail.y - font * 16)};
    titled(ui, rope ? "q_t (rotated)" : "q_t", q, small(ui, q, core::MatrixId::Q, room, &now, nullptr), "kv cache: q");
    ImGui::SameLine();
    HeatmapOptions k = small(ui, K, core::MatrixId::K, room, &seen, nullptr);
    k.marks.push_back({t, -1, 0});
    titled(ui, rope ? "K cache (rotated)" : "K cache", K, k, "kv cache: K");
    ImGui::SameLine();
    HeatmapOptions v = small(ui, V, core::MatrixId::V, room, &seen, nullptr);
    v.marks.push_back({t, -1, 0});
    titled(ui, "V cache", V, v, "kv cache: V");
    ImGui::SameLine();
    titled(ui, "weights_t", weights, small(ui, weights, core::MatrixId::weights, room, &now, &seen),
           "kv cache: weights");
    // The output row from the cache, and the same row of the whole layer computed at once, causal.
    const core::Matrix output = step.output;
    const core::Matrix whole = p.run->whole_output.row(t);
    const bool narrow = avail.x < font * 60;
    const ImVec2 wide{std::max(font * 8, narrow ? avail.x - font * 4 : avail.x / 2.3f), font * 4};
    titled(ui, "output_t from the cache", output, small(ui, output, core::MatrixId::output, wide, &now, nullptr),
           "kv cache: output");
    if (!narrow) ImGui::SameLine();
    titled(ui, "row t of the whole causal layer", whole, small(ui, whole, core::MatrixId::output, wide, &now, nullptr),
           "kv cache: whole output");
    ImGui::Text("max |difference| = %s", core::format_number(step.difference, 3).c_str());
    ui.report_value("kv cache: difference", step.difference);
    ui.report_value("kv cache: max difference", p.run->max_difference);
    ui.report_value("kv cache: weights sum", weights.sum());
}

// The cache's bytes: this layer after the step, and a model of this shape.
void draw_bytes(const core::Config& c, UiContext& ui, KvCachePanel& p) {
    const core::KvCacheStep& step = p.run->steps[static_cast<size_t>(p.step)];
    ImGui::TextWrapped(
        "This layer's cache after the step: %s in double (%d K/V heads \xc3\x97 (d_k + d_v) \xc3\x97 %d tokens "
        "\xc3\x97 8 bytes).",
        core::format_bytes(step.cache_bytes).c_str(), c.kv_count(), step.token + 1);
    ui.report_value("kv cache: layer bytes", static_cast<double>(step.cache_bytes));
    const float font = ImGui::GetFontSize();
    // Each field beside the last where the panel has room for it, else on the next line.
    const auto next_to = [](float field, const char* label) {
        ImGui::SameLine();
        const float width = field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
        if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
        ImGui::SetNextItemWidth(field);
    };
    ImGui::TextUnformatted("A model of this layer's shape:");
    next_to(font * 6, "layers");
    ImGui::InputInt("layers", &p.layers, 0);
    p.layers = std::clamp(p.layers, 1, 1000);
    next_to(font * 7, "tokens");
    ImGui::InputInt("tokens", &p.tokens, 0);
    p.tokens = std::clamp(p.tokens, 1, 10'000'000);
    next_to(font * 8, "bytes per value");
    const int sizes[] = {2, 4, 8};
    const char* names[] = {"2 (16-bit)", "4 (float)", "8 (double)"};
    int chosen = p.bytes_per_value == 8 ? 2 : p.bytes_per_value == 4 ? 1 : 0;
    if (ImGui::Combo("bytes per value", &chosen, names, 3)) p.bytes_per_value = sizes[chosen];
    const std::int64_t grouped = core::kv_cache_bytes(c, p.layers, p.tokens, p.bytes_per_value, true);
    const std::int64_t per_head = core::kv_cache_bytes(c, p.layers, p.tokens, p.bytes_per_value, false);
    ImGui::TextWrapped("KV cache: %s with %d K/V heads%s; %s with one K and V per head (%d).",
                       core::format_bytes(grouped).c_str(), c.kv_count(),
                       c.grouped() ? " (grouped-query attention)" : "", core::format_bytes(per_head).c_str(), c.heads);
    ui.report_value("kv cache: model bytes", static_cast<double>(grouped));
    ui.report_value("kv cache: model bytes without groups", static_cast<double>(per_head));
}

}  // namespace

void update_kv_cache(const AppState& state, KvCachePanel& p) {
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Config& c = shown->session.config;
    p.head = std::clamp(p.head, 0, std::max(0, c.heads - 1));
    p.prefill = std::clamp(p.prefill, 0, std::max(0, c.n - 1));
    if (p.run_generation == shown->generation && p.run_prefill == p.prefill && (p.run || !p.error.empty())) return;
    p.run.reset();
    p.error.clear();
    p.run_generation = shown->generation;
    p.run_prefill = p.prefill;
    if (c.n > max_kv_cache_tokens) {
        p.error = "The stepper follows sessions of up to " + std::to_string(max_kv_cache_tokens) +
                  " tokens; this one has n = " + std::to_string(c.n) + ".";
        return;
    }
    if (shown->trace.heads.empty()) return;
    core::Result<core::KvCacheRun> run = core::kv_cache_decode(shown->session, p.prefill);
    if (!run) {
        p.error = run.problems.front().str();
        return;
    }
    p.run = std::move(*run.value);
    p.step = std::clamp(p.step, 0, std::max(0, static_cast<int>(p.run->steps.size()) - 1));
}

void draw_kv_cache_panel(AppState& state, UiContext& ui, KvCachePanel& p) {
    update_kv_cache(state, p);
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Config& c = shown->session.config;
    draw_controls(c, ui, p);
    update_kv_cache(state, p);  // the prefill may have changed
    if (!p.error.empty()) {
        text_wrapped_bounded(p.error, ui.color_vec(Color::error_text));
        return;
    }
    if (!p.run || p.run->steps.empty()) return;
    draw_step(*shown, ui, p);
    draw_bytes(c, ui, p);
}

}  // namespace attnviz::app
