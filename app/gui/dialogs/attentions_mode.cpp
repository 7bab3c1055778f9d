#include "dialogs/attentions_mode.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>
#include <new>

#include "core/attention/layer_summary.hpp"
#include "core/base/file_io.hpp"

namespace attnviz::app {

namespace {

namespace fs = std::filesystem;

constexpr const char* dialog_title = "Open attentions";

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// The model view's rows: each layer's heads summarized (their numbers and thumbnails).
std::vector<Layers::Row> layer_rows(const core::Attentions& a, const std::string& path) {
    std::vector<Layers::Row> rows;
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        std::vector<const core::Matrix*> heads;
        for (const core::Matrix& w : a.layers[l]) heads.push_back(&w);
        Layers::Row row;
        row.name = "layer " + std::to_string(l);
        row.source = file_name(path) + ", layer " + std::to_string(l) + " (weights only)";
        row.summary = std::make_shared<const core::LayerSummary>(core::summarize_layer(heads));
        row.serial = l + 1;
        row.held = false;
        row.n = static_cast<int>(a.query_tokens.size());
        row.keys = static_cast<int>(a.key_tokens.size());
        row.heads = static_cast<int>(heads.size());
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

std::vector<FileFilter> attentions_filters() {
    return {{"Attentions (*.safetensors, *.npz, *.npy)", {".safetensors", ".npz", ".npy"}}};
}

bool open_attentions(AppState& state, AttentionsMode& mode, const std::string& path, const std::string& tokens_path) {
    core::Result<core::Attentions> read = core::Result<core::Attentions>::fail({});
    std::vector<Layers::Row> rows;
    try {
        read = core::open_attentions(path, tokens_path);
        if (read) rows = layer_rows(*read.value, path);
    } catch (const std::bad_alloc&) {
        read = core::Result<core::Attentions>::fail({{path, "out of memory"}});
    }
    if (!read) {
        const std::string stays = mode.on() ? "the attentions of " + file_name(mode.path) + " stay open"
                                            : "your session is unchanged";
        state.set_message("Could not open the attentions " + path + " (" + stays + "): " + read.problems.front().str(),
                          true);
        return false;
    }
    mode.weights = std::make_shared<const core::Attentions>(std::move(*read.value));
    mode.path = core::canonical_path(path);
    mode.tokens_path = tokens_path.empty() ? "" : core::canonical_path(tokens_path);
    for (Layers::Row& row : rows) row.serial += (mode.serial + 1) * 100000;  // new thumbnails' textures
    mode.rows = std::move(rows);
    ++mode.serial;
    state.set_message("Opened the attentions of " + attentions_summary(mode) +
                          ". Weights only: the head view and the model view (File > Close attentions goes back to "
                          "the session)",
                      false);
    return true;
}

void close_attentions(AttentionsMode& mode) {
    mode.weights.reset();
    mode.rows.clear();
    mode.path.clear();
    mode.tokens_path.clear();
}

std::string attentions_summary(const AttentionsMode& mode) {
    if (!mode.on()) return "";
    const core::Attentions& a = *mode.weights;
    const std::size_t layers = a.layers.size();
    return file_name(mode.path) + ": " + std::to_string(layers) + (layers == 1 ? " layer × " : " layers × ") +
           std::to_string(a.heads()) + (a.heads() == 1 ? " head, " : " heads, ") +
           std::to_string(a.query_tokens.size()) + " queries × " + std::to_string(a.key_tokens.size()) + " keys";
}

void open_attentions_dialog(AttentionsMode& mode) {
    ImGui::OpenPopup(dialog_title);
    mode.error.clear();
}

bool draw_attentions_dialog(AppState& state, UiContext& ui, AttentionsMode& mode) {
    if (!ImGui::BeginPopupModal(dialog_title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return false;
    const float font = ImGui::GetFontSize();
    const float wide = std::min(font * 28, ImGui::GetIO().DisplaySize.x - font * 12);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wide + font * 6);
    ImGui::TextDisabled(
        "Any model's attention weights, as Hugging Face's outputs.attentions: one array per layer (layer_0, "
        "attentions.0, ...; heads × queries × keys) or one stacked array \"attentions\". scripts/dump-attentions.py "
        "writes them. Weights only: shown in the head view and the model view.");
    ImGui::PopTextWrapPos();
    ImGui::TextUnformatted("Attentions (.safetensors, .npz, .npy):");
    ImGui::SetNextItemWidth(wide);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::InputText("##attentions", &mode.dialog_path);
    ui.report_item("attentions: path");
    ImGui::SameLine();
    if (ImGui::Button("Browse...##attentions"))
        mode.files.open(FileChooser::Mode::open, "Attention weights to open", attentions_filters(), mode.dialog_path);
    ui.report_item("attentions: browse");
    if (const std::optional<std::string> path = mode.files.draw(ui)) mode.dialog_path = *path;
    ImGui::TextUnformatted("Tokens (optional: a JSON list, or {\"queries\": [...], \"keys\": [...]}):");
    ImGui::SetNextItemWidth(wide);
    ImGui::InputTextWithHint("##tokens", "the file's own (safetensors metadata \"tokens\"), else 1, 2, 3 ...",
                             &mode.dialog_tokens);
    ui.report_item("attentions: tokens");
    ImGui::SameLine();
    // Browsing for the tokens starts where the weights are.
    if (ImGui::Button("Browse...##tokens"))
        mode.token_files.open(FileChooser::Mode::open, "The tokens of the attentions", {{"Tokens (*.json)", {".json"}}},
                              mode.dialog_tokens.empty() && !mode.dialog_path.empty()
                                  ? (fs::path(mode.dialog_path).parent_path() / "").string()
                                  : mode.dialog_tokens);
    if (const std::optional<std::string> path = mode.token_files.draw(ui)) mode.dialog_tokens = *path;
    if (!mode.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wide + font * 6);
        ImGui::TextWrapped("Not opened: %s", mode.error.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
        ui.report_item("attentions: error");
    }
    bool opened = false;
    ImGui::BeginDisabled(mode.dialog_path.empty());
    const bool open = ImGui::Button("Open");
    ImGui::EndDisabled();
    ui.report_item("attentions: open");
    if (open) {
        opened = open_attentions(state, mode, mode.dialog_path, mode.dialog_tokens);
        if (opened) {
            mode.error.clear();
            ImGui::CloseCurrentPopup();
        } else {
            mode.error = state.message().text;
        }
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
    return opened;
}

}  // namespace attnviz::app
