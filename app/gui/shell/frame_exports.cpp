#include "shell/frame_exports.hpp"

#include <algorithm>
#include <filesystem>

#include "core/attention/head_analysis.hpp"

namespace attnviz::app {

namespace {

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string shape_title(const core::Attentions& a) {
    const std::size_t layers = a.layers.size();
    return "attention weights, " + std::to_string(layers) + (layers == 1 ? " layer × " : " layers × ") +
           std::to_string(a.heads()) + (a.heads() == 1 ? " head" : " heads");
}

// A model's blocks, the one being edited as the session has it now (its edits may not have run
// through the model yet).
core::AttentionPage model_page(const AppState& state, const ModelRun& run) {
    const ModelResults& r = *run.results();
    core::AttentionPage page;
    const int edited = run.editing_layer();
    for (std::size_t l = 0; l < r.run->layers.size(); ++l) {
        std::vector<core::Matrix> heads;
        if (static_cast<int>(l) == edited)
            for (const core::HeadTrace& h : state.trace().heads) heads.push_back(h.weights);
        else
            for (const core::HeadTraceT<float>& h : r.run->layers[l].trace.heads)
                heads.push_back(h.weights.cast<double>());
        page.weights.layers.push_back(std::move(heads));
    }
    page.weights.query_tokens = page.weights.key_tokens = r.run->tokens;
    page.title = shape_title(page.weights);
    page.notes.push_back("The model " + file_name(run.folder()->folder()) + " on \"" + run.text() + "\".");
    return page;
}

// The head view's layer as it resolves it (head_view_panel.cpp): in model mode −1 is the session
// when it is no block.
int head_view_layer(const HeadViewPanel& view, int layers, int edited, bool model) {
    if (!model) return std::clamp(view.layer.value_or(0), 0, std::max(layers - 1, 0));
    return view.layer && *view.layer >= 0 && *view.layer < layers ? *view.layer : edited;
}

// The session's layer as its norm-weighted attention, each query row divided by its sum, as the
// head view and the model view draw it; the title says so.
void norm_weighted_page(const AppState& state, core::AttentionPage& page) {
    const Snapshot& s = state.shown();
    std::vector<core::Matrix>& heads = page.weights.layers.front();
    for (int h = 0; h < static_cast<int>(heads.size()); ++h)
        heads[static_cast<std::size_t>(h)] =
            core::norm_weighted_rows(core::norm_weighted(s.session.config, s.session.params, s.trace, h));
    page.title = "norm-weighted attention (each query row divided by its sum), " + std::to_string(heads.size()) +
                 (heads.size() == 1 ? " head" : " heads");
    page.notes.push_back(
        "Norm-weighted: each weight times the length of what its key adds to the output (V_j·W_O "
        "of the head): how far key j moves query i's output.");
}

}  // namespace

core::Result<AttentionExport> attention_export(const AppState& state, const Panels& p, ExportTarget::Kind kind) {
    using R = core::Result<AttentionExport>;
    AttentionExport out;
    const ModelRun& run = p.model.run;
    const bool model = !p.attentions.on() && run.results() != nullptr;
    if (!p.attentions.on() && run.computing() && !run.results())
        return R::fail({{"", "the model is still running: export once its blocks are shown"}});
    int layer = 0;
    if (p.attentions.on()) {
        out.page.weights = *p.attentions.weights;
        out.page.title = shape_title(out.page.weights);
        out.page.notes.push_back("From " + file_name(p.attentions.path) + ".");
        layer = head_view_layer(p.head_view, static_cast<int>(out.page.weights.layers.size()), 0, false);
    } else if (model) {
        const int blocks = static_cast<int>(run.results()->run->layers.size());
        layer = head_view_layer(p.head_view, blocks, run.editing_layer(), true);
    }
    // The session's own layer: without a model, or for the head view of a session that is no block.
    if (!p.attentions.on() && (!model || (layer < 0 && kind == ExportTarget::Kind::head_view))) {
        out.page = core::session_page(state.shown().session, state.trace());
        if (!state.file_path().empty()) out.page.notes.push_back("From " + file_name(state.file_path()) + ".");
        layer = 0;
        // The figure of a view showing the norm-weighted attention draws it (the page keeps the weights).
        const bool norm = (kind == ExportTarget::Kind::head_view && p.head_view.norm_weighted) ||
                          (kind == ExportTarget::Kind::model_view && p.model.norm_weighted);
        if (norm) norm_weighted_page(state, out.page);
    } else if (model) {
        out.page = model_page(state, run);
        layer = std::max(layer, 0);
    }
    const HeadViewPanel& view = p.head_view;
    out.head.layer = layer;
    out.head.queries = view.queries;
    out.head.keys = view.keys;
    out.head.hidden = view.hidden;
    out.head.aggregate = view.mean ? core::Aggregate::mean : core::Aggregate::sum;
    out.head.mean = view.heads_mean;
    // Hidden only where the view hides them: where some are special and hiding leaves tokens.
    const core::Attentions& a = out.page.weights;
    const core::KeptTokens kept = core::kept_tokens(a.query_tokens, a.key_tokens, true);
    out.head.hide_special = view.hide_special && !kept.queries.empty() && !kept.keys.empty();
    out.model.sort = p.model.sort;
    out.model.ascending = p.model.ascending;
    out.model.outline = p.model.highlight;
    out.page.view = panel_on_screen(p, PanelId::model) ? core::PageView::model : core::PageView::head;
    return R::ok(std::move(out));
}

}  // namespace attnviz::app
