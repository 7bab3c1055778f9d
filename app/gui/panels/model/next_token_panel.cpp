#include "panels/model/next_token_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// softmax(logits / T)[id] for each id, computed in double.
std::vector<double> probabilities(const Eigen::RowVectorXd& logits, double temperature,
                                  const std::vector<std::int32_t>& ids) {
    const Eigen::RowVectorXd scaled = logits / temperature;
    const double top = scaled.maxCoeff();
    const double sum = (scaled.array() - top).exp().sum();
    std::vector<double> p;
    for (const std::int32_t id : ids) p.push_back(std::exp(scaled(id) - top) / sum);
    return p;
}

// The list for the run shown, at the panel's T and k (recomputed when one of them changed).
void refresh(NextTokenPanel& p, const ModelRun& run) {
    const ModelResults& r = *run.results();
    if (p.serial == r.serial && p.computed_temperature == p.temperature && p.computed_k == p.k) return;
    p.serial = r.serial;
    p.computed_temperature = p.temperature;
    p.computed_k = p.k;
    p.entries.clear();
    const std::vector<model::TopToken> top = model::top_tokens(r.logits, p.k, p.temperature);
    const ModelResults* before = run.before_edit();
    p.compared = before && before->logits.size() == r.logits.size();
    std::vector<std::int32_t> ids;
    for (const model::TopToken& t : top) ids.push_back(t.id);
    const std::vector<double> p_before = p.compared ? probabilities(before->logits, p.temperature, ids)
                                                    : std::vector<double>(ids.size(), 0.0);
    std::vector<model::TopToken> top_before;
    if (p.compared) top_before = model::top_tokens(before->logits, p.k, p.temperature);
    for (size_t k = 0; k < top.size(); ++k) {
        const bool was_there = std::any_of(top_before.begin(), top_before.end(),
                                           [&](const model::TopToken& t) { return t.id == top[k].id; });
        p.entries.push_back({top[k], p_before[k], p.compared && !was_there});
    }
}

void draw_controls(NextTokenPanel& p) {
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("temperature T");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 8);
    ImGui::SliderFloat("##temperature", &p.temperature, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    p.temperature = std::clamp(p.temperature, 0.05f, 5.0f);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "p = softmax(logits / T): T < 1 sharpens the distribution, T > 1 flattens it; T = 1 is the "
            "model's own");
    same_line_if_fits(ImGui::CalcTextSize("top").x + font * 6.5f);
    ImGui::TextUnformatted("top");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5.5f);
    if (ImGui::InputInt("##k", &p.k)) p.k = std::clamp(p.k, 1, 50);
}

void draw_table(UiContext& ui, const NextTokenPanel& p, const ModelRun& run) {
    const float font = ImGui::GetFontSize();
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("next tokens", p.compared ? 3 : 2, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("token (id)", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthFixed, font * 4);
    if (p.compared) ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, font * 4);
    ImGui::TableHeadersRow();
    for (size_t k = 0; k < p.entries.size(); ++k) {
        const NextTokenPanel::Entry& e = p.entries[k];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        // The token's text, then its id dimmed (the id is dropped first where the column is narrow).
        const std::string text = quoted_label(run.token_text(e.top.id)), id = std::to_string(e.top.id);
        const float room = ImGui::GetContentRegionAvail().x;
        const float id_w = ImGui::CalcTextSize(id.c_str()).x + font * 0.4f;
        const bool with_id = ImGui::CalcTextSize(text.c_str()).x + id_w <= room;
        ImGui::TextUnformatted(fitted_text(text, with_id ? room - id_w : room).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("#%zu: id %d, piece %s, text %s", k + 1, e.top.id,
                              quoted_label(run.token_piece(e.top.id)).c_str(), text.c_str());
        if (with_id) {
            ImGui::SameLine(0, font * 0.4f);
            ImGui::TextDisabled("%s", id.c_str());
        }
        ImGui::TableNextColumn();
        // A bar of its probability behind the number.
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const float w = ImGui::GetContentRegionAvail().x;
        ImGui::GetWindowDrawList()->AddRectFilled(
            at, {at.x + w * static_cast<float>(e.top.p), at.y + ImGui::GetTextLineHeight()},
            ui.color(Color::selection_bar));
        ImGui::Text("%.4f", e.top.p);
        if (p.compared) ImGui::TableNextColumn();
        if (e.new_entry)
            ImGui::TextColored(ui.color_vec(Color::ok_text), "new");
        else if (p.compared)
            ImGui::TextUnformatted(probability_change_text(e.top.p - e.p_before).c_str());
        if (p.compared && ImGui::IsItemHovered())
            ImGui::SetTooltip("p %.4f now, %.4f before the edit%s", e.top.p, e.p_before,
                              e.new_entry ? " (not among the top before)" : "");
        const std::string name = std::to_string(k);
        ui.report_value("next id " + name, e.top.id);
        ui.report_value("next p " + name, e.top.p);
        if (p.compared) ui.report_value("next dp " + name, e.top.p - e.p_before);
    }
    ImGui::EndTable();
}

}  // namespace

std::string probability_change_text(double change) {
    if (!(std::abs(change) >= 0.00005)) return "0";  // (NaN too: no change to show)
    char text[32];
    std::snprintf(text, sizeof text, "%+.4f", change);
    return text;
}

void draw_next_token_panel(AppState&, UiContext& ui, NextTokenPanel& p, const ModelRun& run) {
    const ModelResults* r = run.results();
    ImGui::PushTextWrapPos(0);
    if (!r) {
        ImGui::TextDisabled("%s", run.opening().empty()
                                      ? "No model is open. File > Open model... (a Hugging Face folder of a GPT-2, "
                                        "Llama or Qwen2 model) shows here what it predicts after your sentence."
                                      : "Opening the model...");
        ImGui::PopTextWrapPos();
        return;
    }
    if (r->logits.size() == 0) {
        ImGui::TextDisabled(
            "%s is an encoder: it has no language-model head, so it predicts no next token. Its attention is in the "
            "Model view; the Model analysis panel shows its rollout and residual norms.",
            model::to_string(run.folder()->config().architecture));
        ImGui::PopTextWrapPos();
        return;
    }
    const std::vector<std::int32_t>& ids = r->run->token_ids;
    ImGui::TextDisabled("After %s (token %zu)%s:", quoted_label(r->texts.back()).c_str(), ids.size() - 1,
                        run.computing() ? ", computing..." : "");
    ImGui::PopTextWrapPos();
    draw_controls(p);
    refresh(p, run);
    if (p.compared) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("change: p now minus p before the last edit of layer %d (new: not in the top before)",
                            r->edited_layer);
        ImGui::PopTextWrapPos();
    }
    draw_table(ui, p, run);
}

}  // namespace attnviz::app
