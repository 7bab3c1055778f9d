// The head view and the model view as figures (picture.hpp writes them as SVG or PNG), drawn as
// the app draws them, from a session's layer or from any model's attentions (core/io/attentions.hpp):
//   head_view_figure   the queries on the left, the keys on the right, a line per head from each
//                      query to each key, its opacity the weight (core/attention/head_view.hpp's
//                      threshold, top-k and opacity defaults), the head's colour; a selection of
//                      tokens isolates their lines and puts their summed (or mean) attention in
//                      bars beside the other column; "mean" draws the mean of the heads shown as
//                      one set of lines, "hide special tokens" leaves [CLS], <s>, … out with each
//                      row renormalised over the keys left (core/attention/head_view.hpp)
//   model_view_figure  layers × heads thumbnails of the weights (core/attention/layer_summary.hpp),
//                      each head on its own range, its number and its value of the sort key under
//                      it, each layer's heads in that order and the first of the model outlined
#pragma once

#include <vector>

#include "core/attention/head_view.hpp"
#include "core/attention/layer_summary.hpp"
#include "core/base/problem.hpp"
#include "core/io/attentions.hpp"
#include "core/render/attention_page.hpp"
#include "core/render/export.hpp"
#include "core/render/figure_style.hpp"
#include "core/render/picture.hpp"

namespace attnviz::core {

struct HeadViewChoice {
    int layer = 0;                         // of the attentions
    std::vector<int> queries, keys;        // the selected tokens (from 0, of the tokens shown)
    std::vector<char> hidden;              // per head: left out (heads beyond it are shown)
    Aggregate aggregate = Aggregate::sum;  // the bars: the selection's sum or mean
    bool mean = false;                     // the lines: of the mean of the heads shown, not per head
    bool hide_special = false;             // special tokens left out, rows renormalised (kept_tokens)
};

// Refused: a layer out of range, a token out of range, every head hidden, every query or every key
// a special token that is hidden.
Result<Figure> head_view_figure(const Attentions& attentions, const HeadViewChoice& choice, const FigureStyle& style);

struct ModelViewChoice {
    HeadKey sort = HeadKey::none;  // each layer's heads in this order (none: their own)
    bool ascending = false;        // smallest first
    int outline = 3;               // the first this many heads of the whole model in that order (needs a sort)
};

Figure model_view_figure(const Attentions& attentions, const ModelViewChoice& choice, const FigureStyle& style);

// One export of the attention views, as `attnviz export --view head|model` and File > Export
// write it: the interactive page (html, with `view` shown first) or a view's figure (svg, png).
struct AttentionViewExport {
    PageView view = PageView::head;
    ExportFormat format = ExportFormat::svg;  // html, svg or png
    HeadViewChoice head;                      // the head view's layer, selection, heads, mean, tokens
    ModelViewChoice model;                    // the model view's order and outlines
    FigureStyle style;                        // digits, fit, scale (png)
};

// The bytes of that export of `page` (its weights, title and notes). Refused: what the page or the
// figure refuses, another format; png needs the font at `font_path` (a problem naming that path).
Result<std::string> attention_view_bytes(const AttentionPage& page, const AttentionViewExport& request,
                                         const std::string& font_path = default_font_path);

// The colour of the model view's outlines (the app's highlighted_head: a pink no viridis cell has).
inline constexpr Rgba outline_color{255, 90, 200, 255};

}  // namespace attnviz::core
