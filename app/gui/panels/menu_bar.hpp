// The main menu: open and save sessions, reset the layout, quit.
#pragma once

#include <string>

#include "../app_state.hpp"

namespace attnviz::app {

struct MenuBar {
    std::string path;        // the path typed into the open/save dialog
    bool open_dialog = false;
    bool save_dialog = false;
    bool reset_layout = false;  // set by View > Reset layout, consumed by the layout
    bool toggle_teach = false;  // View > Teach mode, consumed by the frame
    bool quit_requested = false;  // File > Quit or the window's close button: asks first when modified
    bool quit = false;            // the app ends after this frame
};

void draw_menu_bar(AppState& state, MenuBar& menu);

}  // namespace attnviz::app
