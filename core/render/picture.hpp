// Figures: a small vector picture model (rectangles, text, lines, polygons, gradient bars) that is
// written as SVG and rasterised to PNG by a software rasteriser, so a heatmap or a view can be
// exported without a display. The builders (heatmaps, the heads and the pipeline views) are in
// view_figures.hpp.
//
// Coordinates are in figure units (1 unit = 1 pixel at scale 1), x to the right and y down, as in
// SVG. Text is DejaVu Sans: the SVG names it and lets the viewer draw it; rasterize() draws it with
// stb_truetype from the font file. Layout measures text with text_width(), DejaVu Sans's own advance
// widths built in, so building and writing SVG need no font file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/base/problem.hpp"
#include "core/render/colormaps.hpp"

namespace attnviz::core {

struct Point {
    double x = 0, y = 0;
};

// A filled rectangle, optionally outlined (the stroke centred on the border, as SVG draws it).
struct Box {
    double x = 0, y = 0, w = 0, h = 0;
    Rgba fill{255, 255, 255, 255};
    std::optional<Rgba> stroke;
    double stroke_width = 1;
    double radius = 0;  // rounded corners
    bool crisp =
        false;  // edges snapped to whole pixels (SVG shape-rendering="crispEdges"): abutting cells show no seams
    std::string klass;    // SVG class, e.g. "cell"
    std::string tooltip;  // SVG <title>: "weights(1)[2][3] = 0.25"
};

enum class Anchor { start, middle, end };
// Where y is: on the alphabetic baseline, at the middle of a capital letter, or at its top.
enum class Baseline { alphabetic, middle, top };

// One line of text (UTF-8). Glyphs the font lacks are skipped.
struct Label {
    double x = 0, y = 0;
    std::string text;
    double size = 12;  // font size (em) in units
    Rgba color{0, 0, 0, 255};
    Anchor anchor = Anchor::start;
    Baseline baseline = Baseline::alphabetic;
    bool bold = false;
    std::string klass;
    // Turned a quarter counterclockwise about (x, y) (SVG rotate(-90)): the text runs upward from
    // there, `anchor` along it, `baseline` across it (a column's label that its width would cut).
    bool vertical = false;
};

// A straight line with butt ends; the colour's alpha is its opacity.
struct Line {
    double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
    Rgba color{0, 0, 0, 255};
    double width = 1;
};

// A filled polygon (an arrowhead), even-odd.
struct Polygon {
    std::vector<Point> points;
    Rgba fill{0, 0, 0, 255};
};

// A rectangle filled with a left-to-right linear gradient through `stops` (t from 0 to 1): a legend.
struct Gradient {
    double x = 0, y = 0, w = 0, h = 0;
    std::vector<ColorStop> stops;
};

// Groups the elements up to the matching GroupEnd (SVG <g>): one heatmap, one node. Nestable; the
// rasteriser ignores them.
struct Group {
    std::string klass;    // "heatmap", "node", "legend"
    std::string tooltip;  // SVG <title>: "weights⁽¹⁾", "Q⁽¹⁾ = X·W_Q, 2×2"
    bool crisp = false;   // SVG shape-rendering="crispEdges" on the group, not on each crisp Box inside
};
struct GroupEnd {};

using Element = std::variant<Box, Label, Line, Polygon, Gradient, Group, GroupEnd>;

// A box filled with `fill` (no stroke), and a label: the figures' two most common elements.
inline Box box_at(double x, double y, double w, double h, Rgba fill) {
    Box b;
    b.x = x, b.y = y, b.w = w, b.h = h, b.fill = fill;
    return b;
}
inline Label label_at(double x, double y, std::string text, double size, Rgba color, Anchor anchor, Baseline baseline,
                      bool bold = false, std::string klass = "") {
    return Label{x, y, std::move(text), size, color, anchor, baseline, bold, std::move(klass), false};
}

struct Figure {
    double width = 0, height = 0;
    Rgba background{255, 255, 255, 255};
    std::vector<Element> elements;  // drawn in order, later ones on top
    std::string title;              // the SVG's <title>
};

// Scales every coordinate, size and width by `factor` (> 0).
void scale_figure(Figure& figure, double factor);
// Scales the figure so that it fits width×height (either ≤ 0: not limited), keeping its proportions.
// Returns the factor applied.
double fit_figure(Figure& figure, double width, double height);

// ---------------------------------------------------------------------------------------------
// Text metrics (DejaVu Sans, unitsPerEm 2048; ascent 0.928 em, descent 0.236 em)

// The advance of a text at `size` from DejaVu Sans's widths (ASCII and the symbols the app writes:
// superscripts, ×, ·, √, ᵀ, −, ∞, …, ≈, →), 0.6·size for any other character. No kerning (the
// rasteriser applies none either).
double text_width(std::string_view text, double size, bool bold = false);
// The baseline of a label placed with this baseline at y.
double baseline_y(double y, Baseline baseline, double size);
// The text cut to fit `width`, ending in "…" when cut ("" when not even "…" fits).
std::string fit_text(const std::string& text, double width, double size, bool bold = false);
// The code points of UTF-8 text; an invalid byte decodes as U+FFFD.
std::vector<char32_t> decode_utf8(std::string_view text);

// ---------------------------------------------------------------------------------------------
// SVG

// SVG 1.1: width/height and a viewBox, one <rect> per Box (class and <title> kept), <text> with the
// text XML-escaped in font-family "DejaVu Sans, sans-serif", <line>, <polygon>, a <linearGradient>
// in <defs> per Gradient, <g> per Group.
std::string to_svg(const Figure& figure);
// & < > " ' as entities; characters XML 1.0 forbids (control characters) dropped.
std::string xml_escape(std::string_view text);

// ---------------------------------------------------------------------------------------------
// Raster

// RGBA pixels, row-major from the top left, 4 bytes a pixel.
struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgba;
    Rgba pixel(int x, int y) const {
        const std::size_t k = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + x) * 4;
        return {rgba[k], rgba[k + 1], rgba[k + 2], rgba[k + 3]};
    }
};

// The largest image rasterize() makes: a side, and pixels in all (1 GiB of RGBA).
inline constexpr int max_image_side = 16384;
inline constexpr std::int64_t max_image_pixels = std::int64_t{1} << 28;

inline constexpr const char* default_font_path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
// The bold face beside a regular one: "DejaVuSans.ttf" → "DejaVuSans-Bold.ttf" ("" when the name
// does not end in ".ttf").
std::string bold_font_path(const std::string& regular);

// The figure at `scale` pixels per unit (ceil(width·scale) × ceil(height·scale)): boxes with
// coverage antialiasing at fractional edges, antialiased lines and polygons blended by their
// alpha, gradients, text from the TrueType font at `font_path` (the bold face beside it for bold
// text, when it exists; else the regular one). The font is read only when the figure has text.
// Refused with a problem: a scale or size that is not positive and finite, an image larger than
// max_image_side or max_image_pixels, a font that cannot be read or parsed (the problem's path is
// the font's).
Result<Image> rasterize(const Figure& figure, double scale, const std::string& font_path = default_font_path);

// The image as PNG bytes (stb_image_write); "" if it cannot be encoded.
std::string png_bytes(const Image& image);

// rasterize() then png_bytes().
Result<std::string> figure_png(const Figure& figure, double scale, const std::string& font_path = default_font_path);

}  // namespace attnviz::core
