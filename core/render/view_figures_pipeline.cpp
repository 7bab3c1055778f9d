// The pipeline figure (pipeline_figure, view_figures.hpp): the pipeline's layout
// (pipeline_layout.hpp) drawn as boxes and arrows, a panel a head, with thumbnails of the matrices.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/render/pipeline_layout.hpp"
#include "core/render/view_figures.hpp"
#include "core/render/view_figures_detail.hpp"

namespace attnviz::core {

using namespace detail;

namespace {

constexpr Rgba node_fill{234, 240, 249, 255}, node_border{110, 135, 170, 255};
constexpr Rgba input_fill{252, 244, 222, 255}, input_border{190, 155, 70, 255};
constexpr Rgba panel_fill{246, 247, 249, 255}, panel_border{218, 222, 228, 255};
constexpr Rgba arrow_color{100, 108, 125, 255};

// An arrow from `a` to `b`, its head at b.
void arrow(Figure& f, Point a, Point b) {
    const double len = std::hypot(b.x - a.x, b.y - a.y);
    if (!(len > 0)) return;
    const double ux = (b.x - a.x) / len, uy = (b.y - a.y) / len, head = std::min(7.0, len);
    f.elements.push_back(Line{a.x, a.y, b.x - ux * head, b.y - uy * head, arrow_color, 1.5});
    f.elements.push_back(Polygon{{{b.x, b.y},
                                  {b.x - ux * head - uy * 4, b.y - uy * head + ux * 4},
                                  {b.x - ux * head + uy * 4, b.y - uy * head - ux * 4}},
                                 arrow_color});
}

void line(Figure& f, Point a, Point b) { f.elements.push_back(Line{a.x, a.y, b.x, b.y, arrow_color, 1.5}); }

void note(Figure& f, double x, double y, const std::string& text, double room) {
    const std::string fitted = fit_text(text, room, note_size);
    if (!fitted.empty())
        f.elements.push_back(label_at(x, y, fitted, note_size, grey, Anchor::start, Baseline::middle, false, "note"));
}

// A node's box in figure units.
struct Place {
    double x = 0, y = 0, w = 0, h = 0;
    Point top() const { return {x + w / 2, y}; }
    Point bottom() const { return {x + w / 2, y + h}; }
};

// The pipeline's layout in figure units: each head a column of three narrow nodes (W_Q, Q, …)
// framed as a panel, the chain two of them wide, X (and Y) centred above the heads on lines over
// them, concat and output under all heads, W_O right of them; then drawn, with thumbnails.
struct PipelineDraw {
    Figure& f;
    const Session& session;
    const Trace& trace;
    const FigureStyle& o;
    const PipelineLayout& layout;
    static constexpr double row_gap = 30, sub_gap = 12, head_gap = 28, ellipsis_w = 110;
    double node_h = 0;
    double nw = 84, chain_w = 0, head_w = 0;  // a narrow node, the chain, a head
    std::vector<double> head_x = {};          // each laid-out head's left side
    double ellipsis_x = 0, heads_right = 0;
    double bus_y = 0, kv_bus_y = 0, panel_top = 0, panel_bottom = 0;
    double row_y[pipeline_row::output + 1] = {};
    std::vector<Place> at = {};  // each node's box

    const PipelineNode& node(int k) const { return layout.nodes[static_cast<std::size_t>(k)]; }
    bool elided() const { return !layout.left_out.empty(); }

    // Node widths: a narrow node holds its caption and half of it a head's title; the chain spans
    // two narrow ones. Then the heads' columns, an ellipsis column before the last when heads are left out.
    void measure() {
        double chain_text = 0;
        for (const PipelineNode& n : layout.nodes) {
            if (n.slot < 0) continue;
            const double w = text_width(n.caption(), 12) + 14;
            if (n.span == 1)
                nw = std::max(nw, w);
            else
                chain_text = std::max(chain_text, w);
        }
        for (int h : layout.heads) nw = std::max(nw, 2 * text_width("head " + std::to_string(h + 1), 11, true) + 16);
        nw = std::max(nw, (chain_text - sub_gap) / 2);
        chain_w = 2 * nw + sub_gap, head_w = 3 * nw + 2 * sub_gap;
        double x = margin + 8;
        for (std::size_t k = 0; k < layout.heads.size(); ++k) {
            if (elided() && k + 1 == layout.heads.size()) {
                ellipsis_x = x;
                x += ellipsis_w + head_gap;
            }
            head_x.push_back(x);
            x += head_w + head_gap;
        }
        heads_right = x - head_gap;
    }

