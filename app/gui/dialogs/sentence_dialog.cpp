#include "dialogs/sentence_dialog.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>

#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

constexpr const char* sentence_dialog_title = "New from a sentence";

// "The cat sat on ...": the first tokens of a sentence, for the status message.
std::string opening(const std::vector<std::string>& tokens) {
    std::string text;
    for (size_t k = 0; k < tokens.size() && k < 4; ++k) text += (k ? " " : "") + tokens[k];
    return tokens.size() > 4 ? text + " ..." : text;
}

// The row of X a token gets, as the tooltip shows it: "[0.12, −0.5, …]" (at most 8 values).
std::string row_text(const std::string& token, int column, int d_model, core::SentenceRows rows) {
    std::string text = "[";
    for (int c = 0; c < d_model && c < 8; ++c) {
        char buf[32];
        const double v = rows == core::SentenceRows::one_hot ? (c == column ? 1.0 : 0.0)
                                                             : core::word_embedding(token, d_model)(0, c);
        std::snprintf(buf, sizeof buf, "%s%g", c ? ", " : "", v);
        text += buf;
    }
    return text + (d_model > 8 ? ", …]" : "]");
}

// The tokens as small boxes, wrapped to `width`, in a child window of at most 8 lines that scrolls.
void token_boxes(const std::vector<std::string>& tokens, float width, const core::Config& config,
                 core::SentenceRows rows) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float pad = style.FramePadding.x, line_h = ImGui::GetTextLineHeight() + 2 * style.FramePadding.y;
    const float gap = style.ItemSpacing.x;
    // Where each box goes, then the child's height from the lines they fill.
    std::vector<ImVec2> at;
    float x = 0, y = 0;
    for (const std::string& t : tokens) {
        const float w = std::min(ImGui::CalcTextSize(t.c_str()).x + 2 * pad, width);
        if (x > 0 && x + w > width) {
            x = 0;
            y += line_h + style.ItemSpacing.y;
        }
        at.push_back({x, y});
        x += w + gap;
    }
    const float height = std::min(y + line_h, (line_h + style.ItemSpacing.y) * 8) + style.WindowPadding.y;
    ImGui::BeginChild("tokens", {width + style.ScrollbarSize, height}, false);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::vector<std::string> words = core::distinct_words(tokens);
    for (size_t k = 0; k < tokens.size(); ++k) {
        const std::string label = fitted_text(tokens[k], width - 2 * pad);
        const ImVec2 min{origin.x + at[k].x, origin.y + at[k].y};
        const ImVec2 max{min.x + ImGui::CalcTextSize(label.c_str()).x + 2 * pad, min.y + line_h};
        ImGui::SetCursorScreenPos(min);
        ImGui::Dummy({max.x - min.x, line_h});
        const bool hovered = ImGui::IsItemHovered();
        dl->AddRectFilled(min, max, ImGui::GetColorU32(hovered ? ImGuiCol_ButtonHovered : ImGuiCol_FrameBg), 3);
        dl->AddText({min.x + pad, min.y + style.FramePadding.y}, ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
        if (hovered) {
            const auto column = std::find(words.begin(), words.end(), core::lower_case(tokens[k])) - words.begin();
            ImGui::SetTooltip("token %d: %s\nits row of X: %s", static_cast<int>(k) + 1, tokens[k].c_str(),
                              row_text(tokens[k], static_cast<int>(column), config.d_model, rows).c_str());
        }
    }
    ImGui::EndChild();
}

}  // namespace

bool create_from_sentence(AppState& state, const SentenceDialog& d) {
    const core::Result<core::Session> made = core::sentence_session(d.text, state.session(), d.kind());
    if (!made) {
        state.set_message("No session from that sentence: " + made.problems.front().str(), true);
        return false;
    }
    const std::vector<std::string> tokens = made.value->tokens;
    const int n = made.value->config.n;
    state.set_session(std::move(*made.value),
                      "New session from a sentence: " + std::to_string(n) + " token" + (n == 1 ? "" : "s") + " (" +
                          opening(tokens) + "), " +
                          (d.kind() == core::SentenceRows::one_hot ? "one-hot rows" : "embedding rows") +
                          "; the dimensions and weights are as they were");
    return !state.message().error;  // set_session refuses a session over the memory budget
}

void open_sentence_dialog(SentenceDialog& d) {
    ImGui::OpenPopup(sentence_dialog_title);
    d.focus_frames = 2;
}

void draw_sentence_dialog(AppState& state, UiContext& ui, SentenceDialog& d) {
    if (!ImGui::BeginPopupModal(sentence_dialog_title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    const float font = ImGui::GetFontSize();
    const float wide = std::min(font * 30, ImGui::GetIO().DisplaySize.x - font * 4);
    ImGui::TextUnformatted("A sentence: its words (and punctuation) become the tokens.");
    ImGui::SetNextItemWidth(wide);
    if (d.focus_frames > 0) {
        --d.focus_frames;
        ImGui::SetKeyboardFocusHere();
    }
    const bool entered = ImGui::InputTextWithHint("##sentence", "The cat sat on the mat.", &d.text,
                                                  ImGuiInputTextFlags_EnterReturnsTrue);
    ui.report_item("sentence: text");

    ImGui::RadioButton("embedding rows", &d.rows, 0);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Each word's row of X comes from the word itself (a hash of its lower-cased text):\n"
            "the same word gets the same row in every sentence and at every position.");
    ImGui::SameLine();
    ImGui::RadioButton("one-hot rows", &d.rows, 1);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "One column of X per distinct word: a repeated word shares its row, so attention\n"
            "(which has no positions here) cannot tell its copies apart. Needs d_model >= the words.");

    // The preview: the tokens, or why there is no session.
    const core::Config& c = state.config();
    const core::Result<std::vector<std::string>> tokens = core::sentence_tokens(d.text);
    core::Problems problems = tokens ? core::sentence_problems(*tokens.value, c, d.kind()) : tokens.problems;
    if (tokens) {
        token_boxes(*tokens.value, wide, c, d.kind());
        const size_t words = core::distinct_words(*tokens.value).size();
        char line[200];
        std::snprintf(line, sizeof line, "%zu token%s, %zu distinct word%s: X becomes %zu%s%d", tokens.value->size(),
                      tokens.value->size() == 1 ? "" : "s", words, words == 1 ? "" : "s", tokens.value->size(),
                      ui.notation() == core::Notation::unicode ? "×" : "x", c.d_model);
        ImGui::TextDisabled("%s", fitted_text(line, wide).c_str());
        std::snprintf(line, sizeof line, "h = %d, d_k = %d, d_v = %d and the weights stay as they are", c.heads, c.d_k,
                      c.d_v);
        ImGui::TextDisabled("%s", fitted_text(line, wide).c_str());
    }
    const bool empty = d.text.find_first_not_of(" \t\r\n") == std::string::npos;
    if (!problems.empty() && !empty) {  // an empty field is not an error yet: the hint says what to do
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wide);
        ImGui::TextWrapped("%s", problems.front().str().c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    }

    ImGui::BeginDisabled(!problems.empty());
    const bool create = ImGui::Button("Create");
    ImGui::EndDisabled();
    ui.report_item("sentence: create");
    if ((create || (entered && problems.empty())) && create_from_sentence(state, d)) ImGui::CloseCurrentPopup();
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

}  // namespace attnviz::app
