// Whether a frame would draw what the window shows already. Under a software renderer (Mesa's
// llvmpipe, a machine without a GPU) drawing a frame is most of the app's CPU; while the window
// only waits for the workers (a model rerunning, a trace being computed) its frames are the same
// frame again, and drawing them would take the CPU the workers wait for. A frame's fingerprint is
// that of everything the renderer reads: ImGui's draw lists (vertices, indices, commands, clip
// rectangles, textures), the framebuffer's size, the background, and how many times a texture's
// pixels were replaced (a heatmap's texture keeps its name when its values change).
#pragma once

#include <imgui.h>

#include <cstdint>

namespace attnviz::app {

struct FrameInputs {
    int framebuffer_width = 0, framebuffer_height = 0;
    ImVec4 background;
    std::uint64_t texture_uploads = 0;  // textures made, replaced or deleted so far
};

std::uint64_t frame_fingerprint(const ImDrawData& draw_data, const FrameInputs& inputs);

// Keeps the fingerprint of the frame on screen and says whether a frame needs drawing.
class FrameSkipper {
public:
    // The frame whose draw data is `draw_data` must be drawn: it differs from the frame on screen,
    // or `force` (the window was exposed or resized). The caller then draws it: it becomes the
    // frame on screen.
    bool must_draw(const ImDrawData& draw_data, const FrameInputs& inputs, bool force);

private:
    std::uint64_t fingerprint_ = 0;
    bool shown_ = false;
};

}  // namespace attnviz::app
