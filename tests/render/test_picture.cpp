// Tests of core/render/colormaps.hpp, core/render/picture.hpp and core/render/view_figures.hpp: the colormaps' known
// colours, SVG that parses as XML with one rect per cell in the right colour, escaped labels, blocks for large
// matrices, rasterised pixels, PNG bytes, refusals, and the heads and pipeline figures.
#include "core/render/view_figures.hpp"

#include <gtest/gtest.h>
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "core/base/splitmix.hpp"
#include "core/render/colormaps.hpp"
#include "core/render/picture.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

constexpr double inf = std::numeric_limits<double>::infinity();
const std::string font = default_font_path;

bool have_font() { return std::filesystem::exists(font); }

// ---------------------------------------------------------------------------------------------
// A small XML reader: checks well-formedness (one root, tags nested and closed, attributes quoted
// and unique, only the five predefined entities and character references) and gives the tree.

struct XmlNode {
    std::string name;
    std::map<std::string, std::string> attrs;
    std::string text;  // the character data directly inside, entities decoded
    std::vector<std::unique_ptr<XmlNode>> children;
};

class XmlReader {
public:
    explicit XmlReader(const std::string& s) : s_(s) {}

    // The root element, or nullptr with error() saying what is wrong.
    std::unique_ptr<XmlNode> parse() {
        skip_space();
        if (s_.compare(k_, 5, "<?xml") == 0) {
            const auto end = s_.find("?>", k_);
            if (end == std::string::npos) return fail("unterminated XML declaration");
            k_ = end + 2;
        }
        skip_space();
        auto root = element();
        if (!root) return nullptr;
        skip_space();
        if (k_ != s_.size()) return fail("content after the root element");
        return root;
    }
    const std::string& error() const { return error_; }

private:
    std::unique_ptr<XmlNode> fail(const std::string& why) {
        if (error_.empty()) error_ = why + " at byte " + std::to_string(k_);
        return nullptr;
    }
    void skip_space() {
        while (k_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[k_]))) ++k_;
    }
    static bool name_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
    }
    std::string name() {
        const std::size_t start = k_;
        while (k_ < s_.size() && name_char(s_[k_])) ++k_;
        return s_.substr(start, k_ - start);
    }
    // Decodes character data up to `stop`; false on a bad entity or a bare '<' / '&'.
    bool chars(char stop, std::string& out) {
        while (k_ < s_.size() && s_[k_] != stop) {
            if (s_[k_] == '<') return false;
            if (s_[k_] == '&') {
                const auto semi = s_.find(';', k_);
                if (semi == std::string::npos) return false;
                const std::string e = s_.substr(k_ + 1, semi - k_ - 1);
                static const std::map<std::string, std::string> named = {
                    {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
                if (auto it = named.find(e); it != named.end())
                    out += it->second;
                else if (e.size() > 1 && e[0] == '#')
                    out += "?";  // a character reference (none expected)
                else
                    return false;
                k_ = semi + 1;
            } else {
                out += s_[k_++];
            }
        }
        return true;
    }
    std::unique_ptr<XmlNode> element() {
        if (k_ >= s_.size() || s_[k_] != '<') return fail("expected an element");
        ++k_;
        auto node = std::make_unique<XmlNode>();
        node->name = name();
        if (node->name.empty()) return fail("an element without a name");
        for (;;) {
            const std::size_t before = k_;
            skip_space();
            if (k_ >= s_.size()) return fail("unterminated tag");
            if (s_.compare(k_, 2, "/>") == 0) {
                k_ += 2;
                return node;
            }
            if (s_[k_] == '>') {
                ++k_;
                break;
            }
            if (k_ == before) return fail("no space before an attribute");
            const std::string attr = name();
            if (attr.empty() || k_ >= s_.size() || s_[k_] != '=') return fail("a malformed attribute");
            ++k_;
            if (k_ >= s_.size() || s_[k_] != '"') return fail("an unquoted attribute");
            ++k_;
            std::string value;
            if (!chars('"', value) || k_ >= s_.size()) return fail("a bad attribute value");
            ++k_;
            if (!node->attrs.emplace(attr, value).second) return fail("a repeated attribute " + attr);
        }
        for (;;) {
            if (!chars('<', node->text)) return fail("bad character data");
            if (k_ >= s_.size()) return fail("unclosed <" + node->name + ">");
            if (s_.compare(k_, 2, "</") == 0) {
                k_ += 2;
                if (name() != node->name) return fail("mismatched </...> for <" + node->name + ">");
                skip_space();
                if (k_ >= s_.size() || s_[k_] != '>') return fail("unterminated end tag");
                ++k_;
                return node;
            }
            auto child = element();
            if (!child) return nullptr;
            node->children.push_back(std::move(child));
        }
    }

    const std::string& s_;
    std::size_t k_ = 0;
    std::string error_;
};

void collect(const XmlNode& n, const std::string& name, std::vector<const XmlNode*>& out) {
    if (n.name == name) out.push_back(&n);
    for (const auto& c : n.children) collect(*c, name, out);
}
std::vector<const XmlNode*> all(const XmlNode& root, const std::string& name) {
    std::vector<const XmlNode*> out;
    collect(root, name, out);
    return out;
}
std::string attr(const XmlNode& n, const std::string& a) {
    const auto it = n.attrs.find(a);
    return it == n.attrs.end() ? "" : it->second;
}
std::string title_of(const XmlNode& n) {
    for (const auto& c : n.children)
        if (c->name == "title") return c->text;
    return "";
}
std::vector<const XmlNode*> with_class(const XmlNode& root, const std::string& name, const std::string& klass) {
    std::vector<const XmlNode*> out;
    for (const XmlNode* n : all(root, name))
        if (attr(*n, "class") == klass) out.push_back(n);
    return out;
}
// The cell rect whose tooltip starts with `title` ("w[1][2] = ").
const XmlNode* cell(const XmlNode& root, const std::string& title) {
    for (const XmlNode* n : with_class(root, "rect", "cell"))
        if (title_of(*n).rfind(title, 0) == 0) return n;
    return nullptr;
}
std::vector<std::string> texts(const XmlNode& root) {
    std::vector<std::string> out;
    for (const XmlNode* n : all(root, "text")) out.push_back(n->text);
    return out;
}
bool has_text(const XmlNode& root, const std::string& text) {
    const auto t = texts(root);
    return std::find(t.begin(), t.end(), text) != t.end();
}
bool has_text_containing(const XmlNode& root, const std::string& part) {
    for (const std::string& t : texts(root))
        if (t.find(part) != std::string::npos) return true;
    return false;
}

// Parses the figure's SVG, failing the test when it is not well-formed.
std::unique_ptr<XmlNode> parse_svg(const Figure& f) {
    const std::string svg = to_svg(f);
    XmlReader reader(svg);
    auto root = reader.parse();
    EXPECT_NE(root, nullptr) << reader.error();
    if (root) {
        EXPECT_EQ(root->name, "svg");
        EXPECT_EQ(attr(*root, "xmlns"), "http://www.w3.org/2000/svg");
    }
    return root;
}

// Every label of the figure whose class is one of `classes`.
std::vector<Label> labels(const Figure& f, const std::set<std::string>& classes = {}) {
    std::vector<Label> out;
    for (const Element& e : f.elements)
        if (const auto* l = std::get_if<Label>(&e); l && (classes.empty() || classes.count(l->klass)))
            out.push_back(*l);
    return out;
}

struct Extent {
    double x0, y0, x1, y1;
};
// Where a label's text lies, by the layout's own measure (ascent 0.93 em, descent 0.24 em).
Extent extent(const Label& l) {
    const double w = text_width(l.text, l.size, l.bold);
    const double x0 = l.anchor == Anchor::start ? l.x : l.anchor == Anchor::middle ? l.x - w / 2 : l.x - w;
    const double base = baseline_y(l.y, l.baseline, l.size);
    return {x0, base - 0.93 * l.size, x0 + w, base + 0.24 * l.size};
}

// No label runs off the figure, and no two labels of the axes, titles and notes overlap.
void expect_tidy(const Figure& f) {
    for (const Label& l : labels(f)) {
        const Extent e = extent(l);
        EXPECT_GE(e.x0, -0.01) << l.text;
        EXPECT_GE(e.y0, -0.01) << l.text;
        EXPECT_LE(e.x1, f.width + 0.01) << l.text;
        EXPECT_LE(e.y1, f.height + 0.01) << l.text;
    }
    const auto ls = labels(f, {"row-label", "col-label", "title", "note", "head-title", "scaling", "node-label"});
    for (std::size_t i = 0; i < ls.size(); ++i)
        for (std::size_t j = i + 1; j < ls.size(); ++j) {
            const Extent a = extent(ls[i]), b = extent(ls[j]);
            const bool apart = a.x1 <= b.x0 + 0.01 || b.x1 <= a.x0 + 0.01 || a.y1 <= b.y0 + 0.01 || b.y1 <= a.y0 + 0.01;
            EXPECT_TRUE(apart) << "\"" << ls[i].text << "\" overlaps \"" << ls[j].text << "\"";
        }
}

Heatmap weights_style(const std::vector<std::string>& tokens) {
    Heatmap s;
    s.title = "weights⁽¹⁾";
    s.row_labels = s.col_labels = tokens;
    s.colors = ColorScale::unit_interval;
    s.style.scaling = Scaling::fixed;
    s.cell_name = "w";
    return s;
}

Session random(int n, int d_model, int heads, std::uint64_t seed, bool projection = true) {
    return random_session(make_config(n, d_model, heads, d_model / heads, d_model / heads, projection), seed);
}

// ---------------------------------------------------------------------------------------------

TEST(Colormap, KnownColoursOfBothMaps) {
    EXPECT_EQ(hex(colormap_rgba(Colormap::sequential, 0)), "#440154");     // viridis' first colour
    EXPECT_EQ(hex(colormap_rgba(Colormap::sequential, 1)), "#fde725");     // and its last
    EXPECT_EQ(hex(colormap_rgba(Colormap::sequential, 0.5f)), "#21918b");  // entry 128: t = 0.502, just past the stop
    EXPECT_EQ(hex(colormap_rgba(Colormap::diverging, 0)), "#3b4cc0");
    EXPECT_EQ(hex(colormap_rgba(Colormap::diverging, 1)), "#b40426");
    const Rgba middle = colormap_rgba(Colormap::diverging, 0.5f);  // near-white 0
    for (int ch : {middle.r, middle.g, middle.b}) EXPECT_NEAR(ch, 0xf2, 2);
    EXPECT_EQ(colormap_rgba(Colormap::sequential, -3), colormap_rgba(Colormap::sequential, 0));  // clamped
    EXPECT_EQ(colormap_rgba(Colormap::sequential, NAN), colormap_rgba(Colormap::sequential, 0));
    EXPECT_EQ(colormap_rgba(Colormap::diverging, 7), colormap_rgba(Colormap::diverging, 1));
    // The stops a legend's gradient runs through are the table's own ends.
    const auto stops = colormap_stops(Colormap::sequential);
    ASSERT_EQ(stops.size(), 5u);
    EXPECT_EQ(stops.front().color, colormap_rgba(Colormap::sequential, 0));
    EXPECT_EQ(stops.back().color, colormap_rgba(Colormap::sequential, 1));
}

TEST(Colormap, TextColourFollowsLuminance) {
    const Rgba white{255, 255, 255, 255}, black{0, 0, 0, 255};
    EXPECT_EQ(text_color_on(colormap_rgba(Colormap::sequential, 0)), white);  // dark purple
    EXPECT_EQ(text_color_on(colormap_rgba(Colormap::sequential, 1)), black);  // yellow
    EXPECT_EQ(text_color_on(colormap_rgba(Colormap::diverging, 0.5f)), black);
    EXPECT_EQ(text_color_on(colormap_rgba(Colormap::diverging, 0)), white);  // blue
    EXPECT_EQ(colormap_for(ColorScale::unit_interval), Colormap::sequential);
    EXPECT_EQ(colormap_for(ColorScale::diverging), Colormap::diverging);
}

// Cividis for readers with a colour-vision deficiency: matplotlib's ends, its middle entry, and a
// luminance that never falls from one entry to the next (a colour never reads as a smaller weight).
TEST(Colormap, CividisHasMatplotlibsEndsAndRisingLuminance) {
    EXPECT_EQ(hex(colormap_rgba(Colormap::cividis, 0)), "#00224e");     // _cividis_data[0]: (0, 34, 78)
    EXPECT_EQ(hex(colormap_rgba(Colormap::cividis, 1)), "#fee838");     // [255]: (254, 232, 56)
    EXPECT_EQ(hex(colormap_rgba(Colormap::cividis, 0.5f)), "#7c7b78");  // entry 128: (124, 123, 120)
    const auto stops = colormap_stops(Colormap::cividis);
    ASSERT_EQ(stops.size(), 5u);
    EXPECT_EQ(stops.front().color, colormap_rgba(Colormap::cividis, 0));
    EXPECT_EQ(stops.back().color, colormap_rgba(Colormap::cividis, 1));
    float previous = -1;
    for (int k = 0; k < 256; ++k) {
        const float luminance = relative_luminance(colormap_rgba(Colormap::cividis, k / 255.0f));
        EXPECT_GE(luminance, previous) << "entry " << k;
        previous = luminance;
    }
    EXPECT_GT(relative_luminance(colormap_rgba(Colormap::cividis, 1)),
              relative_luminance(colormap_rgba(Colormap::cividis, 0)) + 0.7f);
    // Viridis stays the weights' map of the figures.
    EXPECT_EQ(colormap_for(ColorScale::unit_interval), Colormap::sequential);
}

// WCAG 2's contrast ratio: 21 for black on white, 1 for a colour on itself, symmetric; #767676 is the
// lightest grey that reads on white (4.54), #777777 just fails (4.48).
TEST(Colormap, ContrastRatioIsWcags) {
    const Rgba white{255, 255, 255, 255}, black{0, 0, 0, 255};
    EXPECT_NEAR(contrast_ratio(black, white), 21.0f, 1e-3f);
    EXPECT_NEAR(contrast_ratio(white, black), 21.0f, 1e-3f);
    EXPECT_NEAR(contrast_ratio(Rgba{40, 90, 200, 255}, Rgba{40, 90, 200, 255}), 1.0f, 1e-6f);
    EXPECT_NEAR(contrast_ratio(Rgba{0x76, 0x76, 0x76, 255}, white), 4.54f, 0.01f);
    EXPECT_NEAR(contrast_ratio(Rgba{0x77, 0x77, 0x77, 255}, white), 4.48f, 0.01f);
    EXPECT_NEAR(relative_luminance(white), 1.0f, 1e-6f);
    EXPECT_EQ(relative_luminance(black), 0.0f);
}

TEST(Figure, TextWidthUsesDejaVuAdvances) {
    // '0'–'9' are 1303/2048 em in DejaVu Sans, 'i' 569, 'W' 2025; unknown characters 0.6 em.
    EXPECT_NEAR(text_width("0.5", 10), (1303 + 651 + 1303) / 2048.0 * 10, 1e-9);
    EXPECT_GT(text_width("WWW", 12), text_width("iii", 12) * 3);
    EXPECT_NEAR(text_width("Q⁽¹⁾", 12), (1612 + 503 + 821 + 503) / 2048.0 * 12, 1e-9);
    EXPECT_NEAR(text_width("中", 10), 6, 1e-9);
    EXPECT_GT(text_width("ab", 12, true), text_width("ab", 12));
    EXPECT_EQ(fit_text("short", 100, 12), "short");
    const std::string cut = fit_text("a rather long token label", 60, 12);
    EXPECT_LE(text_width(cut, 12), 60);
    EXPECT_EQ(cut.substr(cut.size() - 3), "…");
    EXPECT_EQ(decode_utf8("a\xff"), (std::vector<char32_t>{'a', 0xFFFD}));
}

TEST(Figure, SvgHasOneRectPerCellInItsColour) {
    const Matrix m{{0, 1, 0.5, 0.25}, {1, 0, 0, 0}, {0.125, 0.75, 1, 0}};
    const Figure f = heatmap_figure(m, weights_style({"a", "b", "c"}));
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    EXPECT_EQ(with_class(*root, "rect", "cell").size(), 12u);
    ASSERT_TRUE(cell(*root, "w[0][0] = "));
    EXPECT_EQ(attr(*cell(*root, "w[0][0] = "), "fill"), "#440154");  // 0 on fixed 0..1: viridis' start
    EXPECT_EQ(attr(*cell(*root, "w[0][1] = "), "fill"), "#fde725");  // 1: its end
    EXPECT_EQ(attr(*cell(*root, "w[2][2] = "), "fill"), "#fde725");
    EXPECT_EQ(attr(*cell(*root, "w[0][2] = "), "fill"), hex(colormap_rgba(Colormap::sequential, 0.5f)));
    EXPECT_EQ(title_of(*cell(*root, "w[2][1] = ")), "w[2][1] = 0.75");
    // The cell of row 1 lies one cell below row 0's and as wide.
    const XmlNode &a = *cell(*root, "w[0][3] = "), &b = *cell(*root, "w[1][3] = ");
    EXPECT_EQ(attr(a, "x"), attr(b, "x"));
    EXPECT_GT(std::stod(attr(b, "y")), std::stod(attr(a, "y")));
    // Numbers in the cells: white on the dark 0, black on the yellow 1.
    bool white_zero = false, black_one = false;
    for (const XmlNode* t : with_class(*root, "text", "number")) {
        white_zero = white_zero || (t->text == "0" && attr(*t, "fill") == "#ffffff");
        black_one = black_one || (t->text == "1" && attr(*t, "fill") == "#000000");
    }
    EXPECT_TRUE(white_zero);
    EXPECT_TRUE(black_one);
    EXPECT_EQ(with_class(*root, "text", "number").size(), 12u);
    EXPECT_TRUE(has_text(*root, "0.125"));
    // The legend: a gradient, the range's ends and the scaling's name.
    EXPECT_EQ(all(*root, "linearGradient").size(), 1u);
    EXPECT_TRUE(has_text(*root, "fixed 0..1"));
    EXPECT_TRUE(has_text(*root, "0"));
    EXPECT_TRUE(has_text(*root, "0.5"));
    EXPECT_EQ(attr(*root, "viewBox"), "0 0 " + attr(*root, "width") + " " + attr(*root, "height"));
    expect_tidy(f);
}

TEST(Figure, DivergingZeroIsNearWhiteAndMaskedCellsGrey) {
    const Matrix m{{-2, 0, 2}, {1, -inf, -inf}};
    Heatmap s;
    s.colors = ColorScale::diverging;
    s.cell_name = "scores";
    const auto root = parse_svg(heatmap_figure(m, s));
    ASSERT_TRUE(root);
    EXPECT_EQ(attr(*cell(*root, "scores[0][1] = "), "fill"), hex(colormap_rgba(Colormap::diverging, 0.5f)));
    EXPECT_EQ(attr(*cell(*root, "scores[0][0] = "), "fill"), "#3b4cc0");  // −2: auto range ±2
    EXPECT_EQ(attr(*cell(*root, "scores[0][2] = "), "fill"), "#b40426");
    EXPECT_EQ(attr(*cell(*root, "scores[1][1] = "), "fill"), "#6e6e6e");  // masked
    EXPECT_EQ(title_of(*cell(*root, "scores[1][2] = ")), "scores[1][2] = −∞");
    EXPECT_TRUE(has_text(*root, "−∞"));  // in its cell
    EXPECT_TRUE(has_text(*root, "masked (−∞)"));
    EXPECT_TRUE(has_text(*root, "-2"));
    EXPECT_TRUE(has_text(*root, "auto"));
}

TEST(Figure, LabelsAreEscaped) {
    const Matrix m{{0.5, 0.5}, {0.25, 0.75}};
    Heatmap s = weights_style({"<a&b>", "it's \"x\""});
    s.title = "A & B < C";
    const Figure f = heatmap_figure(m, s);
    const std::string svg = to_svg(f);
    EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
    EXPECT_NE(svg.find("&lt;a&amp;b&gt;"), std::string::npos);
    EXPECT_NE(svg.find("it&apos;s &quot;x&quot;"), std::string::npos);
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    EXPECT_TRUE(has_text(*root, "<a&b>"));  // read back as written
    EXPECT_TRUE(has_text(*root, "it's \"x\""));
    EXPECT_TRUE(has_text(*root, "A & B < C"));
    EXPECT_EQ(xml_escape("a\x01"
                         "b\xff"),
              "ab\xEF\xBF\xBD");  // a control character dropped, a bad byte U+FFFD
}

TEST(Figure, LargeMatricesAreDrawnInBlocksOfTheirStrongestValue) {
    Matrix m = Matrix::Zero(600, 10);
    m(301, 7) = 5;
    m(0, 0) = -1;
    Heatmap s;
    s.cell_name = "m";
    s.row_labels = default_tokens(600);
    const Figure f = heatmap_figure(m, s);
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    // ⌈600/256⌉ = 3: 200 × 4 blocks of 3×3 cells.
    EXPECT_EQ(with_class(*root, "rect", "cell").size(), 800u);
    EXPECT_TRUE(has_text(*root, "each cell is a 3×3 block of the matrix: its value of largest magnitude"));
    const XmlNode* strong = cell(*root, "m[300..302][6..8]: ");
    ASSERT_TRUE(strong);
    EXPECT_EQ(title_of(*strong), "m[300..302][6..8]: largest |value| 5");
    EXPECT_EQ(attr(*strong, "fill"), "#b40426");
    EXPECT_EQ(attr(*cell(*root, "m[0..2][0..2]: "), "fill"), hex(colormap_rgba(Colormap::diverging, 0.4f)));
    EXPECT_EQ(attr(*cell(*root, "m[0..2][9..9]: "), "fill"), hex(colormap_rgba(Colormap::diverging, 0.5f)));
    EXPECT_TRUE(with_class(*root, "text", "number").empty());  // no numbers in blocks
    // Row labels every few rows, never overlapping.
    const auto rows = with_class(*root, "text", "row-label");
    EXPECT_GT(rows.size(), 10u);
    EXPECT_LT(rows.size(), 200u);
    expect_tidy(f);
    // With a smaller limit the blocks grow.
    s.style.max_cells = 50;
    EXPECT_EQ(with_class(*parse_svg(heatmap_figure(m, s)), "rect", "cell").size(), 50u * 1u);
}

TEST(Figure, EachCellPrintsTheMostThatFitsIt) {
    const Matrix m{{1.0 / 3, 2.0 / 3}, {123456.0, 0.5}};
    Heatmap s;
    s.cell = 44;
    auto root = parse_svg(heatmap_figure(m, s));
    // 123456 does not fit 44 units at 3 digits ("1.23e5"): that cell alone drops to 2, "1.2e5";
    // the others keep 3 digits.
    EXPECT_TRUE(has_text(*root, "0.333"));
    EXPECT_TRUE(has_text(*root, "0.667"));
    EXPECT_TRUE(has_text(*root, "1.2e5"));
    EXPECT_EQ(with_class(*root, "text", "number").size(), 4u);
    s.cell = 10;  // too small for any number
    root = parse_svg(heatmap_figure(m, s));
    EXPECT_TRUE(with_class(*root, "text", "number").empty());
    s.cell = 44;
    s.style.numbers = false;
    root = parse_svg(heatmap_figure(m, s));
    EXPECT_TRUE(with_class(*root, "text", "number").empty());
}

TEST(Figure, EmptyAndLogScaledMatrices) {
    // An empty matrix still makes a figure (no cells); a one-cell one has one.
    const auto empty = parse_svg(heatmap_figure(Matrix(0, 0), Heatmap{}));
    ASSERT_TRUE(empty);
    EXPECT_TRUE(with_class(*empty, "rect", "cell").empty());
    // Log scaling: 0.01 … 1, the legend's middle the geometric one (0.1), not 0.505.
    Heatmap s;
    s.colors = ColorScale::unit_interval;
    s.style.scaling = Scaling::log;
    s.cell_name = "w";
    const auto root = parse_svg(heatmap_figure(Matrix{{0.01, 1}, {0.1, 0.5}}, s));
    ASSERT_TRUE(root);
    EXPECT_TRUE(has_text(*root, "log"));
    EXPECT_TRUE(has_text(*root, "0.1"));
    EXPECT_FALSE(has_text(*root, "0.505"));
    EXPECT_EQ(attr(*cell(*root, "w[1][0] = "), "fill"), hex(colormap_rgba(Colormap::sequential, 0.5f)));
}

TEST(Figure, RasterHasTheCellsColoursAndText) {
    if (!have_font()) GTEST_SKIP() << "no " << font << " (fonts-dejavu-core)";
    const Matrix m{{0, 1}, {0.5, 0.25}};
    Heatmap s = weights_style({"tok", "en"});
    s.cell = 40;
    const Figure f = heatmap_figure(m, s);
    for (double scale : {1.0, 2.0, 1.5}) {
        const Result<Image> image = rasterize(f, scale, font);
        ASSERT_TRUE(image) << all_text(image.problems);
        const Image& im = *image.value;
        EXPECT_EQ(im.width, static_cast<int>(std::ceil(f.width * scale)));
        EXPECT_EQ(im.height, static_cast<int>(std::ceil(f.height * scale)));
        // Each cell's centre pixel has the cell's colour.
        for (const Element& e : f.elements) {
            const auto* b = std::get_if<Box>(&e);
            if (!b || b->klass != "cell") continue;
            const int cx = static_cast<int>((b->x + b->w / 2) * scale),
                      cy = static_cast<int>((b->y + b->h / 4) * scale);
            EXPECT_EQ(im.pixel(cx, cy), b->fill) << b->tooltip << " at scale " << scale;
        }
        // The row label "tok" leaves dark pixels left of the first row; the margin stays white.
        const Label row = labels(f, {"row-label"}).front();
        const Extent e = extent(row);
        int dark = 0;
        for (int y = static_cast<int>(e.y0 * scale); y < static_cast<int>(e.y1 * scale); ++y)
            for (int x = static_cast<int>(e.x0 * scale); x < static_cast<int>(e.x1 * scale); ++x)
                dark += im.pixel(x, y).r < 100;
        EXPECT_GT(dark, 10 * scale * scale);
        EXPECT_EQ(im.pixel(1, 1), (Rgba{255, 255, 255, 255}));
    }
}

// Column labels wider than their columns, where a line of text fits across a column, stand upright
// and whole ("because", not "beca…"), in the SVG (rotated) and in the PNG (a tall run of ink above
// the column); labels that fit stay level.
TEST(Figure, ColumnLabelsWiderThanTheirColumnsStandUpright) {
    Heatmap s;
    s.colors = ColorScale::unit_interval;
    s.cell = 30;
    s.row_labels = {"a", "b", "c"};
    s.col_labels = {"because", "it", "rained", "outside"};
    const Figure f = heatmap_figure(Matrix::Constant(3, 4, 0.25), s);
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    const auto labels = with_class(*root, "text", "col-label");
    ASSERT_EQ(labels.size(), 4u);
    EXPECT_EQ(labels[0]->text, "because");
    EXPECT_EQ(labels[3]->text, "outside");
    for (const XmlNode* l : labels) EXPECT_EQ(attr(*l, "transform").rfind("rotate(-90 ", 0), 0u) << l->text;
    s.col_labels = {"a", "b", "c", "d"};
    const auto level = parse_svg(heatmap_figure(Matrix::Constant(3, 4, 0.25), s));  // outlives the loop
    ASSERT_TRUE(level);
    const auto level_labels = with_class(*level, "text", "col-label");
    ASSERT_EQ(level_labels.size(), 4u);
    for (const XmlNode* l : level_labels) EXPECT_EQ(attr(*l, "transform"), "") << l->text;
    if (!have_font()) GTEST_SKIP() << "no " << font;
    // The PNG: above the first column (x from its left edge to its right), dark ink taller than the
    // column is wide; a level "beca…" would be one line high.
    const Result<Image> image = rasterize(f, 1, font);
    ASSERT_TRUE(image);
    const Image& im = *image.value;
    const auto* first = cell(*root, "");
    ASSERT_TRUE(first);
    const int x0 = static_cast<int>(std::stod(attr(*first, "x"))), top = static_cast<int>(std::stod(attr(*first, "y")));
    int ink_top = top, ink_bottom = 0;
    for (int y = 0; y < top; ++y)
        for (int x = x0; x < x0 + 30; ++x)
            if (im.pixel(x, y).r < 100) {
                ink_top = std::min(ink_top, y);
                ink_bottom = std::max(ink_bottom, y);
            }
    EXPECT_GT(ink_bottom - ink_top, 35) << "the label above column 0 is not upright";
}

TEST(Figure, PngDecodesToTheSamePixels) {
    if (!have_font()) GTEST_SKIP() << "no " << font;
    Heatmap s;
    s.title = "scores";
    const Figure f = heatmap_figure(Matrix{{-1, 0.5}, {0.25, -inf}}, s);
    const Result<Image> image = rasterize(f, 1.25, font);
    ASSERT_TRUE(image);
    const std::string png = png_bytes(*image.value);
    ASSERT_GT(png.size(), 8u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    int w = 0, h = 0, channels = 0;
    stbi_uc* pixels = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(png.data()), static_cast<int>(png.size()),
                                            &w, &h, &channels, 4);
    ASSERT_NE(pixels, nullptr);
    EXPECT_EQ(w, image.value->width);
    EXPECT_EQ(h, image.value->height);
    EXPECT_TRUE(std::equal(image.value->rgba.begin(), image.value->rgba.end(), pixels));
    stbi_image_free(pixels);
    // Not blank: the colours of both ends of the colormap, the masked grey and the text.
    std::set<std::uint32_t> colours;
    for (std::size_t k = 0; k < image.value->rgba.size(); k += 4)
        colours.insert(image.value->rgba[k] << 16 | image.value->rgba[k + 1] << 8 | image.value->rgba[k + 2]);
    EXPECT_GT(colours.size(), 20u);
    EXPECT_TRUE(colours.count(0x3b4cc0));
    EXPECT_TRUE(colours.count(0x6e6e6e));
    const Result<std::string> bytes = figure_png(f, 1.25, font);
    ASSERT_TRUE(bytes);
    EXPECT_EQ(*bytes.value, png);
}

TEST(Figure, LinesPolygonsAndGradientsAreDrawn) {
    Figure f;
    f.width = 100;
    f.height = 40;
    f.elements.push_back(Line{10, 10, 90, 10, Rgba{255, 0, 0, 128}, 4});  // half-transparent red
    f.elements.push_back(Polygon{{{10, 20}, {30, 20}, {20, 38}}, Rgba{0, 0, 255, 255}});
    f.elements.push_back(Gradient{50, 20, 40, 10, colormap_stops(Colormap::sequential)});
    const Result<Image> image = rasterize(f, 1, "/nonexistent/font.ttf");  // no text: no font needed
    ASSERT_TRUE(image) << all_text(image.problems);
    const Rgba line = image.value->pixel(50, 10);
    EXPECT_EQ(line.r, 255);
    EXPECT_NEAR(line.g, 127, 1);  // red at half opacity over white
    EXPECT_EQ(image.value->pixel(50, 16), (Rgba{255, 255, 255, 255}));
    EXPECT_EQ(image.value->pixel(20, 25), (Rgba{0, 0, 255, 255}));
    EXPECT_EQ(image.value->pixel(12, 36), (Rgba{255, 255, 255, 255}));  // outside the triangle
    const Rgba left = image.value->pixel(50, 25), right = image.value->pixel(89, 25);
    EXPECT_NEAR(left.r, 0x44, 3);   // viridis from its start …
    EXPECT_NEAR(right.g, 0xe7, 6);  // … to its end
    // A box's fractional edge is blended by its coverage.
    Figure g;
    g.width = g.height = 4;
    Box half;
    half.w = 2.5;
    half.h = 4;
    half.fill = {0, 0, 0, 255};
    g.elements.push_back(half);
    const Image im = *rasterize(g, 1, font).value;
    EXPECT_EQ(im.pixel(1, 1), (Rgba{0, 0, 0, 255}));
    EXPECT_NEAR(im.pixel(2, 1).r, 128, 1);
    EXPECT_EQ(im.pixel(3, 1), (Rgba{255, 255, 255, 255}));
}

TEST(Figure, AMissingFontIsAProblemNamingIt) {
    const Figure f = heatmap_figure(Matrix{{1}}, Heatmap{});
    const Result<Image> image = rasterize(f, 1, "/nonexistent/DejaVuSans.ttf");
    ASSERT_FALSE(image);
    ASSERT_EQ(image.problems.size(), 1u);
    EXPECT_EQ(image.problems[0].path, "/nonexistent/DejaVuSans.ttf");
    EXPECT_NE(image.problems[0].message.find("font"), std::string::npos) << image.problems[0].message;
    // A file that is not a font.
    TempDir dir("attnviz_figure");
    ASSERT_TRUE(dir.created());
    const std::string bogus = (dir.path() / "bogus.ttf").string();
    std::ofstream(bogus) << "not a font at all";
    const Result<std::string> png = figure_png(f, 1, bogus);
    ASSERT_FALSE(png);
    EXPECT_EQ(png.problems[0].path, bogus);
}

TEST(Figure, AbsurdSizesAreRefused) {
    Figure f;
    f.width = 20000;
    f.height = 10;
    Result<Image> image = rasterize(f, 1, font);
    ASSERT_FALSE(image);
    EXPECT_NE(image.problems[0].message.find("16384"), std::string::npos) << image.problems[0].message;
    f.width = 10000;
    f.height = 10000;
    EXPECT_TRUE(rasterize(f, 0.01, font));  // 100×100
    EXPECT_FALSE(rasterize(f, 2, font));
    EXPECT_FALSE(rasterize(f, 0, font));
    EXPECT_FALSE(rasterize(f, NAN, font));
    EXPECT_FALSE(rasterize(f, -1, font));
    f.width = 0;
    EXPECT_FALSE(rasterize(f, 1, font));
}

TEST(Figure, MatrixFigureFromTheRegistry) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    FigureStyle o;
    Result<Figure> f = matrix_figure(s, t, {MatrixId::weights, 0}, o);
    ASSERT_TRUE(f);
    auto root = parse_svg(*f.value);
    EXPECT_TRUE(has_text(*root, "weights⁽¹⁾ (2×2)"));
    EXPECT_TRUE(has_text_containing(*root, "rows: queries, columns: keys"));
    EXPECT_TRUE(has_text(*root, s.tokens[0]));
    EXPECT_EQ(with_class(*root, "rect", "cell").size(), 4u);
    const std::string w01 = format_number(t.heads[0].weights(0, 1), 6);
    EXPECT_EQ(title_of(*cell(*root, "weights⁽¹⁾[0][1] = ")), "weights⁽¹⁾[0][1] = " + w01);
    expect_tidy(*f.value);
    // Q (2×2 with tokens as rows), transposed: tokens become the columns and the shape turns.
    o.column_vectors = true;
    o.notation = Notation::ascii;
    f = matrix_figure(s, t, {MatrixId::X, 0}, o);
    ASSERT_TRUE(f);
    root = parse_svg(*f.value);
    EXPECT_TRUE(has_text(*root, "X (4×2)"));
    EXPECT_EQ(with_class(*root, "text", "col-label").size(), 2u);
    EXPECT_TRUE(with_class(*root, "text", "row-label").empty());
    EXPECT_EQ(title_of(*cell(*root, "X[1][0] = ")), "X[1][0] = 0");  // drawn at (0, 1)
    // A matrix that does not exist.
    Session no_wo = s;
    no_wo.config.output_projection = false;
    const Trace t2 = forward<double>(no_wo.config, no_wo.params);
    EXPECT_FALSE(matrix_figure(no_wo, t2, {MatrixId::W_O, 0}, o));
    EXPECT_FALSE(matrix_figure(s, t, {MatrixId::Q, 5}, o));
}

