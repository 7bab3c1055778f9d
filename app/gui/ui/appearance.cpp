#include "ui/appearance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace attnviz::app {

namespace {

// Steps of a quarter from the smallest size to the largest.
constexpr float scale_steps[] = {0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.25f, 2.5f, 2.75f, 3.0f};

// A finite decimal number, the entire text.
std::optional<float> number(std::string_view text) {
    if (text.empty() || text.size() > 16) return std::nullopt;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || c == '.')) return std::nullopt;
    const std::string s(text);
    char* end = nullptr;
    const float v = std::strtof(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

const char* theme_name(Theme theme) {
    switch (theme) {
        case Theme::light: return "light";
        case Theme::high_contrast: return "high-contrast";
        case Theme::dark: break;
    }
    return "dark";
}

std::optional<Theme> theme_named(std::string_view name) {
    for (Theme t : all_themes)
        if (name == theme_name(t)) return t;
    return std::nullopt;
}

const char* weights_colormap_name(core::Colormap map) { return map == core::Colormap::cividis ? "cividis" : "viridis"; }

std::optional<core::Colormap> weights_colormap_named(std::string_view name) {
    if (name == "viridis") return core::Colormap::sequential;
    if (name == "cividis") return core::Colormap::cividis;
    return std::nullopt;
}

bool valid_ui_scale(float scale) { return scale >= min_ui_scale && scale <= max_ui_scale; }

float stepped_ui_scale(float scale, int direction) {
    if (direction == 0 || !std::isfinite(scale)) return 1.0f;
    constexpr float slack = 1e-3f;  // a size between two steps goes to the nearer one in that direction
    if (direction > 0) {
        for (float s : scale_steps)
            if (s > scale + slack) return s;
        return max_ui_scale;
    }
    for (auto s = std::rbegin(scale_steps); s != std::rend(scale_steps); ++s)
        if (*s < scale - slack) return *s;
    return min_ui_scale;
}

std::string appearance_lines(const Appearance& a) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", static_cast<double>(a.scale));
    return std::string("theme=") + theme_name(a.theme) + "\nscale=" + scale +
           "\ncolormap=" + weights_colormap_name(a.weights) + "\n";
}

bool read_appearance_line(std::string_view line, Appearance& a) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "theme") {
        const std::optional<Theme> theme = theme_named(value);
        if (theme) a.theme = *theme;
        return theme.has_value();
    }
    if (key == "scale") {
        const std::optional<float> scale = number(value);
        if (!scale || !valid_ui_scale(*scale)) return false;
        a.scale = *scale;
        return true;
    }
    if (key == "colormap") {
        const std::optional<core::Colormap> map = weights_colormap_named(value);
        if (map) a.weights = *map;
        return map.has_value();
    }
    return false;
}

}  // namespace attnviz::app