    // Every node's box, the rows starting at `top`.
    void place(double top) {
        const bool cross = trace.config.cross();
        const double centre = (margin + 8 + heads_right) / 2;
        bus_y = top + node_h + 14;
        kv_bus_y = cross ? bus_y + 16 : bus_y;  // the line W_K and W_V hang from
        panel_top = kv_bus_y + 8;
        row_y[pipeline_row::projections] = panel_top + 22;
        row_y[pipeline_row::qkv] = row_y[pipeline_row::projections] + node_h + row_gap;
        row_y[pipeline_row::rotated] = row_y[pipeline_row::qkv] + node_h + row_gap;
        const double chain = trace.config.rope.on ? row_y[pipeline_row::rotated] + node_h + row_gap
                                                  : row_y[pipeline_row::rotated];
        // The chain's rows, scores_capped's only with soft-capping.
        int placed = 0;
        for (int r = pipeline_row::scores_raw; r <= pipeline_row::Z; ++r)
            if (r != pipeline_row::scores_capped || trace.config.softcap > 0)
                row_y[r] = chain + placed++ * (node_h + row_gap);
        panel_bottom = row_y[pipeline_row::Z] + node_h + 10;
        row_y[pipeline_row::concat] = panel_bottom + row_gap + 6;
        row_y[pipeline_row::output] = row_y[pipeline_row::concat] + node_h + row_gap + 6;
        for (const PipelineNode& n : layout.nodes) {
            const double fitted = std::max(nw, text_width(n.caption(), 12) + 14);
            if (n.slot >= 0)
                at.push_back({head_x[static_cast<std::size_t>(n.slot)] + n.column * (nw + sub_gap), row_y[n.row],
                              n.span == 2 ? chain_w : nw, node_h});
            else if (n.ref.id == MatrixId::X)
                at.push_back({cross ? centre - fitted - 20 : centre - fitted / 2, top, fitted, node_h});
            else if (n.ref.id == MatrixId::Y)
                at.push_back({centre + 20, top, fitted, node_h});
            else if (n.ref.id == MatrixId::W_O)
                at.push_back({heads_right + 28, row_y[n.row], fitted, node_h});
            else  // concat, output: under all heads
                at.push_back({head_x.front(), row_y[n.row], heads_right - head_x.front(), node_h});
        }
    }

    // The lines X (and Y) run over the heads, for the heads' W_Q (W_K and W_V) to hang from.
    void buses() {
        const Place& X = at[static_cast<std::size_t>(layout.find({MatrixId::X, 0}))];
        line(f, X.bottom(), {X.bottom().x, bus_y});
        if (!trace.config.cross()) {
            line(f, {head_x.front() + nw / 2, bus_y}, {head_x.back() + head_w - nw / 2, bus_y});
            return;
        }
        // X's line over each head's W_Q, Y's over each head's W_K and W_V; which is which at their left ends.
        const Place& Y = at[static_cast<std::size_t>(layout.find({MatrixId::Y, 0}))];
        line(f, {std::min(head_x.front() + nw / 2, X.bottom().x), bus_y},
             {std::max(head_x.back() + nw / 2, X.bottom().x), bus_y});
        line(f, Y.bottom(), {Y.bottom().x, kv_bus_y});
        const double kv_left = std::min(head_x.front() + nw * 1.5 + sub_gap, Y.bottom().x);
        line(f, {kv_left, kv_bus_y}, {std::max(head_x.back() + head_w - nw / 2, Y.bottom().x), kv_bus_y});
        note(f, std::min(head_x.front() + nw / 2, X.bottom().x) - 16, bus_y, "X", 14);
        note(f, kv_left - 16, kv_bus_y, "Y", 14);
    }

