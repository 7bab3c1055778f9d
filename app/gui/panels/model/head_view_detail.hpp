// Internal to the head view (head_view*.cpp): a column of tokens, the frame and its layout, and
// the parts of the view drawn by head_view_layout.cpp, head_view_drawing.cpp and head_view_table.cpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <string>
#include <vector>

#include "core/attention/head_view.hpp"
#include "panels/model/head_view_state.hpp"
#include "state/norm_weighted_cache.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app::head_view_detail {

// A token's label as the view writes it (cut to core::max_label_characters), "#4" past the labels.
std::string token_label(const std::vector<std::string>& tokens, int t);  // head_view_drawing.cpp

// A column of tokens: their labels' room, and token t's row [top + t·pitch, top + (t + 1)·pitch].
struct Column {
    float x0 = 0, x1 = 0;
    float top = 0, pitch = 1;
    int count = 0;
    float y(int t) const { return top + (static_cast<float>(t) + 0.5f) * pitch; }
    float bottom() const { return top + static_cast<float>(count) * pitch; }
    int at(float y) const {
        return std::clamp(static_cast<int>(std::floor((y - top) / pitch)), 0, std::max(count - 1, 0));
    }
};

// Whether the ascending `sorted` holds t (head_view_panel.cpp).
bool contains(const std::vector<int>& sorted, int t);

// What the head view shows this frame: the tokens, the heads and the filters in force.
struct HeadViewFrame {
    const std::vector<std::string>& query_tokens;
    const std::vector<std::string>& key_tokens;
    int heads = 0, n = 0, n_keys = 0;
    float min_weight = 0;
    int top_k = 0;
    bool scaled = false;
    std::vector<const core::Matrix*> given;  // each head's weights (n×n_keys), null where hidden
    std::vector<char> hidden;
    HeadViewPanel::WeightsKey weights;       // what the weights are
    const core::Matrix* mean = nullptr;      // the mean of the heads shown, when its lines are drawn
    const NormWeighted* norm = nullptr;      // norm-weighted: the numbers the lines are of
    const core::KeptTokens* kept = nullptr;  // the session's tokens kept, when special ones are hidden
};

// Where the head view's parts go this frame.
struct HeadViewLayout {
    ImVec2 origin, avail;
    float font = 0, line_h = 0, row_h = 0, pad = 0;
    float bar_w = 0, block_w = 0, table_h = 0, columns_h = 0, top = 0;
    bool selection = false, tables_beside = false;
    Column q, k;                 // the query and key columns
    float x0 = 0, x1 = 0;        // the lines run between these
    int step_q = 1, step_k = 1;  // every step-th label is drawn
    ImU32 disabled = 0, text = 0;
};

// The layout (head_view_layout.cpp).

// The room: a header line, the two columns with the lines between them (the block), a line
// saying what is drawn, and the selection's tables: beside the block when the panel is wide
// enough, else under it.
HeadViewLayout layout_head_view(const HeadViewPanel& p, const HeadViewFrame& f, const std::string& options);

// The header, the pointer, the lines and the labels (head_view_drawing.cpp).

// The header: the columns' names, and over the bars what they show.
void draw_header(const HeadViewPanel& p, const HeadViewLayout& l);

// The columns take the pointer: hover a token for its lines, click to keep them, Ctrl+click to
// select several. Then the hovered token's tooltip and the selection's sums, after this frame's
// clicks.
void take_pointer(UiContext& ui, HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l);

// The lines: of the hovered token, else of the selection, else all; recomputed on a change only.
// Then the weight drawn opaque.
void update_lines(HeadViewPanel& p, const HeadViewFrame& f);

// The lines, each in its head's colour at an opacity of its weight. Many lines are painted into a
// picture once (a software OpenGL spends far longer on thousands of long thin triangles every
// frame); a few, or without textures, are drawn as lines.
void draw_lines(UiContext& ui, HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l);

// The labels, the highlighted ones last (over their neighbours); then the selection's bars.
void draw_labels(UiContext& ui, const HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l);

// What is drawn, and what is not.
void draw_drawn_line(UiContext& ui, const HeadViewPanel& p, const HeadViewLayout& l, const std::string& options);

// The selection's attention, the tooltip, the bars and the tables (head_view_table.cpp).

// The selection's attention, the shown heads averaged and per head.
void compute_selection(HeadViewPanel& p, core::HeadWeights given);

// The strongest of a hovered token's other side, in a tooltip: its keys (a query) or the queries
// attending to it (a key), the shown heads averaged; norm-weighted, each head's numbers under each.
void token_tooltip(UiContext& ui, const HeadViewPanel& p, int top_k, core::HeadWeights given,
                   const std::vector<std::string>& queries, const std::vector<std::string>& keys,
                   const NormWeighted* norm, const core::KeptTokens* kept);

// The bars of a selection's attention beside a column: bar length = value / the largest value, the
// number printed where the column has room for labels. `outward` is +1 (bars grow right, from x)
// or −1 (left).
void draw_bars(ImDrawList* dl, const Column& c, const Eigen::VectorXd& values, float x, float width, float outward,
               int step, const ImFont* numbers, ImU32 bar, ImU32 text);

// The selection's tables, side by side when both columns have a selection.
void draw_selection_tables(UiContext& ui, const HeadViewPanel& p, const HeadViewFrame& f, const HeadViewLayout& l);

}  // namespace attnviz::app::head_view_detail
