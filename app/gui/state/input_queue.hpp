// The window's keyboard and mouse-button input as a queue of events, handed to ImGui a little each
// frame so that none is lost. ImGui 1.86 keeps one state per key and button a frame: a press and
// its release arriving between two frames (a fast typist, xdotool, a slow frame) were never seen,
// so Return typed right after a digit left the cell in edit.
//
// The window's callbacks (gui.cpp) push the events; feed(), between the platform backend's
// NewFrame and ImGui::NewFrame, hands ImGui the events in order while they are of one kind (keys,
// typed characters or mouse buttons: ImGui reads a frame's characters before its keys, so a key
// after a character, or the reverse, waits for the next frame), no key or button changes twice and
// no modifier changes after another key did; the rest wait for the next frame, which the window
// draws at once while any wait.
#pragma once

#include <imgui.h>

#include <array>
#include <deque>

namespace attnviz::app {

// GLFW's codes of the modifier keys, 340 to 347 (ImGui 1.86's GLFW backend indexes io.KeysDown by
// GLFW codes).
struct ModifierKeys {
    static constexpr int left_shift = 340, left_control = 341, left_alt = 342, left_super = 343;
    static constexpr int right_shift = 344, right_control = 345, right_alt = 346, right_super = 347;
};

class InputQueue {
public:
    void key(int code, bool down) { events_.push_back({Kind::key, code, down, 0, {}}); }
    void character(unsigned c) { events_.push_back({Kind::character, 0, false, c, {}}); }
    // A mouse button, with where the pointer was when it changed.
    void button(int button, bool down, ImVec2 pos) { events_.push_back({Kind::button, button, down, 0, pos}); }
    bool empty() const { return events_.empty(); }

    // Hands ImGui what this frame can take (see above); the modifier flags follow the modifier keys,
    // the buttons keep their queued state over the backend's reading of the window (and the pointer
    // is where the button changed, for that frame).
    void feed(ImGuiIO& io);

private:
    enum class Kind { key, character, button };
    struct Event {
        Kind kind;
        int code;  // the key or the button
        bool down;
        unsigned character;
        ImVec2 pos;
    };
    std::deque<Event> events_;
    std::array<bool, 5> buttons_{};  // the mouse buttons as handed to ImGui so far
};

}  // namespace attnviz::app