TEST(Figure, HeadsFigureHasOneHeatmapPerHeadOnOneScale) {
    const Session s = random(5, 8, 3, 7);
    const Trace t = forward<double>(s.config, s.params);
    FigureStyle o;
    o.heads_matrix = MatrixId::scores;
    const Figure f = heads_figure(s, t, o);
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    const auto heatmaps = with_class(*root, "g", "heatmap");
    ASSERT_EQ(heatmaps.size(), 3u);
    EXPECT_EQ(title_of(*heatmaps[1]), "scores⁽²⁾");
    EXPECT_EQ(with_class(*root, "rect", "cell").size(), 75u);
    for (const char* head : {"head 1", "head 2", "head 3"}) EXPECT_TRUE(has_text(*root, head));
    EXPECT_EQ(with_class(*root, "g", "legend").size(), 1u);
    // One range: ± the largest |score| of all heads. Only that cell takes an end colour.
    double largest = 0;
    int strongest_head = 0;
    for (int h = 0; h < 3; ++h)
        if (double m = t.heads[h].scores.cwiseAbs().maxCoeff(); m > largest) largest = m, strongest_head = h;
    int ends = 0;
    for (const XmlNode* c : with_class(*root, "rect", "cell"))
        ends += attr(*c, "fill") == "#3b4cc0" || attr(*c, "fill") == "#b40426";
    EXPECT_EQ(ends, 1);
    const double other = t.heads[(strongest_head + 1) % 3].scores(0, 0);
    const std::string other_title = "scores⁽" +
                                    std::string(strongest_head == 0   ? "²"
                                                : strongest_head == 1 ? "³"
                                                                      : "¹") +
                                    "⁾[0][0] = ";
    EXPECT_EQ(attr(*cell(*root, other_title), "fill"),
              hex(colormap_rgba(Colormap::diverging, ColorRange{-largest, largest, false}.position(other))));
    expect_tidy(f);
    // Twelve heads wrap to rows; a size to fit is kept.
    const Session big = random(6, 24, 12, 3);
    const Trace tb = forward<double>(big.config, big.params);
    o = FigureStyle{};
    Figure twelve = heads_figure(big, tb, o);
    EXPECT_EQ(with_class(*parse_svg(twelve), "g", "heatmap").size(), 12u);
    EXPECT_LT(twelve.width, 2 * twelve.height + 400);  // four columns, three rows
    expect_tidy(twelve);
    o.fit_width = 1200;
    o.fit_height = 500;
    twelve = heads_figure(big, tb, o);
    EXPECT_LE(twelve.width, 1200);
    EXPECT_LE(twelve.height, 500);
    EXPECT_EQ(with_class(*parse_svg(twelve), "g", "heatmap").size(), 12u);
}

