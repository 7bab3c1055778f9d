// ui_check REPORT.json SCREENSHOT.png [CHECK...]: checks a screenshot against the draw report the
// app wrote beside it (attnviz --screenshot FILE --report REPORT), so a screenshot test fails for
// real reasons, not only for a blank image. Checks:
//   layout            the windows tile the area between the menu bar and the status bar: each lies
//                     inside the window, together they cover ≥ 98 % of it, none overlaps another
//   NAME:ROW:COL=TEXT some heatmap printed TEXT in cell (ROW, COL) of the matrix NAME (ASCII label,
//                     e.g. weights(1):0:1=0.0558), and the screenshot shows ink there: the cell's
//                     pixels are not one flat colour
//   window=TITLE      a window of that title was drawn (!window=TITLE: none was)
//   item=NAME         an item of that name (a field, a button, a token of the head view) was drawn
//                     inside the window, and the screenshot shows something there: its pixels are
//                     not one flat colour (!item=NAME: none was)
//   varied            every heatmap of at least 32×32 px shows its values in many colours: at least
//                     16 distinct colours spanning more than a quarter of a channel's range (at large
//                     n a flat square means the colour scale hides the values)
//   calm=PREFIX[@WINDOW]  every heatmap whose matrix name starts with PREFIX (and, with @WINDOW, that
//                     lies in the window of that title), of nearly uniform weights,
//                     looks even and unsaturated: 90% of its pixels lie within 48 of its median colour
//                     in every channel, and the median is not near the top of viridis (its yellow end
//                     has a blue channel under 80; the colours a uniform head takes are purples and blues)
//   readable=WINDOW[:PX]  every heatmap drawn wholly inside the window of that title prints a number in
//                     each of its cells (its shape taken from the largest row and column printed), and
//                     its cells are at least PX pixels (default 20): small matrices use their room
//   fills=WINDOW:P    the heatmaps in that window reach at least P% of its width or of its height: cells
//                     grew until the room ran out one way
//   within=WINDOW     no heatmap starting in that window runs past its right edge (they wrap)
//   inside=NAME@WINDOW  the item or heatmap NAME lies wholly inside that window (not cut by its edges)
//   ground=WINDOW=#RRGGBB  the colour most of that window's pixels have (its background: the theme's)
//                     is this one, within 8 in each channel
//   ink=WINDOW=#RRGGBB  at least 1 % of that window's pixels have this colour (the theme's text),
//                     within 8 in each channel: its text is drawn with the font's glyphs
//   value=NAME=NUMBER the report's value NAME (a number a panel showed) is NUMBER, within 0.01
//   uncut             no label the report lists (a heatmap's row and column labels, the status bar's
//                     line and message) was cut: each was drawn whole, inside the window
// Exits 0 when every check passes, 1 otherwise, printing what failed.
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

struct Box {
    double x0, y0, x1, y1;
    double area() const { return std::max(0.0, x1 - x0) * std::max(0.0, y1 - y0); }
};

