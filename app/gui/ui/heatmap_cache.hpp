// The heatmaps' cache: the textures of large matrices and the colour ranges of every matrix, kept
// across frames (HeatmapCache, owned by UiContext), with the options a heatmap is drawn with. Apart
// from the widget (widgets/heatmap.hpp) so that UiContext holds it without including a widget; its
// members are defined in widgets/heatmap.cpp, beside the drawing whose helpers they share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <imgui.h>

#include "core/attention/matrix_types.hpp"
#include "core/attention/pooling.hpp"
#include "core/render/color_scale.hpp"
#include "core/render/colormaps.hpp"

namespace attnviz::app {

// A region to outline: a whole row (col < 0), a whole column (row < 0) or one cell.
struct HeatmapMark {
    int row = -1;
    int col = -1;
    ImU32 color = 0;  // 0: the palette's operand colour
};

struct HeatmapOptions {
    core::Colormap colormap = core::Colormap::diverging;
    core::ColorRange range{-1, 1, false};  // values mapped to the two ends of the colormap
    // How a pixel shows the cells it covers when the matrix is drawn smaller than its cells (the
    // texture path): core::pooling_for the matrix's colour scale.
    core::Pooling pooling = core::Pooling::largest;
    float max_cell = 44;        // largest cell side in pixels
    float min_cell = 0.05f;     // smallest; below the fit the widget grows past max_size (scrolls)
    ImVec2 max_size{300, 300};  // room for the cells (labels come on top of it)
    int number_digits = 3;      // significant digits of the printed values
    const std::vector<std::string>* row_labels = nullptr;  // left of the rows
    const std::vector<std::string>* col_labels = nullptr;  // above the columns
    std::vector<HeatmapMark> marks;
    std::uint64_t generation = 0;  // content version, for the texture cache
    long shown_cells = -1;         // ≥ 0: only the first cells in row-major order are shown, the rest hidden
    bool transposed = false;       // draw mᵀ: rows, columns, hits and marks are all in the drawn (transposed) frame
    // A window onto the matrix, for zoom and pan: `size` pixels of cells (labels come on top), each
    // cell `cell` pixels (below 1 when zoomed out), the cell (row0, col0) — fractional — at the top
    // left. Unset: the whole matrix, fitted into max_size.
    struct Viewport {
        double row0 = 0, col0 = 0;
        float cell = 1;
        ImVec2 size{300, 300};
    };
    std::optional<Viewport> viewport;
};

// A block of a drawn matrix: rows [row0, row0 + rows), columns [col0, col0 + cols).
struct CellBlock {
    int row0 = 0, col0 = 0, rows = 0, cols = 0;
    bool operator==(const CellBlock&) const = default;
};

// Uploads RGBA pixels (row-major, rows×cols) as a texture, replacing `previous` when it is non-null.
using TextureUploader = ImTextureID (*)(ImTextureID previous, int cols, int rows, const std::uint32_t* rgba);
using TextureDestroyer = void (*)(ImTextureID texture);

// The textures of large matrices and the colour ranges of every matrix, kept across frames and
// refreshed when a matrix's content (its generation) or colouring changes. Owned by UiContext.
class HeatmapCache {
public:
    HeatmapCache() = default;
    ~HeatmapCache() { set_texture_functions(nullptr, nullptr); }
    HeatmapCache(const HeatmapCache&) = delete;
    HeatmapCache& operator=(const HeatmapCache&) = delete;

    // The GUI installs the OpenGL functions; without them (headless tests) large matrices are drawn
    // as coarse blocks instead. Installing none frees every texture (before the GL context goes).
    void set_texture_functions(TextureUploader upload, TextureDestroyer destroy);
    bool has_textures() const { return upload_ != nullptr; }
    // Call once per frame, after drawing: frees textures and ranges no heatmap used lately, and
    // renews the time the next frame may spend on rebuilding them.
    void end_frame();
    // At most about this much of a frame goes to rebuilding textures and ranges (at least one is
    // rebuilt per frame); past it, a heatmap whose matrix changed keeps its previous texture for a
    // frame or two, so no frame stalls.
    void set_rebuild_budget_ms(double ms) { rebuild_budget_ms_ = ms; }
    // Whether the last frame left a texture or a range for a later one (its budget spent): the
    // window draws another frame instead of sleeping.
    bool behind() const { return behind_; }

    // A matrix's value statistics (core::value_stats), computed once per matrix and generation;
    // the percentiles only once asked for.
    const core::ValueStats& stats(const core::Matrix& m, std::uint64_t generation, bool percentiles);
    // The texture of a block of a (drawn) matrix for these options at the size it is drawn (pixels),
    // made and uploaded again only when the content, the colouring, the block or that size changes.
    ImTextureID texture(ImGuiID id, const core::Matrix& m, bool transposed, const CellBlock& block,
                        const HeatmapOptions& o, ImU32 masked, ImVec2 drawn);

    // A picture of the caller's own under `id` (the head view's lines): `paint` fills its texels
    // (RGBA, rows×cols, row-major, all 0 at first) and it is uploaded again only when `version` or
    // the size changes. nullptr without a texture uploader (the caller draws another way).
    ImTextureID image(ImGuiID id, std::uint64_t version, int cols, int rows,
                      const std::function<void(std::vector<std::uint32_t>&)>& paint);

private:
    struct Source {  // what a texture or a range was made from: a matrix's storage at one generation
        const void* data = nullptr;
        Eigen::Index rows = 0, cols = 0;
        std::uint64_t generation = ~std::uint64_t{0};
        bool operator==(const Source&) const = default;
    };
    struct Texture {
        ImTextureID texture = nullptr;
        Source source;
        bool transposed = false;
        CellBlock block;
        int rows = 0, cols = 0;  // texels
        core::Colormap colormap = core::Colormap::diverging;
        core::ColorRange range;
        core::Pooling pooling = core::Pooling::largest;
        int last_frame = 0;
    };
    struct Stats {
        Source source;
        core::ValueStats stats;
        int last_frame = 0;
    };
    bool over_budget() const;
    void charge(std::uint64_t start_ns);

    std::unordered_map<ImGuiID, Texture> textures_;
    struct Image {
        ImTextureID texture = nullptr;
        std::uint64_t version = 0;
        int cols = 0, rows = 0;
        int last_frame = 0;
    };
    std::unordered_map<ImGuiID, Image> images_;
    double rebuild_budget_ms_ = 6.0;
    double budget_left_ms_ = 6.0;
    bool rebuilt_this_frame_ = false;
    bool deferred_ = false, behind_ = false;  // this frame, the last frame left work for later
    std::unordered_map<const void*, Stats> stats_;
    TextureUploader upload_ = nullptr;
    TextureDestroyer destroy_ = nullptr;
};

}  // namespace attnviz::app
