#include "core/render/view_figures.hpp"

#include <algorithm>
#include <cmath>

#include "core/base/format.hpp"
#include "core/base/notation.hpp"
#include "core/render/pipeline_layout.hpp"

namespace attnviz::core {

namespace {

// Sizes in figure units (pixels at scale 1).
constexpr double margin = 12;
constexpr double title_size = 14, title_line = 20;
constexpr double note_size = 11, note_line = 15;
constexpr double label_size = 11;
constexpr double max_number_size = 12, min_number_size = 7;
constexpr double max_auto_cell = 44;
constexpr double heatmap_extent = 640, head_extent = 320;  // automatic cells: the matrix about this wide
constexpr double max_row_label = 120;                      // row labels are cut to this width
constexpr double legend_bar_h = 10;

constexpr Rgba ink = figure_ink, grey = figure_grey, masked_color{110, 110, 110, 255};
constexpr Rgba node_fill{234, 240, 249, 255}, node_border{110, 135, 170, 255};
constexpr Rgba input_fill{252, 244, 222, 255}, input_border{190, 155, 70, 255};
constexpr Rgba panel_fill{246, 247, 249, 255}, panel_border{218, 222, 228, 255};
constexpr Rgba arrow_color{100, 108, 125, 255};

// The matrix as drawn: itself, or its transpose.
struct Drawn {
    const Matrix& m;
    bool transposed;
    int rows() const { return static_cast<int>(transposed ? m.cols() : m.rows()); }
    int cols() const { return static_cast<int>(transposed ? m.rows() : m.cols()); }
    double operator()(int r, int c) const { return transposed ? m(c, r) : m(r, c); }
};

// Cells a block side: 1, or k so that at most max_cells blocks cover the larger side.
int block_step(int rows, int cols, int max_cells) {
    const int side = std::max(rows, cols), limit = std::max(max_cells, 1);
    return std::max(1, (side + limit - 1) / limit);
}

// The value a block (step×step cells from (r0, c0)) is drawn with: its cells pooled (the mean of
// weights, the value of largest magnitude of the others; −∞ only when all are masked).
double block_value(const Drawn& d, int r0, int c0, int step, Pooling pooling) {
    BlockPool pool;
    for (int r = r0; r < std::min(d.rows(), r0 + step); ++r)
        for (int c = c0; c < std::min(d.cols(), c0 + step); ++c) pool.add(pooling, d(r, c));
    return pool.result(pooling);
}

// The values a heatmap draws: the matrix's own, or with blocks one value a block.
Matrix drawn_values(const Drawn& d, int step, Pooling pooling) {
    const int rows = (d.rows() + step - 1) / step, cols = (d.cols() + step - 1) / step;
    Matrix out(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out(r, c) = block_value(d, r * step, c * step, step, pooling);
    return out;
}

// A cell side that makes the matrix about `extent` wide: whole units, at most max_auto_cell, and
// with blocks a whole number of units a block.
double auto_cell(int rows, int cols, int step, double extent) {
    const int blocks = (std::max({rows, cols, 1}) + step - 1) / step;
    const double block = std::clamp(std::floor(extent / blocks), 1.0, max_auto_cell);
    return block / step;
}

// The layout of one heatmap's labels and cells.
struct Grid {
    int rows = 0, cols = 0;  // drawn
    int step = 1;            // matrix cells a block side
    double cell = 1;         // units a matrix cell
    double gap = 0;          // between cells (large cells only)
    double label_w = 0, label_h = 0;
    int row_every = 0, col_every = 0;  // a label every k rows / columns; 0: none
    bool col_vertical = false;         // column labels upright (Label::vertical), one a column
    double overhang = 0;               // column labels reaching past the last column
    int digits = 0;                    // significant digits of the numbers; 0: none
    double number_size = 0;
    double width() const { return label_w + cols * cell + overhang; }
    double height() const { return label_h + rows * cell; }
};

Grid plan_grid(const Drawn& d, const Heatmap& s, double cell) {
    Grid g;
    g.rows = d.rows();
    g.cols = d.cols();
    g.step = std::max(block_step(g.rows, g.cols, s.style.max_cells),
                      static_cast<int>(std::ceil(min_block_side / cell - 1e-9)));
    g.cell = cell;
    g.gap = g.step == 1 && cell >= 12 ? 1 : 0;
    // Rows: every k-th, k so that labels 1.3 lines apart never touch. Columns: every k-th, k so that
    // a label has k cells (less 4 units): room for the widest label, up to four digits' width
    // (longer ones are cut).
    const int row_labels = s.style.labels ? std::min(g.rows, static_cast<int>(s.row_labels.size())) : 0;
    const int col_labels = s.style.labels ? std::min(g.cols, static_cast<int>(s.col_labels.size())) : 0;
    double col_widest = 0;
    for (int c = 0; c < col_labels; ++c) col_widest = std::max(col_widest, text_width(s.col_labels[c], label_size));
    int row_every = std::max(1, static_cast<int>(std::ceil(label_size * 1.3 / cell)));
    int col_every =
        std::max(1, static_cast<int>(std::ceil((std::min(col_widest, text_width("x000", label_size)) + 4) / cell)));
    // Column labels wider than their column that a line of text fits across ("because" over a cell of
    // 30): turned upright, each whole (up to max_row_label) rather than cut to "beca…".
    g.col_vertical = col_labels > 0 && g.step == 1 && cell >= label_size + 2 && col_widest > cell - 2;
    if (g.col_vertical) col_every = 1;
    // A square-ish matrix (sides within a factor of 2) is labelled at one interval on both axes, the
    // larger, so that a row's token and the same column's are both named or both not.
    if (row_labels > 0 && col_widest > 0 && std::max(g.rows, g.cols) <= 2 * std::min(g.rows, g.cols))
        row_every = col_every = std::max(row_every, col_every);
    if (row_labels > 0) {
        double widest = 0;
        for (int r = 0; r < row_labels; r += row_every)
            widest = std::max(widest, text_width(fit_text(s.row_labels[r], max_row_label, label_size), label_size));
        g.label_w = widest > 0 ? widest + 6 : 0;
        g.row_every = widest > 0 ? row_every : 0;
    }
    if (col_labels > 0 && col_widest > 0) {
        g.col_every = col_every;
        g.label_h = g.col_vertical ? std::min(col_widest, max_row_label) + 6 : label_size + 6;
        // Labels of several columns start at their column and may reach past the last one.
        if (g.col_every > 1)
            for (int c = 0; c < col_labels; c += g.col_every) {
                const double w = text_width(fit_text(s.col_labels[c], g.col_every * cell - 4, label_size), label_size);
                g.overhang = std::max(g.overhang, c * cell + w - g.cols * cell);
            }
    }
    // Numbers: at one size for the whole matrix, each cell printing the most digits that fit it
    // (cell_number's levels), so one wide value never blanks the others.
    if (s.style.numbers && g.step == 1) {
        const double size = std::min(max_number_size, cell * 0.32);
        if (size >= min_number_size) {
            g.digits = figure_digits(s.style);
            g.number_size = size;
        }
    }
    return g;
}

Rgba cell_color(double v, Colormap map, const ColorRange& range) {
    return std::isfinite(v) ? colormap_rgba(map, range.position(v)) : masked_color;
}

// The heatmap with its labels, its top left corner at (x, y).
void draw_grid(Figure& f, const Drawn& d, const Heatmap& s, const Grid& g, const ColorRange& range, double x,
               double y) {
    const Colormap map = colormap_for(s.colors);
    const Pooling pooling = pooling_for(s.colors);
    f.elements.push_back(Group{"heatmap", s.cell_name.empty() ? s.title : s.cell_name, g.gap == 0});
    const double x0 = x + g.label_w, y0 = y + g.label_h;
    if (g.row_every > 0)
        for (int r = 0; r < g.rows && r < static_cast<int>(s.row_labels.size()); r += g.row_every)
            f.elements.push_back(label_at(x0 - 5, y0 + (r + 0.5) * g.cell - g.gap / 2,
                                          fit_text(s.row_labels[r], max_row_label, label_size), label_size, ink,
                                          Anchor::end, Baseline::middle, false, "row-label"));
    if (g.col_every > 0)
        for (int c = 0; c < g.cols && c < static_cast<int>(s.col_labels.size()); c += g.col_every) {
            if (g.col_vertical) {  // upright from just above its column, centred on it
                Label l = label_at(x0 + (c + 0.5) * g.cell - g.gap / 2, y0 - 5,
                                   fit_text(s.col_labels[c], g.label_h - 6, label_size), label_size, ink, Anchor::start,
                                   Baseline::middle, false, "col-label");
                l.vertical = true;
                f.elements.push_back(std::move(l));
                continue;
            }
            const bool one = g.col_every == 1;
            const std::string text = fit_text(s.col_labels[c], g.col_every * g.cell - (one ? 2 : 4), label_size);
            f.elements.push_back(label_at(one ? x0 + (c + 0.5) * g.cell - g.gap / 2 : x0 + c * g.cell, y0 - 5, text,
                                          label_size, ink, one ? Anchor::middle : Anchor::start, Baseline::alphabetic,
                                          false, "col-label"));
        }
    const std::string name = s.tooltips ? s.cell_name : "";
    const Symbols& sym = symbols(s.style.notation);
    auto index = [&](int r, int c) {  // the matrix's own (storage) indices of a drawn cell
        return s.style.column_vectors ? "[" + std::to_string(c) + "][" + std::to_string(r) + "]"
                                      : "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
    };
    for (int r0 = 0; r0 < g.rows; r0 += g.step) {
        const int r1 = std::min(g.rows, r0 + g.step);
        for (int c0 = 0; c0 < g.cols; c0 += g.step) {
            const int c1 = std::min(g.cols, c0 + g.step);
            const double value = block_value(d, r0, c0, g.step, pooling);
            const Rgba bg = cell_color(value, map, range);
            Box box = box_at(x0 + c0 * g.cell, y0 + r0 * g.cell, (c1 - c0) * g.cell - g.gap, (r1 - r0) * g.cell - g.gap,
                             bg);
            box.crisp = g.gap == 0;
            box.klass = "cell";
            const std::string shown = std::isfinite(value) ? format_number(value, 6) : std::string(sym.neg_inf);
            if (!name.empty() && g.step == 1) {
                box.tooltip = name + index(r0, c0) + " = " + shown;
            } else if (!name.empty()) {
                const int sr0 = s.style.column_vectors ? c0 : r0, sr1 = s.style.column_vectors ? c1 : r1;
                const int sc0 = s.style.column_vectors ? r0 : c0, sc1 = s.style.column_vectors ? r1 : c1;
                box.tooltip = name + "[" + std::to_string(sr0) + ".." + std::to_string(sr1 - 1) + "][" +
                              std::to_string(sc0) + ".." + std::to_string(sc1 - 1) +
                              (pooling == Pooling::mean ? "]: mean " : "]: largest |value| ") + shown;
            }
            f.elements.push_back(std::move(box));
            if (g.digits > 0) {
                auto fits = [&](const std::string& text) {
                    return text_width(text, g.number_size) + 4 <= g.cell - g.gap;
                };
                // A masked score is −∞; a finite value prints the most digits that fit.
                const Symbols& sym = symbols(s.style.notation);
                std::string text;
                if (std::isfinite(value))
                    text = fitted_cell_number(value, g.digits, std::string(sym.about) + "0", fits);
                else if (std::string inf = value < 0 ? sym.neg_inf : "inf"; fits(inf))
                    text = std::move(inf);
                if (!text.empty())
                    f.elements.push_back(label_at(x0 + (c0 + 0.5) * g.cell - g.gap / 2,
                                                  y0 + (r0 + 0.5) * g.cell - g.gap / 2, std::move(text), g.number_size,
                                                  text_color_on(bg), Anchor::middle, Baseline::middle, false,
                                                  "number"));
            }
        }
    }
    f.elements.push_back(GroupEnd{});
}

// The colour bar at (x, y), `bar_w` wide, its values under it, the scaling's name right of it (and a
// grey swatch "masked" when some cells are). Returns its width and height.
Point draw_legend(Figure& f, Colormap map, const ColorRange& range, const std::string& note, bool masked,
                  Notation notation, double x, double y, double bar_w) {
    const double lo = range.lo, hi = range.hi, mid = range.log ? std::sqrt(lo * hi) : (lo + hi) / 2;
    const std::string left = format_number(lo, 3), right = format_number(hi, 3), middle = format_number(mid, 3);
    const double left_w = text_width(left, label_size), right_w = text_width(right, label_size),
                 mid_w = text_width(middle, label_size), gap = 8;
    bar_w = std::max(bar_w, left_w + gap + right_w);
    f.elements.push_back(Group{"legend", "colour scale: " + note, false});
    f.elements.push_back(Gradient{x, y, bar_w, legend_bar_h, colormap_stops(map)});
    const double text_y = y + legend_bar_h + 3;
    f.elements.push_back(label_at(x, text_y, left, label_size, ink, Anchor::start, Baseline::top));
    if (bar_w / 2 - mid_w / 2 >= left_w + gap && bar_w / 2 + mid_w / 2 + gap <= bar_w - right_w)
        f.elements.push_back(label_at(x + bar_w / 2, text_y, middle, label_size, ink, Anchor::middle, Baseline::top));
    f.elements.push_back(label_at(x + bar_w, text_y, right, label_size, ink, Anchor::end, Baseline::top));
    double w = bar_w;
    if (!note.empty()) {
        f.elements.push_back(label_at(x + w + 8, y + legend_bar_h / 2, note, label_size, grey, Anchor::start,
                                      Baseline::middle, false, "scaling"));
        w += 8 + text_width(note, label_size);
    }
    if (masked) {
        f.elements.push_back(box_at(x + w + 14, y, legend_bar_h, legend_bar_h, masked_color));
        const std::string text = std::string("masked (") + symbols(notation).neg_inf + ")";
        f.elements.push_back(label_at(x + w + 14 + legend_bar_h + 4, y + legend_bar_h / 2, text, label_size, grey,
                                      Anchor::start, Baseline::middle));
        w += 14 + legend_bar_h + 4 + text_width(text, label_size);
    }
    f.elements.push_back(GroupEnd{});
    return {w, legend_bar_h + 3 + label_size * 1.2};
}

std::string block_note(int step, ColorScale colors) {
    return "each cell is a " + format_shape(step, step) + " block of the matrix: " +
           (pooling_for(colors) == Pooling::mean ? "the mean of its weights" : "its value of largest magnitude");
}

// Title and notes from y on; returns the y below them and widens `width` to hold them.
double draw_heading(Figure& f, const std::string& title, const std::vector<std::string>& notes, double y,
                    double& width) {
    if (!title.empty()) {
        f.elements.push_back(label_at(margin, y, title, title_size, ink, Anchor::start, Baseline::top, true, "title"));
        width = std::max(width, margin + text_width(title, title_size, true));
        y += title_line;
    }
    for (const std::string& note : notes) {
        f.elements.push_back(label_at(margin, y, note, note_size, grey, Anchor::start, Baseline::top, false, "note"));
        width = std::max(width, margin + text_width(note, note_size));
        y += note_line;
    }
    return y + ((title.empty() && notes.empty()) ? 0 : 6);
}

// How heatmaps are coloured: the range, what the legend says of it, and whether cells are masked.
struct Coloring {
    ColorRange range;
    std::string note;
    bool masked = false;
};

// The colouring of heatmaps that share one range (the heads), each drawn in blocks of `step`
// cells. Weights over auto_weights_from_keys keys or more, with no scaling asked, are automatic
// with the top at the 99th percentile of the drawn values when the largest is an outlier
// (auto_outlier_range): a causal layer's first query (weight 1) would otherwise leave every other
// weight of a long sequence in the bottom colour. Asked for, "auto" stays min..max.
Coloring coloring(ColorScale colors, std::optional<Scaling> asked, const std::vector<Drawn>& heatmaps, int step) {
    const std::int64_t cols = heatmaps.empty() ? 0 : heatmaps.front().cols();
    Scaling scaling = asked.value_or(default_scaling(colors, cols));
    if (!offers(colors, scaling)) scaling = Scaling::automatic;
    const bool clip_outliers = clips_outliers(colors, asked.has_value(), cols);
    Coloring out;
    ValueStats all, drawn;
    for (const Drawn& d : heatmaps) {
        // Unblocked, the drawn values are the matrix's own: their percentiles come with its stats.
        const ValueStats st = value_stats(d.m, scaling == Scaling::percentile || (clip_outliers && step == 1));
        out.masked = out.masked || st.finite < d.m.size();
        all = combine(all, st);
        if (clip_outliers)
            drawn = combine(drawn, step > 1 ? value_stats(drawn_values(d, step, pooling_for(colors)), true) : st);
    }
    out.note = scaling_name(scaling);
    if (clip_outliers && max_is_outlier(drawn)) {
        out.range = auto_outlier_range(drawn);
        out.note = "auto, clipped at the " + format_number(clip_high_percentile, 3) + "th percentile (largest " +
                   format_number(drawn.max, 3) + ")";
    } else {
        out.range = color_range(colors, scaling, all);
    }
    return out;
}

std::string shape_of(const Matrix& m, bool transposed) {
    return format_shape(transposed ? m.cols() : m.rows(), transposed ? m.rows() : m.cols());
}

// What the rows and columns of a matrix are, in the drawn frame: "rows: queries, columns: keys".
std::string axes_note(MatrixId id, bool transposed) {
    const bool rows = rows_are_tokens(id), cols = cols_are_tokens(id);
    if (rows && cols) return transposed ? "rows: keys, columns: queries" : "rows: queries, columns: keys";
    if (rows) return transposed ? "columns: tokens" : "rows: tokens";
    return "";
}

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

}  // namespace

Figure heatmap_figure(const Matrix& m, const Heatmap& s) {
    const Drawn d{m, s.style.column_vectors};
    const int step = block_step(d.rows(), d.cols(), s.style.max_cells);
    const double cell = s.cell > 0 ? s.cell : auto_cell(d.rows(), d.cols(), step, heatmap_extent);
    const Grid g = plan_grid(d, s, cell);
    const Coloring colored = coloring(s.colors, s.style.scaling, {d}, g.step);
    const ColorRange range = s.range.value_or(colored.range);

    Figure f;
    f.title = s.title.empty() ? s.cell_name : s.title;
    double width = 0;
    std::vector<std::string> notes = s.notes;
    if (g.step > 1) notes.push_back(block_note(g.step, s.colors));
    double y = draw_heading(f, s.title, notes, margin, width);
    draw_grid(f, d, s, g, range, margin, y);
    width = std::max(width, margin + g.width());
    y += g.height();
    if (s.style.legend) {
        y += 14;
        const double x = margin + g.label_w;
        const Point size = draw_legend(f, colormap_for(s.colors), range, s.range ? "" : colored.note, colored.masked,
                                       s.style.notation, x, y, std::clamp(g.cols * g.cell, 160.0, 320.0));
        width = std::max(width, x + size.x);
        y += size.y;
    }
    f.width = std::ceil(width + margin);
    f.height = std::ceil(y + margin);
    return f;
}

Result<Figure> matrix_figure(const Session& session, const Trace& trace, const MatrixRef& ref, const FigureStyle& o) {
    const Config& c = session.config;
    const Matrix* m = exists(ref, c) ? find_matrix(session.params, trace, ref) : nullptr;
    if (!m)
        return Result<Figure>::fail({{"", label(ref, Notation::ascii) + " does not exist in this session (" +
                                              operation_text(ref.id, c, Notation::ascii, o.column_vectors) + ")"}});
    const bool t = o.column_vectors;
    Heatmap s;
    const std::string name = label(ref, o.notation);
    s.title = name + " (" + shape_of(*m, t) + ")";
    const std::string operation = equation_text(ref, c, static_cast<int>(trace.heads.size()), o.notation, t);
    s.notes.push_back(is_input(ref.id) ? name + ": " + operation : name + " = " + operation);
    if (const std::string axes = axes_note(ref.id, t); !axes.empty()) s.notes.back() += "; " + axes;
    // Queries' labels along Dim::n, keys' (Y's under cross-attention) along Dim::n_kv.
    const std::vector<std::string>* along_rows = token_labels(session, t ? info(ref.id).cols : info(ref.id).rows);
    const std::vector<std::string>* along_cols = token_labels(session, t ? info(ref.id).rows : info(ref.id).cols);
    if (along_rows) s.row_labels = *along_rows;
    if (along_cols) s.col_labels = *along_cols;
    s.colors = info(ref.id).colors;
    s.style = o;
    s.cell_name = name;
    return Result<Figure>::ok(heatmap_figure(*m, s));
}

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

namespace {

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
