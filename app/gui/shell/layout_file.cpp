#include "shell/layout_file.hpp"

#include "shell/workspace_names.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "ui/appearance.hpp"

namespace attnviz::app {

namespace {

// A whole decimal number in [lo, hi], the entire text (an optional minus sign, then digits).
bool whole(std::string_view text, long lo, long hi, long& out) {
    const bool minus = !text.empty() && text[0] == '-';
    const std::string_view digits = text.substr(minus ? 1 : 0);
    if (digits.empty() || digits.size() > 9) return false;
    long v = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = minus ? -v : v;
    return out >= lo && out <= hi;
}

// "0x" and one to eight hexadecimal digits, the entire text.
bool hex_id(std::string_view text, std::uint32_t& out) {
    if (text.size() < 3 || text.size() > 10 || text.substr(0, 2) != "0x") return false;
    out = 0;
    for (char c : text.substr(2)) {
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
        if (d < 0) return false;
        out = out * 16 + static_cast<std::uint32_t>(d);
    }
    return true;
}

// A finite decimal number in [lo, hi], the entire text.
bool real(std::string_view text, double lo, double hi) {
    if (text.empty() || text.size() > 32) return false;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) return false;
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v) && v >= lo && v <= hi;
}

// "KEY=A,B" with both whole numbers in [lo, hi].
bool pair_line(std::string_view line, std::string_view key, long lo, long hi) {
    if (line.substr(0, key.size()) != key) return false;
    const std::string_view rest = line.substr(key.size());
    const size_t comma = rest.find(',');
    long a = 0, b = 0;
    return comma != std::string_view::npos && whole(rest.substr(0, comma), lo, hi, a) &&
           whole(rest.substr(comma + 1), lo, hi, b);
}

bool printable(std::string_view text) {
    return std::none_of(text.begin(), text.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// A line of [attnviz][Layout]: the shares, the chosen tabs, or the look (appearance.hpp).
bool layout_line(std::string_view line) {
    Appearance look;
    return line.substr(0, 5) == "left=" || line.substr(0, 5) == "tabs=" || read_appearance_line(line, look) ||
           (line.substr(0, 10) == "workspace=" && workspace_named(line.substr(10)));
}

bool window_line(std::string_view line) {
    long collapsed = 0;
    return pair_line(line, "Pos=", -100000, 100000) || pair_line(line, "Size=", 0, 100000) ||
           (line.substr(0, 10) == "Collapsed=" && whole(line.substr(10), 0, 1, collapsed));
}

// "Column N" and its fields, for a table of `columns` columns.
bool column_line(std::string_view line, long columns) {
    std::vector<std::string_view> words;
    for (size_t at = 0; at < line.size();) {
        const size_t end = std::min(line.find(' ', at), line.size());
        if (end > at) words.push_back(line.substr(at, end - at));
        at = end + 1;
    }
    long n = 0;
    if (words.size() < 2 || words[0] != "Column" || !whole(words[1], 0, columns - 1, n)) return false;
    std::set<std::string_view> seen;
    for (size_t k = 2; k < words.size(); ++k) {
        const std::string_view w = words[k];
        const size_t eq = w.find('=');
        if (eq == std::string_view::npos || !seen.insert(w.substr(0, eq)).second) return false;
        const std::string_view key = w.substr(0, eq), value = w.substr(eq + 1);
        std::uint32_t id = 0;
        long v = 0;
        const bool ok = key == "UserID"    ? hex_id(value, id)
                        : key == "Width"   ? whole(value, 0, 100000, v)
                        : key == "Weight"  ? real(value, 0, 10000)
                        : key == "Visible" ? whole(value, 0, 1, v)
                        : key == "Order"   ? whole(value, 0, columns - 1, v)
                        : key == "Sort"    ? value.size() >= 2 && (value.back() == 'v' || value.back() == '^') &&
                                              whole(value.substr(0, value.size() - 1), 0, columns - 1, v)
                                        : false;
        if (!ok) return false;
    }
    return true;
}

// A section's kind, from its header line; `columns` for a table.
enum class Kind { window, table, layout, other };

Kind header_kind(std::string_view header, int& windows, std::set<std::uint32_t>& tables, long& columns) {
    if (header.size() < 4 || header.front() != '[' || header.back() != ']') return Kind::other;
    const size_t mid = header.find("][");
    if (mid == std::string_view::npos) return Kind::other;
    const std::string_view type = header.substr(1, mid - 1), name = header.substr(mid + 2, header.size() - mid - 3);
    if (type == "Window") {
        // A name twice is one window to ImGui (which reads the later lines over the earlier): each
        // section counts against the bound all the same.
        if (name.empty() || name.size() > 256 || windows >= layout_max_windows) return Kind::other;
        ++windows;
        return Kind::window;
    }
    if (type == "Table") {
        const size_t comma = name.find(',');
        std::uint32_t id = 0;
        if (comma == std::string_view::npos || !hex_id(name.substr(0, comma), id) || id == 0 ||
            !whole(name.substr(comma + 1), 1, layout_max_columns, columns) || tables.size() >= layout_max_tables ||
            !tables.insert(id).second)
            return Kind::other;
        return Kind::table;
    }
    if (type == "attnviz" && name == "Layout") return Kind::layout;
    return Kind::other;
}

}  // namespace

FilteredLayout filter_layout(std::string_view text) {
    FilteredLayout out;
    if (text.size() > layout_max_bytes) {
        out.dropped = 1;  // the whole file
        return out;
    }
    int windows = 0;
    std::set<std::uint32_t> tables;
    bool layout_seen = false;
    Kind kind = Kind::other;
    bool in_section = false;  // lines before the first header belong to no section
    long columns = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.empty()) continue;
        const bool fits = line.size() <= layout_max_line && printable(line);
        if (line.front() == '[') {
            in_section = true;
            kind = fits ? header_kind(line, windows, tables, columns) : Kind::other;
            if (kind == Kind::layout && std::exchange(layout_seen, true)) kind = Kind::other;
            if (kind == Kind::other) {
                ++out.dropped;  // the section, with its lines
                continue;
            }
            out.text += (out.text.empty() ? "" : "\n") + std::string(line) + "\n";
            continue;
        }
        if (in_section && kind == Kind::other) continue;  // counted with its header
        const bool ok = in_section && fits &&
                        (kind == Kind::window  ? window_line(line)
                         : kind == Kind::table ? line.substr(0, 9) == "RefScale=" ? real(line.substr(9), 0.01, 100)
                                                                                  : column_line(line, columns)
                                               : layout_line(line));
        if (ok)
            out.text += std::string(line) + "\n";
        else
            ++out.dropped;
    }
    return out;
}

}  // namespace attnviz::app
