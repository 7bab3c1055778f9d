#include "panels/model/patching_section.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

#include "core/base/format.hpp"
#include "state/model_layers.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

namespace {

using Outcome = core::Result<std::pair<model::Patching, std::vector<std::string>>>;

void take(PatchingSection& s) {
    if (!s.job.ready()) return;
    try {
        std::optional<Outcome> done = s.job.take();
        if (!done) return;
        s.shown_serial = s.job_serial;
        s.problem = *done ? "" : problems_text(done->problems);
        if (*done) {
            s.shown = std::make_shared<const model::Patching>(std::move(done->value->first));
            s.corrupt_tokens = std::move(done->value->second);
        }
    } catch (const std::exception& e) {
        s.problem = e.what();
    }
}

// One heatmap of patched entries (1: the clean prediction restored), diverging around 0.
void entries(UiContext& ui, const char* id, const core::Matrix& m, const std::vector<std::string>& rows,
             const std::vector<std::string>& cols, float width) {
    HeatmapOptions o;
    o.colormap = core::Colormap::diverging;
    const double scale = std::max(1.0, m.cwiseAbs().maxCoeff());
    o.range = {-scale, scale, false};
    o.row_labels = &rows;
    o.col_labels = &cols;
    o.max_size = {width, ImGui::GetFontSize() * 14};
    o.max_cell = ImGui::GetFontSize() * 2.6f;
    const HeatmapHit hit = heatmap(ui, id, m, o, id);
    if (hit.hovered && hit.row >= 0 && hit.col >= 0)
        ImGui::SetTooltip("%s %s: %s of the way from the corrupted diff to the clean one",
                          rows[static_cast<size_t>(hit.row)].c_str(), cols[static_cast<size_t>(hit.col)].c_str(),
                          core::format_number(m(hit.row, hit.col)).c_str());
}

void draw_shown(UiContext& ui, const PatchingSection& s, const ModelRun& run) {
    const model::Patching& p = *s.shown;
    if (s.shown_serial != run.results()->serial)
        ImGui::TextDisabled("(of the sentence before: press Patch again for this one)");
    ImGui::TextWrapped("diff: clean %s, corrupted %s; each entry is (diff − corrupted) / (clean − corrupted)",
                       core::format_number(p.clean_diff).c_str(), core::format_number(p.corrupt_diff).c_str());
    std::vector<std::string> layers, heads, positions;
    for (Eigen::Index l = 0; l < p.heads.rows(); ++l) layers.push_back("L" + std::to_string(l));
    for (Eigen::Index h = 0; h < p.heads.cols(); ++h) heads.push_back("h" + std::to_string(h));
    for (size_t i = 0; i < s.corrupt_tokens.size(); ++i)
        positions.push_back(fitted_text(visible_token(run.results()->texts.size() > i ? run.results()->texts[i] : "") +
                                            "/" + visible_token(s.corrupt_tokens[i]),
                                        ImGui::GetFontSize() * 6));
    const float width = std::min(ImGui::GetContentRegionAvail().x * 0.45f, ImGui::GetFontSize() * 24);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("each head's z");
    entries(ui, "patching heads", p.heads, layers, heads, width);
    ImGui::EndGroup();
    same_line_if_fits(width);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("each head's attention weights");
    entries(ui, "patching attention", p.attention, layers, heads, width);
    ImGui::EndGroup();
    ImGui::TextUnformatted("the residual stream entering each block, by position (clean/corrupted token)");
    entries(ui, "patching residual", p.residual, layers, positions, ImGui::GetContentRegionAvail().x);
}

}  // namespace

void start_patching(PatchingSection& s, ModelRun& run, std::int32_t target, std::int32_t versus) {
    model::Objective o;
    o.kind = versus >= 0 ? model::Objective::Kind::difference : model::Objective::Kind::logit;
    o.target = target;
    o.versus = std::max(versus, 0);
    s.done->store(0);
    s.total->store(0);
    s.job_serial = run.results()->serial;
    s.job = run.on_results([o, text = s.corrupt, tokenizer = run.tokenizer(), done = s.done,
                            total = s.total](const model::ModelFolder& folder, const model::RunState<float>& clean,
                                             const std::function<bool()>& stopped) -> Outcome {
        if (!tokenizer) return Outcome::fail({{"", "the model has no tokenizer to read the corrupted sentence"}});
        const core::Result<model::Encoding> e = tokenizer->encode(text);
        if (!e) return Outcome::fail(e.problems);
        core::Result<model::RunState<float>> corrupt = model::run_model<float>(folder, e.value->ids, e.value->tokens);
        if (!corrupt) return Outcome::fail(std::move(corrupt.problems));
        core::Result<model::Patching> p = model::patch<float>(folder, clean, *corrupt.value, o, [&](int d, int t) {
            done->store(d);
            total->store(t);
            return !stopped();
        });
        if (!p) return Outcome::fail(std::move(p.problems));
        std::vector<std::string> texts;
        for (const std::int32_t id : e.value->ids) texts.push_back(tokenizer->decode({id}));
        return Outcome::ok({std::move(*p.value), std::move(texts)});
    });
}

void draw_patching_section(UiContext& ui, PatchingSection& s, ModelRun& run, std::int32_t target, std::int32_t versus) {
    take(s);
    ImGui::TextUnformatted("Activation patching: the corrupted sentence run with one piece from this one");
    const float button_w = ImGui::CalcTextSize("Patch").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - button_w - ImGui::GetFontSize(), 1.0f));
    const bool enter = ImGui::InputTextWithHint("##corrupt", "a corrupted sentence of as many tokens", &s.corrupt,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ui.report_item("corrupted sentence");
    ImGui::SameLine();
    ImGui::BeginDisabled(s.corrupt.empty() || s.job.valid());
    if (ImGui::Button("Patch") || (enter && !s.corrupt.empty() && !s.job.valid()))
        start_patching(s, run, target, versus);
    ImGui::EndDisabled();
    ui.report_item("Patch");
    if (s.job.valid()) {
        const float cancel_w = ImGui::CalcTextSize("Cancel##patch").x + 2 * ImGui::GetStyle().FramePadding.x;
        ImGui::ProgressBar(static_cast<float>(s.done->load()) / static_cast<float>(std::max(s.total->load(), 1)),
                           {std::max(ImGui::GetContentRegionAvail().x - cancel_w - ImGui::GetFontSize(), 1.0f), 0},
                           "patching: the blocks after each patch run again");
        ImGui::SameLine();
        if (ImGui::Button("Cancel##patch")) s.job.cancel();
        ui.report_item("Cancel patching");
    }
    if (!s.problem.empty()) text_wrapped_bounded(s.problem);
    if (s.shown && s.problem.empty()) draw_shown(ui, s, run);
}

}  // namespace attnviz::app