TEST(Figure, PipelineFigureNamesEveryStage) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    FigureStyle o;
    Figure f = pipeline_figure(s, t, o);
    auto root = parse_svg(f);
    ASSERT_TRUE(root);
    for (const char* text :
         {"X 2×4", "W_Q⁽¹⁾ 4×2", "W_K⁽¹⁾ 4×2", "W_V⁽²⁾ 4×2", "Q⁽¹⁾ 2×2", "K⁽²⁾ 2×2", "V⁽¹⁾ 2×2", "scores_raw⁽¹⁾ 2×2",
          "scores⁽²⁾ 2×2", "weights⁽¹⁾ 2×2", "Z⁽²⁾ 2×2", "concat 2×4", "W_O 4×4", "output 2×4", "head 1", "head 2"})
        EXPECT_TRUE(has_text(*root, text)) << text;
    EXPECT_TRUE(has_text(*root, "Q·Kᵀ"));
    EXPECT_TRUE(has_text(*root, "÷ √d_k"));
    EXPECT_TRUE(has_text_containing(*root, "output = concat·W_O (with output projection W_O)"));
    // X, W_O, concat, output and ten per head.
    EXPECT_EQ(with_class(*root, "g", "node").size(), 4u + 2 * 10);
    EXPECT_FALSE(has_text_containing(*root, "Q_rot"));
    EXPECT_GT(with_class(*root, "rect", "thumb").size(), 20u);
    expect_tidy(f);

    // Without the output projection there is no W_O; with RoPE, Q_rot and K_rot.
    Session seed000 = s;
    seed000.config.output_projection = false;
    seed000.config.rope.on = true;
    const Trace t0 = forward<double>(seed000.config, seed000.params);
    o.thumbnails = false;
    f = pipeline_figure(seed000, t0, o);
    root = parse_svg(f);
    for (const std::string& text : texts(*root)) EXPECT_NE(text.rfind("W_O", 0), 0u) << text;  // no W_O node
    EXPECT_TRUE(has_text(*root, "concat (no W_O)"));  // on the arrow into output
    EXPECT_TRUE(has_text_containing(*root, "output = concat (no output projection)"));
    EXPECT_TRUE(has_text(*root, "Q_rot⁽¹⁾ 2×2"));
    EXPECT_TRUE(has_text(*root, "K_rot⁽²⁾ 2×2"));
    EXPECT_TRUE(has_text(*root, "Q_rot·K_rotᵀ"));
    EXPECT_TRUE(with_class(*root, "rect", "thumb").empty());
    EXPECT_EQ(with_class(*root, "g", "node").size(), 3u + 2 * 12);
    expect_tidy(f);

    // Six heads: the first three, the last, and a note for the rest.
    const Session six = random(4, 12, 6, 5);
    const Trace t6 = forward<double>(six.config, six.params);
    o = FigureStyle{};
    o.notation = Notation::ascii;
    f = pipeline_figure(six, t6, o);
    root = parse_svg(f);
    for (const char* text : {"Q(1) 4×2", "Q(3) 4×2", "Q(6) 4×2", "heads 4–5"})
        EXPECT_TRUE(has_text(*root, text)) << text;
    EXPECT_FALSE(has_text(*root, "Q(4) 4×2"));
    EXPECT_EQ(with_class(*root, "g", "node").size(), 4u + 4 * 10);
    expect_tidy(f);
}

