// Tests of core/render/pipeline_layout.hpp: which nodes the pipeline has in which order and where,
// for configs with and without RoPE, cross-attention and W_O; that edges join the right nodes with
// the right notes; the convention line in both orientations; and that pipeline_figure draws the
// layout's nodes.
#include "core/render/pipeline_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/render/view_figures.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

struct Laid {
    Session session;
    Trace trace;
    PipelineLayout layout;
};

Laid lay_out(const Config& c, PipelineLayoutOptions o = {}) {
    Laid l{random_session(c, 3), {}, {}};
    l.trace = forward<double>(l.session.config, l.session.params);
    l.layout = pipeline_layout(l.session, l.trace, o);
    return l;
}

std::vector<std::string> labels_of(const PipelineLayout& layout) {
    std::vector<std::string> out;
    for (const PipelineNode& n : layout.nodes) out.push_back(n.label);
    return out;
}

// "Q(1) -> Q_rot(1): RoPE(Q)" for each edge.
std::vector<std::string> edges_of(const PipelineLayout& layout) {
    std::vector<std::string> out;
    for (const PipelineEdge& e : layout.edges)
        out.push_back(layout.nodes[static_cast<std::size_t>(e.from)].label + " -> " +
                      layout.nodes[static_cast<std::size_t>(e.to)].label + (e.note.empty() ? "" : ": " + e.note));
    return out;
}

const PipelineNode& node(const PipelineLayout& layout, MatrixRef ref) {
    const int k = layout.find(ref);
    EXPECT_GE(k, 0) << label(ref, Notation::ascii);
    return layout.nodes.at(static_cast<std::size_t>(k));
}

TEST(PipelineLayout, PanelNodesOfAPlainLayer) {
    PipelineLayoutOptions o;
    o.notation = Notation::ascii;
    o.weight_nodes = false;
    o.heads = {1};  // the second head
    const Laid l = lay_out(make_config(4, 8, 2, 4, 4), o);
    EXPECT_EQ(labels_of(l.layout), (std::vector<std::string>{"X", "Q(2)", "K(2)", "V(2)", "scores_raw(2)", "scores(2)",
                                                             "weights(2)", "Z(2)", "concat", "output"}));
    EXPECT_EQ(edges_of(l.layout),
              (std::vector<std::string>{"X -> Q(2)", "X -> K(2)", "X -> V(2)", "Q(2) -> scores_raw(2)",
                                        "K(2) -> scores_raw(2): Q*K^T", "scores_raw(2) -> scores(2): / sqrt(d_k)",
                                        "scores(2) -> weights(2): softmax (rows)", "weights(2) -> Z(2): weights*V",
                                        "V(2) -> Z(2)", "Z(2) -> concat: concat heads",
                                        "concat -> output: concat*W_O"}));
    const PipelineNode& x = node(l.layout, {MatrixId::X, 0});
    EXPECT_EQ(x.row, pipeline_row::inputs);
    EXPECT_EQ(x.span, 2);  // above the chain
    EXPECT_TRUE(x.input);
    EXPECT_EQ(x.caption(), "X 4×8");
    const PipelineNode& v = node(l.layout, {MatrixId::V, 1});
    EXPECT_EQ(v.slot, 0);
    EXPECT_EQ(v.row, pipeline_row::qkv);
    EXPECT_EQ(v.column, 2);
    const PipelineNode& z = node(l.layout, {MatrixId::Z, 1});
    EXPECT_EQ(z.row, pipeline_row::Z);
    EXPECT_EQ(z.span, 2);
    EXPECT_FALSE(z.input);
    EXPECT_EQ(l.layout.find({MatrixId::Q, 0}), -1);           // only the head asked for
    EXPECT_EQ(l.layout.edges[8].route, PipelineRoute::side);  // V into Z
    EXPECT_EQ(l.layout.convention, "output = concat*W_O (with output projection W_O)");
}

