#include "state/input_queue.hpp"

#include <iterator>
#include <vector>

namespace attnviz::app {

namespace {

bool modifier(int key) { return key >= ModifierKeys::left_shift && key <= ModifierKeys::right_super; }

}  // namespace

void InputQueue::feed(ImGuiIO& io) {
    std::vector<int> changed;  // the keys or buttons changed in this frame
    const auto changed_before = [&](int code) {
        for (int c : changed)
            if (c == code) return true;
        return false;
    };
    bool pointer_set = false, other_key = false;
    // This frame's events are of the kind of the first waiting.
    const Kind kind = events_.empty() ? Kind::key : events_.front().kind;
    while (!events_.empty() && events_.front().kind == kind) {
        const Event e = events_.front();
        if (kind == Kind::key && e.code >= 0 && e.code < static_cast<int>(std::size(io.KeysDown))) {
            // A modifier after another key waits: that key is read with the modifiers of its frame
            // (xdotool's Ctrl+S releases Ctrl before S).
            if (changed_before(e.code) || (modifier(e.code) && other_key)) break;
            io.KeysDown[e.code] = e.down;
            changed.push_back(e.code);
            other_key = other_key || !modifier(e.code);
        } else if (kind == Kind::character) {
            io.AddInputCharacter(e.character);
        } else if (kind == Kind::button && e.code >= 0 && e.code < static_cast<int>(buttons_.size())) {
            // Each change of a button where it happened: one pointer position a frame.
            if (changed_before(e.code) || (pointer_set && (e.pos.x != io.MousePos.x || e.pos.y != io.MousePos.y)))
                break;
            buttons_[static_cast<size_t>(e.code)] = e.down;
            changed.push_back(e.code);
            io.MousePos = e.pos;
            pointer_set = true;
        }  // else a key or button ImGui does not index: dropped
        events_.pop_front();
    }
    for (size_t b = 0; b < buttons_.size(); ++b) io.MouseDown[b] = buttons_[b];
    using M = ModifierKeys;
    io.KeyCtrl = io.KeysDown[M::left_control] || io.KeysDown[M::right_control];
    io.KeyShift = io.KeysDown[M::left_shift] || io.KeysDown[M::right_shift];
    io.KeyAlt = io.KeysDown[M::left_alt] || io.KeysDown[M::right_alt];
    io.KeySuper = io.KeysDown[M::left_super] || io.KeysDown[M::right_super];
}

}  // namespace attnviz::app