// The range a figure's legend shows ({lo, hi} read back from its end labels) and its scaling's note.
struct LegendRead {
    double lo = 0, hi = 0;
    std::string note;
};
LegendRead legend_of(const Figure& f) {
    LegendRead out;
    bool in_legend = false;
    std::vector<Label> numbers;
    for (const Element& e : f.elements) {
        if (const auto* g = std::get_if<Group>(&e)) in_legend = g->klass == "legend";
        if (!in_legend) continue;
        if (const auto* l = std::get_if<Label>(&e)) {
            if (l->klass == "scaling")
                out.note = l->text;
            else if (l->anchor != Anchor::middle && l->text.rfind("masked", 0) != 0)
                numbers.push_back(*l);
        }
        if (std::holds_alternative<GroupEnd>(e)) in_legend = false;
    }
    EXPECT_EQ(numbers.size(), 2u);
    if (numbers.size() == 2) out.lo = std::stod(numbers[0].text), out.hi = std::stod(numbers[1].text);
    return out;
}

Session causal(int n, int d_model, int heads, std::uint64_t seed) {
    Session s = random(n, d_model, heads, seed);
    s.config.mask = Mask::causal;
    return s;
}

TEST(Figure, CausalWeightsOfALongSequenceAreNotOneFlatColour) {
    // 300 causal tokens: the first query's weight is 1, the others' lie near 1/n. On min..max every
    // weight but a few would take the bottom colour; the default clips the top at the 99th
    // percentile of the drawn values (2×2 blocks here: 300 > 256, each the mean of its weights, the
    // first (1 + 0 + 0.5 + 0.5) / 4 = 0.5).
    const Session s = causal(300, 32, 2, 1);
    const Trace t = forward<double>(s.config, s.params);
    const Matrix& w = t.heads[0].weights;
    ASSERT_DOUBLE_EQ(w(0, 0), 1.0);
    FigureStyle o;
    Result<Figure> f = matrix_figure(s, t, {MatrixId::weights, 0}, o);
    ASSERT_TRUE(f);
    LegendRead legend = legend_of(*f.value);
    EXPECT_EQ(legend.lo, 0);
    EXPECT_LT(legend.hi, 0.2);
    EXPECT_GT(legend.hi, 0);
    EXPECT_NE(legend.note.find("99th percentile"), std::string::npos) << legend.note;
    EXPECT_NE(legend.note.find("largest 0.5"), std::string::npos) << legend.note;
    // The top is one of the drawn blocks' values, and at most 1% of the blocks lie above it.
    const int step = 2, blocks = 150;
    int above = 0;
    double nearest = INFINITY;
    for (int r = 0; r < blocks; ++r)
        for (int c = 0; c < blocks; ++c) {
            const double v = w.block(r * step, c * step, step, step).mean();
            above += v > legend.hi * (1 + 1e-3);
            nearest = std::min(nearest, std::abs(v - legend.hi));
        }
    EXPECT_LE(above, blocks * blocks / 100 + 1);
    EXPECT_LT(nearest, legend.hi * 1e-2);
    // The lower triangle's blocks take many colours, not one.
    std::set<std::string> fills;
    for (const Element& e : f.value->elements)
        if (const auto* b = std::get_if<Box>(&e); b && b->klass == "cell") fills.insert(hex(b->fill));
    EXPECT_GT(fills.size(), 50u);
    expect_tidy(*f.value);

    // Asked for, auto is min..max and fixed 0..1, as before.
    o.scaling = Scaling::automatic;
    legend = legend_of(*matrix_figure(s, t, {MatrixId::weights, 0}, o).value);
    EXPECT_EQ(legend.hi, 1);
    EXPECT_EQ(legend.note, "auto");
    o.scaling = Scaling::fixed;
    legend = legend_of(*matrix_figure(s, t, {MatrixId::weights, 0}, o).value);
    EXPECT_EQ(legend.lo, 0);
    EXPECT_EQ(legend.hi, 1);

    // The heads view: one clipped range for both heads, below 1.
    o = FigureStyle{};
    const Figure heads = heads_figure(s, t, o);
    legend = legend_of(heads);
    EXPECT_LT(legend.hi, 0.2);
    EXPECT_NE(legend.note.find("99th percentile"), std::string::npos) << legend.note;
    expect_tidy(heads);
    // The pipeline's thumbnails: the weights' one shows structure too (24×24 blocks of 13×13).
    const Figure pipeline = pipeline_figure(s, t, o);
    bool in_weights = false;
    std::set<std::string> thumb_fills;
    for (const Element& e : pipeline.elements) {
        if (const auto* g = std::get_if<Group>(&e))
            in_weights = g->klass == "node" && g->tooltip.rfind("weights⁽¹⁾", 0) == 0;
        if (const auto* b = std::get_if<Box>(&e); in_weights && b && b->klass == "thumb")
            thumb_fills.insert(hex(b->fill));
    }
    EXPECT_GT(thumb_fills.size(), 30u);

    // The worked example's weights (0.944 and 0.0558) stay on fixed 0..1.
    const Session ex = worked_example();
    const Trace te = forward<double>(ex.config, ex.params);
    legend = legend_of(*matrix_figure(ex, te, {MatrixId::weights, 0}, FigureStyle{}).value);
    EXPECT_EQ(legend.lo, 0);
    EXPECT_EQ(legend.hi, 1);
    EXPECT_EQ(legend.note, "fixed 0..1");
}

