#include "panels/model/attribution_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/format.hpp"
#include "core/model/analysis.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

namespace {

std::int32_t top_prediction(const ModelResults& r) {
    Eigen::Index id = 0;
    r.logits.maxCoeff(&id);
    return static_cast<std::int32_t>(id);
}

// The attribution the panel wants for the results shown.
AttributionPanel::Key wanted(const AttributionPanel& p, const ModelResults& r) {
    return {r.serial, p.target >= 0 ? p.target : top_prediction(r), p.versus, p.steps};
}

// Takes what the worker finished; starts the attribution wanted when neither shown nor running.
void update(AttributionPanel& p, ModelRun& run) {
    if (p.job.ready()) {
        try {
            if (std::optional<core::Result<model::Attribution>> done = p.job.take()) {
                p.shown_key = p.job_key;
                p.problem = *done ? "" : problems_text(done->problems);
                p.shown = *done ? std::make_shared<const model::Attribution>(std::move(*done->value)) : nullptr;
            }
        } catch (const std::exception& e) {
            p.shown_key = p.job_key;
            p.problem = e.what();
            p.shown = nullptr;
        }
    }
    const AttributionPanel::Key want = wanted(p, *run.results());
    if (p.shown_key == want || (p.job.valid() && p.job_key == want) || (p.cancelled && p.job_key == want)) return;
    p.cancelled = false;
    model::Objective objective;
    objective.kind = want.versus >= 0 ? model::Objective::Kind::difference : model::Objective::Kind::logit;
    objective.target = want.target;
    objective.versus = std::max(want.versus, 0);
    p.done->store(0);
    p.total->store(want.steps + 2);
    p.job = run.on_results([objective, steps = want.steps, done = p.done,
                            total = p.total](const model::ModelFolder& folder, const model::RunState<float>& state,
                                             const std::function<bool()>& stopped) {
        return model::attribute<float>(folder, state, objective, steps, [&](int d, int t) {
            done->store(d);
            total->store(t);
            return !stopped();
        });
    });
    p.job_key = want;
}

// A token of the vocabulary as the combos show it: '·fox' (#1234).
std::string token_label(const ModelRun& run, std::int32_t id) {
    return "'" + visible_token(run.token_text(id)) + "' (#" + std::to_string(id) + ")";
}

// A choice among the run's ten most likely next tokens (with `none` first when allowed).
void token_combo(const char* label, const char* none, std::int32_t& id, const ModelResults& r, const ModelRun& run) {
    const std::string preview = id < 0 ? none : token_label(run, id);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11);
    if (!ImGui::BeginCombo(label, preview.c_str())) return;
    if (ImGui::Selectable(none, id < 0)) id = -1;
    for (const model::TopToken& t : model::top_tokens(r.logits, 10)) {
        char p[32];
        std::snprintf(p, sizeof p, "  p = %.3f", t.p);
        if (ImGui::Selectable((token_label(run, t.id) + p).c_str(), id == t.id)) id = t.id;
    }
    ImGui::EndCombo();
}

void draw_controls(AttributionPanel& p, const ModelResults& r, const ModelRun& run) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("target");
    ImGui::SameLine();
    token_combo("##target", "the top prediction", p.target, r, run);
    if (ImGui::IsItemHovered()) tooltip_text("The token whose logit at the last position is taken apart");
    same_line_if_fits(ImGui::GetFontSize() * 15);
    ImGui::TextUnformatted("versus");
    ImGui::SameLine();
    token_combo("##versus", "none", p.versus, r, run);
    if (ImGui::IsItemHovered())
        tooltip_text(
            "With a token: the objective is logit[target] − logit[versus], what makes the model "
            "prefer the target to it");
    same_line_if_fits(ImGui::GetFontSize() * 11);
    ImGui::TextUnformatted("IG steps");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::SliderInt("##steps", &p.steps, 4, 256, "%d", ImGuiSliderFlags_Logarithmic);
    p.steps = std::clamp(p.steps, 4, 256);
    if (ImGui::IsItemHovered())
        tooltip_text("Integrated gradients' points: each is a forward and a backward pass of the model");
}

