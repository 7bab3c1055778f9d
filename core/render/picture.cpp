#include "core/render/picture.hpp"

#include <stb_image_write.h>
#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <tuple>

#include "core/base/file_io.hpp"
#include "core/base/utf8.hpp"

namespace attnviz::core {

namespace {

// ---------------------------------------------------------------------------------------------
// DejaVu Sans's advance widths in font units (2048 to the em), read from DejaVuSans.ttf and
// DejaVuSans-Bold.ttf (fonts-dejavu-core 2.37): ' ' (32) to '~' (126), then the other characters
// the app writes.

constexpr double units_per_em = 2048;
constexpr double cap_height_em = 1493 / units_per_em;

// clang-format off
constexpr std::uint16_t ascii_regular[95] = {
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087,
    2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612,
    1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024,
    1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253,
    1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716};
constexpr std::uint16_t ascii_bold[95] = {
    713, 934, 1067, 1716, 1425, 2052, 1786, 627, 936, 936, 1071, 1716, 778, 850, 778, 748,
    1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 819, 819, 1716, 1716, 1716, 1188,
    2048, 1585, 1561, 1503, 1700, 1399, 1399, 1681, 1714, 762, 762, 1587, 1305, 2038, 1714, 1741,
    1501, 1741, 1577, 1475, 1397, 1663, 1585, 2259, 1579, 1483, 1485, 936, 748, 936, 1716, 1024,
    1024, 1382, 1466, 1214, 1466, 1389, 891, 1466, 1458, 702, 702, 1362, 702, 2134, 1458, 1407,
    1466, 1466, 1010, 1219, 979, 1458, 1335, 1892, 1321, 1335, 1192, 1458, 748, 1458, 1716};
// clang-format on

struct Advance {
    char32_t c;
    std::uint16_t regular, bold;
};
constexpr Advance other_advances[] = {
    {0xB0, 1024, 1024},   {0xB2, 821, 897},     {0xB3, 821, 897},     {0xB7, 651, 778},     {0xB9, 821, 897},
    {0xD7, 1716, 1716},   {0xF7, 1716, 1716},   {0x3A3, 1294, 1399},  {0x1D40, 788, 880},   {0x2013, 1024, 1024},
    {0x2014, 2048, 2048}, {0x2026, 2048, 2048}, {0x2070, 821, 897},   {0x2074, 821, 897},   {0x2075, 821, 897},
    {0x2076, 821, 897},   {0x2077, 821, 897},   {0x2078, 821, 897},   {0x2079, 821, 897},   {0x207D, 503, 590},
    {0x207E, 503, 590},   {0x2080, 821, 897},   {0x2081, 821, 897},   {0x2082, 821, 897},   {0x2192, 1716, 1716},
    {0x2193, 1716, 1716}, {0x2212, 1716, 1716}, {0x221A, 1305, 1366}, {0x221E, 1706, 1706}, {0x2248, 1716, 1716},
    {0x22EF, 2048, 2048}};

double advance_em(char32_t c, bool bold) {
    if (c >= 32 && c < 127) return (bold ? ascii_bold : ascii_regular)[c - 32] / units_per_em;
    for (const Advance& a : other_advances)
        if (a.c == c) return (bold ? a.bold : a.regular) / units_per_em;
    if (c < 32) return 0;
    return 0.6;
}

// ---------------------------------------------------------------------------------------------
// SVG writing

// A coordinate: at most 3 decimals, no trailing zeros.
std::string num(double v) {
    if (!std::isfinite(v)) v = 0;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s;
}

// fill="#rrggbb" plus fill-opacity when not opaque (`what` is "fill", "stroke" or "stop-color").
std::string paint(const char* what, Rgba c) {
    std::string s = std::string(" ") + what + "=\"" + hex(c) + "\"";
    if (c.a != 255) {
        const std::string opacity = std::string(what) == "stop-color" ? "stop-opacity" : std::string(what) + "-opacity";
        s += " " + opacity + "=\"" + num(c.a / 255.0) + "\"";
    }
    return s;
}

std::string klass(const std::string& k) { return k.empty() ? "" : " class=\"" + xml_escape(k) + "\""; }

// ---------------------------------------------------------------------------------------------
// Raster

// The image's pixels (straight-alpha RGBA bytes), blended in double.
struct Canvas {
    int w, h;
    std::vector<std::uint8_t>& px;