Box intersect(const Box& a, const Box& b) {
    return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

int check_layout(const json& report) {
    const double w = report["display"][0], h = report["display"][1];
    std::vector<std::pair<std::string, Box>> windows;
    for (const json& win : report.value("windows", json::array())) {
        const double x = win["pos"][0], y = win["pos"][1], ww = win["size"][0], wh = win["size"][1];
        windows.push_back({win["title"], {x, y, x + ww, y + wh}});
    }
    int failures = 0;
    if (windows.empty()) {
        std::printf("layout: no windows were drawn\n");
        return 1;
    }
    // The work area: from the top of the highest window to the bottom of the lowest (the menu bar
    // and the status bar are outside it).
    double top = h, bottom = 0;
    for (const auto& [title, b] : windows) {
        top = std::min(top, b.y0);
        bottom = std::max(bottom, b.y1);
        if (b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > w + 0.5 || b.y1 > h + 0.5) {
            std::printf("layout: window \"%s\" (%.0f,%.0f)-(%.0f,%.0f) is not inside the %gx%g window\n", title.c_str(),
                        b.x0, b.y0, b.x1, b.y1, w, h);
            ++failures;
        }
    }
    const Box area{0, top, w, bottom};
    double covered = 0;
    for (size_t a = 0; a < windows.size(); ++a) {
        covered += intersect(windows[a].second, area).area();
        for (size_t b = a + 1; b < windows.size(); ++b) {
            const double overlap = intersect(windows[a].second, windows[b].second).area();
            if (overlap > 4 * std::max(w, h)) {  // more than a shared edge
                std::printf("layout: \"%s\" and \"%s\" overlap by %.0f px²\n", windows[a].first.c_str(),
                            windows[b].first.c_str(), overlap);
                ++failures;
            }
        }
    }
    const double share = covered / area.area();
    std::printf("layout: %zu windows cover %.1f%% of the %gx%g work area\n", windows.size(), 100 * share, w,
                bottom - top);
    if (share < 0.98) {
        std::printf("layout: the windows leave %.1f%% of the work area empty\n", 100 * (1 - share));
        ++failures;
    }
    if (top > h * 0.1 || bottom < h * 0.9) {
        std::printf("layout: the windows span only rows %.0f to %.0f of %g\n", top, bottom, h);
        ++failures;
    }
    return failures;
}

// "tabs": every tab ("tab: TITLE" items) lies inside a window, none scrolled past or cut at its
// right edge (a tab strip wider than its place); and the workspace bar's tabs inside the display.
int check_tabs(const json& report) {
    std::vector<Box> windows;
    for (const json& win : report.value("windows", json::array())) {
        const double x = win["pos"][0], y = win["pos"][1], ww = win["size"][0], wh = win["size"][1];
        windows.push_back({x, y, x + ww, y + wh});
    }
    const double display_w = report["display"][0];
    int failures = 0, tabs = 0;
    for (const json& item : report.value("items", json::array())) {
        const std::string name = item.value("name", "");
        const Box b{item["min"][0], item["min"][1], item["max"][0], item["max"][1]};
        if (name.rfind("workspace: ", 0) == 0 && b.x1 > display_w + 0.5) {
            std::printf("tabs: \"%s\" ends at %.0f, past the %g px display\n", name.c_str(), b.x1, display_w);
            ++failures;
        }
        if (name.rfind("tab: ", 0) != 0) continue;
        ++tabs;
        const bool inside = std::any_of(windows.begin(), windows.end(), [&](const Box& w) {
            return b.x0 >= w.x0 - 0.5 && b.x1 <= w.x1 + 0.5 && b.y0 >= w.y0 - 0.5 && b.y1 <= w.y1 + 0.5;
        });
        if (!inside) {
            std::printf("tabs: \"%s\" (%.0f,%.0f)-(%.0f,%.0f) is not inside its window\n", name.c_str(), b.x0, b.y0,
                        b.x1, b.y1);
            ++failures;
        }
    }
    std::printf("tabs: %d tabs, %d outside their window\n", tabs, failures);
    return failures;
}

// "workspace=NAME": the report's workspace.
int check_workspace(const json& report, const std::string& name) {
    const std::string shown = report.value("workspace", "");
    if (shown == name) return 0;
    std::printf("workspace: \"%s\" shown, \"%s\" expected\n", shown.c_str(), name.c_str());
    return 1;
}

// Whether the middle of a cell shows text: a few pixels there differ clearly from the cell's
// colour (the edges, `margin` of each side, are left out: selection outlines are drawn there).
bool has_ink(const unsigned char* pixels, int w, int h, const Box& cell, double margin = 0.2) {
    const double dx = (cell.x1 - cell.x0) * margin, dy = (cell.y1 - cell.y0) * margin;
    const Box b{cell.x0 + dx, cell.y0 + dy, cell.x1 - dx, cell.y1 - dy};
    std::map<unsigned, int> colours;
    std::vector<unsigned> all;
    for (int y = std::max(0, int(b.y0)); y < std::min(h, int(b.y1)); ++y)
        for (int x = std::max(0, int(b.x0)); x < std::min(w, int(b.x1)); ++x) {
            const unsigned char* p = pixels + 4 * (static_cast<size_t>(y) * w + x);
            const unsigned c = (unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2];
            ++colours[c];
            all.push_back(c);
        }
    if (all.empty()) return false;
    unsigned background = 0;
    int most = 0;
    for (const auto& [c, n] : colours)
        if (n > most) most = n, background = c;
    auto channel = [](unsigned c, int k) { return static_cast<int>((c >> (8 * k)) & 0xFF); };
    int ink = 0;
    for (unsigned c : all) {
        int diff = 0;
        for (int k = 0; k < 3; ++k) diff = std::max(diff, std::abs(channel(c, k) - channel(background, k)));
        if (diff > 60) ++ink;
    }
    return ink >= 6;
}

int check_varied(const json& report, const unsigned char* pixels, int w, int h) {
    int failures = 0, checked = 0;
    for (const json& m : report.value("heatmaps", json::array())) {
        const Box b{m["min"][0], m["min"][1], m["max"][0], m["max"][1]};
        if (b.x1 - b.x0 < 32 || b.y1 - b.y0 < 32) continue;
        ++checked;
        std::map<unsigned, int> colours;
        int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
        for (int y = std::max(0, int(b.y0) + 1); y < std::min(h, int(b.y1) - 1); ++y)
            for (int x = std::max(0, int(b.x0) + 1); x < std::min(w, int(b.x1) - 1); ++x) {
                const unsigned char* p = pixels + 4 * (static_cast<size_t>(y) * w + x);
                ++colours[(unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2]];
                for (int k = 0; k < 3; ++k) lo[k] = std::min<int>(lo[k], p[k]), hi[k] = std::max<int>(hi[k], p[k]);
            }
        const int spread = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
        if (colours.size() < 16 || spread <= 64) {
            std::printf("varied: heatmap %s shows %zu colours spanning %d of 255: nearly flat\n",
                        m["matrix"].get<std::string>().c_str(), colours.size(), spread);
            ++failures;
        }
    }
    if (checked == 0) {
        std::printf("varied: no heatmap of at least 32x32 px was drawn\n");
        return 1;
    }
    if (failures == 0) std::printf("varied: %d heatmaps, each in many colours\n", checked);
    return failures;
}

// The rectangle of the window of this title; an empty box when none was drawn.
Box window_box(const json& report, const std::string& title) {
    for (const json& win : report.value("windows", json::array()))
        if (win["title"] == title) {
            const double x = win["pos"][0], y = win["pos"][1];
            return {x, y, x + win["size"][0].get<double>(), y + win["size"][1].get<double>()};
        }
    return {0, 0, 0, 0};
}

int check_calm(const json& report, const unsigned char* pixels, int w, int h, const std::string& spec) {
    const size_t at = spec.find('@');
    const std::string prefix = spec.substr(0, at);
    const Box inside = at == std::string::npos ? Box{0, 0, double(w), double(h)}
                                               : window_box(report, spec.substr(at + 1));
    int failures = 0, checked = 0;
    for (const json& m : report.value("heatmaps", json::array())) {
        const std::string name = m["matrix"];
        if (name.rfind(prefix, 0) != 0) continue;
        const Box b{m["min"][0], m["min"][1], m["max"][0], m["max"][1]};
        const double cx = (b.x0 + b.x1) / 2, cy = (b.y0 + b.y1) / 2;
        if (cx < inside.x0 || cx > inside.x1 || cy < inside.y0 || cy > inside.y1) continue;
        std::vector<int> channel[3];
        for (int y = std::max(0, int(b.y0) + 1); y < std::min(h, int(b.y1) - 1); ++y)
            for (int x = std::max(0, int(b.x0) + 1); x < std::min(w, int(b.x1) - 1); ++x)
                for (int k = 0; k < 3; ++k) channel[k].push_back(pixels[4 * (static_cast<size_t>(y) * w + x) + k]);
        if (channel[0].size() < 64) continue;
        ++checked;
        int median[3], within = static_cast<int>(channel[0].size());
        for (int k = 0; k < 3; ++k) {
            std::vector<int> sorted = channel[k];
            std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
            median[k] = sorted[sorted.size() / 2];
        }
        int outside = 0;
        for (size_t p = 0; p < channel[0].size(); ++p)
            for (int k = 0; k < 3; ++k)
                if (std::abs(channel[k][p] - median[k]) > 48) {
                    ++outside;
                    break;
                }
        const double share = 1.0 * (within - outside) / within;
        const bool even = share >= 0.9, unsaturated = median[2] >= 80;
        std::printf("calm: heatmap %s: %.0f%% of its pixels near its median colour (%d,%d,%d)%s\n", name.c_str(),
                    100 * share, median[0], median[1], median[2],
                    even && unsaturated ? ""
                    : even              ? ": near the top of the colormap (saturated)"
                                        : ": uneven");
        failures += !(even && unsaturated);
    }
    if (checked == 0) {
        std::printf("calm: no heatmap named %s* was drawn%s\n", prefix.c_str(),
                    at == std::string::npos ? "" : (" in " + spec.substr(at + 1)).c_str());
        return 1;
    }
    return failures;
}

bool contains(const Box& outer, const Box& inner, double slack = 0.5) {
    return inner.x0 >= outer.x0 - slack && inner.y0 >= outer.y0 - slack && inner.x1 <= outer.x1 + slack &&
           inner.y1 <= outer.y1 + slack;
}

Box box_of(const json& entry) { return {entry["min"][0], entry["min"][1], entry["max"][0], entry["max"][1]}; }

int check_readable(const json& report, const std::string& spec) {
    const size_t colon = spec.rfind(':');
    const bool has_px = colon != std::string::npos && colon + 1 < spec.size() &&
                        spec.find_first_not_of("0123456789.", colon + 1) == std::string::npos;
    const std::string title = has_px ? spec.substr(0, colon) : spec;
    const double min_px = has_px ? std::stod(spec.substr(colon + 1)) : 20;
    const Box window = window_box(report, title);
    int failures = 0, checked = 0;
    for (const json& m : report.value("heatmaps", json::array())) {
        const Box b = box_of(m);
        if (!contains(window, b) || b.area() <= 0) continue;
        ++checked;
        const std::string name = m["matrix"];
        std::set<std::pair<int, int>> cells;
        int rows = 0, cols = 0;
        double smallest = 1e9;
        for (const json& n : report.value("numbers", json::array())) {
            const Box c = box_of(n);
            if (n["matrix"] != name || !contains(b, c, 1.5)) continue;
            const int row = n["row"], col = n["col"];
            cells.insert(std::make_pair(row, col));
            rows = std::max(rows, row + 1);
            cols = std::max(cols, col + 1);
            smallest = std::min({smallest, c.x1 - c.x0 + 1, c.y1 - c.y0 + 1});  // the cell less its 1-pixel gap
        }
        if (cells.empty()) {
            std::printf("readable: heatmap %s in \"%s\" prints no number (colour only, %.0fx%.0f px)\n", name.c_str(),
                        title.c_str(), b.x1 - b.x0, b.y1 - b.y0);
            ++failures;
        } else if (static_cast<int>(cells.size()) < rows * cols) {
            std::printf("readable: heatmap %s in \"%s\" prints %zu of its %dx%d cells\n", name.c_str(), title.c_str(),
                        cells.size(), rows, cols);
            ++failures;
        } else if (smallest < min_px) {
            std::printf("readable: heatmap %s in \"%s\" has cells of %.0f px, under %g\n", name.c_str(), title.c_str(),
                        smallest, min_px);
            ++failures;
        }
    }
    if (checked == 0) {
        std::printf("readable: no heatmap lies wholly inside \"%s\"\n", title.c_str());
        return 1;
    }
    if (failures == 0) std::printf("readable: %d heatmaps in \"%s\", every cell numbered\n", checked, title.c_str());
    return failures;
}

// The heatmaps that start inside a window (their top left corner in it), each clipped to it.
std::vector<std::pair<std::string, Box>> heatmaps_in(const json& report, const Box& window) {
    std::vector<std::pair<std::string, Box>> out;
    for (const json& m : report.value("heatmaps", json::array())) {
        const Box b = box_of(m);
        if (b.x0 >= window.x0 - 0.5 && b.x0 < window.x1 && b.y0 >= window.y0 - 0.5 && b.y0 < window.y1)
            out.push_back({m["matrix"], b});
    }
    return out;
}

int check_fills(const json& report, const std::string& spec) {
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos) {
        std::printf("bad check \"fills=%s\": expected WINDOW:PERCENT\n", spec.c_str());
        return 1;
    }
    const std::string title = spec.substr(0, colon);
    const double wanted = std::stod(spec.substr(colon + 1)) / 100;
    const Box window = window_box(report, title);
    double right = window.x0, bottom = window.y0;
    for (const auto& [name, b] : heatmaps_in(report, window)) {
        right = std::max(right, std::min(b.x1, window.x1));
        bottom = std::max(bottom, std::min(b.y1, window.y1));
    }
    const double wide = (right - window.x0) / (window.x1 - window.x0),
                 high = (bottom - window.y0) / (window.y1 - window.y0);
    std::printf("fills: the heatmaps of \"%s\" reach %.0f%% of its width and %.0f%% of its height\n", title.c_str(),
                100 * wide, 100 * high);
    if (std::max(wide, high) < wanted) {
        std::printf("fills: under %.0f%% both ways: cells could have grown\n", 100 * wanted);
        return 1;
    }
    return 0;
}

