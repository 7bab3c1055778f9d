// Tests of core/render/export.hpp: a matrix as CSV, TSV, LaTeX and .npy, NAME[:HEAD] references, and the
// request's style reaching the figure.
#include "core/render/export.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "core/io/csv.hpp"
#include "core/io/tensors.hpp"
#include "core/render/view_figures.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// Values whose shortest text is long or unusual: 0.1 (not exact in binary), a third, subnormals,
// the largest double, negative zero, and an integer past 2^53.
Matrix awkward() {
    Matrix m(2, 4);
    m << 0.1, 1.0 / 3, -4.9406564584124654e-324, 1.7976931348623157e308,  //
        -0.0, 9007199254740993.0, -2.5e-7, 123456.789;
    return m;
}

bool same_bits(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index k = 0; k < a.size(); ++k)
        if (std::bit_cast<std::uint64_t>(a.data()[k]) != std::bit_cast<std::uint64_t>(b.data()[k])) return false;
    return true;
}

TEST(Export, CsvAndTsvReadBackBitForBit) {
    const Matrix m = awkward();
    for (const ExportFormat f : {ExportFormat::csv, ExportFormat::tsv}) {
        const Result<std::string> text = export_matrix(m, f);
        ASSERT_TRUE(text) << all_text(text.problems);
        // One line per row, cols − 1 separators on each.
        std::istringstream lines(*text.value);
        int rows = 0;
        for (std::string line; std::getline(lines, line); ++rows)
            EXPECT_EQ(std::count(line.begin(), line.end(), f == ExportFormat::csv ? ',' : '\t'), 3) << line;
        EXPECT_EQ(rows, 2);
        const Result<Matrix> back = parse_matrix_text(*text.value);
        ASSERT_TRUE(back) << all_text(back.problems);
        EXPECT_TRUE(same_bits(*back.value, m)) << *text.value;
    }
}

TEST(Export, CsvOfTheWorkedExampleTraceReadsBackAsTheTrace) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    for (const Matrix* m : {&t.heads[0].weights, &t.output, &t.heads[1].Q}) {
        const Result<Matrix> back = parse_matrix_text(*export_matrix(*m, ExportFormat::csv).value);
        ASSERT_TRUE(back);
        EXPECT_TRUE(same_bits(*back.value, *m));
    }
}

TEST(Export, PrecisionRoundsToSignificantDigits) {
    const Matrix m{{1.0 / 3, -2.0 / 3}, {12345.678, 0.000123456}};
    EXPECT_EQ(*export_matrix(m, ExportFormat::csv, 3).value, "0.333,-0.667\n1.23e+04,0.000123\n");
    EXPECT_EQ(*export_matrix(m, ExportFormat::tsv, 5).value, "0.33333\t-0.66667\n12346\t0.00012346\n");
    EXPECT_FALSE(export_matrix(m, ExportFormat::csv, 18));
    EXPECT_FALSE(export_matrix(m, ExportFormat::csv, -1));
}

TEST(Export, MaskedScoresAreMinusInfinity) {
    Config c = worked_example().config;
    c.mask = Mask::causal;
    const Session s = resized(worked_example(), c);
    const Trace t = forward<double>(s.config, s.params);
    ASSERT_TRUE(std::isinf(t.heads[0].scores(0, 1)));
    const std::string csv = *export_matrix(t.heads[0].scores, ExportFormat::csv).value;
    EXPECT_EQ(csv.substr(0, csv.find('\n')), format_exact(t.heads[0].scores(0, 0)) + ",-inf");
    EXPECT_NE(latex_bmatrix(t.heads[0].scores).find("& -\\infty \\\\"), std::string::npos);
}

TEST(Export, LatexHasTheRowsAndColumnsOfTheMatrix) {
    const Matrix m{{1, -0.5, 0.25}, {2.5e-5, 1e10, 0}};
    const std::string tex = *export_matrix(m, ExportFormat::latex).value;
    EXPECT_EQ(tex,
              "\\begin{bmatrix}\n"
              "1 & -0.5 & 0.25 \\\\\n"
              "2.5\\times10^{-5} & 1\\times10^{10} & 0\n"
              "\\end{bmatrix}\n");
    // A 3×12 matrix: 3 rows, 11 " & " on each, and the MaxMatrixCols note.
    Matrix wide = Matrix::Constant(3, 12, 1.0 / 7);
    const std::string w = latex_bmatrix(wide, 2);
    EXPECT_EQ(w.rfind("% needs \\setcounter{MaxMatrixCols}{12}\n", 0), 0u);
    EXPECT_EQ(std::count(w.begin(), w.end(), '&'), 33);
    size_t values = 0, row_ends = 0;
    for (size_t p = 0; (p = w.find("0.14", p)) != std::string::npos; ++p) ++values;
    for (size_t p = 0; (p = w.find(" \\\\\n", p)) != std::string::npos; ++p) ++row_ends;
    EXPECT_EQ(values, 36u);   // every value with 2 significant digits
    EXPECT_EQ(row_ends, 2u);  // rows 1 and 2 end in \\, row 3 ends the environment
}

