#include "core/render/pipeline_layout.hpp"

#include <algorithm>

#include "core/base/format.hpp"

namespace attnviz::core {

std::string PipelineNode::title() const {
    return label + (input ? ": " : " = ") + equation + (shape.empty() ? "" : ", " + shape);
}

int PipelineLayout::find(const MatrixRef& ref) const {
    for (std::size_t k = 0; k < nodes.size(); ++k)
        if (nodes[k].ref == ref) return static_cast<int>(k);
    return -1;
}

std::vector<int> first_and_last_heads(int heads, int max_heads) {
    max_heads = std::max(max_heads, 2);
    std::vector<int> shown;
    for (int h = 0; h < heads; ++h)
        if (heads <= max_heads || h < max_heads - 1 || h == heads - 1) shown.push_back(h);
    return shown;
}

std::string equation_text(const MatrixRef& ref, const Config& c, int heads, Notation nt, bool column_vectors) {
    const Symbols& sym = symbols(nt);
    switch (ref.id) {
        case MatrixId::scores: {
            std::string op = operation_text(ref.id, c, nt, column_vectors);
            if (const std::string mask = ", mask"; op.ends_with(mask))
                op.replace(op.size() - mask.size(), mask.size(), std::string(", masked (") + sym.neg_inf + ")");
            return label(MatrixRef{MatrixId::scores_raw, ref.head}, nt) + " " + op;
        }
        case MatrixId::weights:
            return (c.softmax == Softmax::plus_one ? "softmax plus one(" : "softmax(") +
                   label(MatrixRef{operand_of(MatrixId::weights, 0, c), ref.head}, nt) +
                   (column_vectors ? ") by columns" : ") by rows");
        case MatrixId::concat: {
            if (heads <= 1) return label(MatrixRef{MatrixId::Z, 0}, nt);
            std::string zs = "[" + label(MatrixRef{MatrixId::Z, 0}, nt) + " ";
            if (heads > 2) zs += std::string(sym.ellipsis) + " ";
            zs += label(MatrixRef{MatrixId::Z, heads - 1}, nt) + "]";
            return zs + (column_vectors ? " stacked" : " side by side");
        }
        default: return operation_text(ref.id, c, nt, column_vectors);
    }
}

std::string convention_text(const Config& c, Notation nt, bool column_vectors) {
    // Seed 001 projects the concatenation with W_O, seed 000 does not.
    return c.output_projection
               ? "output = " + operation_text(MatrixId::output, c, nt, column_vectors) + " (with output projection W_O)"
               : std::string("output = concat (no output projection)");
}

namespace {

// Builds the layout node by node and edge by edge.
struct Builder {
    const Session& session;
    const Trace& trace;
    const PipelineLayoutOptions& o;
    PipelineLayout& out;

    int node(MatrixId id, int slot, int row, int column, int span) {
        const MatrixRef ref{id, slot >= 0 ? out.heads[static_cast<std::size_t>(slot)] : 0};
        PipelineNode n;
        n.ref = ref;
        n.slot = slot, n.row = row, n.column = column, n.span = span;
        n.input = is_input(id);
        n.label = label(ref, o.notation);
        if (const Matrix* m = find_matrix(session.params, trace, ref))
            n.shape = o.column_vectors ? format_shape(m->cols(), m->rows()) : format_shape(m->rows(), m->cols());
        n.operation = operation_text(id, trace.config, o.notation, o.column_vectors);
        n.equation = equation_text(ref, trace.config, static_cast<int>(trace.heads.size()), o.notation,
                                   o.column_vectors);
        out.nodes.push_back(std::move(n));
        return static_cast<int>(out.nodes.size()) - 1;
    }
    void edge(int from, int to, PipelineRoute route, std::string note = "") {
        out.edges.push_back({from, to, route, std::move(note)});
    }
    std::string bias_note(MatrixId bias, int head) const {
        return exists(bias, trace.config) ? "+ " + label(MatrixRef{bias, head}, o.notation) : "";
    }
    // The note on the edge into Q, K or V (product j): its bias, then, under q/k norms, the norm
    // over every head and its weights (Q and K).
    std::string product_note(int j, MatrixId product, int head) const {
        std::string note = bias_note(info(product).bias, head);
        if (j < 2 && trace.config.qk_norm.on)
            note += (note.empty() ? "" : ", ") + std::string("norm") + symbols(o.notation).dot +
                    (j == 0 ? "q_norm" : "k_norm");
        return note;
    }