int check_within(const json& report, const std::string& title) {
    const Box window = window_box(report, title);
    int failures = 0;
    const auto in = heatmaps_in(report, window);
    for (const auto& [name, b] : in)
        if (b.x1 > window.x1 + 0.5) {
            std::printf("within: heatmap %s runs %.0f px past the right edge of \"%s\"\n", name.c_str(),
                        b.x1 - window.x1, title.c_str());
            ++failures;
        }
    if (in.empty()) {
        std::printf("within: no heatmap was drawn in \"%s\"\n", title.c_str());
        return 1;
    }
    if (failures == 0) std::printf("within: %zu heatmaps inside the width of \"%s\"\n", in.size(), title.c_str());
    return failures;
}

int check_inside(const json& report, const std::string& spec) {
    const size_t at = spec.rfind('@');
    if (at == std::string::npos) {
        std::printf("bad check \"inside=%s\": expected NAME@WINDOW\n", spec.c_str());
        return 1;
    }
    const std::string name = spec.substr(0, at), title = spec.substr(at + 1);
    const Box window = window_box(report, title);
    for (const char* list : {"items", "heatmaps"})
        for (const json& entry : report.value(list, json::array())) {
            if (entry.value(std::string(list) == "items" ? "name" : "matrix", "") != name) continue;
            const Box b = box_of(entry);
            if (!contains(window, b)) continue;
            std::printf("inside: %s lies inside \"%s\"\n", name.c_str(), title.c_str());
            return 0;
        }
    std::printf("inside: %s was not drawn wholly inside \"%s\" (cut by its edges, or not drawn)\n", name.c_str(),
                title.c_str());
    return 1;
}

