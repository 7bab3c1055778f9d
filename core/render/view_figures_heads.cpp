// The heads figure (heads_figure, view_figures.hpp): every head's weights or scores side by side on
// one colour range, as many a row as fit the box asked for.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/format.hpp"
#include "core/render/view_figures.hpp"
#include "core/render/view_figures_detail.hpp"

namespace attnviz::core {

using namespace detail;

Figure heads_figure(const Session& session, const Trace& trace, const FigureStyle& o) {
    const Config& c = trace.config;
    const MatrixId id = o.heads_matrix == MatrixId::scores || o.heads_matrix == MatrixId::scores_raw
                            ? o.heads_matrix
                            : MatrixId::weights;
    const ColorScale colors = info(id).colors;
    const int heads = static_cast<int>(trace.heads.size());
    const int keys = c.kv_len();  // columns of each head's weights (rows: the n queries)
    const int step = block_step(c.n, keys, o.max_cells);
    // One range for all heads, so they can be compared: every head's values combined.
    std::vector<Drawn> drawn;
    for (int h = 0; h < heads; ++h) drawn.push_back({*find_computed(trace, {id, h}), o.column_vectors});
    const Coloring colored = coloring(colors, o.scaling, drawn, step);

    Heatmap s;
    s.row_labels = o.column_vectors ? key_tokens(session) : session.tokens;
    s.col_labels = o.column_vectors ? session.tokens : key_tokens(session);
    s.colors = colors;
    s.range = colored.range;
    s.style = o;
    const double head_title = 18, gap = 18;
    const std::string title = std::string(name(id)) + " of every head (" + format_shape(c.n, keys) + ", " +
                              std::to_string(heads) + (heads == 1 ? " head)" : " heads)");
    auto notes_for = [&](const Grid& g) {
        std::vector<std::string> notes = {axes_note(id, o.column_vectors) + "; one colour scale for every head"};
        if (g.step > 1) notes.push_back(block_note(g.step, colors));
        return notes;
    };
    // The figure's size with `columns` heads a row of cells laid out as g, measured by drawing its
    // heading and legend aside.
    auto size_of = [&](int columns, const Grid& g) {
        Figure aside;
        double width = 0;
        double y = draw_heading(aside, title, notes_for(g), margin, width);
        const int rows = (heads + columns - 1) / columns;
        const double slot_w = g.width(), slot_h = head_title + g.height();
        width = std::max(width, margin + std::min(columns, heads) * (slot_w + gap) - gap);
        y += rows * slot_h + std::max(rows - 1, 0) * gap;
        if (o.legend) {
            const Point legend = draw_legend(aside, colormap_for(colors), colored.range, colored.note, colored.masked,
                                             o.notation, 0, 0, std::clamp(g.cols * g.cell, 160.0, 320.0));
            width = std::max(width, margin + g.label_w + legend.x);
            y += 14 + legend.y;
        }
        return Point{std::ceil(width + margin), std::ceil(y + margin)};
    };

    // The cell side and the number of columns: natural (at most 4 columns), or, to fit a box, the
    // layout whose cells end up largest. For each number of columns: the largest cell (up to
    // max_auto_cell, whole units, or whole units a block) with which the figure fits the box, then
    // the whole figure scaled to fill it. A larger box thus never gives smaller cells.
    const Matrix& first = heads > 0 ? *find_computed(trace, {id, 0}) : trace.concat;
    const Drawn first_drawn{first, o.column_vectors};
    Grid g = plan_grid(first_drawn, s, auto_cell(c.n, keys, step, head_extent));
    int columns = std::clamp(heads, 1, 4);
    const bool fitting = o.fit_width > 0 || o.fit_height > 0;
    if (fitting && heads > 0) {
        std::vector<Grid> grids;  // largest cells first
        for (int k = static_cast<int>(max_auto_cell); k >= 1; --k)
            grids.push_back(plan_grid(first_drawn, s, static_cast<double>(k) / step));
        auto fill = [&](Point size) {  // the factor that fills the box
            double k = INFINITY;
            if (o.fit_width > 0) k = std::min(k, o.fit_width / size.x);
            if (o.fit_height > 0) k = std::min(k, o.fit_height / size.y);
            return k;
        };
        double best = 0;
        for (int k = 1; k <= heads; ++k) {
            const Grid* chosen = &grids.back();
            for (const Grid& candidate : grids)
                if (fill(size_of(k, candidate)) >= 1) {
                    chosen = &candidate;
                    break;
                }
            const double shown = chosen->cell * fill(size_of(k, *chosen));
            if (shown > best * (1 + 1e-9)) best = shown, columns = k, g = *chosen;
        }
    }

    // A tooltip on each block only while they stay few (the SVG would grow by megabytes).
    const std::int64_t blocks = static_cast<std::int64_t>((g.rows + g.step - 1) / g.step) *
                                ((g.cols + g.step - 1) / g.step);
    s.tooltips = g.step == 1 || blocks * heads <= (std::int64_t{1} << 16);
    Figure f;
    f.title = title;
    double width = 0;
    double y = draw_heading(f, title, notes_for(g), margin, width);
    const double slot_w = g.width(), slot_h = head_title + g.height();
    for (int h = 0; h < heads; ++h) {
        const double x = margin + (h % columns) * (slot_w + gap);
        const double top = y + (h / columns) * (slot_h + gap);
        const std::string head_name = "head " + std::to_string(h + 1);
        f.elements.push_back(
            label_at(x + g.label_w, top, head_name, 12, ink, Anchor::start, Baseline::top, true, "head-title"));
        s.cell_name = label(MatrixRef{id, h}, o.notation);
        draw_grid(f, drawn[h], s, g, colored.range, x, top + head_title);
        width = std::max(width, x + slot_w);
    }
    const int grid_rows = (heads + columns - 1) / columns;
    y += grid_rows * slot_h + std::max(grid_rows - 1, 0) * gap;
    if (o.legend) {
        y += 14;
        const Point size = draw_legend(f, colormap_for(colors), colored.range, colored.note, colored.masked, o.notation,
                                       margin + g.label_w, y, std::clamp(g.cols * g.cell, 160.0, 320.0));
        width = std::max(width, margin + g.label_w + size.x);
        y += size.y;
    }
    f.width = std::ceil(width + margin);
    f.height = std::ceil(y + margin);
    if (fitting) fit_figure(f, o.fit_width, o.fit_height);
    return f;
}

}  // namespace attnviz::core
