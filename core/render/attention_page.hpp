// The interactive page: one self-contained HTML file (data, script and style inline; no request
// of any kind) that draws the head view and the model view of attention weights in a browser, for
// a colleague without attnviz or for a web page.
//
//   head view   query tokens on the left, key tokens on the right, a line per head from each query
//               to each key, as opaque as its weight, in the head's colour; hover a token for its
//               lines and its top keys per head, click to keep it, Ctrl+click for several; head
//               chips hide heads; a "mean" chip draws the mean over the heads shown; a layer selector
//   model view  layers × heads thumbnails of the weights; click one for its full heatmap (hover a
//               cell for its query, key and weight)
//   both        "hide special tokens" ([CLS], [SEP], <s>, <|endoftext|> …): their rows and columns
//               leave and each row is renormalised over the keys left, which the legend says
//
// The page reads its state from its address, so a state can be linked:
//   #view=head&layer=0&select=3,5&heads=1,2&mean=1&special=hide     #view=model&pick=2,5
// (layers and tokens from 0, heads from 1 as the app numbers them; pick: the heatmap shown, layer
// and head). Its size grows linearly with
// the weights: each is stored as a 16-bit fraction (base64), about 2.7 bytes a weight.
#pragma once

#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/io/attentions.hpp"

namespace attnviz::core {

enum class PageView { head, model };

struct AttentionPage {
    std::string title;               // the page's heading and <title>
    std::vector<std::string> notes;  // grey lines under it: where the weights come from
    Attentions weights;              // [layer][head] q × k, every row a distribution
    PageView view = PageView::head;  // shown first (the address can say otherwise)
};

// A session's one layer: its heads' weights (n × n_kv) from the trace, its tokens.
AttentionPage session_page(const Session& session, const Trace& trace);

// The page as HTML. Refused: no layer, no head, layers or heads whose shapes differ from the
// first, token lists whose lengths are not the weights' q and k.
Result<std::string> attention_page_html(const AttentionPage& page);

// The script and the style the page carries inline (attention_page_script.cpp).
extern const char* const attention_page_script;
extern const char* const attention_page_style;

}  // namespace attnviz::core