    void draw(int k) {
        const PipelineNode& n = node(k);
        const Place& p = at[static_cast<std::size_t>(k)];
        f.elements.push_back(Group{"node", n.title(), false});
        Box box = box_at(p.x, p.y, p.w, p.h, n.input ? input_fill : node_fill);
        box.stroke = n.input ? input_border : node_border;
        box.radius = 5;
        f.elements.push_back(box);
        // The caption: the name and shape; the name alone when that does not fit.
        const std::string caption = text_width(n.caption(), 12) + 12 <= p.w ? n.caption()
                                                                            : fit_text(n.label, p.w - 12, 12);
        f.elements.push_back(
            label_at(p.x + p.w / 2, p.y + 12, caption, 12, ink, Anchor::middle, Baseline::middle, false, "node-label"));
        const Matrix* m = find_matrix(session.params, trace, n.ref);
        if (o.thumbnails && m && m->size() > 0)
            thumbnail(*m, info(n.ref.id).colors, p.x + 6, p.y + 24, p.w - 12, p.h - 30);
        f.elements.push_back(GroupEnd{});
    }

    // An edge's arrow, and its note beside it.
    void connect(const PipelineEdge& e) {
        const Place &a = at[static_cast<std::size_t>(e.from)], &b = at[static_cast<std::size_t>(e.to)];
        const PipelineNode &from = node(e.from), &to = node(e.to);
        const double mid = b.y + node_h / 2;
        switch (e.route) {
            case PipelineRoute::bus:
                arrow(f, {b.top().x, from.ref.id == MatrixId::Y ? kv_bus_y : bus_y}, b.top());
                break;
            case PipelineRoute::down: arrow(f, a.bottom(), {a.bottom().x, b.y}); break;
            case PipelineRoute::side:
                line(f, a.bottom(), {a.bottom().x, mid});
                arrow(f, {a.bottom().x, mid}, {b.x + b.w, mid});
                break;
        }
        if (e.note.empty()) return;
        const double x = a.bottom().x + 6, y = a.bottom().y + row_gap / 2;
        if (to.ref.id == MatrixId::scores_raw) {  // between the arrows from Q and K
            f.elements.push_back(label_at(b.x + b.w / 2, y, fit_text(e.note, nw, note_size), note_size, grey,
                                          Anchor::middle, Baseline::middle, false, "note"));
        } else if (from.slot >= 0 && from.span == 1) {  // a bias, RoPE
            note(f, x, y, e.note, nw / 2 + sub_gap - 8);
        } else if (to.slot >= 0) {  // the chain, up to V's line
            const double v_x = head_x[static_cast<std::size_t>(to.slot)] + 2 * (nw + sub_gap) + nw / 2;
            note(f, x, y, e.note, v_x - a.bottom().x - 12);
        } else if (to.ref.id == MatrixId::concat) {
            note(f, x, (a.bottom().y + b.y) / 2 + 4, e.note, nw);
        } else if (from.ref.id == MatrixId::concat) {
            note(f, x, (a.bottom().y + b.y) / 2, e.note, b.w / 2 - 12);
        } else {  // b_O, on W_O's line
            note(f, x, (a.bottom().y + mid) / 2, e.note, 120);
        }
    }

    // A head's panel: its frame and title, its nodes, the edges into them.
    void head(int slot) {
        const double hx = head_x[static_cast<std::size_t>(slot)];
        Box panel = box_at(hx - 8, panel_top, head_w + 16, panel_bottom - panel_top, panel_fill);
        panel.stroke = panel_border;
        panel.radius = 6;
        f.elements.push_back(panel);
        f.elements.push_back(label_at(hx - 2, panel_top + 5,
                                      "head " + std::to_string(layout.heads[static_cast<std::size_t>(slot)] + 1), 11,
                                      grey, Anchor::start, Baseline::top, true, "head-title"));
        for (std::size_t k = 0; k < layout.nodes.size(); ++k)
            if (layout.nodes[k].slot == slot) draw(static_cast<int>(k));
        for (const PipelineEdge& e : layout.edges)
            if (node(e.to).slot == slot) connect(e);
    }

