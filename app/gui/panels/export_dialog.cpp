#include "export_dialog.hpp"

#include <imgui.h>

#include <algorithm>
#include <new>

#include "core/base/file_io.hpp"

namespace attnviz::app {

namespace {

using Kind = ExportTarget::Kind;
using core::ExportFormat;

const char* format_label(ExportFormat f) {
    switch (f) {
        case ExportFormat::csv: return "CSV (exact values)";
        case ExportFormat::tsv: return "TSV (spreadsheets)";
        case ExportFormat::latex: return "LaTeX bmatrix";
        case ExportFormat::npy: return "NumPy .npy (bit for bit)";
        case ExportFormat::png: return "PNG image";
        case ExportFormat::svg: return "SVG (vector, for papers)";
        case ExportFormat::json: return "JSON (attnviz compute's format)";
        case ExportFormat::html: return "HTML (one file, opens in any browser)";
    }
    return "";
}

const char* kind_label(Kind k) {
    switch (k) {
        case Kind::matrix: return "a matrix";
        case Kind::heads: return "the attention of every head";
        case Kind::pipeline: return "the pipeline";
        case Kind::window: return "the whole window";
        case Kind::trace: return "the whole trace";
    }
    return "";
}

bool is_text(ExportFormat f) { return f == ExportFormat::csv || f == ExportFormat::tsv || f == ExportFormat::latex; }

}  // namespace

std::vector<ExportFormat> formats_for(Kind kind) {
    switch (kind) {
        case Kind::matrix:
            return {ExportFormat::csv, ExportFormat::tsv, ExportFormat::latex,
                    ExportFormat::npy, ExportFormat::png, ExportFormat::svg};
        case Kind::heads:
        case Kind::pipeline: return {ExportFormat::svg, ExportFormat::png};
        case Kind::window: return {ExportFormat::png};
        case Kind::trace: return {ExportFormat::json};
    }
    return {};
}

std::string suggested_name(const AppState& state, const ExportDialog& d) {
    std::string base;
    switch (d.target.kind) {
        case Kind::matrix:
            base = core::name(d.target.ref.id);
            if (core::is_per_head(d.target.ref.id) && state.config().heads > 1)
                base += "-head" + std::to_string(d.target.ref.head + 1);
            break;
        case Kind::heads: base = "heads"; break;
        case Kind::pipeline: base = "pipeline"; break;
        case Kind::window: base = "attnviz"; break;
        case Kind::trace: base = "trace"; break;
    }
    return base + core::export_extension(d.format);
}

core::ExportRequest export_request(const AppState& state, const UiContext& ui, const ExportDialog& d) {
    core::ExportRequest r;
    r.format = d.format;
    r.style = d.style;
    r.style.notation = ui.notation();
    r.style.column_vectors = state.column_vectors();
    if (d.target.kind == Kind::matrix) {
        r.matrix = d.target.ref;
        if (const core::Matrix* m = state.matrix(d.target.ref))
            r.style.scaling = ui.scaling(d.target.ref.id, m->cols());
    } else if (d.target.kind == Kind::heads || d.target.kind == Kind::pipeline) {
        r.view = d.target.kind == Kind::heads ? core::ExportRequest::View::heads : core::ExportRequest::View::pipeline;
        const core::Matrix* w = state.matrix({core::MatrixId::weights, 0});
        r.style.scaling = ui.scaling(core::MatrixId::weights, w ? w->cols() : 0);
    }
    return r;
}

bool export_to(AppState& state, UiContext& ui, ExportDialog& d, const std::string& path) {
    if (d.target.kind == Kind::window) {
        d.window_png_path = path;  // gui.cpp reads the next frame back and reports
        return true;
    }
    core::Problems problems;
    try {
        const Snapshot& shown = state.shown();
        const core::Result<std::string> bytes = core::export_bytes(shown.session, shown.trace,
                                                                   export_request(state, ui, d));
        problems = bytes ? core::write_file_atomic(path, *bytes.value) : bytes.problems;
    } catch (const std::bad_alloc&) {
        problems = {{"", "out of memory"}};
    }
    if (!problems.empty()) {
        state.set_message("Could not export: " + problems.front().str(), true);
        return false;
    }
    state.set_message("Exported " + std::string(kind_label(d.target.kind)) + " to " + path, false);
    return true;
}

void open_export_dialog(ExportDialog& d, ExportTarget target) {
    d.target = target;
    const std::vector<ExportFormat> formats = formats_for(target.kind);
    if (std::find(formats.begin(), formats.end(), d.format) == formats.end()) d.format = formats.front();
    d.open = true;
}

void draw_export_dialog(AppState& state, UiContext& ui, ExportDialog& d) {
    if (d.open) {
        ImGui::OpenPopup("Export");
        d.open = false;
    }
    if (ImGui::BeginPopupModal("Export", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        const float font = ImGui::GetFontSize();
        const core::Config& c = state.config();
        // What: a matrix (by name and head), a view, the window or the trace.
        ImGui::SetNextItemWidth(font * 16);
        if (ImGui::BeginCombo("what", d.target.kind == Kind::matrix ? state.label(d.target.ref).c_str()
                                                                    : kind_label(d.target.kind))) {
            for (core::MatrixId id : core::all_matrix_ids) {
                if (!core::exists(id, c)) continue;
                const int heads = core::is_per_head(id) ? c.heads : 1;
                for (int h = 0; h < heads; ++h) {
                    const core::MatrixRef ref{id, h};
                    if (ImGui::Selectable(state.label(ref).c_str(),
                                          d.target.kind == Kind::matrix && d.target.ref == ref))
                        open_export_dialog(d, {Kind::matrix, ref});
                }
            }
            ImGui::Separator();
            for (Kind k : {Kind::heads, Kind::pipeline, Kind::window, Kind::trace})
                if (ImGui::Selectable(kind_label(k), d.target.kind == k)) open_export_dialog(d, {k, d.target.ref});
            ImGui::EndCombo();
        }
        ui.report_item("export: what");
        d.open = false;  // choosing a target above re-opens nothing: the dialog is already open
        ImGui::SetNextItemWidth(font * 16);
        if (ImGui::BeginCombo("format", format_label(d.format))) {
            for (ExportFormat f : formats_for(d.target.kind))
                if (ImGui::Selectable(format_label(f), f == d.format)) d.format = f;
            ImGui::EndCombo();
        }
        if (is_text(d.format) || core::is_figure(d.format)) {
            ImGui::SetNextItemWidth(font * 6);
            ImGui::SliderInt("significant digits", &d.style.digits, 0, core::max_digits,
                             d.style.digits == 0 ? (d.format == ExportFormat::latex ? "default (4)"
                                                    : core::is_figure(d.format)     ? "default (3)"
                                                                                    : "exact")
                                                 : "%d");
        }
        if (core::is_figure(d.format)) {
            ImGui::Checkbox("numbers", &d.style.numbers);
            ImGui::SameLine();
            ImGui::Checkbox("labels", &d.style.labels);
            ImGui::SameLine();
            ImGui::Checkbox("legend", &d.style.legend);
            if (d.format == ExportFormat::png) {
                ImGui::SetNextItemWidth(font * 6);
                float scale = static_cast<float>(d.style.scale);
                if (ImGui::SliderFloat("scale", &scale, 0.5f, 8, "%.1f×")) d.style.scale = scale;
            }
            ImGui::TextDisabled("Colours as the heatmaps show them (right-click a heatmap to change).");
        }
        if (d.target.kind == Kind::window) ImGui::TextDisabled("The window as it is drawn, without this dialog.");
        ImGui::Separator();
        if (is_text(d.format) && ImGui::Button("Copy to clipboard")) {
            const Snapshot& shown = state.shown();
            const core::Result<std::string> text = core::export_bytes(shown.session, shown.trace,
                                                                      export_request(state, ui, d));
            if (text) {
                ImGui::SetClipboardText(text.value->c_str());
                state.set_message("Copied " + state.label(d.target.ref) + " to the clipboard", false);
            } else {
                state.set_message("Could not copy: " + text.problems.front().str(), true);
            }
            ImGui::CloseCurrentPopup();
        }
        if (is_text(d.format)) ImGui::SameLine();
        if (ImGui::Button("Save as...")) {
            const std::string ext = core::export_extension(d.format);
            d.files.open(FileChooser::Mode::save, "Export to", {{std::string(format_label(d.format)), {ext}}},
                         suggested_name(state, d));
        }
        ui.report_item("export: save as");
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
        if (std::optional<std::string> path = d.files.draw(ui)) {
            export_to(state, ui, d, *path);
            ImGui::CloseCurrentPopup();
        }
        ImGui::EndPopup();
    }
}

}  // namespace attnviz::app