int check_number(const json& report, const unsigned char* pixels, int w, int h, const std::string& spec) {
    const size_t eq = spec.rfind('=');
    const size_t c2 = spec.rfind(':', eq), c1 = spec.rfind(':', c2 - 1);
    if (eq == std::string::npos || c2 == std::string::npos || c1 == std::string::npos) {
        std::printf("bad check \"%s\": expected NAME:ROW:COL=TEXT\n", spec.c_str());
        return 1;
    }
    const std::string name = spec.substr(0, c1), text = spec.substr(eq + 1);
    const int row = std::stoi(spec.substr(c1 + 1, c2 - c1 - 1)), col = std::stoi(spec.substr(c2 + 1, eq - c2 - 1));
    int found = 0, inked = 0;
    std::vector<std::string> printed;
    for (const json& n : report.value("numbers", json::array())) {
        if (n["matrix"] != name || n["row"] != row || n["col"] != col) continue;
        printed.push_back(n["text"]);
        if (n["text"] != text) continue;
        ++found;
        const Box b{n["min"][0], n["min"][1], n["max"][0], n["max"][1]};
        if (has_ink(pixels, w, h, b)) ++inked;
    }
    if (found == 0) {
        std::string seen;
        for (const std::string& s : printed) seen += " \"" + s + "\"";
        std::printf("%s: not printed (printed there:%s)\n", spec.c_str(), seen.empty() ? " nothing" : seen.c_str());
        return 1;
    }
    if (inked < found) {
        std::printf("%s: printed %d times, but %d of those cells show no text in the screenshot\n", spec.c_str(), found,
                    found - inked);
        return 1;
    }
    std::printf("%s: printed %d times, visible each time\n", spec.c_str(), found);
    return 0;
}

