// A golden comparison of explain(): the text and the highlighted operands of every cell of every
// matrix of a few sessions, in both notations, against tests/golden/explain.txt.
//
// The file was written by the explain() of before the matrix registry, so any change to what a
// user reads in a tooltip, the viewer or the lesson shows up here as a diff. To accept an
// intended change: ATTNVIZ_UPDATE_GOLDEN=1 build/tests/core_tests --gtest_filter='ExplainGolden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/attention/explain.hpp"
#include "core/attention/presets.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

const char* golden_path = ATTNVIZ_GOLDEN_DIR "/explain.txt";

// Every cell of every matrix of the session: its explanation and operands as text.
std::string dump(const std::string& title, const Session& s) {
    const Trace t = forward<double>(s.config, s.params);
    std::string out = "##### " + title + "\n";
    for (Notation notation : {Notation::unicode, Notation::ascii}) {
        for (MatrixId id : all_matrix_ids) {
            const int heads = is_per_head(id) ? s.config.heads : 1;
            for (int h = 0; h < heads; ++h) {
                const Matrix* m = find_matrix(s.params, t, {id, h});
                if (!m) continue;
                for (int i = 0; i < m->rows(); ++i)
                    for (int j = 0; j < m->cols(); ++j) {
                        const Result<Explanation> e = explain(s.params, t, {{id, h}, i, j}, notation);
                        out += "--- " + label(CellRef{{id, h}, i, j}, notation) + "\n";
                        if (!e) {
                            out += "error: " + all_text(e.problems);
                            continue;
                        }
                        out += e.value->text() + "\n";
                        out += "operands:";
                        for (const CellRef& op : e.value->operands)
                            out += std::string(" ") + name(op.matrix.id) + "/" + std::to_string(op.matrix.head) + "/" +
                                   std::to_string(op.row) + "/" + std::to_string(op.col);
                        out += "\n";
                    }
            }
        }
    }
    return out;
}

std::string all_dumps() {
    std::string out;
    out += dump("worked example", worked_example());

    Session causal = worked_example();
    causal.config.mask = Mask::causal;
    causal.config.scale = {Scale::Kind::divisor, 0.5};
    causal.params.X(1, 3) = -1.25;
    out += dump("worked example, causal, temperature 0.5, X[1][3] = -1.25", causal);

    Session plain = worked_example();
    plain.config.output_projection = false;
    plain.config.scale = {Scale::Kind::none, 1.0};
    out += dump("worked example, no W_O, no scaling", plain);

    // Long sums (d_model = 14 > 12 terms) are shown capped.
    Config c = make_config(3, 14, 2, 3, 2);
    out += dump("random 3 tokens, d_model 14, seed 5", random_session(c, 5));
    return out;
}

TEST(ExplainGolden, EveryCellAsBefore) {
    const std::string now = all_dumps();
    if (const char* update = std::getenv("ATTNVIZ_UPDATE_GOLDEN"); update && *update == '1') {
        std::ofstream(golden_path, std::ios::binary) << now;
        GTEST_SKIP() << "wrote " << golden_path;
    }
    const std::string before = slurp(golden_path);
    ASSERT_FALSE(before.empty()) << "cannot read " << golden_path;
    if (now == before) return;
    // Report the first differing line, with its context, instead of two huge strings.
    std::istringstream a(before), b(now);
    std::string la, lb, context;
    int line = 0;
    while (true) {
        const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
        ++line;
        if (!ga && !gb) break;
        if (la.rfind("--- ", 0) == 0 || la.rfind("#####", 0) == 0) context = la;
        if (!ga || !gb || la != lb) {
            FAIL() << "explain() differs from " << golden_path << " at line " << line << " (in " << context
                   << ")\n  golden: " << (ga ? la : "<end>") << "\n  now:    " << (gb ? lb : "<end>");
        }
    }
}

}  // namespace
}  // namespace attnviz::core
