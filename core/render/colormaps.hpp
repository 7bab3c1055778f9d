// Colormaps for matrices: sequential (viridis, or cividis where chosen) for weights, diverging
// (blue–white–red) around 0 for everything else. One 256-entry table per map, shared by the app's
// heatmaps and the figure exports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/registry.hpp"

namespace attnviz::core {

// An sRGB colour with straight (not premultiplied) alpha.
struct Rgba {
    std::uint8_t r = 0, g = 0, b = 0, a = 255;
    bool operator==(const Rgba&) const = default;
};

// sequential is viridis; cividis is the other sequential map, ordered by luminance and made to be
// told apart with every common colour-vision deficiency (the app's choice for weights).
enum class Colormap { sequential, diverging, cividis };

// The colormap of a matrix coloured this way (the registry's ColorScale): viridis for weights.
inline Colormap colormap_for(ColorScale colors) {
    return colors == ColorScale::unit_interval ? Colormap::sequential : Colormap::diverging;
}

// The colour of t ∈ [0, 1] (clamped; NaN is 0): entry round(255·t) of the map's table.
Rgba colormap_rgba(Colormap map, float t);

// The points the table is interpolated between (t and colour), first t = 0, last t = 1: a gradient
// through them is the colormap (a legend bar).
struct ColorStop {
    float t;
    Rgba color;
};
std::vector<ColorStop> colormap_stops(Colormap map);

// WCAG 2's relative luminance of an sRGB colour (0 black, 1 white; the alpha is left out), and the
// contrast ratio of two colours, (L_lighter + 0.05) / (L_darker + 0.05): 1 to 21, text is readable
// from 4.5 (large text and outlines from 3).
float relative_luminance(Rgba color);
float contrast_ratio(Rgba a, Rgba b);

// Black or white, whichever reads better on `background` (by its relative luminance).
Rgba text_color_on(Rgba background);

// "#440154" (the alpha is left out).
std::string hex(Rgba color);

// One colour per head, where heads are told apart by colour (the head view's lines and legend, the
// saturation lab's curves, the interactive page): Tableau's ten categorical colours; with more
// than ten heads, hues spread around the wheel by the golden ratio (neighbouring heads far apart).
Rgba head_rgba(int head, int heads);

}  // namespace attnviz::core