    // Source colour c with coverage cov ∈ [0, 1] over the pixel (Porter–Duff "over").
    void blend(int x, int y, Rgba c, double cov) {
        if (x < 0 || y < 0 || x >= w || y >= h || !(cov > 0)) return;
        const double sa = c.a / 255.0 * std::min(cov, 1.0);
        if (sa <= 0) return;
        std::uint8_t* p = &px[(static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + x) * 4];
        const double da = p[3] / 255.0;
        const double oa = sa + da * (1 - sa);
        if (oa <= 0) return;
        auto mix = [&](std::uint8_t s, std::uint8_t d) {
            return static_cast<std::uint8_t>(std::lround((s * sa + d * da * (1 - sa)) / oa));
        };
        p[0] = mix(c.r, p[0]);
        p[1] = mix(c.g, p[1]);
        p[2] = mix(c.b, p[2]);
        p[3] = static_cast<std::uint8_t>(std::lround(oa * 255));
    }
};

double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// How much of pixel (px, py) the rectangle [x0, x1)×[y0, y1) with corner radius r covers: exact
// along straight edges, by the distance from the corner's centre in the rounded corners.
double rect_coverage(int px, int py, double x0, double y0, double x1, double y1, double r) {
    const double cx = clamp01(std::min(px + 1.0, x1) - std::max(static_cast<double>(px), x0));
    const double cy = clamp01(std::min(py + 1.0, y1) - std::max(static_cast<double>(py), y0));
    double cov = cx * cy;
    if (r > 0 && cov > 0) {
        const double mx = px + 0.5, my = py + 0.5;
        const double ccx = mx < x0 + r ? x0 + r : mx > x1 - r ? x1 - r : mx;
        const double ccy = my < y0 + r ? y0 + r : my > y1 - r ? y1 - r : my;
        if (ccx != mx && ccy != my) cov *= clamp01(r + 0.5 - std::hypot(mx - ccx, my - ccy));
    }
    return cov;
}

// The pixel range [lo, hi) touched by [a, b), within [0, limit).
std::pair<int, int> span(double a, double b, int limit) {
    const int lo = static_cast<int>(std::clamp(std::floor(a), 0.0, static_cast<double>(limit)));
    const int hi = static_cast<int>(std::clamp(std::ceil(b), 0.0, static_cast<double>(limit)));
    return {lo, hi};
}

void fill_rect(Canvas& cv, double x0, double y0, double x1, double y1, double r, Rgba c) {
    if (!(x1 > x0 && y1 > y0)) return;
    r = std::min({r, (x1 - x0) / 2, (y1 - y0) / 2});
    const auto [px0, px1] = span(x0, x1, cv.w);
    const auto [py0, py1] = span(y0, y1, cv.h);
    for (int y = py0; y < py1; ++y)
        for (int x = px0; x < px1; ++x) cv.blend(x, y, c, rect_coverage(x, y, x0, y0, x1, y1, r));
}

// The ring between a rectangle grown and one shrunk by half the stroke width.
void stroke_rect(Canvas& cv, double x0, double y0, double x1, double y1, double r, double width, Rgba c) {
    const double half = width / 2;
    const double ox0 = x0 - half, oy0 = y0 - half, ox1 = x1 + half, oy1 = y1 + half;
    const double ix0 = x0 + half, iy0 = y0 + half, ix1 = x1 - half, iy1 = y1 - half;
    const double outer_r = r > 0 ? r + half : 0, inner_r = std::max(r - half, 0.0);
    const auto [px0, px1] = span(ox0, ox1, cv.w);
    const auto [py0, py1] = span(oy0, oy1, cv.h);
    for (int y = py0; y < py1; ++y)
        for (int x = px0; x < px1; ++x) {
            const double outer = rect_coverage(x, y, ox0, oy0, ox1, oy1, outer_r);
            const double inner = ix1 > ix0 && iy1 > iy0 ? rect_coverage(x, y, ix0, iy0, ix1, iy1, inner_r) : 0;
            cv.blend(x, y, c, outer - inner);
        }
}

void draw_line(Canvas& cv, double x1, double y1, double x2, double y2, double width, Rgba c) {
    const double dx = x2 - x1, dy = y2 - y1, len = std::hypot(dx, dy);
    if (!(len > 0) || !(width > 0)) return;
    const double ux = dx / len, uy = dy / len, half = width / 2;
    // A line thinner than a pixel covers each pixel by its width at most.
    const double strength = std::min(width, 1.0), reach = std::max(half, 0.5);
    const auto [px0, px1] = span(std::min(x1, x2) - reach - 1, std::max(x1, x2) + reach + 1, cv.w);
    const auto [py0, py1] = span(std::min(y1, y2) - reach - 1, std::max(y1, y2) + reach + 1, cv.h);
    for (int y = py0; y < py1; ++y)
        for (int x = px0; x < px1; ++x) {
            const double mx = x + 0.5 - x1, my = y + 0.5 - y1;
            const double along = mx * ux + my * uy, across = std::abs(mx * uy - my * ux);
            const double cov_along = clamp01(along + 0.5) * clamp01(len - along + 0.5);
            const double cov_across = clamp01(reach + 0.5 - across);
            cv.blend(x, y, c, strength * cov_along * cov_across);
        }
}

bool inside(const std::vector<Point>& pts, double x, double y) {
    bool in = false;
    for (std::size_t i = 0, j = pts.size() - 1; i < pts.size(); j = i++) {
        const Point &a = pts[i], &b = pts[j];
        if ((a.y > y) != (b.y > y) && x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x) in = !in;
    }
    return in;
}

// Coverage from 4×4 samples a pixel.
void fill_polygon(Canvas& cv, const std::vector<Point>& pts, Rgba c) {
    if (pts.size() < 3) return;
    double x0 = pts[0].x, x1 = x0, y0 = pts[0].y, y1 = y0;
    for (const Point& p : pts) {
        x0 = std::min(x0, p.x);
        x1 = std::max(x1, p.x);
        y0 = std::min(y0, p.y);
        y1 = std::max(y1, p.y);
    }
    const auto [px0, px1] = span(x0, x1, cv.w);
    const auto [py0, py1] = span(y0, y1, cv.h);
    for (int y = py0; y < py1; ++y)
        for (int x = px0; x < px1; ++x) {
            int hits = 0;
            for (int sy = 0; sy < 4; ++sy)
                for (int sx = 0; sx < 4; ++sx) hits += inside(pts, x + (sx + 0.5) / 4, y + (sy + 0.5) / 4);
            cv.blend(x, y, c, hits / 16.0);
        }
}

Rgba gradient_at(const std::vector<ColorStop>& stops, double t) {
    if (stops.empty()) return {0, 0, 0, 0};
    if (t <= stops.front().t) return stops.front().color;
    for (std::size_t k = 1; k < stops.size(); ++k) {
        const ColorStop &a = stops[k - 1], &b = stops[k];
        if (t <= b.t) {
            const double u = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
            auto ch = [u](std::uint8_t p, std::uint8_t q) {
                return static_cast<std::uint8_t>(std::lround(p + (q - p) * u));
            };
            return {ch(a.color.r, b.color.r), ch(a.color.g, b.color.g), ch(a.color.b, b.color.b),
                    ch(a.color.a, b.color.a)};
        }
    }
    return stops.back().color;
}

void fill_gradient(Canvas& cv, double x0, double y0, double x1, double y1, const std::vector<ColorStop>& stops) {
    if (!(x1 > x0 && y1 > y0)) return;
    const auto [px0, px1] = span(x0, x1, cv.w);
    const auto [py0, py1] = span(y0, y1, cv.h);
    for (int x = px0; x < px1; ++x) {
        const Rgba c = gradient_at(stops, (x + 0.5 - x0) / (x1 - x0));
        for (int y = py0; y < py1; ++y) cv.blend(x, y, c, rect_coverage(x, y, x0, y0, x1, y1, 0));
    }
}

// A TrueType face and its rendered glyphs.
struct Face {
    std::string data;
    stbtt_fontinfo info{};
    // (glyph, size in 1/64 px, quarter-pixel shift) → coverage bitmap and its offset.
    struct Bitmap {
        int x0 = 0, y0 = 0, w = 0, h = 0;
        std::vector<unsigned char> alpha;
    };
    std::map<std::tuple<int, long, int>, Bitmap> cache;

