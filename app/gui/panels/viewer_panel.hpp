// Matrix viewer: one matrix (any input or intermediate of any head) as large as the panel allows,
// with its colormap legend and the arithmetic of the selected cell.
#pragma once

#include "../app_state.hpp"
#include "../ui_context.hpp"

namespace attnviz::app {

struct ViewerPanel {};

void draw_viewer_panel(AppState& state, UiContext& ui, ViewerPanel& panel);

}  // namespace attnviz::app