TEST(PipelineLayout, RopeCrossAttentionAndNoOutputProjection) {
    Config c = make_config(3, 8, 1, 4, 4, /*output_projection=*/false);
    c.rope.on = true;
    c.n_kv = 5;
    PipelineLayoutOptions o;
    o.notation = Notation::ascii;
    o.weight_nodes = false;
    const Laid l = lay_out(c, o);
    EXPECT_EQ(labels_of(l.layout),
              (std::vector<std::string>{"X", "Y", "Q(1)", "K(1)", "V(1)", "Q_rot(1)", "K_rot(1)", "scores_raw(1)",
                                        "scores(1)", "weights(1)", "Z(1)", "concat", "output"}));
    // Q from X, K and V from Y; the rotated ones into scores_raw; no W_O.
    EXPECT_EQ(edges_of(l.layout),
              (std::vector<std::string>{
                  "X -> Q(1)", "Y -> K(1)", "Y -> V(1)", "Q(1) -> Q_rot(1): RoPE(Q)", "K(1) -> K_rot(1): RoPE(K)",
                  "Q_rot(1) -> scores_raw(1)", "K_rot(1) -> scores_raw(1): Q_rot*K_rot^T",
                  "scores_raw(1) -> scores(1): / sqrt(d_k)", "scores(1) -> weights(1): softmax (rows)",
                  "weights(1) -> Z(1): weights*V", "V(1) -> Z(1)", "Z(1) -> concat: concat heads",
                  "concat -> output: concat (no W_O)"}));
    // X over Q alone, Y over K and V; the rotated row under Q and K.
    EXPECT_EQ(node(l.layout, {MatrixId::X, 0}).span, 1);
    EXPECT_EQ(node(l.layout, {MatrixId::Y, 0}).column, 1);
    EXPECT_EQ(node(l.layout, {MatrixId::Y, 0}).span, 2);
    EXPECT_EQ(node(l.layout, {MatrixId::Y, 0}).caption(), "Y 5×8");
    EXPECT_EQ(node(l.layout, {MatrixId::K_rot, 0}).row, pipeline_row::rotated);
    EXPECT_EQ(node(l.layout, {MatrixId::K_rot, 0}).column, 1);
    EXPECT_EQ(node(l.layout, {MatrixId::scores, 0}).caption(), "scores(1) 3×5");
    EXPECT_EQ(l.layout.convention, "output = concat (no output projection)");
    EXPECT_EQ(l.layout.find({MatrixId::W_O, 0}), -1);
}

// Soft-capping: scores_capped between scores and the softmax, on its own row, the cap on its arrow;
// the figure gives it a row of its own too.
TEST(PipelineLayout, SoftCappingPutsTheCappedScoresBeforeTheSoftmax) {
    Config c = make_config(3, 8, 1, 4, 4);
    c.softcap = 30;
    PipelineLayoutOptions o;
    o.notation = Notation::ascii;
    o.weight_nodes = false;
    const Laid l = lay_out(c, o);
    EXPECT_EQ(labels_of(l.layout),
              (std::vector<std::string>{"X", "Q(1)", "K(1)", "V(1)", "scores_raw(1)", "scores(1)", "scores_capped(1)",
                                        "weights(1)", "Z(1)", "concat", "output"}));
    const std::vector<std::string> edges = edges_of(l.layout);
    EXPECT_NE(std::find(edges.begin(), edges.end(), "scores(1) -> scores_capped(1): 30*tanh(scores / 30)"),
              edges.end());
    EXPECT_NE(std::find(edges.begin(), edges.end(), "scores_capped(1) -> weights(1): softmax (rows)"), edges.end());
    EXPECT_EQ(node(l.layout, {MatrixId::scores_capped, 0}).row, pipeline_row::scores_capped);
    EXPECT_EQ(node(l.layout, {MatrixId::scores_capped, 0}).caption(), "scores_capped(1) 3×3");
    EXPECT_EQ(node(l.layout, {MatrixId::weights, 0}).equation, "softmax(scores_capped(1)) by rows");
    // The figure draws the capped scores as a node of their own.
    const Figure f = pipeline_figure(l.session, l.trace, FigureStyle{});
    std::vector<std::string> drawn;
    for (const Element& e : f.elements)
        if (const auto* g = std::get_if<Group>(&e); g && g->klass == "node") drawn.push_back(g->tooltip);
    const auto at = [&](const std::string& start) {
        for (std::size_t k = 0; k < drawn.size(); ++k)
            if (drawn[k].rfind(start, 0) == 0) return static_cast<int>(k);
        return -1;
    };
    EXPECT_GE(at("scores_capped⁽¹⁾ = "), 0);
    // Without the cap, neither the node nor its row.
    const Laid plain = lay_out(make_config(3, 8, 1, 4, 4), o);
    EXPECT_EQ(plain.layout.find({MatrixId::scores_capped, 0}), -1);
}