int check_window(const json& report, const std::string& title, bool wanted) {
    bool drawn = false;
    for (const json& win : report.value("windows", json::array())) drawn = drawn || win["title"] == title;
    if (drawn != wanted) {
        std::printf("window \"%s\" was %s\n", title.c_str(), drawn ? "drawn" : "not drawn");
        return 1;
    }
    std::printf("window \"%s\": %s\n", title.c_str(), drawn ? "drawn" : "not drawn, as expected");
    return 0;
}

int check_no_item(const json& report, const std::string& name) {
    for (const json& item : report.value("items", json::array()))
        if (item["name"] == name) {
            std::printf("item \"%s\" was drawn, but should not be\n", name.c_str());
            return 1;
        }
    std::printf("item \"%s\": not drawn, as expected\n", name.c_str());
    return 0;
}

int check_item(const json& report, const unsigned char* pixels, int w, int h, const std::string& name) {
    for (const json& item : report.value("items", json::array())) {
        if (item["name"] != name) continue;
        const Box b{item["min"][0], item["min"][1], item["max"][0], item["max"][1]};
        if (b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > w + 0.5 || b.y1 > h + 0.5) {
            std::printf("item \"%s\" (%.0f,%.0f)-(%.0f,%.0f) is not inside the window\n", name.c_str(), b.x0, b.y0,
                        b.x1, b.y1);
            return 1;
        }
        if (!has_ink(pixels, w, h, b, 0)) {
            std::printf("item \"%s\" shows nothing in the screenshot\n", name.c_str());
            return 1;
        }
        std::printf("item \"%s\": drawn, visible\n", name.c_str());
        return 0;
    }
    std::printf("item \"%s\" was not drawn\n", name.c_str());
    return 1;
}