// The tokens as chips shaded by their values on the diverging colormap (red raises the objective,
// blue lowers it), wrapped.
void token_strip(UiContext& ui, const char* id, const std::vector<double>& values,
                 const std::vector<std::string>& texts) {
    double scale = 1e-300;
    for (const double v : values) scale = std::max(scale, std::abs(v));
    ImGui::PushID(id);
    const float pad = ImGui::GetStyle().FramePadding.x, right = ImGui::GetContentRegionAvail().x;
    float used = 0;
    for (size_t i = 0; i < values.size() && i < texts.size(); ++i) {
        const std::string text = fitted_text(visible_token(texts[i]), ImGui::GetFontSize() * 8);
        const float w = ImGui::CalcTextSize(text.c_str()).x + 2 * pad;
        if (i > 0 && used + w < right)
            ImGui::SameLine(0, 2);
        else if (i > 0)
            used = 0;
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const ImVec2 size(w, ImGui::GetFrameHeight());
        const ImU32 fill = colormap_color(core::Colormap::diverging, static_cast<float>(0.5 + 0.5 * values[i] / scale));
        ImGui::GetWindowDrawList()->AddRectFilled(at, {at.x + size.x, at.y + size.y}, fill, 3);
        ImGui::GetWindowDrawList()->AddText({at.x + pad, at.y + ImGui::GetStyle().FramePadding.y}, text_color_on(fill),
                                            text.c_str());
        ImGui::InvisibleButton(std::to_string(i).c_str(), size);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("token %zu '%s': %s", i, visible_token(texts[i]).c_str(),
                              core::format_number(values[i]).c_str());
        used += w + 2;
    }
    ui.report_item(std::string("tokens: ") + id);
    ImGui::PopID();
}