TEST(PipelineLayout, FigureNodesWithWeightsBiasesAndLeftOutHeads) {
    Config c = make_config(4, 12, 6, 2, 2);
    c.biases = true;
    PipelineLayoutOptions o;
    o.heads = first_and_last_heads(c.heads, 4);
    EXPECT_EQ(o.heads, (std::vector<int>{0, 1, 2, 5}));
    EXPECT_EQ(first_and_last_heads(3, 4), (std::vector<int>{0, 1, 2}));
    const Laid l = lay_out(c, o);
    EXPECT_EQ(l.layout.left_out, "heads 4–5");
    // X, then each head's 3 weights, 3 products and 4 chain nodes, then concat, W_O, output.
    ASSERT_EQ(l.layout.nodes.size(), 1u + 4 * 10 + 3);
    EXPECT_EQ(l.layout.nodes[1].label, "W_Q⁽¹⁾");
    EXPECT_EQ(l.layout.nodes[31].label, "W_Q⁽⁶⁾");
    EXPECT_EQ(l.layout.nodes[31].slot, 3);
    EXPECT_EQ(l.layout.nodes.back().label, "output");
    const PipelineNode& wo = node(l.layout, {MatrixId::W_O, 0});
    EXPECT_EQ(wo.row, pipeline_row::concat);
    EXPECT_EQ(wo.column, 3);
    const std::vector<std::string> edges = edges_of(l.layout);
    auto has = [&](const std::string& e) { return std::find(edges.begin(), edges.end(), e) != edges.end(); };
    EXPECT_TRUE(has("X -> W_K⁽⁶⁾"));
    EXPECT_TRUE(has("W_V⁽⁶⁾ -> V⁽⁶⁾: + b_V⁽⁶⁾"));
    EXPECT_TRUE(has("W_O -> output: + b_O"));
    EXPECT_FALSE(has("X -> Q⁽¹⁾"));  // through W_Q
    // concat's step once, on the first head's arrow.
    EXPECT_TRUE(has("Z⁽¹⁾ -> concat: concat heads"));
    EXPECT_TRUE(has("Z⁽⁶⁾ -> concat"));
    for (const PipelineEdge& e : l.layout.edges)
        if (l.layout.nodes[static_cast<std::size_t>(e.to)].ref.id == MatrixId::W_Q) {
            EXPECT_EQ(e.route, PipelineRoute::bus);
        }
    EXPECT_EQ(node(l.layout, {MatrixId::concat, 0}).title(), "concat = [Z⁽¹⁾ … Z⁽⁶⁾] side by side, 4×12");
}

TEST(PipelineLayout, ConventionFollowsTheOrientation) {
    const Config c = make_config(3, 4, 2, 2, 2);
    EXPECT_EQ(convention_text(c, Notation::ascii, false), "output = concat*W_O (with output projection W_O)");
    EXPECT_EQ(convention_text(c, Notation::ascii, true), "output = W_O^T*concat (with output projection W_O)");
    PipelineLayoutOptions o;
    o.notation = Notation::ascii;
    o.column_vectors = true;
    const Laid l = lay_out(c, o);
    EXPECT_EQ(l.layout.convention, convention_text(c, Notation::ascii, true));
    // Shapes as drawn: transposed, tokens as columns.
    EXPECT_EQ(node(l.layout, {MatrixId::Q, 0}).shape, "2×3");
    EXPECT_EQ(node(l.layout, {MatrixId::weights, 0}).operation, "softmax (columns)");
    // softmax₁ says so on its arrow and in its equation.
    Config plus_one = c;
    plus_one.softmax = Softmax::plus_one;
    const Laid p = lay_out(plus_one, o);
    EXPECT_EQ(node(p.layout, {MatrixId::weights, 0}).operation, "softmax plus one (columns)");
    EXPECT_EQ(node(p.layout, {MatrixId::weights, 0}).equation, "softmax plus one(scores(1)) by columns");
}

// The figure draws every node of the layout, in its order, each titled as the layout says.
TEST(PipelineLayout, TheFigureDrawsTheLayoutsNodes) {
    Config c = make_config(4, 8, 6, 2, 2);
    c.rope.on = true;
    c.n_kv = 3;
    const Session s = random_session(c, 5);
    const Trace t = forward<double>(s.config, s.params);
    PipelineLayoutOptions lo;
    lo.heads = first_and_last_heads(c.heads, 4);
    const PipelineLayout layout = pipeline_layout(s, t, lo);
    const Figure f = pipeline_figure(s, t, FigureStyle{});
    std::vector<std::string> drawn, laid;
    for (const Element& e : f.elements)
        if (const auto* g = std::get_if<Group>(&e); g && g->klass == "node") drawn.push_back(g->tooltip);
    for (const PipelineNode& n : layout.nodes) laid.push_back(n.title());
    std::sort(drawn.begin(), drawn.end());
    std::sort(laid.begin(), laid.end());
    EXPECT_EQ(drawn, laid);
    EXPECT_NE(f.title.find(layout.convention), std::string::npos);
}

}  // namespace
}  // namespace attnviz::core