// A window's colours: how many of its pixels have each (0xRRGGBB). Parses "WINDOW=#RRGGBB" from
// `spec` into `title` and `wanted`; false (with a message) when it is no such spec.
bool window_colours(const json& report, const unsigned char* pixels, int w, int h, const std::string& spec,
                    const char* check, std::string& title, unsigned& wanted, std::map<unsigned, int>& colours) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || std::sscanf(spec.c_str() + eq + 1, "#%06x", &wanted) != 1) {
        std::printf("bad check \"%s=%s\": expected WINDOW=#RRGGBB\n", check, spec.c_str());
        return false;
    }
    title = spec.substr(0, eq);
    const Box b = window_box(report, title);
    for (int y = std::max(0, int(b.y0)); y < std::min(h, int(b.y1)); ++y)
        for (int x = std::max(0, int(b.x0)); x < std::min(w, int(b.x1)); ++x) {
            const unsigned char* p = pixels + 4 * (static_cast<size_t>(y) * w + x);
            ++colours[(unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2]];
        }
    if (colours.empty()) std::printf("%s: no window \"%s\" was drawn\n", check, title.c_str());
    return !colours.empty();
}

// The largest difference of two colours (0xRRGGBB) in one channel.
int colour_distance(unsigned a, unsigned b) {
    int diff = 0;
    for (int k = 0; k < 3; ++k)
        diff = std::max(diff,
                        std::abs(static_cast<int>((a >> (8 * k)) & 0xFF) - static_cast<int>((b >> (8 * k)) & 0xFF)));
    return diff;
}

int check_ground(const json& report, const unsigned char* pixels, int w, int h, const std::string& spec) {
    std::string title;
    unsigned wanted = 0;
    std::map<unsigned, int> colours;
    if (!window_colours(report, pixels, w, h, spec, "ground", title, wanted, colours)) return 1;
    unsigned ground = 0;
    int most = 0;
    for (const auto& [c, n] : colours)
        if (n > most) most = n, ground = c;
    const int diff = colour_distance(ground, wanted);
    std::printf("ground: \"%s\" is mostly #%06x%s\n", title.c_str(), ground,
                diff <= 8 ? "" : (", not " + spec.substr(spec.rfind('=') + 1)).c_str());
    return diff <= 8 ? 0 : 1;
}

// The window's text is drawn in the theme's text colour: at least 1 % of its pixels have it (within
// 8 in each channel). Glyphs drawn without the font's texture are flat blocks of another colour.
int check_ink(const json& report, const unsigned char* pixels, int w, int h, const std::string& spec) {
    std::string title;
    unsigned wanted = 0;
    std::map<unsigned, int> colours;
    if (!window_colours(report, pixels, w, h, spec, "ink", title, wanted, colours)) return 1;
    long inked = 0, all = 0;
    for (const auto& [c, n] : colours) {
        all += n;
        if (colour_distance(c, wanted) <= 8) inked += n;
    }
    const double share = 100.0 * static_cast<double>(inked) / static_cast<double>(all);
    std::printf("ink: %.2f%% of \"%s\" is %s%s\n", share, title.c_str(), spec.substr(spec.rfind('=') + 1).c_str(),
                share >= 1 ? "" : " (under 1%: its text is not drawn in that colour)");
    return share >= 1 ? 0 : 1;
}

