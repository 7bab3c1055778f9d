#include "dialogs/import_dialog.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>
#include <sstream>

#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/tensors.hpp"

namespace attnviz::app {

namespace {

namespace fs = std::filesystem;

// The text of config.json beside a checkpoint ("" when there is none), as `attnviz import` reads it.
std::string config_beside(const std::string& checkpoint) {
    const core::Result<std::string> text =
        core::read_file((fs::path(checkpoint).parent_path() / "config.json").string());
    return text ? *text.value : std::string();
}

// Token ids as `attnviz import --token-ids` takes them: whole numbers from 0, separated by commas or
// spaces.
core::Result<std::vector<std::int64_t>> parse_token_ids(const std::string& text) {
    using R = core::Result<std::vector<std::int64_t>>;
    std::vector<std::int64_t> ids;
    std::string spaced = text;
    for (char& c : spaced)
        if (c == ',') c = ' ';
    std::stringstream words(spaced);
    for (std::string w; words >> w;) {
        size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(w, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != w.size() || id < 0)
            return R::fail({{"token ids", "\"" + w + "\" is not a token id (0, 1, 2, ...)"}});
        ids.push_back(id);
    }
    return R::ok(std::move(ids));
}

// The options as the dialog sets them, but for X (its file read, or the token ids parsed).
core::ImportOptions options_but_x(const ImportDialog& d) {
    core::ImportOptions o;
    constexpr core::Convention conventions[] = {core::Convention::torch, core::Convention::bert, core::Convention::gpt2,
                                                core::Convention::llama};
    if (d.convention > 0 && d.convention <= 4) o.convention = conventions[d.convention - 1];
    o.layer = d.layer;
    if (d.heads > 0) o.heads = d.heads;
    if (d.kv_heads > 0) o.kv_heads = d.kv_heads;
    if (d.rope_base > 0) o.rope_base = d.rope_base;
    o.config_json = config_beside(d.path);
    std::stringstream words(d.tokens);
    for (std::string w; words >> w;) o.tokens.push_back(w);
    return o;
}

// What an import's message says after "Could not import PATH (…): ": the problems, each naming the
// file once, for the dialog that already shows the path.
std::string refusal(const std::string& message, const std::string& path) {
    const std::string opening = "Could not import " + path;
    if (message.rfind(opening, 0) != 0) return message;
    std::string rest = message.substr(opening.size());
    // " (your current session is unchanged)" is there once the user has work of their own.
    if (const std::string note = " (your current session is unchanged)"; rest.rfind(note, 0) == 0)
        rest.erase(0, note.size());
    return rest.rfind(": ", 0) == 0 ? rest.substr(2) : message;
}

// The key of what a preview depends on.
std::string preview_key(const ImportDialog& d) {
    return d.path + '\n' + std::to_string(d.convention) + ' ' + std::to_string(d.layer) + ' ' +
           std::to_string(d.heads) + ' ' + std::to_string(d.kv_heads) + ' ' + std::to_string(d.rope_base) + '\n' +
           d.x_path + '\n' + d.token_ids;
}

// "0-11", "0, 2, 5": the layers a checkpoint holds.
std::string layers_text(const std::vector<int>& layers) {
    bool consecutive = true;
    for (size_t k = 1; k < layers.size(); ++k) consecutive = consecutive && layers[k] == layers[k - 1] + 1;
    if (consecutive && layers.size() > 2) return std::to_string(layers.front()) + "-" + std::to_string(layers.back());
    std::string text;
    for (int l : layers) text += (text.empty() ? "" : ", ") + std::to_string(l);
    return text;
}

// What the import will make, in lines: the convention and layers, then the layer's heads, then X.
void draw_preview(const ImportDialog& d, UiContext& ui, float width) {
    if (d.path.empty()) return;
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    if (!d.preview) {
        if (!d.preview.problems.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
            ImGui::TextWrapped("%s", d.preview.problems.front().str().c_str());
            ImGui::PopStyleColor();
        }
        ImGui::PopTextWrapPos();
        return;
    }
    const core::ImportPreview& p = *d.preview.value;
    ImGui::TextWrapped("Found: the %s convention, layer%s %s.", core::to_string(p.convention),
                       p.layers.size() == 1 ? "" : "s", layers_text(p.layers).c_str());
    std::string heads = p.heads ? std::to_string(*p.heads) + " heads"
                                : "heads unknown (not in a config.json): give them below";
    if (p.heads && p.kv_groups)
        heads += *p.kv_groups == *p.heads ? " (a K/V group each)"
                                          : " in " + std::to_string(*p.kv_groups) + " K/V groups";
    else if (p.heads)
        heads += ", which do not divide the query projection";
    std::string line = (d.all_layers ? "Each layer: " : "Layer " + std::to_string(p.layer) + ": ") +
                       "d_model = " + std::to_string(p.d_model) + ", " + heads;
    if (p.rope_base) line += ", RoPE base " + core::format_number(*p.rope_base, 6);
    ImGui::TextWrapped("%s.", line.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ui.color(p.x_random ? Color::error_text : Color::ok_text));
    ImGui::TextWrapped("X: %s%s", p.x.c_str(),
                       p.x_random ? ". Its attention says nothing about the model's inputs: give X (.npy) or token ids."
                                  : ".");
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
}

// The import itself: the layer replaces the session, or (all layers) the request goes to the model
// view. Returns whether the dialog may close; otherwise d.error says why.
bool run_import(AppState& state, ImportDialog& d) {
    if (d.path.empty()) {
        d.error = "Choose a checkpoint first.";
        return false;
    }
    const core::Result<core::ImportOptions> options = import_options(d);
    if (!options) {
        d.error = options.problems.front().str();
        return false;
    }
    if (d.all_layers) {
        if (!d.preview) {
            d.error = d.preview.problems.empty() ? d.path + ": not read" : d.preview.problems.front().str();
            return false;
        }
        if (const auto chosen = core::select_layers(d.layers, d.preview.value->layers); !chosen) {
            d.error = chosen.problems.front().str();
            return false;
        }
        d.requested = true;  // the model view takes it (import_options(d) again, with d.layers)
        return true;
    }
    if (!state.import_checkpoint(d.path, *options.value)) {
        d.error = refusal(state.message().text, d.path);
        return false;
    }
    return true;
}

}  // namespace

core::Result<core::ImportOptions> import_options(const ImportDialog& d) {
    using R = core::Result<core::ImportOptions>;
    core::ImportOptions o = options_but_x(d);
    core::Result<std::vector<std::int64_t>> ids = parse_token_ids(d.token_ids);
    if (!ids) return R::fail(ids.problems);
    o.token_ids = std::move(*ids.value);
    if (!d.x_path.empty() && !o.token_ids.empty())
        return R::fail(
            {{"X", "a file and token ids are both given: X is either the file's rows or the ids' embeddings"}});
    if (!d.x_path.empty()) {
        const core::Result<core::TensorFile> x = core::TensorFile::open(d.x_path);
        if (!x) return R::fail(x.problems);
        if (x.value->tensors().size() != 1)
            return R::fail({{d.x_path, "expected one tensor (X), found " + std::to_string(x.value->tensors().size())}});
        core::Result<core::Tensor> t = x.value->read(x.value->tensors().front().name);
        if (!t) return R::fail(t.problems);
        o.x = std::move(*t.value);
    }
    return R::ok(std::move(o));
}

void list_tensors(ImportDialog& d) {
    d.listing.clear();
    d.listed_path = d.path;
    const core::Result<core::TensorFile> f = core::TensorFile::open(d.path);
    if (!f) {
        d.listing.push_back(f.problems.front().str());
        return;
    }
    for (const core::TensorInfo& t : f.value->tensors()) {
        std::string shape;
        for (std::uint64_t s : t.shape) shape += (shape.empty() ? "" : "×") + std::to_string(s);
        d.listing.push_back(t.name + "  " + t.dtype + "  " + shape);
    }
    if (d.listing.empty()) d.listing.push_back("(no tensors)");
}

void update_preview(ImportDialog& d) {
    const std::string key = preview_key(d);
    if (key == d.preview_of) return;
    d.preview_of = key;
    d.preview = core::Result<core::ImportPreview>::fail({});
    std::error_code ec;
    if (d.path.empty() || !fs::is_regular_file(d.path, ec)) return;  // a path still being typed
    const core::Result<core::TensorFile> f = core::TensorFile::open(d.path);
    if (!f) {
        d.preview = core::Result<core::ImportPreview>::fail(f.problems);
        return;
    }
    // X is looked at only for where it comes from: a file named is "given" (read on Import).
    core::ImportOptions o = options_but_x(d);
    if (d.all_layers) o.layer.reset();
    if (!d.x_path.empty()) o.x = core::Tensor{};
    if (const auto ids = parse_token_ids(d.token_ids); ids) o.token_ids = *ids.value;
    d.preview = core::preview_import(*f.value, o);
}

bool checkpoint_x_is_random(const std::string& path) {
    const core::Result<core::TensorFile> f = core::TensorFile::open(path);
    if (!f) return false;
    core::ImportOptions o;
    o.config_json = config_beside(path);
    const core::Result<core::ImportPreview> p = core::preview_import(*f.value, o);
    return p && p.value->x_random;
}

namespace {

const char* dialog_title(const ImportDialog& d) { return d.all_layers ? "Import all layers" : "Import layer"; }

}  // namespace

void open_import_dialog(ImportDialog& d) {
    ImGui::OpenPopup(dialog_title(d));
    d.error.clear();
}

void draw_import_dialog(AppState& state, UiContext& ui, ImportDialog& d) {
    if (!ImGui::BeginPopupModal(dialog_title(d), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    if (d.all_layers)
        ImGui::TextDisabled("Each layer opens beside this session in the Model view (one row per layer).");
    const float font = ImGui::GetFontSize();
    const float wide = std::min(font * 28, ImGui::GetIO().DisplaySize.x - font * 12), narrow = font * 7;
    ImGui::TextUnformatted("Checkpoint (.safetensors, .npz, .npy):");
    ImGui::SetNextItemWidth(wide);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    if (ImGui::InputText("##checkpoint", &d.path, ImGuiInputTextFlags_EnterReturnsTrue)) list_tensors(d);
    ImGui::SameLine();
    if (ImGui::Button("Browse...##checkpoint"))
        d.checkpoint_files.open(FileChooser::Mode::open, "A checkpoint to import",
                                {{"Checkpoints (*.safetensors, *.npz, *.npy)", {".safetensors", ".npz", ".npy"}}},
                                d.path);
    if (const std::optional<std::string> path = d.checkpoint_files.draw(ui)) {
        d.path = *path;
        list_tensors(d);
    }
    ImGui::SameLine();
    if (ImGui::Button("List tensors")) list_tensors(d);
    if (!d.listing.empty() && d.listed_path == d.path) {
        ImGui::BeginChild("tensors", {wide + font * 6, ImGui::GetTextLineHeightWithSpacing() * 6}, true);
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(d.listing.size()));
        while (clipper.Step())
            for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k)
                ImGui::TextUnformatted(d.listing[k].c_str());
        ImGui::EndChild();
    }
    update_preview(d);
    draw_preview(d, ui, wide + font * 6);
    ui.report_item(d.preview && d.preview.value->x_random ? "import: x is random" : "import: preview");
    ImGui::Separator();
    ImGui::SetNextItemWidth(narrow);
    ImGui::Combo("convention", &d.convention, "auto\0torch\0bert\0gpt2\0llama\0");
    ImGui::SetNextItemWidth(narrow);
    if (d.all_layers)
        ImGui::InputText("layers (all, 2-5, 0,2,4)", &d.layers);
    else if (ImGui::InputInt("layer", &d.layer))
        d.layer = std::max(d.layer, 0);
    ImGui::SetNextItemWidth(narrow);
    if (ImGui::InputInt("heads (0: from config.json)", &d.heads)) d.heads = std::max(d.heads, 0);
    ImGui::SetNextItemWidth(narrow);
    if (ImGui::InputInt("K/V groups (0: from the weights)", &d.kv_heads)) d.kv_heads = std::max(d.kv_heads, 0);
    ImGui::SetNextItemWidth(narrow);
    if (ImGui::InputDouble("RoPE base (llama; 0: rope_theta, else 10000)", &d.rope_base, 0, 0, "%.6g"))
        d.rope_base = std::max(d.rope_base, 0.0);
    ImGui::TextUnformatted("X, n × d_model (.npy), or token ids (rows of the embedding table); neither: random:");
    ImGui::SetNextItemWidth(wide);
    ImGui::InputTextWithHint("##x", "X.npy", &d.x_path);
    ImGui::SameLine();
    // Browsing for X starts where the checkpoint is (export-layer.py writes X beside it).
    if (ImGui::Button("Browse...##x"))
        d.x_files.open(FileChooser::Mode::open, "X: the hidden states entering the layer (n × d_model)",
                       {{"NumPy arrays (*.npy)", {".npy"}}},
                       d.x_path.empty() && !d.path.empty() ? (fs::path(d.path).parent_path() / "").string() : d.x_path);
    ui.report_item("import: browse x");
    if (const std::optional<std::string> path = d.x_files.draw(ui)) d.x_path = *path;
    ImGui::SetNextItemWidth(wide);
    ImGui::InputTextWithHint("##token ids", "token ids, e.g. 464, 3797, 3332", &d.token_ids);
    ImGui::TextUnformatted("Token labels, separated by spaces:");
    ImGui::SetNextItemWidth(wide);
    ImGui::InputText("##tokens", &d.tokens);
    if (!d.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wide + font * 6);
        ImGui::TextWrapped("Not imported: %s", d.error.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
        ui.report_item("import: error");
    }
    const bool import = ImGui::Button("Import");
    ui.report_item("import: import");
    if (import && run_import(state, d)) {
        d.error.clear();
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

}  // namespace attnviz::app
