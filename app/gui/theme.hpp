// The look applied: a theme's ImGui style and palette, the fonts rasterised at the text size (sharp,
// not stretched), every spacing of the style scaled with them, and the weights' colormap.
#pragma once

#include <imgui.h>

#include "appearance.hpp"
#include "ui_context.hpp"

namespace attnviz::app {

// A fresh style with the theme's colours and attnviz's own choices (rounded windows, opaque
// popups; borders on frames in high contrast), every size scaled by `scale`.
ImGuiStyle theme_style(Theme theme, float scale);

// Makes ImGui's style and the UI context's fonts, palette, colormap and scale those of `appearance`
// (its text size times ui.content_scale). Between frames only: the font atlas is cleared and built
// anew when the text size changed, and true is returned — the renderer's font texture must then be
// made again (gui.cpp) before the next frame.
bool apply_appearance(UiContext& ui, const Appearance& appearance);

}  // namespace attnviz::app