// One signed bar: its label, a bar from the middle of `width` (right: positive), its value.
void signed_bar(const char* label, double value, double scale, float label_w, float width) {
    ImGui::TextUnformatted(label);
    ImGui::SameLine(label_w);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight(), mid = at.x + width / 2;
    const float len = static_cast<float>(std::abs(value) / scale) * width / 2;
    const ImU32 fill = colormap_color(core::Colormap::diverging, value >= 0 ? 0.9f : 0.1f);
    ImDrawList* d = ImGui::GetWindowDrawList();
    d->AddLine({mid, at.y}, {mid, at.y + h}, ImGui::GetColorU32(ImGuiCol_Border));
    d->AddRectFilled({value >= 0 ? mid : mid - len, at.y + 2}, {value >= 0 ? mid + len : mid, at.y + h - 2}, fill);
    ImGui::Dummy({width, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(core::format_number(value).c_str());
}

void draw_dla(UiContext& ui, const model::Attribution& a, bool soft_capped) {
    const auto layers = static_cast<int>(a.dla_mlps.size());
    double scale =
        std::max({a.dla_heads.cwiseAbs().maxCoeff(), std::abs(a.dla_embeddings), std::abs(a.dla_bias), 1e-300});
    for (const double v : a.dla_mlps) scale = std::max(scale, std::abs(v));
    ImGui::TextUnformatted("Direct logit attribution: each head's write through the final norm, at the last position");
    std::vector<std::string> rows, cols;
    for (int l = 0; l < layers; ++l) rows.push_back("L" + std::to_string(l));
    for (Eigen::Index h = 0; h < a.dla_heads.cols(); ++h) cols.push_back("h" + std::to_string(h));
    HeatmapOptions o;
    o.colormap = core::Colormap::diverging;
    o.range = {-scale, scale, false};
    o.row_labels = &rows;
    o.col_labels = &cols;
    o.max_size = {std::min(ImGui::GetContentRegionAvail().x * 0.6f, ImGui::GetFontSize() * 40),
                  ImGui::GetFontSize() * 16};
    o.max_cell = ImGui::GetFontSize() * 2.6f;
    const HeatmapHit hit = heatmap(ui, "##dla heads", a.dla_heads, o, "dla heads");
    if (hit.hovered && hit.row >= 0 && hit.col >= 0)
        ImGui::SetTooltip("layer %d head %d: %s", hit.row, hit.col,
                          core::format_number(a.dla_heads(hit.row, hit.col)).c_str());
    same_line_if_fits(ImGui::GetFontSize() * 22);
    ImGui::BeginGroup();
    const float label_w = ImGui::CalcTextSize("final norm's bias ").x, bar_w = ImGui::GetFontSize() * 8;
    for (int l = 0; l < layers; ++l)
        signed_bar(("MLP " + std::to_string(l)).c_str(), a.dla_mlps[static_cast<size_t>(l)], scale, label_w, bar_w);
    signed_bar("embeddings", a.dla_embeddings, scale, label_w, bar_w);
    signed_bar("final norm's bias", a.dla_bias, scale, label_w, bar_w);
    ImGui::EndGroup();
    ui.report_item("dla bars");
    ImGui::TextWrapped("sum of the parts %s = %s (the objective%s; residual %s)",
                       core::format_number(a.dla_sum).c_str(), core::format_number(a.dla_objective).c_str(),
                       soft_capped ? " before the final soft-cap" : "", core::format_number(a.dla_residual).c_str());
}

void draw_results(UiContext& ui, const AttributionPanel& p, const ModelResults& r, const ModelRun& run) {
    const model::Attribution& a = *p.shown;
    const std::string target = "'" + visible_token(run.token_text(a.objective.target)) + "'";
    const std::string objective = a.objective.kind == model::Objective::Kind::difference
                                      ? "logit[" + target + "] − logit['" +
                                            visible_token(run.token_text(a.objective.versus)) + "']"
                                      : "logit[" + target + "]";
    ImGui::TextWrapped("L = %s at the last position = %s", objective.c_str(), core::format_number(a.value).c_str());
    ImGui::Separator();
    ImGui::TextUnformatted("grad × input: Σ_d ∂L/∂x₀ ⊙ x₀ per token (red raises L, blue lowers it)");
    token_strip(ui, "grad x input", a.grad_x_input, r.texts);
    ImGui::TextUnformatted("integrated gradients (zero baseline)");
    token_strip(ui, "integrated gradients", a.integrated_gradients, r.texts);
    ImGui::TextWrapped("completeness: Σ IG = %s, L(x₀) − L(0) = %s (they meet as the steps grow; %d steps)",
                       core::format_number(a.integrated_sum).c_str(),
                       core::format_number(a.value - a.baseline_value).c_str(), a.steps);
    ImGui::Separator();
    draw_dla(ui, a, run.folder() && run.folder()->config().final_softcap > 0);
}

}  // namespace

void draw_attribution_panel(AppState&, UiContext& ui, AttributionPanel& p, ModelRun& run) {
    if (!run.is_open() || !run.results()) {
        ImGui::TextWrapped(
            "Open a model (File > Open model…) to see why it predicts its next token: which tokens, "
            "heads and MLPs raise or lower it.");
        return;
    }
    const ModelResults& r = *run.results();
    if (r.logits.size() == 0) {
        ImGui::TextWrapped("This model is an encoder: it predicts no next token, so there is nothing to attribute.");
        return;
    }
    draw_controls(p, r, run);
    update(p, run);
    if (p.job.valid()) {
        const int total = std::max(p.total->load(), 1);
        const float cancel_w = ImGui::CalcTextSize("Cancel").x + 2 * ImGui::GetStyle().FramePadding.x;
        ImGui::ProgressBar(static_cast<float>(p.done->load()) / static_cast<float>(total),
                           {std::max(ImGui::GetContentRegionAvail().x - cancel_w - ImGui::GetFontSize(), 1.0f), 0},
                           "attributing: a forward and a backward pass per step");
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) {
            p.job.cancel();
            p.cancelled = true;
        }
        ui.report_item("Cancel");
    }
    if (!p.problem.empty() && p.shown_key == wanted(p, r)) ImGui::TextWrapped("%s", p.problem.c_str());
    if (p.cancelled) ImGui::TextWrapped("Stopped. Change the target, the versus token or the steps to start again.");
    if (p.shown) draw_results(ui, p, r, run);
    ImGui::Separator();
    draw_patching_section(ui, p.patching, run, wanted(p, r).target, p.versus);
}

bool attribution_busy(const AttributionPanel& p) { return p.job.valid() || p.patching.job.valid(); }

void wait_for_attribution(const AttributionPanel& p) {
    p.job.wait();
    p.patching.job.wait();
}

}  // namespace attnviz::app
