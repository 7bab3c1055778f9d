#include "shell/command_palette.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "shell/workspaces.hpp"

namespace attnviz::app {

int fuzzy_score(std::string_view query, std::string_view text) {
    const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    const auto word_start = [&](size_t i) {
        return i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
               (std::isupper(static_cast<unsigned char>(text[i])) &&
                std::islower(static_cast<unsigned char>(text[i - 1])));
    };
    int score = 0;
    size_t at = 0;
    size_t last = std::string_view::npos;  // where the previous query character was found
    for (char q : query) {
        if (q == ' ') continue;
        while (at < text.size() && lower(text[at]) != lower(q)) ++at;
        if (at == text.size()) return -1;
        score += 1;
        if (last != std::string_view::npos && at == last + 1) score += 8;  // in a row
        if (word_start(at)) score += 6;
        if (at == 0) score += 4;
        last = at++;
    }
    // The whole text typed (any case) comes first.
    const bool whole = query.size() == text.size() && std::equal(query.begin(), query.end(), text.begin(),
                                                                 [&](char a, char b) { return lower(a) == lower(b); });
    return std::max(0, score * 16 + (whole ? 1000 : 0) - static_cast<int>(text.size()) / 4);
}

namespace {

void add_panels_and_workspaces(std::vector<PaletteEntry>& out, std::span<const PalettePanel> panels) {
    for (size_t k = 0; k < workspace_count; ++k) {
        const auto w = static_cast<Workspace>(k);
        out.push_back({"Workspace", workspace_name(w), command::SwitchWorkspace{w}});
    }
    for (const PalettePanel& panel : panels) out.push_back({"Panel", panel.title, command::ShowPanel{panel.id}});
}

void add_exports(std::vector<PaletteEntry>& out) {
    using Kind = ExportTarget::Kind;
    const std::pair<const char*, Kind> exports[] = {
        {"the matrix in the viewer", Kind::matrix},    {"the attention of every head (figure)", Kind::heads},
        {"the pipeline (figure)", Kind::pipeline},     {"the whole window (PNG)", Kind::window},
        {"the whole trace (JSON)", Kind::trace},       {"the head view (figure)", Kind::head_view},
        {"the model view (figure)", Kind::model_view}, {"the interactive page (HTML)", Kind::page},
    };
    for (const auto& [name, kind] : exports) out.push_back({"Export", name, command::Export{{kind, {}}}});
}

void add_actions(std::vector<PaletteEntry>& out, const Appearance& look) {
    out.push_back({"Action", "New from a sentence", command::NewSentence{}});
    out.push_back({"Action", "Open session", command::Open{}});
    out.push_back({"Action", "Open model folder", command::OpenModel{}});
    out.push_back({"Action", "Open attentions", command::OpenAttentions{}});
    out.push_back({"Action", "Close attentions", command::CloseAttentions{}});
    out.push_back({"Action", "Import layer", command::ImportLayer{}});
    out.push_back({"Action", "Import all layers", command::ImportAllLayers{}});
    out.push_back({"Action", "Open beside", command::OpenBeside{}});
    out.push_back({"Action", "Save", command::Save{}});
    out.push_back({"Action", "Save as", command::SaveAs{}});
    out.push_back({"Action", "Undo", command::Undo{}});
    out.push_back({"Action", "Redo", command::Redo{}});
    out.push_back({"Action", "Teach mode (the lesson alone)", command::ToggleTeach{}});
    out.push_back({"Action", "Focus (teach mode, large)", command::ToggleFocus{}});
    out.push_back({"Action", "Full screen", command::ToggleFullScreen{}});
    out.push_back({"Action", "Reset layout", command::ResetLayout{}});
    for (Theme theme : all_themes) {
        Appearance a = look;
        a.theme = theme;
        out.push_back({"Action", std::string("Theme: ") + theme_name(theme), command::SetAppearance{a}});
    }
    const std::pair<const char*, int> sizes[] = {{"Larger text", 1}, {"Smaller text", -1}, {"Text size 100 %", 0}};
    for (const auto& [name, direction] : sizes) {
        Appearance a = look;
        a.scale = stepped_ui_scale(look.scale, direction);
        out.push_back({"Action", name, command::SetAppearance{a}});
    }
    out.push_back({"Action", "Quit", command::Quit{}});
}

}  // namespace

std::vector<PaletteEntry> palette_entries(std::span<const PalettePanel> panels,
                                          std::span<const core::LessonEntry> lessons, const Appearance& look) {
    std::vector<PaletteEntry> out;
    add_panels_and_workspaces(out, panels);
    for (const core::LessonEntry& lesson : lessons)
        if (lesson.problem.empty()) out.push_back({"Lesson", lesson.title, command::OpenLesson{lesson.path}});
    add_exports(out);
    add_actions(out, look);
    return out;
}

std::vector<int> palette_matches(const std::vector<PaletteEntry>& entries, std::string_view query) {
    std::vector<std::pair<int, int>> scored;  // (score, index)
    for (size_t k = 0; k < entries.size(); ++k) {
        // The name alone, or the kind and the name ("panel grad", "lesson causal").
        const int by_name = fuzzy_score(query, entries[k].name);
        const int with_kind = fuzzy_score(query, entries[k].kind + " " + entries[k].name);
        const int score = std::max(by_name, with_kind - 1);
        if (score >= 0) scored.push_back({score, static_cast<int>(k)});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> out;
    for (const auto& [score, index] : scored) out.push_back(index);
    return out;
}

void open_command_palette(CommandPalette& palette, std::vector<PaletteEntry> entries) {
    palette.entries = std::move(entries);
    palette.query.clear();
    palette.chosen = 0;
    palette.matches = palette_matches(palette.entries, "");
    palette.open_requested = true;
}

namespace {

constexpr const char* palette_title = "Find anything##palette";

// The query field: typing matches afresh; the arrows move the choice. Returns whether Enter was pressed.
bool draw_query(CommandPalette& p, UiContext& ui) {
    char buffer[256];
    const size_t n = std::min(p.query.size(), sizeof buffer - 1);
    std::copy_n(p.query.data(), n, buffer);
    buffer[n] = '\0';
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(-1);
    const bool enter = ImGui::InputTextWithHint("##query", "a panel, workspace, lesson, export or action", buffer,
                                                sizeof buffer, ImGuiInputTextFlags_EnterReturnsTrue);
    ui.report_item("palette: query");
    if (p.query != buffer) {
        p.query = buffer;
        p.matches = palette_matches(p.entries, p.query);
        p.chosen = 0;
    }
    const int count = static_cast<int>(p.matches.size());
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) p.chosen = std::min(p.chosen + 1, count - 1);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) p.chosen = std::max(p.chosen - 1, 0);
    if (enter) ImGui::SetKeyboardFocusHere(-1);  // the field keeps the keyboard after Enter
    return enter;
}

}  // namespace

