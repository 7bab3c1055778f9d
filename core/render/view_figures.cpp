// The views' figures (view_figures.hpp): the heatmap machinery they share (view_figures_detail.hpp),
// and the figures of one matrix (heatmap_figure, matrix_figure). The heads figure is in
// view_figures_heads.cpp, the pipeline's in view_figures_pipeline.cpp.
#include "core/render/view_figures.hpp"

#include <algorithm>
#include <cmath>

#include "core/base/format.hpp"
#include "core/base/notation.hpp"
#include "core/render/pipeline_layout.hpp"
#include "core/render/view_figures_detail.hpp"

namespace attnviz::core {

using namespace detail;

namespace {

// The values a heatmap draws: the matrix's own, or with blocks one value a block.
Matrix drawn_values(const Drawn& d, int step, Pooling pooling) {
    const int rows = (d.rows() + step - 1) / step, cols = (d.cols() + step - 1) / step;
    Matrix out(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out(r, c) = block_value(d, r * step, c * step, step, pooling);
    return out;
}

std::string shape_of(const Matrix& m, bool transposed) {
    return format_shape(transposed ? m.cols() : m.rows(), transposed ? m.rows() : m.cols());
}

}  // namespace

namespace detail {

int block_step(int rows, int cols, int max_cells) {
    const int side = std::max(rows, cols), limit = std::max(max_cells, 1);
    return std::max(1, (side + limit - 1) / limit);
}

double block_value(const Drawn& d, int r0, int c0, int step, Pooling pooling) {
    BlockPool pool;
    for (int r = r0; r < std::min(d.rows(), r0 + step); ++r)
        for (int c = c0; c < std::min(d.cols(), c0 + step); ++c) pool.add(pooling, d(r, c));
    return pool.result(pooling);
}

double auto_cell(int rows, int cols, int step, double extent) {
    const int blocks = (std::max({rows, cols, 1}) + step - 1) / step;
    const double block = std::clamp(std::floor(extent / blocks), 1.0, max_auto_cell);
    return block / step;
}

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

std::string axes_note(MatrixId id, bool transposed) {
    const bool rows = rows_are_tokens(id), cols = cols_are_tokens(id);
    if (rows && cols) return transposed ? "rows: keys, columns: queries" : "rows: queries, columns: keys";
    if (rows) return transposed ? "columns: tokens" : "rows: tokens";
    return "";
}

}  // namespace detail

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

}  // namespace attnviz::core