    const Bitmap& glyph(int g, double size_px, int quarter) {
        const long key_size = std::lround(size_px * 64);
        auto [it, inserted] = cache.try_emplace({g, key_size, quarter});
        Bitmap& b = it->second;
        if (!inserted) return b;
        const float scale = stbtt_ScaleForMappingEmToPixels(&info, static_cast<float>(size_px));
        const float shift = quarter / 4.0f;
        int x0, y0, x1, y1;
        stbtt_GetGlyphBitmapBoxSubpixel(&info, g, scale, scale, shift, 0, &x0, &y0, &x1, &y1);
        b.x0 = x0;
        b.y0 = y0;
        b.w = std::max(0, x1 - x0);
        b.h = std::max(0, y1 - y0);
        b.alpha.assign(static_cast<std::size_t>(b.w) * static_cast<std::size_t>(b.h), 0);
        if (b.w > 0 && b.h > 0)
            stbtt_MakeGlyphBitmapSubpixel(&info, b.alpha.data(), b.w, b.h, b.w, scale, scale, shift, 0, g);
        return b;
    }
};

Result<std::unique_ptr<Face>> load_face(const std::string& path) {
    using R = Result<std::unique_ptr<Face>>;
    Result<std::string> bytes = read_file(path);
    if (!bytes) {
        Problems p = bytes.problems;
        for (Problem& q : p) {
            q.path = path;
            q.message = "cannot read the font for the figure's text: " + q.message;
        }
        return R::fail(std::move(p));
    }
    auto face = std::make_unique<Face>();
    face->data = std::move(*bytes.value);
    const auto* data = reinterpret_cast<const unsigned char*>(face->data.data());
    const int offset = face->data.size() >= 12 ? stbtt_GetFontOffsetForIndex(data, 0) : -1;
    if (offset < 0 || !stbtt_InitFont(&face->info, data, offset))
        return R::fail({{path, "is not a TrueType font (the figure's text needs one, e.g. DejaVu Sans)"}});
    return R::ok(std::move(face));
}

void draw_label(Canvas& cv, Face& face, const Label& l, double scale) {
    const double size = l.size * scale;
    if (!(size > 0.5)) return;
    const float em = stbtt_ScaleForMappingEmToPixels(&face.info, static_cast<float>(size));
    std::vector<int> glyphs;
    double width = 0;
    for (char32_t c : decode_utf8(l.text)) {
        const int g = stbtt_FindGlyphIndex(&face.info, static_cast<int>(c));
        if (g == 0) continue;  // not in the font
        int advance, bearing;
        stbtt_GetGlyphHMetrics(&face.info, g, &advance, &bearing);
        glyphs.push_back(g);
        width += advance * em;
    }
    // Laid out as a horizontal label at (x, y); a vertical one is then turned a quarter
    // counterclockwise about that point: (px + u, py + v) goes to (px + v, py − u).
    const int px = static_cast<int>(std::lround(l.x * scale)), py = static_cast<int>(std::lround(l.y * scale));
    double pen = l.x * scale;
    if (l.anchor == Anchor::middle) pen -= width / 2;
    if (l.anchor == Anchor::end) pen -= width;
    const int base = static_cast<int>(std::lround(baseline_y(l.y, l.baseline, l.size) * scale));
    for (int g : glyphs) {
        const double whole = std::floor(pen);
        const int quarter = std::min(3, static_cast<int>((pen - whole) * 4));
        const Face::Bitmap& b = face.glyph(g, size, quarter);
        const int ox = static_cast<int>(whole) + b.x0, oy = base + b.y0;
        for (int y = 0; y < b.h; ++y)
            for (int x = 0; x < b.w; ++x) {
                const unsigned char a = b.alpha[static_cast<std::size_t>(y) * static_cast<std::size_t>(b.w) + x];
                if (!a) continue;
                if (l.vertical)
                    cv.blend(px + (oy + y - py), py - (ox + x - px), l.color, a / 255.0);
                else
                    cv.blend(ox + x, oy + y, l.color, a / 255.0);
            }
        int advance, bearing;
        stbtt_GetGlyphHMetrics(&face.info, g, &advance, &bearing);
        pen += advance * em;
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<char32_t> decode_utf8(std::string_view s) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    for (std::size_t k = 0; k < s.size();) {
        const auto b = static_cast<unsigned char>(s[k]);
        int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
        bool ok = len > 0 && k + static_cast<std::size_t>(len) <= s.size();
        for (int i = 1; ok && i < len; ++i) {
            const auto next = static_cast<unsigned char>(s[k + static_cast<std::size_t>(i)]);
            ok = (next & 0xC0) == 0x80;
            c = (c << 6) | (next & 0x3F);
        }
        // Overlong forms, surrogates and values past U+10FFFF are invalid too.
        constexpr char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (ok && (c < least[len] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)) ok = false;
        out.push_back(ok ? c : 0xFFFD);
        k += ok ? static_cast<std::size_t>(len) : 1;
    }
    return out;
}

double text_width(std::string_view text, double size, bool bold) {
    double em = 0;
    for (char32_t c : decode_utf8(text)) em += advance_em(c, bold);
    return em * size;
}

double baseline_y(double y, Baseline baseline, double size) {
    switch (baseline) {
        case Baseline::alphabetic: return y;
        case Baseline::middle: return y + cap_height_em / 2 * size;
        case Baseline::top: return y + cap_height_em * size;
    }
    return y;
}

std::string fit_text(const std::string& text, double width, double size, bool bold) {
    if (text_width(text, size, bold) <= width) return text;
    const std::vector<char32_t> cs = decode_utf8(text);
    const double ellipsis = advance_em(0x2026, bold) * size;
    double used = 0;
    std::string out;
    for (char32_t c : cs) {
        const double w = advance_em(c, bold) * size;
        if (used + w + ellipsis > width) break;
        append_utf8(out, c);
        used += w;
    }
    if (ellipsis > width) return "";
    return out + "…";
}

void scale_figure(Figure& f, double k) {
    f.width *= k;
    f.height *= k;
    for (Element& e : f.elements) {
        if (auto* b = std::get_if<Box>(&e)) {
            b->x *= k, b->y *= k, b->w *= k, b->h *= k, b->stroke_width *= k, b->radius *= k;
        } else if (auto* l = std::get_if<Label>(&e)) {
            l->x *= k, l->y *= k, l->size *= k;
        } else if (auto* line = std::get_if<Line>(&e)) {
            line->x1 *= k, line->y1 *= k, line->x2 *= k, line->y2 *= k, line->width *= k;
        } else if (auto* p = std::get_if<Polygon>(&e)) {
            for (Point& q : p->points) q.x *= k, q.y *= k;
        } else if (auto* g = std::get_if<Gradient>(&e)) {
            g->x *= k, g->y *= k, g->w *= k, g->h *= k;
        }
    }
}

double fit_figure(Figure& f, double width, double height) {
    double k = 0;
    if (width > 0 && f.width > 0) k = width / f.width;
    if (height > 0 && f.height > 0) k = k > 0 ? std::min(k, height / f.height) : height / f.height;
    if (!(k > 0) || !std::isfinite(k)) return 1;
    scale_figure(f, k);
    // Rounding must not take the figure a hair past the box (an image a pixel larger).
    if (width > 0) f.width = std::min(f.width, width);
    if (height > 0) f.height = std::min(f.height, height);
    return k;
}

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : decode_utf8(text)) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:
                // XML 1.0 allows tab, newline and carriage return below U+0020, and no U+FFFE/FFFF.
                if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF) break;
                append_utf8(out, c);
        }
    }
    return out;
}