// Weights drawn in blocks show each block's mean weight (one rule with the app's textures and the
// model view's thumbnails): a one-hot weight among nearly uniform ones still lifts its block above
// every other, and the figure and each block's tooltip say what a cell is.
TEST(Figure, LargeWeightsAreDrawnInBlocksOfTheirMean) {
    const int n = 512;
    Matrix w(n, n);
    SplitMix64 draw(1);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) w(i, j) = std::exp(0.7 * draw.normal());
        w.row(i) /= w.row(i).sum();
    }
    w.row(100).setZero();
    w(100, 300) = 1;  // one query attends to one key
    Heatmap s;
    s.colors = ColorScale::unit_interval;
    s.cell_name = "w";
    s.style.max_cells = 128;  // 4×4 blocks
    const Figure f = heatmap_figure(w, s);
    const auto root = parse_svg(f);
    ASSERT_TRUE(root);
    EXPECT_EQ(with_class(*root, "rect", "cell").size(), 128u * 128u);
    EXPECT_TRUE(has_text(*root, "each cell is a 4×4 block of the matrix: the mean of its weights"));
    const XmlNode* first = cell(*root, "w[0..3][0..3]: ");
    ASSERT_TRUE(first);
    EXPECT_EQ(title_of(*first), "w[0..3][0..3]: mean " + format_number(w.block(0, 0, 4, 4).mean(), 6));
    const XmlNode* strong = cell(*root, "w[100..103][300..303]: ");
    ASSERT_TRUE(strong);
    EXPECT_EQ(title_of(*strong), "w[100..103][300..303]: mean " + format_number(w.block(100, 300, 4, 4).mean(), 6));
    // The strong block stands out: the largest drawn value, far above the 99th percentile, where
    // the range's top is clipped.
    const LegendRead legend = legend_of(f);
    EXPECT_NE(legend.note.find("largest " + format_number(w.block(100, 300, 4, 4).mean(), 3)), std::string::npos)
        << legend.note;
}

