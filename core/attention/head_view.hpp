// The head view's arithmetic (BertViz's "head view"): the queries in one column, the keys in
// another, a line from query i to key j for each head with the opacity of weights(i, j). A head's
// weights are n queries × n_keys keys (n_keys = kv_len(): rectangular under cross-attention), each
// row summing to 1.
//
// At n in the hundreds a head has n·n_keys lines and the view cannot draw them all, so the lines are
// filtered in passes, each counted so the view can say what it left out:
//   1. isolation: only the lines from chosen queries or to chosen keys (a hovered or clicked token);
//   2. the threshold: weights below min_weight are dropped;
//   3. top-k: of each head's query, only its k strongest keys are kept;
//   4. the bound: at most max_lines lines in all, the weakest dropped first.
// Isolation comes first so that a token's own lines are never lost to the bound the others set.
//
// A selection of tokens is summarised by adding weights: the selected queries' rows added (what the
// selection attends to, over the keys), or the selected keys' columns added (how much of each
// query's attention goes to the selection). Both can be divided by the selection's size (the mean).
// Over several heads the per-head values are averaged, as PyTorch's average_attn_weights does, so
// the numbers keep one head's scale: the summed rows of k queries total k, their mean totals 1.
//
// Tokens are indices from 0. The selection functions refuse a token out of range or chosen twice
// (with the token named); isolation ignores a token out of range (it has no lines).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// Each head's weights (n × n_keys), in head order; nullptr: a head left out (toggled off).
using HeadWeights = std::span<const Matrix* const>;

// One line of the view: query → key in one head, drawn with opacity `weight`.
struct HeadLine {
    int head = 0;  // index in the HeadWeights given
    int query = 0;
    int key = 0;
    double weight = 0;
    bool operator==(const HeadLine&) const = default;
};

struct LineOptions {
    double min_weight = 0;           // lines of a smaller weight are dropped
    int top_k = 0;                   // each head's query keeps only its k strongest keys (0: all)
    std::size_t max_lines = 20000;   // the most lines returned, the strongest kept
    std::vector<int> queries, keys;  // isolation: only lines from these queries or to these keys
                                     // (both empty: every line; out-of-range tokens have none)
};

struct HeadLines {
    std::vector<HeadLine> lines;   // weakest first, so that drawn in order the strongest are on top
    std::size_t considered = 0;    // the lines of the heads given (and isolated tokens) before filtering
    std::size_t below_min = 0;     // dropped by the threshold
    std::size_t beyond_top_k = 0;  // at least min_weight but not among their query's top k
    std::size_t over_bound = 0;    // kept by the filters but over max_lines (the weakest of them)
    // considered = lines.size() + below_min + beyond_top_k + over_bound
};

// The lines to draw for the heads given. Ties between equal weights keep the lower head, then
// query, then key. Heads may differ in shape; each line is within its own head's matrix.
HeadLines head_lines(HeadWeights heads, const LineOptions& options);

enum class Aggregate { sum, mean };

// What the selected queries attend to: for each key j, Σ_{i ∈ queries} weights(i, j) (sum) or that
// divided by the number of queries (mean: a distribution over the keys when rows sum to 1).
// n_keys values; an empty selection gives zeros (nothing selected attends to anything).
Result<Eigen::VectorXd> attention_of_queries(const Matrix& weights, std::span<const int> queries, Aggregate how);
// How much of each query's attention goes to the selected keys: for each query i,
// Σ_{j ∈ keys} weights(i, j) (sum: a share in [0, 1] when rows sum to 1) or that divided by the
// number of keys (mean). n values; an empty selection gives zeros.
Result<Eigen::VectorXd> attention_to_keys(const Matrix& weights, std::span<const int> keys, Aggregate how);
// The same over several heads: the mean of the heads given (non-null), which must share one shape.
// Refused when no head is given.
Result<Eigen::VectorXd> attention_of_queries(HeadWeights heads, std::span<const int> queries, Aggregate how);
Result<Eigen::VectorXd> attention_to_keys(HeadWeights heads, std::span<const int> keys, Aggregate how);

// An entry of a ranking: its index (a key or a query) and its value.
struct Ranked {
    int index = 0;
    double value = 0;
    bool operator==(const Ranked&) const = default;
};
// The k largest values, largest first (equal values: the lower index first); all of them, sorted,
// when k ≤ 0 or k ≥ their count.
std::vector<Ranked> strongest(std::span<const double> values, int k);
// The k keys a query attends to most (a row of weights), and the k queries attending most to a key
// (a column); none for a token out of range.
std::vector<Ranked> top_keys(const Matrix& weights, int query, int k);
std::vector<Ranked> top_queries(const Matrix& weights, int key, int k);

// The view's defaults for a head of n_keys keys (the panel's and the figure's):
//   min_weight   min(0.02, 1/n_keys): at 2 % opacity a line is hardly seen, and at large n every
//                weight is small (the uniform weight then is the threshold)
//   top_k        3 from 64 keys on (more lines only blur in a column of hundreds), else 0 (all)
//   scaled       from 16 keys on, a weight at the 99th percentile of the lines drawn is opaque (as the
//                heatmaps' percentile scaling), else opacity = weight
double default_min_weight(int n_keys);
int default_top_k(int n_keys);
bool default_scaled_opacity(int n_keys);
// The weight drawn opaque: with `scaled`, the 99th percentile of the lines' weights (they are
// weakest first), so one outlier (query 0's weight of 1 under a causal mask) cannot wash out the
// rest; else (or with no line above 0) 1.
double opaque_weight(const HeadLines& lines, bool scaled);

// Tokens chosen by text, as --head-select takes them: "0,2,k5" (query rows from 0; k and a key
// column). The valid ones, ascending and once each, and the first problem ("" none): an item that
// is no token, or one out of range.
struct TokenChoice {
    std::vector<int> queries, keys;
    std::string problem;
};
TokenChoice parse_token_choice(const std::string& text, int n, int n_keys);

// --- Two options BertViz users ask for: the mean over heads, and special tokens left out.

// The mean of the heads given (non-null), cell by cell: what the view draws as one head when
// "mean" is on. Refused when no head is given or their shapes differ.
Result<Matrix> mean_of_heads(HeadWeights heads);

// A tokenizer's special tokens, the markers it adds around the text ([CLS], [SEP], [PAD], [MASK],
// <s>, </s>, <pad>, <unk>, <mask>, <bos>, <eos>, and every <|…|> such as <|endoftext|> or
// <|begin_of_text|>; spaces around them ignored). Many heads park most of their attention on them
// (a "sink"), which hides what the words attend to. This is the one list: the interactive page
// gets its flags from it.
bool is_special_token(std::string_view token);

// The queries and keys a view keeps: every one, or with hide_special those that are not special
// tokens. Indices from 0, ascending.
struct KeptTokens {
    std::vector<int> queries, keys;
    bool operator==(const KeptTokens&) const = default;
};
KeptTokens kept_tokens(const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                       bool hide_special);

// A head's weights (n × n_keys) over the kept queries (rows) and keys (columns), each row
// renormalised over the keys kept: divided by its sum over them, so that it is again a
// distribution. A row with no weight left (all of it was on keys left out) stays 0. The rule of
// the head view, its figure and the interactive page ("hide special tokens"); with every token
// kept, the weights as they are. Kept indices must be within the weights' shape.
Matrix renormalised_weights(const Matrix& weights, const KeptTokens& kept);

}  // namespace attnviz::core
