#include "gui.hpp"

#include <iostream>

namespace attnviz::app {

int run_gui(const GuiOptions&) {
    std::cerr << "error: this build of attnviz has no GUI yet\n";
    return 1;
}

}  // namespace attnviz::app
