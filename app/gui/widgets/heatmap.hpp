// The heatmap widget: a matrix as coloured cells, with numbers where they fit.
//
// Small matrices are drawn as one quad per cell (culled against the clip rectangle) with the value
// printed in a colour chosen by the cell's luminance. When cells get too small to read, the matrix
// is drawn as one texture (uploaded once per content change through the installed uploader).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "colormap.hpp"
#include "core/matrix.hpp"

namespace attnviz::app {

// A region to outline: a whole row (col < 0), a whole column (row < 0) or one cell.
struct HeatmapMark {
    int row = -1;
    int col = -1;
    ImU32 color = IM_COL32(255, 140, 0, 255);
};

struct HeatmapOptions {
    Colormap colormap = Colormap::diverging;
    double lo = -1, hi = 1;       // values mapped to the two ends of the colormap
    float max_cell = 44;          // largest cell side in pixels
    float min_cell = 0.05f;       // smallest; below the fit the widget grows past max_size (scrolls)
    ImVec2 max_size{300, 300};    // room for the cells (labels come on top of it)
    int number_digits = 3;        // significant digits of the printed values
    const std::vector<std::string>* row_labels = nullptr;  // left of the rows
    const std::vector<std::string>* col_labels = nullptr;  // above the columns
    std::vector<HeatmapMark> marks;
    std::uint64_t generation = 0;  // content version, for the texture cache
    long shown_cells = -1;         // ≥ 0: only the first cells in row-major order are shown, the rest hidden
    bool transposed = false;       // draw mᵀ: rows, columns, hits and marks are all in the drawn (transposed) frame
};

struct HeatmapHit {
    bool hovered = false;
    bool clicked = false;
    int row = -1, col = -1;
};

// Draws the matrix at the cursor and reports the hovered/clicked cell.
HeatmapHit heatmap(const char* id, const core::Matrix& m, const HeatmapOptions& options);

// The value range to show a matrix with: [0, 1] for sequential, symmetric ±max|finite value| otherwise.
// The scan is cached per matrix and generation (AppState::generation()).
void heatmap_range(const core::Matrix& m, Colormap map, std::uint64_t generation, double& lo, double& hi);

// Uploads RGBA pixels (row-major, rows×cols) as a texture, replacing `previous` when it is non-null.
using TextureUploader = ImTextureID (*)(ImTextureID previous, int cols, int rows, const std::uint32_t* rgba);
using TextureDestroyer = void (*)(ImTextureID texture);
// The GUI installs the OpenGL functions; without them (headless tests) large matrices are drawn
// as coarse blocks instead. Installing none frees every texture (before the GL context goes).
void set_texture_functions(TextureUploader upload, TextureDestroyer destroy);

// Call once per frame, after drawing: frees textures and cached ranges no heatmap used lately.
void heatmap_end_frame();

// The font the values in the cells are printed with (a smaller one fits more); nullptr: the current font.
void set_number_font(ImFont* font);

// Cells below this side (pixels) switch to the texture path.
inline constexpr float texture_cell_threshold = 6.0f;

}  // namespace attnviz::app
