#include "dialogs/export_dialog.hpp"

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
        case Kind::head_view: return "the head view";
        case Kind::model_view: return "the model view";
        case Kind::page: return "the interactive page (head and model views)";
    }
    return "";
}

bool is_text(ExportFormat f) { return f == ExportFormat::csv || f == ExportFormat::tsv || f == ExportFormat::latex; }

}  // namespace

bool is_attention_view(Kind kind) { return kind == Kind::head_view || kind == Kind::model_view || kind == Kind::page; }

std::vector<ExportFormat> formats_for(Kind kind) {
    switch (kind) {
        case Kind::matrix:
            return {ExportFormat::csv, ExportFormat::tsv, ExportFormat::latex,
                    ExportFormat::npy, ExportFormat::png, ExportFormat::svg};
        case Kind::heads:
        case Kind::pipeline:
        case Kind::head_view:
        case Kind::model_view: return {ExportFormat::svg, ExportFormat::png};
        case Kind::window: return {ExportFormat::png};
        case Kind::trace: return {ExportFormat::json};
        case Kind::page: return {ExportFormat::html};
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
        case Kind::head_view: base = "head-view"; break;
        case Kind::model_view: base = "model-view"; break;
        case Kind::page: base = "attention"; break;
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

namespace {

// The bytes of an attention view's export: the page, or the head or model view as a figure.
core::Result<std::string> attention_bytes(const ExportDialog& d, const AttentionExportMaker& attention) {
    if (!attention) return core::Result<std::string>::fail({{"", "no attention weights to export"}});
    core::Result<AttentionExport> made = attention(d.target.kind);
    if (!made) return core::Result<std::string>::fail(std::move(made.problems));
    core::AttentionViewExport request;
    request.view = d.target.kind == Kind::model_view ? core::PageView::model
                   : d.target.kind == Kind::page     ? made.value->page.view
                                                     : core::PageView::head;
    request.format = d.format;
    request.head = made.value->head;
    request.model = made.value->model;
    request.style = d.style;
    return core::attention_view_bytes(made.value->page, request);
}

}  // namespace

bool export_to(AppState& state, UiContext& ui, ExportDialog& d, const std::string& path,
               const AttentionExportMaker& attention) {
    if (d.target.kind == Kind::window) {
        d.window_png_path = path;  // gui.cpp reads the next frame back and reports
        return true;
    }
    core::Problems problems;
    try {
        const Snapshot& shown = state.shown();
        const core::Result<std::string> bytes = is_attention_view(d.target.kind)
                                                    ? attention_bytes(d, attention)
                                                    : core::export_bytes(shown.session, shown.trace,
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

namespace {

// What: a matrix (by name and head), a view, the window or the trace; the attention views. With
// attentions open (weights only) their views and the window alone.
void draw_target_choice(const AppState& state, UiContext& ui, ExportDialog& d, bool weights_only) {
    const float font = ImGui::GetFontSize();
    const core::Config& c = state.config();
    if (weights_only && !is_attention_view(d.target.kind) && d.target.kind != Kind::window)
        open_export_dialog(d, {Kind::head_view, d.target.ref});
    ImGui::SetNextItemWidth(font * 16);
    if (ImGui::BeginCombo("what", d.target.kind == Kind::matrix ? state.label(d.target.ref).c_str()
                                                                : kind_label(d.target.kind))) {
        for (core::MatrixId id : core::all_matrix_ids) {
            if (weights_only || !core::exists(id, c)) continue;
            const int heads = core::is_per_head(id) ? c.heads : 1;
            for (int h = 0; h < heads; ++h) {
                const core::MatrixRef ref{id, h};
                if (ImGui::Selectable(state.label(ref).c_str(), d.target.kind == Kind::matrix && d.target.ref == ref))
                    open_export_dialog(d, {Kind::matrix, ref});
            }
        }
        if (!weights_only) ImGui::Separator();
        for (Kind k :
             {Kind::heads, Kind::pipeline, Kind::head_view, Kind::model_view, Kind::page, Kind::window, Kind::trace})
            if ((!weights_only || is_attention_view(k) || k == Kind::window) &&
                ImGui::Selectable(kind_label(k), d.target.kind == k))
                open_export_dialog(d, {k, d.target.ref});
        ImGui::EndCombo();
    }
    ui.report_item("export: what");
    d.open = false;  // choosing a target above re-opens nothing: the dialog is already open
}

// The format and what it takes: digits, numbers, labels, legend, the PNG's scale.
void draw_format_options(ExportDialog& d) {
    const float font = ImGui::GetFontSize();
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
    const bool attention = is_attention_view(d.target.kind);
    if (core::is_figure(d.format)) {
        if (!attention) {  // the heatmaps' options (the attention views draw lines and thumbnails)
            ImGui::Checkbox("numbers", &d.style.numbers);
            ImGui::SameLine();
            ImGui::Checkbox("labels", &d.style.labels);
            ImGui::SameLine();
            ImGui::Checkbox("legend", &d.style.legend);
        }
        if (d.format == ExportFormat::png) {
            ImGui::SetNextItemWidth(font * 6);
            float scale = static_cast<float>(d.style.scale);
            if (ImGui::SliderFloat("scale", &scale, 0.5f, 8, "%.1f×")) d.style.scale = scale;
        }
        ImGui::TextDisabled("%s", attention ? "As the view shows it: its layer, heads, selection and options."
                                            : "Colours as the heatmaps show them (right-click a heatmap to change).");
    }
    if (d.target.kind == Kind::page)
        ImGui::TextDisabled("One self-contained file: the head view and the model view of every layer.");
    if (d.target.kind == Kind::window) ImGui::TextDisabled("The window as it is drawn, without this dialog.");
}

}  // namespace

void draw_export_dialog(AppState& state, UiContext& ui, ExportDialog& d, const AttentionExportMaker& attention,
                        bool weights_only) {
    if (d.open) {
        ImGui::OpenPopup("Export");
        d.open = false;
    }
    if (!ImGui::BeginPopupModal("Export", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    draw_target_choice(state, ui, d, weights_only);
    draw_format_options(d);
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
        export_to(state, ui, d, *path, attention);
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

}  // namespace attnviz::app
