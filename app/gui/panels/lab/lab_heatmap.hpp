// How the attention lab's views (lab_panel.hpp, lab_tokens.hpp) draw a matrix: a titled heatmap in
// the room given, reported under its title, and the colour range of a signed matrix.
#pragma once

#include <string>
#include <vector>

#include "core/attention/matrix_types.hpp"
#include "ui/ui_context.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

// A matrix of the lab as a heatmap in `room` (its labels included), titled and reported under `name`.
HeatmapHit lab_heatmap(UiContext& ui, const char* name, const core::Matrix& m, core::Colormap map,
                       core::ColorRange range, ImVec2 room, const std::vector<std::string>* rows,
                       const std::vector<std::string>* cols);

// The symmetric range of a signed matrix: −max|v| … max|v|.
core::ColorRange symmetric(const core::Matrix& m);

}  // namespace attnviz::app
