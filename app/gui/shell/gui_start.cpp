#include "shell/gui_detail.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/presets.hpp"
#include "shell/frame.hpp"
#include "shell/gui.hpp"

namespace attnviz::app::gui_detail {

namespace {

// --model DIR on a Hugging Face model folder: its forward pass on --text, run on the model view's
// worker (waited for, with what failed said on stderr, by a run of a fixed number of frames). Without
// a session, its first block is the session edited.
void open_model_folder(const GuiOptions& o, AppState& state, Panels& panels, bool wait) {
    ModelRun& run = panels.model.run;
    if (o.model_text && o.model_text->empty()) std::cerr << "warning: --text: the sentence is empty\n";
    run.open(o.model, o.model_text.value_or(default_model_text), state.memory_budget(),
             o.session_path.empty() ? o.model_layer : -1);
    panels.show_at_start.push_back(PanelId::next_token);
    panels.show_at_start.push_back(PanelId::model_analysis);
    if (!wait) return;
    const size_t logged = state.message_log().size();
    run.wait();
    run.update(state, panels.model.layers, 0);
    state.wait_for_trace();
    const std::vector<Message>& log = state.message_log();
    for (size_t k = std::min(logged, log.size()); k < log.size(); ++k)
        if (log[k].error) std::cerr << "warning: " << log[k].text << "\n";
}

// --beside and --model: the layers are read on the model view's worker, the model's first. A run
// of a fixed number of frames (a screenshot, a benchmark) waits for them before its first frame,
// and reports on stderr too what cannot be read; otherwise the window opens at once and the rows
// come in as they are read.
void open_model(const GuiOptions& o, AppState& state, Panels& panels, bool wait) {
    namespace fs = std::filesystem;
    Layers& layers = panels.model.layers;
    std::vector<std::string> model;
    std::error_code ec;
    if (!o.model.empty() && fs::is_regular_file(fs::path(o.model) / "config.json", ec)) {
        open_model_folder(o, state, panels, wait);
    } else if (!o.model.empty() && fs::is_directory(o.model, ec)) {
        for (const fs::directory_entry& e : fs::directory_iterator(o.model, ec))
            if (e.path().extension() == ".json" && e.is_regular_file(ec)) model.push_back(e.path().string());
        std::sort(model.begin(), model.end());  // layer-00.json, layer-01.json, …
        if (model.empty()) std::cerr << "warning: --model: no session files (*.json) in " << o.model << "\n";
    } else if (!o.model.empty()) {
        model.push_back(o.model);  // a checkpoint brings all its layers; a session is one row
    }
    if (o.session_path.empty() && !model.empty()) layers.open_first = true;  // the model's first layer
    layers.open_files(model);
    layers.open_files(o.beside);
    show_panel(panels, PanelId::model);
    if (wait) {
        const size_t logged = state.message_log().size();
        layers.wait();
        layers.poll(state);
        state.wait_for_trace();
        const std::vector<Message>& log = state.message_log();
        for (size_t k = std::min(logged, log.size()); k < log.size(); ++k)
            if (log[k].error) std::cerr << "warning: " << log[k].text << "\n";
    }
    panels.show_at_start.push_back(PanelId::model);  // again after the saved layout is read
}

// --attentions: the weights shown at start, with the head view's options. A file the reader
// refuses is said on stderr and in the window (its layer, head and row), which opens on the session.
void open_start_attentions(const GuiOptions& o, AppState& state, Panels& panels) {
    HeadViewPanel& view = panels.head_view;
    if (!o.attentions.empty()) {
        if (open_attentions(state, panels.attentions, o.attentions, o.tokens_file))
            attentions_opened(state, panels);
        else
            std::cerr << "warning: " << state.message().text << "\n";
    }
    view.layer = o.layer;
    view.hide_special = o.hide_special;
    view.heads_mean = o.mean_heads;
    view.norm_weighted = o.norm_weighted;
    if (o.norm_weighted) panels.heads.shown = HeadsShown::norm_weighted;
    panels.model.norm_weighted = o.norm_weighted;
    const int layers = panels.attentions.on()       ? static_cast<int>(panels.attentions.weights->layers.size())
                       : panels.model.run.results() ? static_cast<int>(panels.model.run.results()->run->layers.size())
                                                    : -1;  // a model still opening: its layers are not known yet
    if (o.layer && layers >= 0 && *o.layer >= layers)
        std::cerr << "warning: --layer: layer " << *o.layer << " does not exist: there are " << layers << "\n";
    if (o.layer && layers < 0 && o.model.empty())
        std::cerr << "warning: --layer: the session is one layer (--layer is for --attentions or a model)\n";
}

// --workspace: shown from the first frame, after the panels a model shows. A --panel the workspace
// lacks wins: it is shown in its own workspace, and the warning says so.
void start_workspace(const GuiOptions& o, Panels& panels) {
    if (o.workspace.empty()) return;
    const std::optional<Workspace> w = workspace_named(o.workspace);
    if (!w) return;  // the command line checked the name
    for (const std::string& title : o.panels) {
        const std::optional<PanelId> panel = panel_titled(title);
        if (panel && !place_in(*w, *panel)) {
            std::cerr << "warning: --workspace: the panel '" << title << "' is not in " << workspace_name(*w)
                      << "; it is shown in " << workspace_name(home_of(*panel)) << "\n";
            return;
        }
    }
    panels.workspace_at_start = *w;
}

}  // namespace

bool parse_size(const std::string& text, int& w, int& h) {
    if (text.empty()) return true;
    char x = 0;
    char rest = 0;
    return std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &rest) == 3 && (x == 'x' || x == 'X') && w >= 320 &&
           h >= 240 && w <= 16384 && h <= 16384;
}

