// The UI font: DejaVu Sans (fonts-dejavu-core) with the glyphs the formulas use
// (√, ᵀ, ·, Σ, −, ∞, superscripts, Greek). Without it, ImGui's default font and ASCII formulas.
#pragma once

#include <imgui.h>

#include "core/base/notation.hpp"

namespace attnviz::app {

inline constexpr const char* dejavu_sans_path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

struct Fonts {
    core::Notation notation = core::Notation::ascii;  // what the UI font can show
    ImFont* numbers = nullptr;                        // a smaller font for the values in cells
    ImFont* title = nullptr;                          // a larger one for headings (lesson steps)
    float size = 0;                                   // the size they were made for (pixels); 0: none yet
};

// Adds the UI font (the default), the numbers font and the title font to the current ImGui
// context's atlas, rasterised at `size_pixels` (the UI font; the others in proportion).
Fonts load_fonts(float size_pixels, const char* path = dejavu_sans_path);

}  // namespace attnviz::app
