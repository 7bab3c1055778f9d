// Exports of one matrix of a session or its trace, as text or NumPy bytes: what File > Export…,
// a heatmap's context menu and `attnviz export` write.
//
//   csv, tsv  one row per line, values separated by "," or a tab; exact (the shortest text that
//             reads back as the same double) unless a precision is chosen; a masked score is -inf
//   latex     \begin{bmatrix} … \end{bmatrix} with `precision` significant digits (4 by default),
//             exponents as ×10^{k}, a masked score as -\infty
//   npy       NumPy's .npy, version 1.0, little-endian float64, C order: bit for bit
// Figures (PNG, SVG) of a matrix or a view are made in core/render/view_figures.hpp.
#pragma once

#include <optional>
#include <string>

#include "core/attention/matrix_types.hpp"
#include "core/attention/registry.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"
#include "core/io/csv.hpp"
#include "core/render/figure_style.hpp"
#include "core/render/picture.hpp"

namespace attnviz::core {

// html: the interactive page of the attention views (core/render/attention_page.hpp), never a matrix.
enum class ExportFormat { csv, tsv, latex, npy, png, svg, json, html };

// "csv" → ExportFormat::csv …; nullopt for an unknown name.
std::optional<ExportFormat> export_format_from_name(const std::string& name);
const char* export_format_name(ExportFormat format);
// The file extension with its dot: ".csv", ".tsv", ".tex", ".npy", ".png", ".svg", ".json", ".html".
const char* export_extension(ExportFormat format);
// Whether the format is a figure (png, svg) rather than the numbers.
inline bool is_figure(ExportFormat format) { return format == ExportFormat::png || format == ExportFormat::svg; }

// The significant digits LaTeX writes unless others are chosen.
inline constexpr int default_latex_digits = 4;
// Significant digits a user may choose (FigureStyle::digits); 0 means the format's default.
inline constexpr int max_digits = 17;

// A matrix as a LaTeX bmatrix (amsmath). Past 10 columns a comment says to raise MaxMatrixCols.
std::string latex_bmatrix(const Matrix& m, int digits = default_latex_digits);

// A matrix as a .npy file's bytes (2-D, float64).
std::string npy_matrix(const Matrix& m);

// The text or bytes of a matrix in a numeric format (csv, tsv, latex, npy); digits as above
// (0: the format's default). Refused for the figure formats and json.
Result<std::string> export_matrix(const Matrix& m, ExportFormat format, int digits = 0);

// One export of a session's trace, as `attnviz export` and File > Export… describe it.
struct ExportRequest {
    enum class View { none, heads, pipeline };
    std::optional<MatrixRef> matrix;  // a matrix (numbers or heatmap); with View::none
    View view = View::none;           // a view's figure (png, svg)
    ExportFormat format = ExportFormat::csv;
    FigureStyle style;  // how: digits (of the numbers too), colours, numbers, labels, legend, scale, fit
};

// The bytes of an export: a matrix's numbers or figure, a view's figure, or (json, with neither a
// matrix nor a view) the whole trace as `compute` writes it. Refused with a message: a matrix that
// does not exist in the session, a format that does not fit what is exported, a figure too large.
// png needs the font at `font_path` for its text.
Result<std::string> export_bytes(const Session& session, const Trace& trace, const ExportRequest& request,
                                 const std::string& font_path = default_font_path);

// "weights:2" (NAME:HEAD, the head counted from 1) or "X" (a matrix of the layer) → the matrix.
// A per-head matrix named without a head gets head −1 (the caller decides: the only head, or a
// message). Whether it exists in a session is not checked.
Result<MatrixRef> parse_matrix_ref(const std::string& text);

}  // namespace attnviz::core
