// The look applied: a theme's ImGui style and palette, the fonts rasterised at the text size (sharp,
// not stretched), every spacing of the style scaled with them, and the weights' colormap.
#pragma once

#include <imgui.h>

#include "ui/appearance.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// A fresh style with the theme's colours and attnviz's own choices (rounded windows, opaque
// popups; borders on frames in high contrast), every size scaled by `scale`.
ImGuiStyle theme_style(Theme theme, float scale);

// Makes ImGui's style and the UI context's fonts, palette, colormap and scale those of `appearance`
// (its text size times ui.content_scale). Between frames only: the font atlas is cleared and built
// anew when the text size changed, and true is returned — the renderer's font texture must then be
// made again (gui.cpp) before the next frame.
bool apply_appearance(UiContext& ui, const Appearance& appearance);

// The colour of a window's own background (the style's WindowBg) laid over `behind`. The windows
// that tile the screen (the panels, the lesson, the status bar) draw no background: the frame is
// cleared to this colour instead, the same picture, since a software renderer shades every pixel
// of a filled rectangle (a third of a frame's drawing) while a clear only writes them.
ImVec4 window_background_over(ImVec4 behind);

}  // namespace attnviz::app
