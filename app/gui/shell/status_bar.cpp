#include "shell/status_bar.hpp"

#include <algorithm>
#include <cstdio>
#include <imgui.h>
#include <limits>
#include <string>

#include "core/attention/gemm.hpp"
#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// "RoPE half", with what a layer of today's models adds: "RoPE half, 16 of 64 columns, llama3 ×8".
std::string rope_text(const core::Config& c) {
    std::string text = std::string("RoPE ") + core::to_string(c.rope.style);
    if (c.rope.dims > 0 && c.rope.dims < c.d_k)
        text += ", " + std::to_string(c.rope.dims) + " of " + std::to_string(c.d_k) + " columns";
    if (c.rope.scaling.kind != core::RopeScaling::Kind::none)
        text += std::string(", ") + core::to_string(c.rope.scaling.kind) + " ×" +
                core::format_number(c.rope.scaling.factor);
    return text;
}

}  // namespace

std::vector<StatusItem> status_items(const AppState& state, float frame_ms, const std::string& attentions) {
    std::vector<StatusItem> items;
    if (!attentions.empty()) {
        items.push_back({"weights only: " + attentions});
    } else {
        const core::Config& c = state.config();
        // A divisor of the user's or of the model's (Gemma 2's √query_pre_attn_scalar): its value.
        const std::string scale = c.scale.kind == core::Scale::Kind::sqrt_dk
                                      ? std::string(core::symbols(state.notation()).sqrt_dk)
                                  : c.scale.kind == core::Scale::Kind::none
                                      ? std::string("none")
                                      : "divisor " + core::format_number(c.scale.divisor);
        char dims[160];
        std::snprintf(dims, sizeof dims, "n=%d d_model=%d h=%d d_k=%d d_v=%d", c.n, c.d_model, c.heads, c.d_k, c.d_v);
        items.push_back({dims});
        items.push_back({std::string("W_O ") + (c.output_projection ? "on" : "off"), 3});
        items.push_back({std::string("mask ") + core::to_string(c.mask)});
        items.push_back({std::string("scale ") + scale, 2});
        if (c.softmax == core::Softmax::plus_one) items.push_back({"softmax plus one"});
        // What a real layer adds, only when in use.
        if (c.biases) items.push_back({"biases", 1});
        if (c.grouped()) items.push_back({std::to_string(c.kv_count()) + " K/V groups"});
        if (c.rope.on) items.push_back({rope_text(c)});
        if (c.window > 0) items.push_back({"sliding window " + std::to_string(c.window)});
        if (c.softcap > 0) items.push_back({"soft-cap " + core::format_number(c.softcap)});
        if (c.qk_norm.on) items.push_back({"q/k norms"});
        if (c.cross()) items.push_back({"cross-attention, n_kv=" + std::to_string(c.n_kv)});
        items.push_back({std::string("tokens as ") + (state.column_vectors() ? "columns" : "rows"), 4});
        items.push_back({"trace " + core::format_duration(state.compute_ms()), 5});
    }
    // The time a frame took to draw, while frames follow one another (an idle window's last frame
    // says nothing about the app's speed).
    if (frame_ms >= 0) items.push_back({"frame " + core::format_duration(frame_ms), 6});
    return items;
}

namespace {

// The items whose `drop` is below `level` (and those that never leave), joined by " | ".
std::string joined(const std::vector<StatusItem>& items, int level) {
    std::string line;
    for (const StatusItem& item : items)
        if (item.drop == 0 || item.drop < level) line += (line.empty() ? "" : " | ") + item.text;
    return line;
}

}  // namespace

std::string status_text(const AppState& state, float frame_ms) {
    return joined(status_items(state, frame_ms), std::numeric_limits<int>::max());
}

StatusLayout status_layout(const std::vector<StatusItem>& items, const std::string& message, float width) {
    StatusLayout l;
    l.whole_line = joined(items, std::numeric_limits<int>::max());
    int most = 0;  // the largest `drop`: levels most + 1 (every item) down to 1 (those that stay)
    for (const StatusItem& item : items) most = std::max(most, item.drop);
    const std::string shown_message = bounded_text(message);
    // The message beside the line: a gap of an em, then as much of it as the bar holds.
    const float gap = ImGui::GetFontSize();
    const float message_w = message.empty() ? 0 : gap + text_width_up_to(shown_message, width + 1);
    for (int level = most + 1; level >= 1; --level) {
        std::string line = joined(items, level);
        if (text_width_up_to(line, width + 1) + message_w <= width) {
            l.line = std::move(line);
            l.message = shown_message;
            return l;
        }
    }
    // Not on one line: the message below, the line with the fewest items left out that fits alone.
    l.message_below = !message.empty();
    l.lines = l.message_below ? 2 : 1;
    l.message = fitted_text(shown_message, width);
    for (int level = most + 1; level >= 1; --level) {
        std::string line = joined(items, level);
        if (text_width_up_to(line, width + 1) <= width) {
            l.line = std::move(line);
            return l;
        }
    }
    l.line = fitted_text(joined(items, 1), width);
    l.line_cut = true;
    return l;
}

StatusLayout status_bar_layout(const AppState& state, float frame_ms, const std::string& attentions) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const bool computing = attentions.empty() && state.computing();
    float width = ImGui::GetIO().DisplaySize.x - 2 * style.WindowPadding.x;
    if (computing) width -= ImGui::CalcTextSize("computing…").x + style.ItemSpacing.x;  // it comes first
    StatusLayout l = status_layout(status_items(state, frame_ms, attentions), state.message().text,
                                   std::max(width, 1.0f));
    l.computing = computing;
    return l;
}

std::string status_tooltip(const StatusLayout& layout) {
    const core::gemm::Kernel kernel = core::gemm::kernel();
    std::string text = layout.line != layout.whole_line ? layout.whole_line + "\n" : "";
    return text + "Matrix products: kernel " + core::gemm::name(kernel) + " (" + core::gemm::description(kernel) + ")";
}

float status_bar_height(const StatusLayout& layout) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y +
           static_cast<float>(layout.lines - 1) * ImGui::GetTextLineHeightWithSpacing();
}

void draw_status_bar(AppState& state, UiContext& ui, StatusBar& bar, const StatusLayout& l) {
    if (l.computing) {  // the views show the last trace until the new one is ready
        ImGui::TextColored(ui.color_vec(Color::step_title), "computing…");
        ImGui::SameLine();
    }
    ImGui::TextUnformatted(l.line.c_str());
    if (ImGui::IsItemHovered()) tooltip_text(status_tooltip(l));
    ui.report_item("status: line");
    ui.report_label("status: line", l.whole_line, l.line, ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), l.line_cut);
    const Message& msg = state.message();
    if (!msg.text.empty()) {
        if (!l.message_below) ImGui::SameLine(0, ImGui::GetFontSize());
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(msg.error ? Color::error_text : Color::ok_text));
        ImGui::TextUnformatted(l.message.c_str());
        ImGui::PopStyleColor();
        if (l.message != msg.text && ImGui::IsItemHovered()) tooltip_text(msg.text);  // the whole message
        if (ImGui::IsItemClicked()) bar.show_log = true;
        if (ImGui::IsItemHovered()) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        ui.report_item("status: message");
        ui.report_label("status: message", msg.text, l.message, ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                        l.message != msg.text);
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
