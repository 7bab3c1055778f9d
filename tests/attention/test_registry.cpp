// Tests of core/attention/registry.hpp: the registry agrees with the trace it describes, and cell references.
#include "core/attention/registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// Every matrix of a computed session has the shape, the place and the existence the table says.
void check_registry_against(const Session& s) {
    const Trace t = forward<double>(s.config, s.params);
    const Config& c = s.config;
    for (MatrixId id : all_matrix_ids) {
        SCOPED_TRACE(name(id));
        EXPECT_EQ(info(id).id, id);
        const int heads = is_per_head(id) ? c.heads : 1;
        for (int h = 0; h < heads; ++h) {
            const Matrix* m = find_matrix(s.params, t, {id, h});
            if (!exists(id, c)) {
                EXPECT_EQ(m, nullptr);
                continue;
            }
            ASSERT_NE(m, nullptr);
            EXPECT_EQ(m->rows(), rows_of(id, c));
            EXPECT_EQ(m->cols(), cols_of(id, c));
            // Inputs are found in the params (and editable there), the rest in the trace.
            Params editable = s.params;
            Matrix* in = find_input(editable, {id, h});
            EXPECT_EQ(in != nullptr, is_input(id));
            if (in) {
                EXPECT_TRUE(same(*in, *m));
            }
            // Each operand exists with a matching inner dimension (rows·cols products line up).
            for (MatrixId op : info(id).operands) {
                if (op == MatrixId::count || !exists(op, c)) continue;
                EXPECT_NE(find_matrix(s.params, t, {op, is_per_head(op) ? h : 0}), nullptr) << name(op);
            }
        }
        // A head beyond h does not exist for per-head matrices; it is ignored for the others.
        EXPECT_EQ(find_matrix(s.params, t, {id, c.heads}) != nullptr, !is_per_head(id) && exists(id, c));
    }
}

TEST(Registry, DescribesTheTraceOfSeveralConfigs) {
    check_registry_against(worked_example());
    check_registry_against(random_session(make_config(5, 6, 3, 2, 4, true, Mask::causal), 3));
    check_registry_against(random_session(make_config(3, 4, 2, 3, 1, false), 4));
}

TEST(Registry, NamesAreUniqueAndFoundBack) {
    std::set<std::string> names;
    for (MatrixId id : all_matrix_ids) {
        EXPECT_TRUE(names.insert(name(id)).second) << name(id);
        ASSERT_TRUE(matrix_id_from_name(name(id)));
        EXPECT_EQ(*matrix_id_from_name(name(id)), id);
        EXPECT_TRUE(contains(matrix_names(), name(id)));
    }
    EXPECT_FALSE(matrix_id_from_name("attention"));
    EXPECT_FALSE(matrix_id_from_name(""));
    EXPECT_FALSE(matrix_id_from_name("count"));
}

TEST(Registry, FactsAPanelReads) {
    EXPECT_TRUE(rows_are_tokens(MatrixId::X));
    EXPECT_FALSE(rows_are_tokens(MatrixId::W_Q));
    EXPECT_TRUE(cols_are_tokens(MatrixId::weights));
    EXPECT_FALSE(cols_are_tokens(MatrixId::Z));
    EXPECT_EQ(info(MatrixId::weights).colors, ColorScale::unit_interval);
    EXPECT_EQ(info(MatrixId::scores).colors, ColorScale::diverging);
    Config c;
    EXPECT_EQ(operation_text(MatrixId::Q, c, Notation::unicode, false), "X·W_Q");
    EXPECT_EQ(operation_text(MatrixId::Q, c, Notation::ascii, true), "W_Q^T*X");
    EXPECT_EQ(operation_text(MatrixId::scores, c, Notation::unicode, false), "÷ √d_k");
    c.mask = Mask::causal;
    c.scale = {Scale::Kind::divisor, 0.5};
    EXPECT_EQ(operation_text(MatrixId::scores, c, Notation::ascii, false), "/ 0.5, mask");
    c.output_projection = false;
    EXPECT_EQ(operation_text(MatrixId::output, c, Notation::unicode, false), "concat (no W_O)");
    EXPECT_EQ(operation_text(MatrixId::weights, c, Notation::unicode, false), "softmax (rows)");
    c.softmax = Softmax::plus_one;
    EXPECT_EQ(operation_text(MatrixId::weights, c, Notation::unicode, false), "softmax plus one (rows)");
    EXPECT_EQ(operation_text(MatrixId::weights, c, Notation::ascii, true), "softmax plus one (columns)");
    EXPECT_FALSE(exists(MatrixId::W_O, c));
    EXPECT_FALSE(exists(MatrixRef{MatrixId::Q, 2}, c));  // h = 2: heads 0 and 1
    EXPECT_TRUE(exists(MatrixRef{MatrixId::Q, 1}, c));
}