std::string to_svg(const Figure& f) {
    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    s += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(f.width) + "\" height=\"" +
         num(f.height) + "\" viewBox=\"0 0 " + num(f.width) + " " + num(f.height) + "\">\n";
    if (!f.title.empty()) s += "<title>" + xml_escape(f.title) + "</title>\n";
    // One gradient definition per Gradient, in order: g0, g1, …
    std::string defs;
    int gradients = 0;
    for (const Element& e : f.elements)
        if (const auto* g = std::get_if<Gradient>(&e)) {
            defs += "<linearGradient id=\"g" + std::to_string(gradients++) + "\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">";
            for (const ColorStop& stop : g->stops)
                defs += "<stop offset=\"" + num(stop.t) + "\"" + paint("stop-color", stop.color) + "/>";
            defs += "</linearGradient>\n";
        }
    if (!defs.empty()) s += "<defs>\n" + defs + "</defs>\n";
    if (f.background.a > 0)
        s += "<rect x=\"0\" y=\"0\" width=\"" + num(f.width) + "\" height=\"" + num(f.height) + "\"" +
             paint("fill", f.background) + "/>\n";
    gradients = 0;
    std::vector<bool> crisp_groups;  // the open groups: whether each says crispEdges
    for (const Element& e : f.elements) {
        if (const auto* b = std::get_if<Box>(&e)) {
            s += "<rect" + klass(b->klass) + " x=\"" + num(b->x) + "\" y=\"" + num(b->y) + "\" width=\"" + num(b->w) +
                 "\" height=\"" + num(b->h) + "\"";
            if (b->radius > 0) s += " rx=\"" + num(b->radius) + "\"";
            s += paint("fill", b->fill);
            if (b->stroke) s += paint("stroke", *b->stroke) + " stroke-width=\"" + num(b->stroke_width) + "\"";
            if (b->crisp && (crisp_groups.empty() || !crisp_groups.back())) s += " shape-rendering=\"crispEdges\"";
            s += b->tooltip.empty() ? "/>\n" : "><title>" + xml_escape(b->tooltip) + "</title></rect>\n";
        } else if (const auto* l = std::get_if<Label>(&e)) {
            s += "<text" + klass(l->klass) + " x=\"" + num(l->x) + "\" y=\"" +
                 num(baseline_y(l->y, l->baseline, l->size)) +
                 "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"" + num(l->size) + "\"";
            if (l->bold) s += " font-weight=\"bold\"";
            if (l->anchor != Anchor::start)
                s += std::string(" text-anchor=\"") + (l->anchor == Anchor::middle ? "middle" : "end") + "\"";
            if (l->vertical) s += " transform=\"rotate(-90 " + num(l->x) + " " + num(l->y) + ")\"";
            s += paint("fill", l->color) + ">" + xml_escape(l->text) + "</text>\n";
        } else if (const auto* line = std::get_if<Line>(&e)) {
            s += "<line x1=\"" + num(line->x1) + "\" y1=\"" + num(line->y1) + "\" x2=\"" + num(line->x2) + "\" y2=\"" +
                 num(line->y2) + "\"" + paint("stroke", line->color) + " stroke-width=\"" + num(line->width) + "\"/>\n";
        } else if (const auto* p = std::get_if<Polygon>(&e)) {
            s += "<polygon points=\"";
            for (std::size_t k = 0; k < p->points.size(); ++k)
                s += (k ? " " : "") + num(p->points[k].x) + "," + num(p->points[k].y);
            s += "\"" + paint("fill", p->fill) + "/>\n";
        } else if (const auto* g = std::get_if<Gradient>(&e)) {
            s += "<rect x=\"" + num(g->x) + "\" y=\"" + num(g->y) + "\" width=\"" + num(g->w) + "\" height=\"" +
                 num(g->h) + "\" fill=\"url(#g" + std::to_string(gradients++) + ")\"/>\n";
        } else if (const auto* group = std::get_if<Group>(&e)) {
            s += "<g" + klass(group->klass) + (group->crisp ? " shape-rendering=\"crispEdges\"" : "") + ">";
            crisp_groups.push_back(group->crisp || (!crisp_groups.empty() && crisp_groups.back()));
            if (!group->tooltip.empty()) s += "<title>" + xml_escape(group->tooltip) + "</title>";
            s += "\n";
        } else if (std::holds_alternative<GroupEnd>(e)) {
            s += "</g>\n";
            if (!crisp_groups.empty()) crisp_groups.pop_back();
        }
    }
    s += "</svg>\n";
    return s;
}