AppState initial_state(const GuiOptions& o, bool& opened) {
    AppState state(core::worked_example());
    state.set_memory_budget(o.memory_budget);
    state.set_message("The worked example. Edit any number, or load a preset.", false);
    opened = o.session_path.empty() || state.open_file(o.session_path);
    // --select and --teach refer to the session opened here: its trace is shown before they apply,
    // also when it is large enough to be computed on the worker.
    state.wait_for_trace();
    return state;
}

int read_cells(const GuiOptions& o, std::vector<std::pair<CellRef, double>>& edits, std::optional<CellRef>& selected) {
    for (const std::string& edit : o.edits) {
        const size_t eq = edit.find('=');
        core::Result<CellRef> cell = core::parse_cell_ref(edit.substr(0, eq));
        char* end = nullptr;
        const std::string value = eq == std::string::npos ? "" : edit.substr(eq + 1);
        const double v = std::strtod(value.c_str(), &end);
        if (!cell || value.empty() || *end != '\0') {
            std::cerr << "error: --set " << edit << ": "
                      << (cell ? "expected CELL=VALUE, e.g. X:0:1=2.5" : cell.problems.front().message) << "\n";
            return 2;
        }
        edits.emplace_back(*cell.value, v);
    }
    if (!o.select.empty()) {
        core::Result<CellRef> cell = core::parse_cell_ref(o.select);
        if (!cell) {
            std::cerr << "error: --select: " << cell.problems.front().message << "\n";
            return 2;
        }
        selected = *cell.value;
    }
    return 0;
}

int check_attention_options(const GuiOptions& o) {
    const auto fail = [](const char* message) {
        std::cerr << "error: " << message << "\n";
        return 2;
    };
    if (!o.tokens_file.empty() && o.attentions.empty()) return fail("--tokens-file applies to --attentions");
    if (!o.attentions.empty() && (!o.model.empty() || !o.beside.empty()))
        return fail(
            "--attentions shows weights alone, in place of the session's layers: leave out --model and --beside "
            "(File > Close attentions goes back to the session)");
    return 0;
}

