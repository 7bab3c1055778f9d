#include "shell/frame_fingerprint.hpp"

#include <cstring>

namespace attnviz::app {

namespace {

// FNV-1a over 8-byte words (a byte at a time for the tail): fast enough to fingerprint a frame's
// megabytes of vertices in well under a millisecond, and any changed byte changes it.
class Fingerprint {
public:
    void add(const void* data, size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        size_t k = 0;
        for (; k + 8 <= bytes; k += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, p + k, 8);
            mix(word);
        }
        for (; k < bytes; ++k) mix(p[k]);
        mix(bytes);
    }
    template <class T>
    void add_value(const T& value) {
        add(&value, sizeof value);
    }
    std::uint64_t value() const { return h_; }

private:
    void mix(std::uint64_t word) {
        h_ ^= word;
        h_ *= 0x100000001b3ull;
        h_ ^= h_ >> 29;
    }
    std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::uint64_t frame_fingerprint(const ImDrawData& draw_data, const FrameInputs& inputs) {
    Fingerprint f;
    f.add_value(inputs.framebuffer_width);
    f.add_value(inputs.framebuffer_height);
    f.add_value(inputs.background);
    f.add_value(inputs.texture_uploads);
    f.add_value(draw_data.Valid);
    f.add_value(draw_data.DisplayPos);
    f.add_value(draw_data.DisplaySize);
    f.add_value(draw_data.FramebufferScale);
    f.add_value(draw_data.CmdListsCount);
    for (int l = 0; l < draw_data.CmdListsCount; ++l) {
        const ImDrawList& list = *draw_data.CmdLists[l];
        f.add(list.VtxBuffer.Data, static_cast<size_t>(list.VtxBuffer.Size) * sizeof(ImDrawVert));
        f.add(list.IdxBuffer.Data, static_cast<size_t>(list.IdxBuffer.Size) * sizeof(ImDrawIdx));
        for (const ImDrawCmd& cmd : list.CmdBuffer) {
            f.add_value(cmd.ClipRect);
            f.add_value(cmd.TextureId);
            f.add_value(cmd.VtxOffset);
            f.add_value(cmd.IdxOffset);
            f.add_value(cmd.ElemCount);
            f.add_value(reinterpret_cast<std::uintptr_t>(cmd.UserCallback));
            f.add_value(cmd.UserCallbackData);
        }
    }
    return f.value();
}

bool FrameSkipper::must_draw(const ImDrawData& draw_data, const FrameInputs& inputs, bool force) {
    const std::uint64_t now = frame_fingerprint(draw_data, inputs);
    const bool draw = force || !shown_ || now != fingerprint_;
    fingerprint_ = now;
    shown_ = true;
    return draw;
}

}  // namespace attnviz::app