TEST(Figure, WeightsWhoseLargestValueIsNotAnOutlierKeepMinToMax) {
    // Each query puts 0.6 on itself: 2.5% of the cells hold the largest weight, so the 99th
    // percentile is that weight and nothing is clipped.
    Matrix w = Matrix::Constant(40, 40, 0.4 / 39);
    for (int k = 0; k < 40; ++k) w(k, k) = 0.6;
    Heatmap st;
    st.colors = ColorScale::unit_interval;
    LegendRead legend = legend_of(heatmap_figure(w, st));
    EXPECT_DOUBLE_EQ(legend.lo, std::stod(format_number(0.4 / 39, 3)));
    EXPECT_EQ(legend.hi, 0.6);
    EXPECT_EQ(legend.note, "auto");
    // One query at 0.6, the others uniform: clipped at the uniform weight.
    w.setConstant(1.0 / 40);
    w.row(3).setConstant(0.4 / 39);
    w(3, 3) = 0.6;
    legend = legend_of(heatmap_figure(w, st));
    EXPECT_EQ(legend.hi, 0.025);
    EXPECT_EQ(legend.note, "auto, clipped at the 99th percentile (largest 0.6)");
}

// The side of the heads' cells as drawn (cell rects plus the gap between them).
double drawn_cell(const Figure& f) {
    std::vector<double> xs;
    for (const Element& e : f.elements)
        if (const auto* b = std::get_if<Box>(&e); b && b->klass == "cell") xs.push_back(b->x);
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end(), [](double a, double b) { return std::abs(a - b) < 1e-6; }), xs.end());
    return xs.size() > 1 ? xs[1] - xs[0] : 0;
}

