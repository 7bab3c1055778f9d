// Head view (BertViz's): the queries in a column on the left, the keys on the right, and from each
// query a line to each key for every head, its opacity the weight, its colour the head's. The legend
// toggles heads; hovering a token shows only its lines, a click keeps them, Ctrl+click selects
// several tokens, whose summed (or mean) attention is shown as bars beside the other column and in
// a table. At n in the hundreds the weakest lines are dropped (a threshold, top-k per query and a
// bound of 20 000 lines a frame, core/attention/head_view.hpp) and the labels thinned to stay readable; beyond
// 1 500 lines they are painted into one texture, made again only when they change.
//
// The weights are the session's layer, or with several layers one of them (a layer selector): of
// the opened attentions (attentions_mode.hpp), or of a model's run (model mode: the block being
// edited is the session's, live). "mean" draws the mean of the heads shown as one set of lines;
// "hide special tokens" leaves [CLS], <s>, … out with each row renormalised over the keys left
// (core::renormalised_weights, the rule the figure and the interactive page share).
// "norm-weighted" draws, for the session's layer, each head's ‖α_ij·f_h(x_j)‖ with each query row
// divided by its sum (core::norm_weighted_rows: lines are drawn by relative strength), computed once
// per snapshot (NormWeightedCache); hovering a token adds each head's ‖f_h(x_j)‖, α_ij and product.
#pragma once

#include <string>
#include <utility>

#include "dialogs/attentions_mode.hpp"
#include "panels/model/head_view_state.hpp"
#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

enum class TokenSide { query, key };

// Whether a head's lines are drawn.
bool head_shown(const HeadViewPanel& panel, int head);
void set_head_shown(HeadViewPanel& panel, int head, bool shown);

// A click on a token. Alone it becomes the selection (or, when it was the whole selection, clears
// it); with Ctrl (add) it joins the selection, or leaves it when it was in it.
void click_token(HeadViewPanel& panel, TokenSide side, int token, bool add);
void clear_selection(HeadViewPanel& panel);
// Selects tokens given as text (attnviz --head-select): query rows from 0, and keys as "k" and
// their column, separated by commas: "0,2,k5". Of n queries and n_keys keys. Returns what is
// wrong ("" when every token was read); the tokens read are selected either way.
std::string select_tokens(HeadViewPanel& panel, const std::string& text, int n, int n_keys);

// Which labels a column of `count` tokens `pitch` pixels apart has room for: every step-th (1, 2,
// 5, 10, 20, 50, …, the smallest whose labels are a line height apart).
int label_step(int count, float pitch, float line_height);

// How many queries and keys the head view shows (special tokens left out when hidden): what
// --head-select counts in.
std::pair<int, int> head_view_tokens(const AppState& state, const HeadViewPanel& panel,
                                     const AttentionsMode* attentions = nullptr);

// The session's weights, or (given) those of the opened attentions or of a model's run.
void draw_head_view_panel(AppState& state, UiContext& ui, HeadViewPanel& panel,
                          const AttentionsMode* attentions = nullptr, const ModelRun* run = nullptr);

}  // namespace attnviz::app