std::string bold_font_path(const std::string& regular) {
    const std::string ext = ".ttf";
    if (regular.size() < ext.size() || regular.compare(regular.size() - ext.size(), ext.size(), ext) != 0) return "";
    return regular.substr(0, regular.size() - ext.size()) + "-Bold.ttf";
}

Result<Image> rasterize(const Figure& f, double scale, const std::string& font_path) {
    using R = Result<Image>;
    if (!(scale > 0) || !std::isfinite(scale)) return R::fail({{"", "the scale must be a positive number"}});
    if (!(f.width > 0) || !(f.height > 0) || !std::isfinite(f.width) || !std::isfinite(f.height))
        return R::fail({{"", "the figure has no size"}});
    const double w = std::ceil(f.width * scale - 1e-6), h = std::ceil(f.height * scale - 1e-6);
    if (w > max_image_side || h > max_image_side || w * h > static_cast<double>(max_image_pixels))
        return R::fail(
            {{"", "the image would be " + num(w) + "×" + num(h) + " pixels, over the limit of " +
                      std::to_string(max_image_side) + " a side and " + std::to_string(max_image_pixels / (1 << 20)) +
                      " million pixels in all; lower the scale or the size"}});

    // The fonts, only when there is text.
    std::unique_ptr<Face> regular, bold;
    bool any_bold = false, any_text = false;
    for (const Element& e : f.elements)
        if (const auto* l = std::get_if<Label>(&e); l && !l->text.empty()) {
            any_text = true;
            any_bold = any_bold || l->bold;
        }
    if (any_text) {
        Result<std::unique_ptr<Face>> face = load_face(font_path);
        if (!face) return R::fail(std::move(face.problems));
        regular = std::move(*face.value);
        if (any_bold)
            if (const std::string path = bold_font_path(font_path); !path.empty())
                if (Result<std::unique_ptr<Face>> b = load_face(path)) bold = std::move(*b.value);
    }

    Image image;
    image.width = static_cast<int>(w);
    image.height = static_cast<int>(h);
    image.rgba.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4);
    for (std::size_t k = 0; k < image.rgba.size(); k += 4) {
        image.rgba[k] = f.background.r;
        image.rgba[k + 1] = f.background.g;
        image.rgba[k + 2] = f.background.b;
        image.rgba[k + 3] = f.background.a;
    }
    Canvas cv{image.width, image.height, image.rgba};
    const double s = scale;
    for (const Element& e : f.elements) {
        if (const auto* b = std::get_if<Box>(&e)) {
            double x0 = b->x * s, y0 = b->y * s, x1 = (b->x + b->w) * s, y1 = (b->y + b->h) * s;
            if (b->crisp) x0 = std::round(x0), y0 = std::round(y0), x1 = std::round(x1), y1 = std::round(y1);
            fill_rect(cv, x0, y0, x1, y1, b->radius * s, b->fill);
            if (b->stroke) stroke_rect(cv, x0, y0, x1, y1, b->radius * s, b->stroke_width * s, *b->stroke);
        } else if (const auto* l = std::get_if<Label>(&e)) {
            if (!l->text.empty()) draw_label(cv, l->bold && bold ? *bold : *regular, *l, s);
        } else if (const auto* line = std::get_if<Line>(&e)) {
            draw_line(cv, line->x1 * s, line->y1 * s, line->x2 * s, line->y2 * s, line->width * s, line->color);
        } else if (const auto* p = std::get_if<Polygon>(&e)) {
            std::vector<Point> pts = p->points;
            for (Point& q : pts) q.x *= s, q.y *= s;
            fill_polygon(cv, pts, p->fill);
        } else if (const auto* g = std::get_if<Gradient>(&e)) {
            fill_gradient(cv, g->x * s, g->y * s, (g->x + g->w) * s, (g->y + g->h) * s, g->stops);
        }
    }
    return R::ok(std::move(image));
}

std::string png_bytes(const Image& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgba.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4)
        return "";
    // stbi_write_png_to_mem is not declared in the header; the callback form hands the bytes over.
    std::string out;
    auto append = [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
    };
    if (!stbi_write_png_to_func(append, &out, image.width, image.height, 4, image.rgba.data(), image.width * 4))
        return "";
    return out;
}

Result<std::string> figure_png(const Figure& figure, double scale, const std::string& font_path) {
    Result<Image> image = rasterize(figure, scale, font_path);
    if (!image) return Result<std::string>::fail(std::move(image.problems));
    std::string png = png_bytes(*image.value);
    if (png.empty()) return Result<std::string>::fail({{"", "cannot encode the PNG"}});
    return Result<std::string>::ok(std::move(png));
}

}  // namespace attnviz::core
