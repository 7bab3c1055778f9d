// File > Export… and a heatmap's "Export…": one matrix as CSV, TSV, LaTeX, .npy, PNG or SVG, the
// per-head view or the pipeline as PNG or SVG, the whole window as PNG, or the whole trace as JSON
// (what `attnviz export` writes, from the same core::export_bytes); and the head view and the model
// view as SVG or PNG, drawn with the views' choices, or the interactive page as HTML
// (core::attention_view_bytes), of the weights shown: the session's layer, a model's blocks or the
// opened attentions. Text formats can go to the clipboard; every format can be saved, through the
// file dialog, atomically.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/render/attention_figures.hpp"
#include "core/render/export.hpp"
#include "dialogs/file_chooser.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// The style the dialog starts with: PNG at 2 pixels a figure unit.
inline core::FigureStyle initial_export_style() {
    core::FigureStyle style;
    style.scale = 2;
    return style;
}

struct ExportDialog {
    bool open = false;  // set by Command::export_file, consumed when the dialog opens
    ExportTarget target;
    core::ExportFormat format = core::ExportFormat::csv;
    // Digits, numbers, labels, legend and scale as chosen (png at 2 pixels a unit until another
    // is); the notation, orientation and colours are the view's, taken when exporting.
    core::FigureStyle style = initial_export_style();
    FileChooser files;
    // The whole window as PNG is read back from the framebuffer after the next frame is drawn
    // (gui.cpp); this is where, until then.
    std::string window_png_path;
};

// What the attention views' exports are of: every layer of the weights shown (with a title and
// notes), the head view's and the model view's choices as the panels hold them, and the view the
// page opens on. Made when an export is written (a model's blocks are converted then).
struct AttentionExport {
    core::AttentionPage page;
    core::HeadViewChoice head;
    core::ModelViewChoice model;
};
using AttentionExportMaker = std::function<core::Result<AttentionExport>(ExportTarget::Kind)>;

// Whether a target is one of the attention views (head view, model view, the page).
bool is_attention_view(ExportTarget::Kind kind);

// The formats a target can be exported in.
std::vector<core::ExportFormat> formats_for(ExportTarget::Kind kind);
// A file name for the export: "weights-head1.svg", "pipeline.png", "trace.json".
std::string suggested_name(const AppState& state, const ExportDialog& dialog);
// The export as core describes it, from the dialog's choices and the view's colours.
core::ExportRequest export_request(const AppState& state, const UiContext& ui, const ExportDialog& dialog);
// Writes the export to `path` (atomically); the window PNG is only scheduled. Reports in the status
// bar. The attention views are made by `attention` (none given: refused with a message).
bool export_to(AppState& state, UiContext& ui, ExportDialog& dialog, const std::string& path,
               const AttentionExportMaker& attention = {});

// Opens the dialog's popup on a target (keeping the last format where the target offers it).
void open_export_dialog(ExportDialog& dialog, ExportTarget target);
// `weights_only`: attentions are open, whose views (and the window) are all there is to export.
void draw_export_dialog(AppState& state, UiContext& ui, ExportDialog& dialog, const AttentionExportMaker& attention,
                        bool weights_only);

}  // namespace attnviz::app