    // One head's nodes and edges, fed by X (and Y, the keys' and values' input, under cross-attention).
    int head(int slot, int x, int y) {
        const Config& c = trace.config;
        const int h = out.heads[static_cast<std::size_t>(slot)];
        const MatrixId weight_ids[] = {MatrixId::W_Q, MatrixId::W_K, MatrixId::W_V};
        const MatrixId product_ids[] = {MatrixId::Q, MatrixId::K, MatrixId::V};
        int products[3];
        if (o.weight_nodes) {
            int weights[3];
            for (int j = 0; j < 3; ++j) weights[j] = node(weight_ids[j], slot, pipeline_row::projections, j, 1);
            for (int j = 0; j < 3; ++j) products[j] = node(product_ids[j], slot, pipeline_row::qkv, j, 1);
            for (int j = 0; j < 3; ++j) {
                edge(j == 0 ? x : y, weights[j], PipelineRoute::bus);
                edge(weights[j], products[j], PipelineRoute::down, product_note(j, product_ids[j], h));
            }
        } else {
            for (int j = 0; j < 3; ++j) products[j] = node(product_ids[j], slot, pipeline_row::qkv, j, 1);
            for (int j = 0; j < 3; ++j) edge(j == 0 ? x : y, products[j], PipelineRoute::down);
        }
        int q_in = products[0], k_in = products[1];
        if (c.rope.on) {
            q_in = node(MatrixId::Q_rot, slot, pipeline_row::rotated, 0, 1);
            k_in = node(MatrixId::K_rot, slot, pipeline_row::rotated, 1, 1);
            edge(products[0], q_in, PipelineRoute::down,
                 info(MatrixId::Q_rot).heading.in(o.notation, o.column_vectors));
            edge(products[1], k_in, PipelineRoute::down,
                 info(MatrixId::K_rot).heading.in(o.notation, o.column_vectors));
        }
        // The chain, a node a row (the rows scores_raw … Z in this order): scores_capped only where the
        // layer soft-caps its scores.
        const MatrixId chain_ids[] = {MatrixId::scores_raw, MatrixId::scores, MatrixId::scores_capped,
                                      MatrixId::weights, MatrixId::Z};
        std::vector<int> chain;
        for (int j = 0; j < 5; ++j)
            if (exists(chain_ids[j], c)) chain.push_back(node(chain_ids[j], slot, pipeline_row::scores_raw + j, 0, 2));
        // Q·Kᵀ once, on the second of the two arrows into scores_raw.
        edge(q_in, chain.front(), PipelineRoute::down);
        edge(k_in, chain.front(), PipelineRoute::down, out.nodes[static_cast<std::size_t>(chain.front())].operation);
        for (std::size_t j = 0; j + 1 < chain.size(); ++j)
            edge(chain[j], chain[j + 1], PipelineRoute::down,
                 out.nodes[static_cast<std::size_t>(chain[j + 1])].operation);
        // V joins at the weighted sum.
        edge(products[2], chain.back(), PipelineRoute::side);
        return chain.back();
    }
};

}  // namespace

PipelineLayout pipeline_layout(const Session& session, const Trace& trace, const PipelineLayoutOptions& o) {
    const Config& c = trace.config;
    PipelineLayout out;
    out.convention = convention_text(c, o.notation, o.column_vectors);
    out.heads = o.heads;
    for (std::size_t k = 0; k + 1 < out.heads.size(); ++k)
        if (out.heads[k + 1] > out.heads[k] + 1)
            out.left_out = "heads " + std::to_string(out.heads[k] + 2) + "–" + std::to_string(out.heads[k + 1]);
    Builder b{session, trace, o, out};
    const bool cross = c.cross();
    const int x = cross ? b.node(MatrixId::X, -1, pipeline_row::inputs, 0, 1)
                        : b.node(MatrixId::X, -1, pipeline_row::inputs, 0, 2);
    const int y = cross ? b.node(MatrixId::Y, -1, pipeline_row::inputs, 1, 2) : x;
    std::vector<int> zs;
    for (std::size_t slot = 0; slot < out.heads.size(); ++slot) zs.push_back(b.head(static_cast<int>(slot), x, y));
    const int concat = b.node(MatrixId::concat, -1, pipeline_row::concat, 0, 2);
    const int wo = o.weight_nodes && exists(MatrixId::W_O, c) ? b.node(MatrixId::W_O, -1, pipeline_row::concat, 3, 1)
                                                              : -1;
    const int output = b.node(MatrixId::output, -1, pipeline_row::output, 0, 2);
    // concat's operation once, on the first head's arrow.
    for (std::size_t k = 0; k < zs.size(); ++k)
        b.edge(zs[k], concat, PipelineRoute::down, k == 0 ? out.nodes[static_cast<std::size_t>(concat)].operation : "");
    b.edge(concat, output, PipelineRoute::down, out.nodes[static_cast<std::size_t>(output)].operation);
    if (wo >= 0) b.edge(wo, output, PipelineRoute::side, b.bias_note(MatrixId::b_O, 0));
    return out;
}

}  // namespace attnviz::core
