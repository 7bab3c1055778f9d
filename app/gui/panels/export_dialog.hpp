// File > Export… and a heatmap's "Export…": one matrix as CSV, TSV, LaTeX, .npy, PNG or SVG, the
// per-head view or the pipeline as PNG or SVG, the whole window as PNG, or the whole trace as JSON
// (what `attnviz export` writes, from the same core::export_bytes). Text formats can go to the
// clipboard; every format can be saved, through the file dialog, atomically.
#pragma once

#include <string>
#include <vector>

#include "../app_state.hpp"
#include "../ui_context.hpp"
#include "core/render/export.hpp"
#include "file_chooser.hpp"

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

// The formats a target can be exported in.
std::vector<core::ExportFormat> formats_for(ExportTarget::Kind kind);
// A file name for the export: "weights-head1.svg", "pipeline.png", "trace.json".
std::string suggested_name(const AppState& state, const ExportDialog& dialog);
// The export as core describes it, from the dialog's choices and the view's colours.
core::ExportRequest export_request(const AppState& state, const UiContext& ui, const ExportDialog& dialog);
// Writes the export to `path` (atomically); the window PNG is only scheduled. Reports in the status bar.
bool export_to(AppState& state, UiContext& ui, ExportDialog& dialog, const std::string& path);

// Opens the dialog's popup on a target (keeping the last format where the target offers it).
void open_export_dialog(ExportDialog& dialog, ExportTarget target);
void draw_export_dialog(AppState& state, UiContext& ui, ExportDialog& dialog);

}  // namespace attnviz::app
