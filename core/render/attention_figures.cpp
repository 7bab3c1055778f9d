#include "core/render/attention_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/render/colormaps.hpp"

namespace attnviz::core {

namespace {

constexpr double margin = 12, label_size = 12, row_pitch = 18, title_size = 15, note_size = 11;
constexpr double max_token_width = 160, lines_width = 260, bar_width = 90;
constexpr Rgba selected_fill{66, 110, 170, 255}, bar_fill{90, 130, 190, 200};
constexpr Rgba mean_color{40, 40, 40, 255};  // the mean's lines: ink, as no head's colour is

// A label whose y is the middle of its capitals, as every label of these figures is.
Label text_at(double x, double y, std::string text, double size, Rgba color, Anchor anchor = Anchor::start,
              bool bold = false) {
    return label_at(x, y, std::move(text), size, color, anchor, Baseline::middle, bold);
}

std::string number(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

bool contains(const std::vector<int>& list, int v) { return std::find(list.begin(), list.end(), v) != list.end(); }

// The title and notes from the top; the y below them.
double heading(Figure& f, const std::string& title, const std::vector<std::string>& notes) {
    double y = margin + title_size / 2;
    f.elements.push_back(text_at(margin, y, title, title_size, figure_ink, Anchor::start, true));
    y += title_size;
    for (const std::string& note : notes) {
        f.elements.push_back(text_at(margin, y, note, note_size, figure_grey));
        y += note_size + 4;
    }
    return y + 6;
}

// A column of tokens; the selected ones on a filled box in white. `anchor`: end (right-aligned at x)
// or start.
void token_column(Figure& f, const std::vector<std::string>& tokens, const std::vector<int>& selected, double x,
                  double top, double width, Anchor anchor) {
    for (int t = 0; t < static_cast<int>(tokens.size()); ++t) {
        const double y = top + (t + 0.5) * row_pitch;
        const std::string text = fit_text(tokens[static_cast<std::size_t>(t)], width, label_size);
        const bool on = contains(selected, t);
        if (on) {
            const double w = text_width(text, label_size) + 6;
            f.elements.push_back(box_at(anchor == Anchor::end ? x - w + 3 : x - 3, y - row_pitch / 2 + 1, w,
                                        row_pitch - 2, selected_fill));
        }
        f.elements.push_back(text_at(x, y, text, label_size, on ? Rgba{255, 255, 255, 255} : figure_ink, anchor, on));
    }
}

// Bars of `values` beside a column, from x (to the right, or to the left with `leftward`), the
// longest bar_width for `top_value`, each value printed at its end.
void bars(Figure& f, const Eigen::VectorXd& values, double x, double top, bool leftward, int digits) {
    const double top_value = std::max(values.maxCoeff(), 1e-12);
    for (Eigen::Index t = 0; t < values.size(); ++t) {
        const double w = bar_width * std::clamp(values(t) / top_value, 0.0, 1.0);
        const double y = top + static_cast<double>(t) * row_pitch + 3;
        f.elements.push_back(box_at(leftward ? x - w : x, y, w, row_pitch - 6, bar_fill));
        f.elements.push_back(text_at(leftward ? x - w - 3 : x + w + 3, y + (row_pitch - 6) / 2,
                                     number(values(t), digits), note_size, figure_grey,
                                     leftward ? Anchor::end : Anchor::start));
    }
}

double widest(const std::vector<std::string>& tokens) {
    double w = 20;
    for (const std::string& t : tokens)
        w = std::max(w, text_width(fit_text(t, max_token_width, label_size), label_size));
    return w;
}

// The heads' legend in one row from (x, y): a swatch and "head h" each, hidden ones in grey.
void head_legend(Figure& f, int heads, const std::vector<char>& hidden, double x, double y) {
    for (int h = 0; h < heads; ++h) {
        const bool off = static_cast<std::size_t>(h) < hidden.size() && hidden[static_cast<std::size_t>(h)];
        const std::string name = "head " + std::to_string(h + 1) + (off ? " (hidden)" : "");
        Box swatch = box_at(x, y - 5, 10, 10, off ? Rgba{200, 200, 200, 255} : head_rgba(h, heads));
        f.elements.push_back(swatch);
        f.elements.push_back(text_at(x + 14, y, name, note_size, off ? figure_grey : figure_ink));
        x += 14 + text_width(name, note_size) + 14;
    }
}

// Under the heads' legend: the swatch of the mean's lines.
void mean_legend(Figure& f, double y) {
    f.elements.push_back(box_at(margin, y + 13, 10, 10, mean_color));
    f.elements.push_back(text_at(margin + 14, y + 18, "mean of the heads shown", note_size, figure_ink));
}

std::string selection_note(const HeadViewChoice& c, const Attentions& a) {
    const auto names = [](const std::vector<int>& list, const std::vector<std::string>& tokens) {
        std::string s;
        for (int t : list) s += (s.empty() ? "" : ", ") + fit_text(tokens[static_cast<std::size_t>(t)], 80, note_size);
        return s;
    };
    const char* how = c.aggregate == Aggregate::sum ? "summed" : "mean";
    std::string note;
    if (!c.queries.empty())
        note += "Queries " + names(c.queries, a.query_tokens) + ": their " + how + " attention beside the keys. ";
    if (!c.keys.empty())
        note += "Keys " + names(c.keys, a.key_tokens) + ": the " + how + " share of each query's attention on them.";
    return note;
}

}  // namespace

namespace {

// The layer's heads as the head view shows them: the weights over the tokens kept (each row
// renormalised when special tokens are hidden), their tokens, and the heads given (null where hidden).
struct ShownLayer {
    std::vector<Matrix> kept;  // per head, when special tokens are hidden
    std::vector<std::string> query_tokens, key_tokens;
    std::vector<const Matrix*> given;
    Matrix mean;  // with choice.mean: the mean of the heads given
};

Result<ShownLayer> shown_layer(const Attentions& a, const HeadViewChoice& c) {
    using R = Result<ShownLayer>;
    if (c.layer < 0 || c.layer >= static_cast<int>(a.layers.size()))
        return R::fail({{"layer", "layer " + std::to_string(c.layer) + " does not exist: there are " +
                                      std::to_string(a.layers.size())}});
    const std::vector<Matrix>& layer = a.layers[static_cast<std::size_t>(c.layer)];
    ShownLayer s;
    const KeptTokens kept = kept_tokens(a.query_tokens, a.key_tokens, c.hide_special);
    if (kept.queries.empty() || kept.keys.empty())
        return R::fail({{"tokens", std::string("every ") + (kept.queries.empty() ? "query" : "key") +
                                       " is a special token: hiding them leaves nothing to draw"}});
    for (int q : kept.queries) s.query_tokens.push_back(a.query_tokens[static_cast<std::size_t>(q)]);
    for (int k : kept.keys) s.key_tokens.push_back(a.key_tokens[static_cast<std::size_t>(k)]);
    if (c.hide_special)
        for (const Matrix& w : layer) s.kept.push_back(renormalised_weights(w, kept));
    const std::vector<Matrix>& weights = c.hide_special ? s.kept : layer;
    s.given.assign(weights.size(), nullptr);
    bool any = false;
    for (std::size_t h = 0; h < weights.size(); ++h) {
        const bool off = h < c.hidden.size() && c.hidden[h];
        if (!off) s.given[h] = &weights[h], any = true;
    }
    if (!any) return R::fail({{"heads", "every head is hidden"}});
    for (int q : c.queries)
        if (q < 0 || q >= static_cast<int>(s.query_tokens.size()))
            return R::fail({{"select", "query " + std::to_string(q) + " does not exist"}});
    for (int k : c.keys)
        if (k < 0 || k >= static_cast<int>(s.key_tokens.size()))
            return R::fail({{"select", "key " + std::to_string(k) + " does not exist"}});
    if (c.mean) s.mean = *mean_of_heads(s.given).value;
    return R::ok(std::move(s));
}

}  // namespace

Result<Figure> head_view_figure(const Attentions& a, const HeadViewChoice& c, const FigureStyle& style) {
    Result<ShownLayer> shown = shown_layer(a, c);
    if (!shown) return Result<Figure>::fail(std::move(shown.problems));
    const ShownLayer& s = *shown.value;
    const std::vector<const Matrix*>& given = s.given;
    const int heads = static_cast<int>(given.size());
    Attentions tokens;  // the tokens shown, for the selection's note
    tokens.query_tokens = s.query_tokens;
    tokens.key_tokens = s.key_tokens;

    const int n_keys = static_cast<int>(s.key_tokens.size());
    LineOptions o;
    o.min_weight = default_min_weight(n_keys);
    o.top_k = default_top_k(n_keys);
    o.queries = c.queries;
    o.keys = c.keys;
    const Matrix* mean_only[] = {&s.mean};
    const HeadLines lines = c.mean ? head_lines(mean_only, o) : head_lines(given, o);
    const double opaque = opaque_weight(lines, default_scaled_opacity(n_keys));
    const int digits = figure_digits(style);

    Figure f;
    f.title = "head view";
    std::vector<std::string> notes{
        "Lines: " + std::string(c.mean ? "the mean of the heads shown, " : "") + "weight ≥ " + number(o.min_weight, 2) +
        (o.top_k > 0 ? ", the " + std::to_string(o.top_k) + " strongest per query" : "") + "; " +
        (opaque < 1 ? "opaque at " + number(opaque, 2) + " (the 99th percentile)" : "opacity = weight") + "."};
    if (c.hide_special) notes.push_back("Special tokens hidden: each row is renormalised over the keys left.");
    if (const std::string sel = selection_note(c, tokens); !sel.empty()) notes.push_back(sel);
    double y = heading(f, "Head view, layer " + std::to_string(c.layer) + " (" + std::to_string(heads) + " heads)",
                       notes);
    head_legend(f, heads, c.hidden, margin, y);
    if (c.mean) mean_legend(f, y);
    y += c.mean ? 36 : 18;
    const Eigen::VectorXd of_queries = c.queries.empty() ? Eigen::VectorXd()
                                                         : *attention_of_queries(given, c.queries, c.aggregate).value;
    const Eigen::VectorXd to_keys = c.keys.empty() ? Eigen::VectorXd()
                                                   : *attention_to_keys(given, c.keys, c.aggregate).value;
    const double left_bars = to_keys.size() ? bar_width + 40 : 0;
    const double x_q = margin + left_bars + widest(s.query_tokens);  // the queries end here
    const double x0 = x_q + 8, x1 = x0 + lines_width, x_k = x1 + 8;
    for (const HeadLine& line : lines.lines) {
        Rgba color = c.mean ? mean_color : head_rgba(line.head, heads);
        color.a = static_cast<std::uint8_t>(std::lround(std::clamp(line.weight / opaque, 0.0, 1.0) * 255));
        f.elements.push_back(Line{x0, y + (line.query + 0.5) * row_pitch, x1, y + (line.key + 0.5) * row_pitch, color,
                                  o.queries.empty() && o.keys.empty() ? 1.2 : 2.0});
    }
    token_column(f, s.query_tokens, c.queries, x_q, y, max_token_width, Anchor::end);
    token_column(f, s.key_tokens, c.keys, x_k, y, max_token_width, Anchor::start);
    double right = x_k + widest(s.key_tokens);
    if (of_queries.size()) {
        bars(f, of_queries, right + 10, y, false, digits);
        right += 10 + bar_width + 40;
    }
    if (to_keys.size()) bars(f, to_keys, x_q - widest(s.query_tokens) - 10, y, true, digits);
    const double rows = static_cast<double>(std::max(s.query_tokens.size(), s.key_tokens.size()));
    f.width = right + margin;
    for (const std::string& note : notes) f.width = std::max(f.width, 2 * margin + text_width(note, note_size));
    f.height = y + rows * row_pitch + margin;
    if (style.fit_width > 0 || style.fit_height > 0) fit_figure(f, style.fit_width, style.fit_height);
    return Result<Figure>::ok(std::move(f));
}

Figure model_view_figure(const Attentions& a, const ModelViewChoice& c, const FigureStyle& style) {
    const int layers = static_cast<int>(a.layers.size()), heads = a.heads();
    const int total = layers * heads;
    const int side = total <= 16 ? 48 : total <= 64 ? 32 : 16;  // thumbnail cells a side: the SVG stays small
    const double thumb = 64, gap = 10, under = 14;
    std::vector<LayerSummary> summaries;
    for (const std::vector<Matrix>& layer : a.layers) {
        std::vector<const Matrix*> given;
        for (const Matrix& w : layer) given.push_back(&w);
        summaries.push_back(summarize_layer(given, side));
    }
    std::vector<const LayerSummary*> all;
    for (const LayerSummary& s : summaries) all.push_back(&s);
    const std::vector<HeadRef> outlined = c.sort == HeadKey::none ? std::vector<HeadRef>{}
                                                                  : top_heads(all, c.sort, c.outline, c.ascending);

    Figure f;
    f.title = "model view";
    std::string order = c.sort == HeadKey::none ? "Heads in their own order"
                                                : std::string("Each layer's heads by ") + head_key_name(c.sort) + ", " +
                                                      (c.ascending ? "smallest" : "largest") + " first";
    if (!outlined.empty()) order += "; the first " + std::to_string(outlined.size()) + " of the model outlined";
    const std::vector<std::string> notes{
        order + ".", std::string("Each head on its own colour range from 0; under it, its number and ") +
                         head_key_name(c.sort == HeadKey::none ? HeadKey::entropy : c.sort) + "."};
    const double top = heading(f,
                               "Model view (" + std::to_string(layers) + (layers == 1 ? " layer" : " layers") + " × " +
                                   std::to_string(heads) + " heads)",
                               notes);
    const double label_w = text_width("layer " + std::to_string(std::max(layers - 1, 0)), label_size) + 10;
    for (int l = 0; l < layers; ++l) {
        const LayerSummary& s = summaries[static_cast<std::size_t>(l)];
        const double y = top + l * (thumb + under + gap);
        f.elements.push_back(text_at(margin, y + thumb / 2, "layer " + std::to_string(l), label_size, figure_ink));
        const std::vector<int> order_of = head_order(s.heads, c.sort, c.ascending);
        for (std::size_t slot = 0; slot < order_of.size(); ++slot) {
            const int h = order_of[slot];
            const HeadThumbnail& t = s.thumbnails[static_cast<std::size_t>(h)];
            const double x = margin + label_w + static_cast<double>(slot) * (thumb + gap);
            const double cw = thumb / static_cast<double>(t.cells.cols()),
                         ch = thumb / static_cast<double>(t.cells.rows());
            f.elements.push_back(
                Group{"thumbnail", "layer " + std::to_string(l) + ", head " + std::to_string(h + 1), true});
            for (Eigen::Index i = 0; i < t.cells.rows(); ++i)
                for (Eigen::Index j = 0; j < t.cells.cols(); ++j) {
                    const double v = t.high > 0 ? t.cells(i, j) / t.high : 0;
                    Box cell = box_at(x + j * cw, y + i * ch, cw, ch,
                                      colormap_rgba(Colormap::sequential, static_cast<float>(v)));
                    cell.crisp = true;
                    f.elements.push_back(cell);
                }
            f.elements.push_back(GroupEnd{});
            if (std::find(outlined.begin(), outlined.end(), HeadRef{l, h}) != outlined.end()) {
                Box frame = box_at(x - 2.5, y - 2.5, thumb + 5, thumb + 5, Rgba{0, 0, 0, 0});
                frame.stroke = outline_color;
                frame.stroke_width = 2;
                f.elements.push_back(frame);
            }
            const HeadSummary& hs = s.heads[static_cast<std::size_t>(h)];
            f.elements.push_back(text_at(x, y + thumb + under / 2 + 1, std::to_string(h + 1), note_size, figure_grey));
            f.elements.push_back(text_at(x + thumb, y + thumb + under / 2 + 1, head_key_text(hs, c.sort), note_size,
                                         figure_ink, Anchor::end));
        }
    }
    f.width = margin + label_w + heads * (thumb + gap) + margin;
    for (const std::string& note : notes) f.width = std::max(f.width, 2 * margin + text_width(note, note_size));
    f.height = top + layers * (thumb + under + gap) + margin;
    if (style.fit_width > 0 || style.fit_height > 0) fit_figure(f, style.fit_width, style.fit_height);
    return f;
}

Result<std::string> attention_view_bytes(const AttentionPage& page, const AttentionViewExport& r,
                                         const std::string& font_path) {
    using R = Result<std::string>;
    if (r.format == ExportFormat::html) {
        AttentionPage shown = page;
        shown.view = r.view;
        return attention_page_html(shown);
    }
    if (!is_figure(r.format))
        return R::fail({{"format", std::string("the ") + (r.view == PageView::head ? "head" : "model") +
                                       " view is html, svg or png, not " + export_format_name(r.format)}});
    Figure figure;
    if (r.view == PageView::head) {
        Result<Figure> made = head_view_figure(page.weights, r.head, r.style);
        if (!made) return R::fail(std::move(made.problems));
        figure = std::move(*made.value);
    } else {
        figure = model_view_figure(page.weights, r.model, r.style);
    }
    if (r.format == ExportFormat::svg) return R::ok(to_svg(figure));
    return figure_png(figure, r.style.scale, font_path);
}

}  // namespace attnviz::core
