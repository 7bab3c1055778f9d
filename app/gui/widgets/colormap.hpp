// Colormaps for matrices: sequential for weights (0..1), diverging around 0 for everything else.
#pragma once

#include <imgui.h>

#include "core/color_scale.hpp"

namespace attnviz::app {

enum class Colormap { sequential, diverging };

// The colour of t ∈ [0, 1] (clamped), from a 256-entry table built once.
ImU32 colormap_color(Colormap map, float t);

// Black or white, whichever reads better on `background` (by its relative luminance).
ImU32 text_color_on(ImU32 background);

// A horizontal gradient bar of `width` with the values at both ends and the middle (the geometric
// middle on a log range), and `note` (the scaling's name) after the right end's value.
void colormap_legend(Colormap map, const core::ColorRange& range, float width, const char* note = nullptr);

}  // namespace attnviz::app