    // A small heatmap of the matrix, centred in the area: at most 24 blocks a side, each its cells
    // pooled (pooling_for: the mean of weights, else the value of largest magnitude), on the
    // matrix's own range.
    void thumbnail(const Matrix& m, ColorScale colors, double x, double y, double w, double h) {
        const Drawn d{m, o.column_vectors};
        const int step = block_step(d.rows(), d.cols(), 24);
        const int brows = (d.rows() + step - 1) / step, bcols = (d.cols() + step - 1) / step;
        const double side = std::min({w / bcols, h / brows, 12.0});
        const double x0 = x + (w - side * bcols) / 2, y0 = y + (h - side * brows) / 2;
        const ColorRange range = coloring(colors, o.scaling, {d}, step).range;
        for (int r0 = 0; r0 < d.rows(); r0 += step)
            for (int c0 = 0; c0 < d.cols(); c0 += step) {
                const double value = block_value(d, r0, c0, step, pooling_for(colors));
                Box b = box_at(x0 + (c0 / step) * side, y0 + (r0 / step) * side, side, side,
                               cell_color(value, colormap_for(colors), range));
                b.crisp = true;
                b.klass = "thumb";
                f.elements.push_back(b);
            }
        Box frame = box_at(x0 - 0.5, y0 - 0.5, side * bcols + 1, side * brows + 1, Rgba{0, 0, 0, 0});
        frame.stroke = Rgba{150, 160, 175, 255};
        frame.stroke_width = 0.75;
        f.elements.push_back(frame);
    }
};

}  // namespace

Figure pipeline_figure(const Session& session, const Trace& trace, const FigureStyle& o) {
    PipelineLayoutOptions lo;
    lo.notation = o.notation;
    lo.column_vectors = o.column_vectors;
    lo.heads = first_and_last_heads(static_cast<int>(trace.heads.size()), o.max_heads);
    const PipelineLayout layout = pipeline_layout(session, trace, lo);
    Figure f;
    PipelineDraw p{f, session, trace, o, layout};
    p.node_h = o.thumbnails ? 70 : 24;
    p.measure();
    double width = 0;
    std::vector<std::string> notes = {layout.convention};
    if (p.elided()) notes.push_back(layout.left_out + " are left out; every head has the same stages");
    p.place(draw_heading(f, "attention pipeline", notes, margin, width));

    // The layer's inputs and their lines, each head, the ellipsis, then concat, W_O and output.
    for (std::size_t k = 0; k < layout.nodes.size(); ++k)
        if (layout.nodes[k].row == pipeline_row::inputs) p.draw(static_cast<int>(k));
    p.buses();
    for (std::size_t slot = 0; slot < layout.heads.size(); ++slot) p.head(static_cast<int>(slot));
    if (p.elided()) {
        const double mid_y = (p.row_y[pipeline_row::qkv] + p.panel_bottom) / 2, x = p.ellipsis_x + p.ellipsis_w / 2;
        f.elements.push_back(label_at(x, mid_y - 10, "⋯", 20, grey, Anchor::middle, Baseline::middle));
        f.elements.push_back(
            label_at(x, mid_y + 14, layout.left_out, note_size, grey, Anchor::middle, Baseline::middle, false, "note"));
    }
    for (std::size_t k = 0; k < layout.nodes.size(); ++k)
        if (layout.nodes[k].row >= pipeline_row::concat) p.draw(static_cast<int>(k));
    for (const PipelineEdge& e : layout.edges)
        if (p.node(e.to).slot < 0) p.connect(e);

    // The width: the last head's panel, W_O with room for b_O's note, X and Y.
    double right = p.heads_right + 8;
    for (std::size_t k = 0; k < layout.nodes.size(); ++k) {
        const Place& at = p.at[k];
        if (layout.nodes[k].ref.id == MatrixId::W_O) {
            right = at.x + at.w;
            width = std::max(width, right + (exists(MatrixId::b_O, trace.config) ? 50 : 0));
        }
        if (layout.nodes[k].row == pipeline_row::inputs) width = std::max(width, at.x + at.w);
    }
    width = std::max(width, right);
    f.title = "attention pipeline: " + layout.convention;
    f.width = std::ceil(width + margin);
    f.height = std::ceil(p.row_y[pipeline_row::output] + p.node_h + margin);
    // Fitted into the box asked for: scaled down, or up to fill it.
    if (o.fit_width > 0 || o.fit_height > 0) fit_figure(f, o.fit_width, o.fit_height);
    return f;
}

}  // namespace attnviz::core