void draw_command_palette(CommandPalette& p, UiContext& ui) {
    if (p.open_requested) {
        ImGui::OpenPopup(palette_title);
        p.open_requested = false;
    }
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float width = std::min(display.x - 40, std::max(420.0f, display.x * 0.45f));
    ImGui::SetNextWindowPos({(display.x - width) / 2, display.y * 0.12f}, ImGuiCond_Appearing);
    ImGui::SetNextWindowSize({width, std::min(display.y * 0.7f, 26 * ImGui::GetTextLineHeightWithSpacing())},
                             ImGuiCond_Appearing);
    if (!ImGui::BeginPopupModal(palette_title, nullptr, ImGuiWindowFlags_NoSavedSettings)) return;
    const bool enter = draw_query(p, ui);
    std::optional<int> run;
    if (enter && !p.matches.empty())
        run = p.matches[static_cast<size_t>(std::clamp(p.chosen, 0, static_cast<int>(p.matches.size()) - 1))];
    if (ImGui::BeginChild("##matches")) {
        if (p.matches.empty()) ImGui::TextDisabled("Nothing is called so.");
        for (size_t k = 0; k < p.matches.size(); ++k) {
            const PaletteEntry& e = p.entries[static_cast<size_t>(p.matches[k])];
            const bool chosen = static_cast<int>(k) == p.chosen;
            const std::string label = e.kind + ": " + e.name + "##" + std::to_string(k);
            if (ImGui::Selectable(label.c_str(), chosen)) run = p.matches[k];
            if (chosen && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) ||
                           ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))))
                ImGui::SetScrollHereY();
            ui.report_item("palette: " + e.kind + ": " + e.name);
        }
    }
    ImGui::EndChild();
    if (run) {
        const Command command = p.entries[static_cast<size_t>(*run)].command;
        ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
        ui.request(command);
        return;
    }
    ImGui::EndPopup();
}

}  // namespace attnviz::app