void apply_start_options(const GuiOptions& o, const std::vector<std::pair<CellRef, double>>& edits,
                         const std::optional<CellRef>& selected, bool opened, int frames, AppState& state,
                         UiContext& ui, Panels& panels) {
    for (const std::string& title : o.panels) {
        if (const std::optional<PanelId> panel = panel_titled(title)) {
            show_panel(panels, *panel);
            panels.show_at_start.push_back(*panel);  // again after the saved layout is read
            if (o.maximize) panels.maximize_at_start = *panel;
        } else {
            std::cerr << "warning: --panel: no panel is called '" << title << "'\n";
        }
    }
    if (o.maximize && o.panels.empty()) std::cerr << "warning: --maximize: no --panel to maximise\n";
    start_workspace(o, panels);
    const std::vector<std::string> lab_views = {"norm-weighted", "circuits", "ablation", "rope", "sinks"};
    if (const auto view = std::find(lab_views.begin(), lab_views.end(), o.lab_view); view != lab_views.end())
        panels.lab.show_view = static_cast<int>(view - lab_views.begin());
    if (opened && AppState::is_checkpoint(o.session_path) && checkpoint_x_is_random(o.session_path))
        panels.menu.random_x = o.session_path;  // said in the window, as File > Open says it
    if (!o.beside.empty() || !o.model.empty()) {
        open_model(o, state, panels, frames > 0);
        // The panels asked for by name come after the model's (its view, next token, analysis).
        for (const std::string& title : o.panels)
            if (const std::optional<PanelId> panel = panel_titled(title)) panels.show_at_start.push_back(*panel);
    }
    open_start_attentions(o, state, panels);
    if (!o.head_select.empty()) {
        const auto [n, n_keys] = head_view_tokens(state, panels.head_view, &panels.attentions);
        const std::string problem = select_tokens(panels.head_view, o.head_select, n, n_keys);
        if (!problem.empty()) std::cerr << "warning: --head-select: " << problem << "\n";
    }
    if (const std::optional<core::HeadKey> key = head_key_from_name(o.sort_heads)) panels.model.sort = *key;
    if (o.dialog == "open") ui.request(command::Open{});
    if (o.dialog == "save") ui.request(command::SaveAs{});
    if (o.dialog == "import") ui.request(command::ImportLayer{});
    if (o.dialog == "beside") ui.request(command::OpenBeside{});
    if (o.dialog == "import-all") ui.request(command::ImportAllLayers{});
    if (o.dialog == "model") ui.request(command::OpenModel{});
    if (o.dialog == "attentions") ui.request(command::OpenAttentions{});
    if (o.dialog == "export") ui.request_export({ExportTarget::Kind::matrix, state.viewed()});
    if (o.dialog == "sentence") ui.request(command::NewSentence{});
    if (o.dialog == "palette") ui.request(command::OpenPalette{});
    for (const auto& [cell, value] : edits)
        if (!state.set_cell(cell, value)) std::cerr << "warning: --set: " << state.message().text << "\n";
    if (!o.lesson.empty()) {
        std::string problem;
        if (const std::optional<core::LessonEntry> lesson = find_lesson(o.lesson, problem))
            open_lesson(state, panels.teach, lesson->path, o.session_path.empty());
        state.wait_for_trace();
        enter_teach_mode(state, panels, std::max(o.teach_step, 1) - 1);
    } else if (o.teach_step > 0) {
        enter_teach_mode(state, panels, o.teach_step - 1);
    }
    if (o.focus) {
        panels.teach.focus = true;
        if (!panels.teach_mode) enter_teach_mode(state, panels, 0);
    }
    // A cell that does not exist is reported in the app, and on stderr for scripts.
    if (selected && !state.select_checked(*selected))
        std::cerr << "warning: --select: " << state.message().text << "\n";
}

}  // namespace attnviz::app::gui_detail
