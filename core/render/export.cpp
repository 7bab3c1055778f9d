#include "core/render/export.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/base/format.hpp"
#include "core/io/session_file.hpp"
#include "core/io/tensors.hpp"
#include "core/render/view_figures.hpp"

namespace attnviz::core {

namespace {

struct FormatRow {
    ExportFormat format;
    const char* name;
    const char* extension;
};

constexpr FormatRow format_table[] = {
    {ExportFormat::csv, "csv", ".csv"},     {ExportFormat::tsv, "tsv", ".tsv"},
    {ExportFormat::latex, "latex", ".tex"}, {ExportFormat::npy, "npy", ".npy"},
    {ExportFormat::png, "png", ".png"},     {ExportFormat::svg, "svg", ".svg"},
    {ExportFormat::json, "json", ".json"},  {ExportFormat::html, "html", ".html"},
};

const FormatRow& row_of(ExportFormat format) {
    for (const FormatRow& r : format_table)
        if (r.format == format) return r;
    return format_table[0];
}

// A value for LaTeX: "0.25", "-1.5", "3.2\times10^{-5}", "-\infty".
std::string latex_number(double v, int digits) {
    if (std::isinf(v)) return v < 0 ? "-\\infty" : "\\infty";
    const std::string text = format_number(v, digits);
    const size_t e = text.find('e');
    if (e == std::string::npos) return text;
    const int exponent = std::atoi(text.c_str() + e + 1);
    return text.substr(0, e) + "\\times10^{" + std::to_string(exponent) + "}";
}

}  // namespace

std::optional<ExportFormat> export_format_from_name(const std::string& name) {
    for (const FormatRow& r : format_table)
        if (name == r.name) return r.format;
    return std::nullopt;
}

const char* export_format_name(ExportFormat format) { return row_of(format).name; }
const char* export_extension(ExportFormat format) { return row_of(format).extension; }

std::string latex_bmatrix(const Matrix& m, int digits) {
    if (digits <= 0) digits = default_latex_digits;
    std::string out;
    // amsmath's matrix environments hold 10 columns unless told otherwise.
    if (m.cols() > 10) out += "% needs \\setcounter{MaxMatrixCols}{" + std::to_string(m.cols()) + "}\n";
    out += "\\begin{bmatrix}\n";
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            if (c) out += " & ";
            out += latex_number(m(r, c), digits);
        }
        out += r + 1 < m.rows() ? " \\\\\n" : "\n";
    }
    out += "\\end{bmatrix}\n";
    return out;
}

std::string npy_matrix(const Matrix& m) {
    // Matrix is column-major; .npy is written in C (row-major) order.
    std::vector<double> values(static_cast<size_t>(m.size()));
    size_t k = 0;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) values[k++] = m(r, c);
    return npy_bytes({static_cast<std::uint64_t>(m.rows()), static_cast<std::uint64_t>(m.cols())}, values);
}

Result<std::string> export_matrix(const Matrix& m, ExportFormat format, int digits) {
    using R = Result<std::string>;
    if (digits < 0 || digits > max_digits)
        return R::fail({{"precision", "must be 1 to " + std::to_string(max_digits) +
                                          " significant digits, or 0 "
                                          "for exact; got " +
                                          std::to_string(digits)}});
    switch (format) {
        case ExportFormat::csv: return R::ok(delimited_text(m, ",", digits));
        case ExportFormat::tsv: return R::ok(delimited_text(m, "\t", digits));
        case ExportFormat::latex: return R::ok(latex_bmatrix(m, digits));
        case ExportFormat::npy: return R::ok(npy_matrix(m));
        default: break;
    }
    return R::fail({{"format", std::string(export_format_name(format)) + " is not a format for a matrix's numbers"}});
}

Result<MatrixRef> parse_matrix_ref(const std::string& text) {
    using R = Result<MatrixRef>;
    const size_t colon = text.find(':');
    const std::string name = ref_part(text.substr(0, colon));
    const std::optional<MatrixId> id = matrix_id_from_name(name);
    if (!id) return R::fail({{"", "\"" + printable(name) + "\" is not a matrix (" + matrix_names() + ")"}});
    if (colon == std::string::npos) return R::ok({*id, is_per_head(*id) ? -1 : 0});
    if (!is_per_head(*id))
        return R::fail({{"", name + " is one matrix for the whole layer; name it without a head (\"" + name + "\")"}});
    const std::string head = ref_part(text.substr(colon + 1));
    char* end = nullptr;
    const long h = std::strtol(head.c_str(), &end, 10);
    if (head.empty() || *end != '\0' || h < 1 || h > 1000000)
        return R::fail({{"", "\"" + printable(head) + "\" is not a head number (heads are counted from 1)"}});
    return R::ok({*id, static_cast<int>(h - 1)});
}

Result<std::string> export_bytes(const Session& session, const Trace& trace, const ExportRequest& r,
                                 const std::string& font_path) {
    using R = Result<std::string>;
    const Config& c = session.config;
    if (r.format == ExportFormat::json) {
        if (r.matrix || r.view != ExportRequest::View::none)
            return R::fail({{"format", "json writes the whole trace, not one matrix or view"}});
        return R::ok(write_trace(trace));
    }
    if (r.matrix && r.view != ExportRequest::View::none) return R::fail({{"", "export a matrix or a view, not both"}});
    if (!r.matrix && r.view == ExportRequest::View::none)
        return R::fail({{"", "nothing to export: no matrix or view"}});
    if (r.matrix) {
        if (!exists(*r.matrix, c))
            return R::fail({{"matrix", label(*r.matrix, Notation::ascii) + " does not exist in this session (" +
                                           std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads") + ")"}});
        if (!is_figure(r.format))
            return export_matrix(*find_matrix(session.params, trace, *r.matrix), r.format, r.style.digits);
    } else if (!is_figure(r.format)) {
        return R::fail(
            {{"format", std::string("a view is a figure: png or svg, not ") + export_format_name(r.format)}});
    }
    if (r.style.digits < 0 || r.style.digits > max_digits)
        return R::fail({{"precision", "must be 1 to " + std::to_string(max_digits) + " significant digits"}});
    const FigureStyle& o = r.style;
    Figure figure;
    if (r.matrix) {
        Result<Figure> f = matrix_figure(session, trace, *r.matrix, o);
        if (!f) return R::fail(std::move(f.problems));
        figure = std::move(*f.value);
    } else {
        figure = r.view == ExportRequest::View::heads ? heads_figure(session, trace, o)
                                                      : pipeline_figure(session, trace, o);
    }
    if (r.format == ExportFormat::svg) return R::ok(to_svg(figure));
    if (!(r.style.scale > 0 && r.style.scale <= 16)) return R::fail({{"scale", "must be above 0 and at most 16"}});
    // A scale that leaves the figure less than a pixel a side would give an image of nothing.
    if (const double side = std::min(figure.width, figure.height); side * r.style.scale < 1) {
        const double least = 1 / side, step = std::pow(10.0, std::floor(std::log10(least)) - 2);
        return R::fail(
            {{"scale", format_number(r.style.scale) + " leaves no pixel: the figure is " + format_number(figure.width) +
                           "×" + format_number(figure.height) +
                           " units, so it would be smaller than one pixel a side; the scale must be at least " +
                           format_number(std::ceil(least / step) * step, 3)}});
    }
    return figure_png(figure, r.style.scale, font_path);
}

}  // namespace attnviz::core
