#include "status_bar.hpp"

#include <algorithm>
#include <cstdio>
#include <imgui.h>
#include <string>

#include "../widgets/fitted_text.hpp"
#include "core/base/format.hpp"

namespace attnviz::app {

std::string status_text(const AppState& state, float frame_ms) {
    const core::Config& c = state.config();
    const char* scale = c.scale.kind == core::Scale::Kind::sqrt_dk ? core::symbols(state.notation()).sqrt_dk
                        : c.scale.kind == core::Scale::Kind::none  ? "none"
                                                                   : "temperature";
    // What a real layer adds, only when in use.
    std::string extra;
    if (c.softmax == core::Softmax::plus_one) extra += " | softmax plus one";
    if (c.biases) extra += " | biases";
    if (c.grouped()) extra += " | " + std::to_string(c.kv_count()) + " K/V groups";
    if (c.rope.on) extra += std::string(" | RoPE ") + core::to_string(c.rope.style);
    if (c.cross()) extra += " | cross-attention, n_kv=" + std::to_string(c.n_kv);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "n=%d d_model=%d h=%d d_k=%d d_v=%d | W_O %s | mask %s | scale %s%s | tokens as %s | trace %s", c.n,
                  c.d_model, c.heads, c.d_k, c.d_v, c.output_projection ? "on" : "off", core::to_string(c.mask), scale,
                  extra.c_str(), state.column_vectors() ? "columns" : "rows",
                  core::format_duration(state.compute_ms()).c_str());
    // The time a frame took to draw, while frames follow one another (an idle window's last frame
    // says nothing about the app's speed).
    return frame_ms < 0 ? buf : buf + (" | frame " + core::format_duration(frame_ms));
}

void draw_status_bar(AppState& state, UiContext& ui, StatusBar& bar, float frame_ms, const std::string& attentions) {
    if (attentions.empty() && state.computing()) {  // the views show the last trace until the new one is ready
        ImGui::TextColored(ui.color_vec(Color::step_title), "computing…");
        ImGui::SameLine();
    }
    // The status whole where it fits beside the message, else cut ("…", whole in its tooltip) to
    // leave the message at least 40 % of the bar: at a large text size neither runs off the window.
    const Message& msg = state.message();
    const std::string status = attentions.empty()
                                   ? status_text(state, frame_ms)
                                   : "weights only: " + attentions +
                                         (frame_ms < 0 ? "" : " | frame " + core::format_duration(frame_ms));
    const float avail = ImGui::GetContentRegionAvail().x, status_w = ImGui::CalcTextSize(status.c_str()).x;
    const float message_w = msg.text.empty() ? 0 : text_width_up_to(msg.text, avail) + ImGui::GetFontSize();
    const std::string shown =
        fitted_text(status, status_w + message_w <= avail ? status_w : std::max(avail - message_w, avail * 0.6f));
    ImGui::TextUnformatted(shown.c_str());
    if (shown != status && ImGui::IsItemHovered()) tooltip_text(status);
    ui.report_item("status: line");
    if (!msg.text.empty()) {
        ImGui::SameLine(0, ImGui::GetFontSize());
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(msg.error ? Color::error_text : Color::ok_text));
        text_fitted(msg.text);  // the whole message in a tooltip when cut
        ImGui::PopStyleColor();
        if (ImGui::IsItemClicked()) bar.show_log = true;
        if (ImGui::IsItemHovered()) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        ui.report_item("status: message");
    }
}

void draw_message_log(AppState& state, UiContext& ui, StatusBar& bar) {
    if (!bar.show_log) return;
    const ImGuiIO& io = ImGui::GetIO();
    const float font = ImGui::GetFontSize();
    ImGui::SetNextWindowSize({std::min(io.DisplaySize.x * 0.8f, font * 48),
                              std::min(io.DisplaySize.y * 0.6f, font * 24)},
                             ImGuiCond_Appearing);
    ImGui::SetNextWindowPos({io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f}, ImGuiCond_Appearing, {0.5f, 0.5f});
    if (ImGui::Begin(message_log_title, &bar.show_log, ImGuiWindowFlags_NoCollapse)) {
        if (ui.report) ui.report->windows.push_back({message_log_title, ImGui::GetWindowPos(), ImGui::GetWindowSize()});
        if (ImGui::Button("Copy all")) {
            std::string all;
            for (const Message& m : state.message_log()) all += m.time + (m.error ? " error: " : " ") + m.text + "\n";
            ImGui::SetClipboardText(all.c_str());
        }
        ImGui::SameLine();
        if (ImGui::Button("Close")) bar.show_log = false;
        ImGui::Separator();
        ImGui::BeginChild("log");
        ImGui::PushTextWrapPos(0);
        for (const Message& m : state.message_log()) {
            ImGui::TextDisabled("%s", m.time.c_str());
            ImGui::SameLine();
            if (m.error) ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
            ImGui::TextUnformatted(m.text.c_str());
            if (m.error) ImGui::PopStyleColor();
        }
        ImGui::PopTextWrapPos();
        if (ImGui::IsWindowAppearing()) ImGui::SetScrollHereY(1.0f);
        ImGui::EndChild();
    }
    ImGui::End();
}

}  // namespace attnviz::app