TEST(Registry, Labels) {
    EXPECT_EQ(label(MatrixRef{MatrixId::Q, 0}), "Q⁽¹⁾");
    EXPECT_EQ(label(MatrixRef{MatrixId::weights, 11}), "weights⁽¹²⁾");
    EXPECT_EQ(label(MatrixRef{MatrixId::W_K, 9}, Notation::ascii), "W_K(10)");
    EXPECT_EQ(label(MatrixRef{MatrixId::concat, 3}), "concat");
    EXPECT_EQ(label(CellRef{{MatrixId::Z, 1}, 2, 0}, Notation::ascii), "Z(2)[2][0]");
}

TEST(CellRefs, EqualityIgnoresTheHeadOfSharedMatrices) {
    EXPECT_EQ((MatrixRef{MatrixId::output, 0}), (MatrixRef{MatrixId::output, 3}));
    EXPECT_NE((MatrixRef{MatrixId::Q, 0}), (MatrixRef{MatrixId::Q, 1}));
    EXPECT_NE((MatrixRef{MatrixId::Q, 0}), (MatrixRef{MatrixId::K, 0}));
}

TEST(CellRefs, RegionsCoverTheirCells) {
    const CellRef row{{MatrixId::Q, 1}, 2, -1}, col{{MatrixId::V, 0}, -1, 3}, one{{MatrixId::X, 0}, 1, 1};
    EXPECT_TRUE(row.covers({MatrixId::Q, 1}, 2, 0));
    EXPECT_TRUE(row.covers({MatrixId::Q, 1}, 2, 7));
    EXPECT_FALSE(row.covers({MatrixId::Q, 1}, 1, 0));
    EXPECT_FALSE(row.covers({MatrixId::Q, 0}, 2, 0));  // another head
    EXPECT_TRUE(row.covers({MatrixId::Q, 1}));         // any cell of it
    EXPECT_TRUE(col.covers({MatrixId::V, 0}, 9, 3));
    EXPECT_FALSE(col.covers({MatrixId::V, 0}, 9, 2));
    EXPECT_TRUE(one.covers({MatrixId::X, 5}, 1, 1));  // X has no head
    EXPECT_FALSE(one.covers({MatrixId::X, 0}, 1, 0));
}

TEST(ParseCellRef, NamesHeadsFromOneAndRowsFromZero) {
    const Result<CellRef> w = parse_cell_ref("weights:2:0:1");
    ASSERT_TRUE(w) << all_text(w.problems);
    EXPECT_EQ(*w.value, (CellRef{{MatrixId::weights, 1}, 0, 1}));
    const Result<CellRef> out = parse_cell_ref("output:1:3");
    ASSERT_TRUE(out) << all_text(out.problems);
    EXPECT_EQ(*out.value, (CellRef{{MatrixId::output, 0}, 1, 3}));
    for (const char* bad : {"weight:1:0:1", "weights:0:0:1", "weights:1:0", "output:1:2:3", "Q:1:x:0", "Q:1:-1:0", "",
                            ":", "Q:1:0:0:0", "Q:99999999999:0:0"}) {
        const Result<CellRef> r = parse_cell_ref(bad);
        EXPECT_FALSE(r) << bad;
        ASSERT_FALSE(r.problems.empty()) << bad;
        EXPECT_FALSE(r.problems[0].message.empty()) << bad;
    }
    EXPECT_TRUE(contains(parse_cell_ref("attention:0:0").problems[0].message, "scores_raw"));  // lists the names
}

}  // namespace
}  // namespace attnviz::core
