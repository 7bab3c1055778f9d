// Colormaps for matrices: sequential for weights (0..1), diverging around 0 for everything else.
// The tables live in core/render/colormaps.hpp (the figure exports use the same ones); these wrap them as
// ImGui colours.
#pragma once

#include <imgui.h>

#include "core/render/color_scale.hpp"
#include "core/render/colormaps.hpp"

namespace attnviz::app {

using Colormap = core::Colormap;

inline ImU32 to_imgui(core::Rgba c) { return IM_COL32(c.r, c.g, c.b, c.a); }
inline core::Rgba to_rgba(ImU32 c) {
    return {static_cast<std::uint8_t>(c >> IM_COL32_R_SHIFT), static_cast<std::uint8_t>(c >> IM_COL32_G_SHIFT),
            static_cast<std::uint8_t>(c >> IM_COL32_B_SHIFT), static_cast<std::uint8_t>(c >> IM_COL32_A_SHIFT)};
}

// The colour of t ∈ [0, 1] (clamped), from core's 256-entry table.
inline ImU32 colormap_color(Colormap map, float t) { return to_imgui(core::colormap_rgba(map, t)); }

// Black or white, whichever reads better on `background` (by its relative luminance).
inline ImU32 text_color_on(ImU32 background) { return to_imgui(core::text_color_on(to_rgba(background))); }

// A horizontal gradient bar of `width` with the values at both ends and the middle (the geometric
// middle on a log range), and `note` (the scaling's name) right of it, cut to what `width` leaves
// (the whole note in the legend's tooltip).
void colormap_legend(Colormap map, const core::ColorRange& range, float width, const char* note = nullptr);

}  // namespace attnviz::app
