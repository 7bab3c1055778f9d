// The pipeline's one layout, drawn twice: by the Pipeline panel with ImGui and by pipeline_figure as
// SVG or PNG. It says which nodes there are (X → W_Q, W_K, W_V → Q, K, V (→ Q_rot, K_rot) →
// scores_raw → scores (→ scores_capped) → weights → Z, per head, → concat (→ W_O) → output), their text, where each
// stands on a grid of rows and columns, the edges between them with the note each carries, and the
// convention line. Each drawing turns rows and columns into its own units (ImGui's font, the
// figure's text_width()), so the layout measures no text.
#pragma once

#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/registry.hpp"
#include "core/attention/session.hpp"
#include "core/base/notation.hpp"

namespace attnviz::core {

// The rows of the grid, from the top. A row without nodes (the weights' without weight nodes, the
// rotated one without RoPE, the capped scores' without soft-capping) is left out by the drawings.
namespace pipeline_row {
inline constexpr int inputs = 0;       // X; Y beside it under cross-attention
inline constexpr int projections = 1;  // W_Q, W_K, W_V
inline constexpr int qkv = 2;          // Q, K, V
inline constexpr int rotated = 3;      // Q_rot, K_rot
inline constexpr int scores_raw = 4;   // the chain: scores_raw, scores, (scores_capped,) weights, Z
inline constexpr int scores = 5;
inline constexpr int scores_capped = 6;  // with soft-capping only
inline constexpr int weights = 7;
inline constexpr int Z = 8;
inline constexpr int concat = 9;  // W_O beside it
inline constexpr int output = 10;
}  // namespace pipeline_row

struct PipelineNode {
    MatrixRef ref;
    int slot =
        -1;  // which laid-out head (an index into PipelineLayout::heads); −1: the layer's (X, Y, concat, W_O, output)
    int row = 0;  // pipeline_row
    // Within a head: columns 0, 1, 2 under Q, K, V, the chain (scores_raw … Z) spanning 0 and 1.
    // The layer's nodes: X (span 2, or column 0 beside Y in columns 1–2 under cross-attention),
    // concat and output (span 2), W_O (column 3, right of the heads).
    int column = 0, span = 1;
    bool input = false;     // given (X, Y, the weights), not computed
    std::string label;      // "Q⁽¹⁾"
    std::string shape;      // "2×2", as drawn (transposed with tokens as columns); "" when absent
    std::string operation;  // what computes it, as on the arrow into it: "X·W_Q" (operation_text)
    std::string equation;   // the whole right-hand side: "softmax(scores⁽¹⁾) by rows" (equation_text)
    // "Q⁽¹⁾ 2×2": the node's caption (its label alone where that does not fit).
    std::string caption() const { return shape.empty() ? label : label + " " + shape; }
    // "Q⁽¹⁾ = X·W_Q, 2×2" ("X: …" for an input): what the node is, as a figure's tooltip says it.
    std::string title() const;
};

// How an edge runs: down from the bottom of `from` into the top of `to`; from the line an input
// runs over the heads (X's, Y's) into the top of `to`; or down `from`'s column, then sideways into
// the right side of `to` (V into Z, W_O into output).
enum class PipelineRoute { down, bus, side };

struct PipelineEdge {
    int from = 0, to = 0;  // indices into PipelineLayout::nodes
    PipelineRoute route = PipelineRoute::down;
    std::string note;  // beside the arrow: "+ b_Q⁽¹⁾", "RoPE(Q)", "softmax by rows"; "" none
};

struct PipelineLayout {
    std::string convention;           // "output = concat·W_O (with output projection W_O)"
    std::vector<int> heads;           // the heads laid out, in order
    std::string left_out;             // "heads 4–5" when heads between the laid-out ones are left out, else ""
    std::vector<PipelineNode> nodes;  // the inputs, each head's (by rows), then concat, W_O, output
    std::vector<PipelineEdge> edges;  // each head's in order of the steps, then the layer's
    // The node of `ref`, or −1.
    int find(const MatrixRef& ref) const;
};

struct PipelineLayoutOptions {
    Notation notation = Notation::unicode;
    bool column_vectors = false;  // tokens as columns: shapes transposed, operations written so
    // W_Q, W_K, W_V (with their biases on the arrows) and W_O as nodes; without them X feeds Q, K
    // and V directly and W_O is not drawn (its step is on concat's arrow).
    bool weight_nodes = true;
    std::vector<int> heads = {0};  // which heads, in order
};

// Heads to lay out so that at most max_heads are (max_heads ≥ 2): all, or the first max_heads − 1
// and the last.
std::vector<int> first_and_last_heads(int heads, int max_heads);

// What computes a matrix, as a whole right-hand side: operation_text with the operand written in
// ("scores_raw⁽¹⁾ ÷ √d_k", "softmax(scores⁽¹⁾) by rows", "[Z⁽¹⁾ Z⁽²⁾] side by side").
std::string equation_text(const MatrixRef& ref, const Config& c, int heads, Notation nt, bool column_vectors);

// The convention line: "output = concat·W_O (with output projection W_O)" or
// "output = concat (no output projection)".
std::string convention_text(const Config& c, Notation nt, bool column_vectors);

// The layout of the pipeline of a layer; shapes from the session's params and the trace.
PipelineLayout pipeline_layout(const Session& session, const Trace& trace, const PipelineLayoutOptions& options);

}  // namespace attnviz::core