TEST(Figure, AHeadsFigureFillsItsBoxAndALargerBoxNeverShrinksIt) {
    for (const auto& [n, heads] : {std::pair{8, 4}, std::pair{300, 2}, std::pair{24, 12}}) {
        const Session s = causal(n, 48, heads, 3);
        const Trace t = forward<double>(s.config, s.params);
        // Chains of boxes, each at least as large as the one before in both directions.
        const std::vector<std::vector<std::pair<double, double>>> chains = {
            {{400, 300}, {800, 600}, {1600, 900}, {3000, 2000}, {6000, 4000}},
            {{300, 900}, {600, 1600}, {1200, 2400}, {1200, 4000}},
            {{1000, 200}, {2000, 400}, {4000, 400}}};
        for (const auto& chain : chains) {
            double last_cell = 0, last_area = 0;
            for (const auto& [w, h] : chain) {
                FigureStyle o;
                o.fit_width = w;
                o.fit_height = h;
                const Figure f = heads_figure(s, t, o);
                const std::string box = std::to_string(n) + "/" + std::to_string(heads) + " in " +
                                        std::to_string(static_cast<int>(w)) + "x" + std::to_string(static_cast<int>(h));
                EXPECT_LE(f.width, w) << box;
                EXPECT_LE(f.height, h) << box;
                EXPECT_GT(std::max(f.width / w, f.height / h), 0.99) << box;  // fills one side
                const double cell = drawn_cell(f);
                EXPECT_GE(cell, last_cell * (1 - 1e-9)) << box;
                EXPECT_GE(f.width * f.height, last_area * (1 - 1e-9)) << box;
                last_cell = cell, last_area = f.width * f.height;
                EXPECT_EQ(std::count_if(f.elements.begin(), f.elements.end(),
                                        [](const Element& e) {
                                            const auto* g = std::get_if<Group>(&e);
                                            return g && g->klass == "heatmap";
                                        }),
                          heads);
            }
        }
    }
    // The reported case: eight tokens, four heads, 3000×2000 is larger than 1600×900's figure.
    const Session s = causal(8, 32, 4, 1);
    const Trace t = forward<double>(s.config, s.params);
    FigureStyle o;
    o.fit_width = 1600, o.fit_height = 900;
    const Figure medium = heads_figure(s, t, o);
    o.fit_width = 3000, o.fit_height = 2000;
    const Figure large = heads_figure(s, t, o);
    EXPECT_GT(large.width, medium.width);
    EXPECT_GT(large.height, medium.height);
    // The pipeline fills its box too, up or down.
    for (const auto& [w, h] : {std::pair{3000.0, 2000.0}, std::pair{600.0, 400.0}}) {
        o.fit_width = w, o.fit_height = h;
        const Figure p = pipeline_figure(s, t, o);
        EXPECT_LE(p.width, w);
        EXPECT_LE(p.height, h);
        EXPECT_GT(std::max(p.width / w, p.height / h), 0.99);
    }
}

