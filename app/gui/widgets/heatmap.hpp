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
#include "ui/heatmap_cache.hpp"

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
// the heatmap reserves it with a viewport (column labels upright: a viewport's labels are not turned,
// so zooming does not move the cells).
ImVec2 heatmap_gutters(const HeatmapOptions& options);

// The room the column labels take above the cells, by the cells' side: upright, one a column, where
// each label fits its column (in the UI font, else in the smaller numbers font); turned (read from
// bottom to top, in the UI font where a line of it fits a column, else in the numbers font) where one
// does not but a line of text fits a column; below that upright, one every few columns (a label
// every k columns has k columns of room). Turned labels are written whole up to max_row_label ems.
struct ColLabelRoom {
    float upright_h = 0;     // a line of text and its margin; 0: no column labels
    float turned_h = 0;      // the longest label's width (up to max_row_label ems) and its margin
    float upright_from = 0;  // the cell side from which every label fits its column upright
    float turned_from = 0;   // the cell side from which a line of the numbers font fits a column
    bool turned(float cell) const { return cell < upright_from && cell >= turned_from; }
    float height(float cell) const { return turned(cell) ? turned_h : upright_h; }
};
ColLabelRoom col_label_room(const UiContext& ui, const HeatmapOptions& options);

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