int check_value(const json& report, const std::string& spec) {
    const size_t eq = spec.rfind('=');
    const std::string name = spec.substr(0, eq);
    const json values = report.value("values", json::object());
    if (eq == std::string::npos || !values.contains(name)) {
        std::printf("value %s: not in the report\n", name.c_str());
        return 1;
    }
    const double shown = values[name], wanted = std::stod(spec.substr(eq + 1));
    std::printf("value %s: %g%s\n", name.c_str(), shown,
                std::abs(shown - wanted) <= 0.01 ? "" : (", not " + spec.substr(eq + 1)).c_str());
    return std::abs(shown - wanted) <= 0.01 ? 0 : 1;
}

int check_uncut(const json& report) {
    int failures = 0;
    const Box display{0, 0, report["display"][0].get<double>(), report["display"][1].get<double>()};
    for (const json& label : report.value("labels", json::array())) {
        if (!contains(display, box_of(label))) {
            std::printf("uncut: %s (\"%s\") runs off the window\n", label["name"].get<std::string>().c_str(),
                        label["shown"].get<std::string>().c_str());
            ++failures;
        }
        if (label["cut"].get<bool>()) {
            std::printf("uncut: %s is cut: \"%s\" shown as \"%s\"\n", label["name"].get<std::string>().c_str(),
                        label["text"].get<std::string>().c_str(), label["shown"].get<std::string>().c_str());
            ++failures;
        }
    }
    return failures;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: ui_check REPORT.json SCREENSHOT.png [layout] [varied] [calm=PREFIX] [readable=WINDOW] "
                     "[fills=WINDOW:P] [within=WINDOW] [inside=NAME@WINDOW] [[!]window=TITLE] "
                     "[[!]item=NAME] [ground=WINDOW=#RRGGBB] [ink=WINDOW=#RRGGBB] [value=NAME=NUMBER] "
                     "[NAME:ROW:COL=TEXT ...]\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    const json report = json::parse(text.str(), nullptr, false);
    if (report.is_discarded() || !report.is_object()) {
        std::fprintf(stderr, "%s: not a draw report\n", argv[1]);
        return 1;
    }
    int w = 0, h = 0, channels = 0;
    unsigned char* pixels = stbi_load(argv[2], &w, &h, &channels, 4);
    if (!pixels) {
        std::fprintf(stderr, "%s: not a readable PNG\n", argv[2]);
        return 1;
    }
    int failures = 0;
    if (report["display"][0] != w || report["display"][1] != h) {
        std::printf("the report is for %sx%s, the screenshot is %dx%d\n", report["display"][0].dump().c_str(),
                    report["display"][1].dump().c_str(), w, h);
        ++failures;
    }
    for (int k = 3; k < argc; ++k) {
        const std::string check = argv[k];
        if (check.rfind("window=", 0) == 0)
            failures += check_window(report, check.substr(7), true);
        else if (check.rfind("!window=", 0) == 0)
            failures += check_window(report, check.substr(8), false);
        else if (check.rfind("item=", 0) == 0)
            failures += check_item(report, pixels, w, h, check.substr(5));
        else if (check.rfind("!item=", 0) == 0)
            failures += check_no_item(report, check.substr(6));
        else if (check.rfind("calm=", 0) == 0)
            failures += check_calm(report, pixels, w, h, check.substr(5));
        else if (check.rfind("readable=", 0) == 0)
            failures += check_readable(report, check.substr(9));
        else if (check.rfind("fills=", 0) == 0)
            failures += check_fills(report, check.substr(6));
        else if (check.rfind("within=", 0) == 0)
            failures += check_within(report, check.substr(7));
        else if (check.rfind("inside=", 0) == 0)
            failures += check_inside(report, check.substr(7));
        else if (check.rfind("ground=", 0) == 0)
            failures += check_ground(report, pixels, w, h, check.substr(7));
        else if (check.rfind("ink=", 0) == 0)
            failures += check_ink(report, pixels, w, h, check.substr(4));
        else if (check.rfind("value=", 0) == 0)
            failures += check_value(report, check.substr(6));
        else if (check == "uncut")
            failures += check_uncut(report);
        else if (check == "tabs")
            failures += check_tabs(report);
        else if (check.rfind("workspace=", 0) == 0)
            failures += check_workspace(report, check.substr(10));
        else
            failures += check == "layout"   ? check_layout(report)
                        : check == "varied" ? check_varied(report, pixels, w, h)
                                            : check_number(report, pixels, w, h, check);
    }
    stbi_image_free(pixels);
    return failures == 0 ? 0 : 1;
}
