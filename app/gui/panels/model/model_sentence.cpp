#include "panels/model/model_sentence.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cfloat>

#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// At most this many rows of chips are shown at once; more scroll.
constexpr int chip_rows_shown = 3;

// The chips: each token's text with its id under it, wrapped to the width.
void draw_chips(UiContext& ui, const ModelRun& run, const ModelResults& r) {
    const float font = ImGui::GetFontSize();
    ImFont* small = ui.fonts.numbers ? ui.fonts.numbers : ImGui::GetFont();
    const float small_size = ui.fonts.numbers ? ui.fonts.numbers->FontSize : font;
    const float pad = std::round(font * 0.3f), gap = std::round(font * 0.25f);
    const float chip_h = font + small_size + pad * 2, max_w = font * 10;
    const float width = ImGui::GetContentRegionAvail().x;
    // The rows the chips take at this width, to size the scrolling area.
    const std::vector<std::int32_t>& ids = r.run->token_ids;
    std::vector<float> widths;
    int rows = 1;
    float x = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        const std::string id = std::to_string(ids[i]);
        const float w = std::min(max_w, std::max(ImGui::CalcTextSize(visible_token(r.texts[i]).c_str()).x,
                                                 small->CalcTextSizeA(small_size, FLT_MAX, 0, id.c_str()).x)) +
                        pad * 2;
        widths.push_back(w);
        if (x > 0 && x + w > width - ImGui::GetStyle().ScrollbarSize) {
            ++rows;
            x = 0;
        }
        x += w + gap;
    }
    // A short panel keeps its room for the layers: one row of chips, scrolling.
    const int shown = ImGui::GetContentRegionAvail().y > font * 24 ? chip_rows_shown : 1;
    const float area_h = static_cast<float>(std::min(rows, shown)) * (chip_h + gap);
    ImGui::BeginChild("chips", {0, area_h}, false);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float right = origin.x + ImGui::GetContentRegionAvail().x;
    ImVec2 at = origin;
    const ImU32 fill = ImGui::GetColorU32(ImGuiCol_FrameBg), text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    for (size_t i = 0; i < ids.size(); ++i) {
        const float w = widths[i];
        if (at.x > origin.x && at.x + w > right) at = {origin.x, at.y + chip_h + gap};
        ImGui::SetCursorScreenPos(at);
        ImGui::PushID(static_cast<int>(i));
        ImGui::InvisibleButton("chip", {w, chip_h});
        ImGui::PopID();
        ui.report_item("model token " + std::to_string(i));
        ui.report_value("model token_id " + std::to_string(i), ids[i]);
        draw->AddRectFilled(at, {at.x + w, at.y + chip_h}, fill, pad);
        draw->AddText({at.x + pad, at.y + pad}, text_col, fitted_text(visible_token(r.texts[i]), w - pad * 2).c_str());
        draw->AddText(small, small_size, {at.x + pad, at.y + pad + font}, dim, std::to_string(ids[i]).c_str());
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::Text("token %zu: id %d", i, ids[i]);
            ImGui::Text("piece %s", quoted_label(run.token_piece(ids[i])).c_str());
            ImGui::Text("text  %s", quoted_label(r.texts[i]).c_str());
            ImGui::EndTooltip();
        }
        at.x += w + gap;
    }
    ImGui::SetCursorScreenPos({origin.x, at.y + chip_h});
    ImGui::Dummy({1, 1});
    ImGui::EndChild();
}

}  // namespace

void draw_model_sentence(UiContext& ui, ModelRun& run, std::string& buffer, bool& typing) {
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (ImGui::InputTextWithHint("##model sentence", "Type a sentence: the model runs on it as you type", &buffer))
        run.set_text(buffer, ImGui::GetTime());
    ui.report_item("model: sentence");
    typing = ImGui::IsItemActive();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The text the model runs on: tokenized and run again a moment after you stop typing");
    const ModelResults* r = run.results();
    if (!run.text_problem().empty()) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextColored(ui.color_vec(Color::error_text), "%s (the run below is of the previous text)",
                           bounded_text(run.text_problem()).c_str());
        ImGui::PopTextWrapPos();
    }
    if (!r) return;
    const model::ModelConfig& c = run.folder()->config();
    ImGui::TextDisabled("%s: %d layers, %d heads, %zu tokens%s", model::to_string(c.architecture), c.layers, c.heads,
                        r->run->token_ids.size(), run.computing() ? " (computing...)" : "");
    draw_chips(ui, run, *r);
}

}  // namespace attnviz::app