TEST(Export, NpyReadsBackBitForBitInRowMajorOrder) {
    const Matrix m = awkward();
    const Result<std::string> bytes = export_matrix(m, ExportFormat::npy);
    ASSERT_TRUE(bytes);
    const Result<TensorFile> f = TensorFile::from_bytes(*bytes.value, "m.npy");
    ASSERT_TRUE(f) << all_text(f.problems);
    ASSERT_EQ(f.value->tensors().size(), 1u);
    EXPECT_EQ(f.value->tensors()[0].dtype, "<f8");
    const Result<Tensor> t = f.value->read(f.value->tensors()[0].name);
    ASSERT_TRUE(t);
    EXPECT_EQ(t.value->shape, (std::vector<std::uint64_t>{2, 4}));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[1]), std::bit_cast<std::uint64_t>(1.0 / 3));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[4]), std::bit_cast<std::uint64_t>(-0.0));  // row 1, col 0
    Matrix back(2, 4);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) back(r, c) = t.value->values[static_cast<size_t>(r * 4 + c)];
    EXPECT_TRUE(same_bits(back, m));
}

TEST(Export, FiguresAndJsonAreNotMatrixFormats) {
    for (const ExportFormat f : {ExportFormat::png, ExportFormat::svg, ExportFormat::json}) {
        const Result<std::string> r = export_matrix(Matrix{{1}}, f);
        ASSERT_FALSE(r);
        EXPECT_NE(r.problems[0].message.find("not a format for a matrix"), std::string::npos);
    }
}

TEST(Export, FormatNamesAndExtensions) {
    for (const char* name : {"csv", "tsv", "latex", "npy", "png", "svg", "json", "html"}) {
        const auto f = export_format_from_name(name);
        ASSERT_TRUE(f) << name;
        EXPECT_STREQ(export_format_name(*f), name);
    }
    EXPECT_STREQ(export_extension(ExportFormat::latex), ".tex");
    EXPECT_STREQ(export_extension(ExportFormat::html), ".html");
    EXPECT_FALSE(export_matrix(Matrix::Identity(2, 2), ExportFormat::html));  // the page is no matrix's
    EXPECT_FALSE(export_format_from_name("CSV"));
    EXPECT_FALSE(export_format_from_name("pdf"));
}

TEST(Export, MatrixReferences) {
    const Result<MatrixRef> w = parse_matrix_ref("weights:2");
    ASSERT_TRUE(w);
    EXPECT_EQ(w.value->id, MatrixId::weights);
    EXPECT_EQ(w.value->head, 1);
    EXPECT_EQ(parse_matrix_ref("W_Q").value->head, -1);  // per head, none given
    EXPECT_EQ(parse_matrix_ref("output").value->id, MatrixId::output);
    EXPECT_EQ(parse_matrix_ref("b_O").value->id, MatrixId::b_O);
    struct Bad {
        const char* text;
        const char* says;
    };
    for (const Bad& b : {Bad{"weight", "\"weight\" is not a matrix"}, Bad{"weights:0", "counted from 1"},
                         Bad{"weights:x", "\"x\" is not a head"}, Bad{"weights:", "\"\" is not a head"},
                         Bad{"weights:1:0", "\"1:0\" is not a head"}, Bad{"X:1", "without a head"}}) {
        const Result<MatrixRef> r = parse_matrix_ref(b.text);
        ASSERT_FALSE(r) << b.text;
        EXPECT_NE(r.problems[0].message.find(b.says), std::string::npos) << r.problems[0].message;
    }
}

}  // namespace
}  // namespace attnviz::core

namespace attnviz::core {
namespace {

// One style from the request to the figure: what export_bytes writes is the figure of exactly the
// request's style, the pipeline's heads and thumbnails included, and digits 0 is the figures' 3.
TEST(Export, TheRequestsStyleIsTheFiguresStyle) {
    const Session s = random_session(test::make_config(3, 8, 4, 2, 2), 9);
    const Trace t = forward<double>(s.config, s.params);
    ExportRequest r;
    r.view = ExportRequest::View::pipeline;
    r.format = ExportFormat::svg;
    r.style.max_heads = 2;
    r.style.thumbnails = false;
    r.style.notation = Notation::ascii;
    r.style.fit_width = 500;
    const Result<std::string> pipeline = export_bytes(s, t, r);
    ASSERT_TRUE(pipeline);
    EXPECT_EQ(*pipeline.value, to_svg(pipeline_figure(s, t, r.style)));
    EXPECT_NE(pipeline.value->find("heads 2–3 are left out"), std::string::npos);
    EXPECT_EQ(pipeline.value->find("class=\"thumb\""), std::string::npos);
    EXPECT_NE(pipeline.value->find("width=\"500\""), std::string::npos);

    r.view = ExportRequest::View::none;
    r.matrix = MatrixRef{MatrixId::weights, 1};
    r.style = FigureStyle{};
    FigureStyle three;
    three.digits = default_figure_digits;
    const std::string by_default = *export_bytes(s, t, r).value;
    EXPECT_EQ(by_default, to_svg(*matrix_figure(s, t, *r.matrix, three).value));
    r.style.digits = 5;
    EXPECT_NE(*export_bytes(s, t, r).value, by_default);
    EXPECT_EQ(*export_bytes(s, t, r).value, to_svg(*matrix_figure(s, t, *r.matrix, r.style).value));
    // The same digits write a matrix's numbers: 5 significant digits in LaTeX.
    r.format = ExportFormat::latex;
    EXPECT_EQ(*export_bytes(s, t, r).value, latex_bmatrix(t.heads[1].weights, 5));
}

}  // namespace
}  // namespace attnviz::core
