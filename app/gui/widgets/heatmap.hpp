// The heatmap widget: a matrix as coloured cells, with numbers where they fit.
//
// Small matrices are drawn as one quad per cell (culled against the clip rectangle) with the value
// printed in a colour chosen by the cell's luminance. When cells get too small to read, the matrix
// is drawn as one texture (uploaded once per content change through the installed uploader).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <imgui.h>

#include "colormap.hpp"
#include "core/attention/matrix_types.hpp"
#include "core/render/color_scale.hpp"
#include "heatmap_cache.hpp"

namespace attnviz::app {

struct HeatmapHit {
    bool hovered = false;
    bool clicked = false;
    int row = -1, col = -1;
    ImVec2 cells_min, cells_max;  // where the cells were drawn (the view's rectangle with a viewport)
    // Cells one pixel covers along the side that covers the most (> 1: each pixel pools a block of
    // cells, as HeatmapOptions::pooling says); 1 when every cell has pixels of its own.
    float cells_per_pixel = 1;
};

class UiContext;

// The room the token labels take left of the rows and above the columns (x: width, y: height), as
// the heatmap reserves it with a viewport.
ImVec2 heatmap_gutters(const HeatmapOptions& options);

// Draws the matrix at the cursor and reports the hovered/clicked cell. `report_as` names the matrix
// in the UI context's draw report (when one is collected).
HeatmapHit heatmap(UiContext& ui, const char* id, const core::Matrix& m, const HeatmapOptions& options,
                   const char* report_as = nullptr);

// The colour range a matrix of the registry is shown with: the scaling the user chose for it (or its
// default, core::default_scaling) applied to its statistics (computed once per matrix and
// generation). Every legend shows the range in use.
core::ColorRange heatmap_range(UiContext& ui, const core::Matrix& m, core::MatrixId id, std::uint64_t generation);

// Row labels are cut to this many ems (a token label may be any length).
inline constexpr float max_row_label = 10;

// Cells below this side (pixels) switch to the texture path.
inline constexpr float texture_cell_threshold = 6.0f;

}  // namespace attnviz::app
