#include "panels/layer/trace_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <string>
#include <vector>

#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

// Matrices whose sides are all within this many cells get readable cells (their numbers show),
// scrolling the panel when they do not fit it; larger ones are fitted to it.
constexpr int readable_side = 16;

// A matrix of the flow: what it is, its title, and its place in the flow.
struct TraceItem {
    MatrixRef ref;
    std::string title;
    FlowItem flow;
};

}  // namespace

void draw_trace_panel(AppState& state, UiContext& ui, TracePanel& panel) {
    using core::MatrixId;
    const core::Config& c = state.shown_config();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Hover a cell for its arithmetic; click it to outline its operands and open it in the viewer.");
    ImGui::PopTextWrapPos();

    // The computed matrices of one head that exist in this layer (Q … Z; Q_rot and K_rot with RoPE),
    // each headed as the shown convention writes it: row vectors (seeds 000–003), or column vectors
    // (seed 004: every matrix transposed). Every head on lines of its own, its matrices wrapping to
    // the panel's width, then concat and output: one cell size for all, the largest that fills the
    // panel up to cell_limit, never below readable_cell while the matrices are small (the panel
    // then scrolls down, never sideways).
    const bool t = state.column_vectors();
    const float font = ImGui::GetFontSize();
    const float title_h = ImGui::GetTextLineHeightWithSpacing();
    std::vector<TraceItem> items;
    int largest = 1;
    auto add = [&](MatrixRef ref, std::string title, bool new_line) {
        const core::Matrix* m = state.matrix(ref);
        if (!m) return;
        const int rows = static_cast<int>(t ? m->cols() : m->rows()),
                  cols = static_cast<int>(t ? m->rows() : m->cols());
        if (core::is_per_head(ref.id)) largest = std::max({largest, rows, cols});
        FlowItem f;
        f.rows = rows;
        f.cols = cols;
        f.head_h = title_h;
        f.min_w = ImGui::CalcTextSize(title.c_str()).x;
        f.new_line = new_line;
        items.push_back({ref, std::move(title), f});
    };
    for (int h = 0; h < c.heads; ++h) {
        bool first = true;
        for (MatrixId id : core::all_matrix_ids) {
            if (!core::is_per_head(id) || core::is_input(id) || !core::exists(id, c)) continue;
            // The head's first matrix names the head; the others their operation, as the seeds do.
            std::string title = core::heading_text(id, c, ui.notation(), t);
            if (first) title = "head " + std::to_string(h + 1) + ": " + title;
            add({id, h}, std::move(title), first);
            first = false;
        }
    }
    for (MatrixId id : {MatrixId::concat, MatrixId::output})
        add({id, 0}, state.label({id, 0}) + "  " + state.shape_text({id, 0}), id == MatrixId::concat);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float scrollbar = ImGui::GetStyle().ScrollbarSize;
    const ImVec2 gap{font * 0.9f, ImGui::GetStyle().ItemSpacing.y};
    const float readable_cell = std::round(font * 1.5f);
    const float min_cell = largest <= readable_side ? readable_cell : std::max(0.05f, font * 3 / largest);
    std::vector<FlowItem> flow;
    for (const TraceItem& item : items) flow.push_back(item.flow);
    float cell = flow_cell(flow, avail, gap, min_cell, std::max(min_cell, panel.cell_limit));
    if (flow_height(flow, cell, avail.x, gap) > avail.y)  // it scrolls: a scrollbar takes its width
        cell = flow_cell(flow, {avail.x - scrollbar, avail.y}, gap, min_cell, std::max(min_cell, panel.cell_limit));
    const float width = ImGui::GetContentRegionAvail().x;

    MatrixViewOptions o;
    o.max_cell = cell;
    bool first = true;
    for (const TraceItem& item : items) {
        const float w = std::min(item.flow.width(cell), width);
        flow_place(w, gap.x, item.flow.new_line, first);
        first = false;
        o.title_text = item.title;
        o.max_size = {w, item.flow.height(cell, width) - title_h};
        // A matrix scrolled out of view takes its room only (every head of a large layer is not drawn).
        if (!ImGui::IsRectVisible({w, item.flow.height(cell, width)})) {
            ImGui::Dummy({w, item.flow.height(cell, width)});
            continue;
        }
        matrix_view(state, ui, item.ref, o);
    }
}

}  // namespace attnviz::app
