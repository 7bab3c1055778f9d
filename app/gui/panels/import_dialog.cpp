#include "import_dialog.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <sstream>

#include "core/import.hpp"
#include "core/tensors.hpp"

namespace attnviz::app {

core::Result<core::ImportOptions> import_options(const ImportDialog& d) {
    using R = core::Result<core::ImportOptions>;
    core::ImportOptions o;
    constexpr core::Convention conventions[] = {core::Convention::torch, core::Convention::bert, core::Convention::gpt2,
                                                core::Convention::llama};
    if (d.convention > 0 && d.convention <= 4) o.convention = conventions[d.convention - 1];
    o.layer = d.layer;
    if (d.heads > 0) o.heads = d.heads;
    if (d.kv_heads > 0) o.kv_heads = d.kv_heads;
    std::stringstream words(d.tokens);
    for (std::string w; words >> w;) o.tokens.push_back(w);
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

void draw_import_dialog(AppState& state, UiContext& ui, ImportDialog& d) {
    const char* title = d.all_layers ? "Import all layers" : "Import layer";
    if (d.open) {
        ImGui::OpenPopup(title);
        d.open = false;
    }
    if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    if (d.all_layers)
        ImGui::TextDisabled("Each layer opens beside this session in the Model view (one row per layer).");
    const float wide = ImGui::GetFontSize() * 28, narrow = ImGui::GetFontSize() * 7;
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
        ImGui::BeginChild("tensors", {wide + ImGui::GetFontSize() * 6, ImGui::GetTextLineHeightWithSpacing() * 8},
                          true);
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(d.listing.size()));
        while (clipper.Step())
            for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k)
                ImGui::TextUnformatted(d.listing[k].c_str());
        ImGui::EndChild();
    }
    ImGui::SetNextItemWidth(narrow);
    ImGui::Combo("convention", &d.convention, "auto\0torch\0bert\0gpt2\0llama\0");
    ImGui::SetNextItemWidth(narrow);
    if (d.all_layers)
        ImGui::InputText("layers (all, 2-5, 0,2,4)", &d.layers);
    else
        ImGui::InputInt("layer", &d.layer);
    ImGui::SetNextItemWidth(narrow);
    ImGui::InputInt("heads (0: from config.json)", &d.heads);
    ImGui::SetNextItemWidth(narrow);
    ImGui::InputInt("K/V groups (0: from the weights)", &d.kv_heads);
    ImGui::TextUnformatted("X, n × d_model (.npy; empty: random):");
    ImGui::SetNextItemWidth(wide);
    ImGui::InputText("##x", &d.x_path);
    ImGui::SameLine();
    if (ImGui::Button("Browse...##x"))
        d.x_files.open(FileChooser::Mode::open, "X: the hidden states entering the layer (n × d_model)",
                       {{"NumPy arrays (*.npy)", {".npy"}}}, d.x_path);
    if (const std::optional<std::string> path = d.x_files.draw(ui)) d.x_path = *path;
    ImGui::TextUnformatted("Token labels, separated by spaces:");
    ImGui::SetNextItemWidth(wide);
    ImGui::InputText("##tokens", &d.tokens);
    const bool import = ImGui::Button("Import");
    ui.report_item("import: import");
    if (import && !d.path.empty()) {
        const core::Result<core::ImportOptions> options = import_options(d);
        if (!options)
            state.set_message("Could not import: --x: " + options.problems.front().str(), true);
        else if (d.all_layers)
            d.requested = true;  // the model view takes it (import_options(d) again, with d.layers)
        else
            state.import_checkpoint(d.path, *options.value);
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

}  // namespace attnviz::app