TEST(Figure, FormulasNameTheirOperandsAndSquareMatricesOneLabelInterval) {
    Session s = causal(4, 8, 2, 2);
    const Trace t = forward<double>(s.config, s.params);
    FigureStyle o;
    auto notes = [&](MatrixRef ref) {
        std::vector<std::string> out;
        for (const Label& l : labels(*matrix_figure(s, t, ref, o).value, {"note"})) out.push_back(l.text);
        return out;
    };
    EXPECT_EQ(notes({MatrixId::scores, 0}).at(0),
              "scores⁽¹⁾ = scores_raw⁽¹⁾ ÷ √d_k, masked (−∞); rows: queries, columns: keys");
    EXPECT_EQ(notes({MatrixId::weights, 1}).at(0),
              "weights⁽²⁾ = softmax(scores⁽²⁾) by rows; rows: queries, columns: keys");
    EXPECT_EQ(notes({MatrixId::concat, 0}).at(0), "concat = [Z⁽¹⁾ Z⁽²⁾] side by side; rows: tokens");
    o.column_vectors = true;
    o.notation = Notation::ascii;
    EXPECT_EQ(notes({MatrixId::weights, 0}).at(0),
              "weights(1) = softmax(scores(1)) by columns; rows: keys, columns: queries");
    // RoPE on both arrows that rotate, Q → Q_rot and K → K_rot.
    s.config.rope.on = true;
    const Trace tr = forward<double>(s.config, s.params);
    const Figure p = pipeline_figure(s, tr, FigureStyle{});
    int q = 0, k = 0;
    for (const Label& l : labels(p, {"note"})) q += l.text == "RoPE(Q)", k += l.text == "RoPE(K)";
    EXPECT_EQ(q, 2);
    EXPECT_EQ(k, 2);
    expect_tidy(p);
    // 300 tokens: rows and columns labelled at the same tokens.
    const Session big = causal(300, 32, 2, 1);
    const Trace tb = forward<double>(big.config, big.params);
    const Figure heads = heads_figure(big, tb, FigureStyle{});
    std::vector<std::string> rows, cols;
    for (const Element& e : heads.elements) {
        if (std::holds_alternative<GroupEnd>(e)) break;  // the first head
        if (const auto* l = std::get_if<Label>(&e)) {
            if (l->klass == "row-label") rows.push_back(l->text);
            if (l->klass == "col-label") cols.push_back(l->text);
        }
    }
    EXPECT_GT(rows.size(), 3u);
    EXPECT_EQ(rows, cols);
}

TEST(Figure, SvgParsesWithPythonsXmlReader) {
    // An independent parser, where python3 is installed: every figure kind, cells counted by class.
    if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    TempDir dir("attnviz_figure");
    ASSERT_TRUE(dir.created());
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    Heatmap style = weights_style({"<a&b>", "b"});
    const std::vector<std::pair<std::string, Figure>> figures = {{"heatmap",
                                                                  heatmap_figure(Matrix{{0, 1}, {0.5, 0.5}}, style)},
                                                                 {"heads", heads_figure(s, t, {})},
                                                                 {"pipeline", pipeline_figure(s, t, {})}};
    for (const auto& [name, figure] : figures) {
        const std::string path = (dir.path() / (name + ".svg")).string();
        std::ofstream(path) << to_svg(figure);
        const std::string cmd =
            "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
            "n = sum(1 for e in r.iter('{http://www.w3.org/2000/svg}rect') if e.get('class') == "
            "'cell'); sys.exit(0 if n == int(sys.argv[2]) else 3)\" " +
            path + " " +
            (name == "heatmap" ? "4"
             : name == "heads" ? "8"
                               : "0");
        EXPECT_EQ(std::system(cmd.c_str()), 0) << name;
    }
}

}  // namespace
}  // namespace attnviz::core
