#include "heatmap.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "core/base/format.hpp"
#include "fitted_text.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

namespace {

// Largest texture side: more texels than a screen shows gain nothing. Larger matrices are pooled.
constexpr int max_texture_side = 1024;
// A cached texture or range not used for this many frames is freed.
constexpr int cache_frames = 120;
// Past the frame's budget, a new matrix's colour range is estimated from this many cells.
constexpr Eigen::Index estimate_cells = 4096;

// The matrix as drawn: itself, or its transpose.
struct Drawn {
    const core::Matrix& m;
    bool transposed;
    int rows() const { return static_cast<int>(transposed ? m.cols() : m.rows()); }
    int cols() const { return static_cast<int>(transposed ? m.rows() : m.cols()); }
    double operator()(Eigen::Index r, Eigen::Index c) const { return transposed ? m(c, r) : m(r, c); }
};

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

ImU32 cell_color(double v, const HeatmapOptions& o, ImU32 masked) {
    if (!std::isfinite(v)) return masked;
    return colormap_color(o.colormap, o.range.position(v));
}

}  // namespace

// The texture has (at most) one texel per pixel the block is drawn on: each texel shows the cells it
// covers pooled as options.pooling says (core::pooling_for: the mean of weights, so a uniform head
// stays uniform; the value of largest magnitude of the others, so a strong value is not lost).
ImTextureID HeatmapCache::texture(ImGuiID id, const core::Matrix& m, bool transposed, const CellBlock& block,
                                  const HeatmapOptions& o, ImU32 masked, ImVec2 drawn) {
    auto texels = [](int cells, float pixels) {
        return std::max(1, std::min({cells, max_texture_side, static_cast<int>(std::ceil(pixels))}));
    };
    const int rows = texels(block.rows, drawn.y), cols = texels(block.cols, drawn.x);
    Texture& entry = textures_[id];
    entry.last_frame = ImGui::GetFrameCount();
    const Source source{m.data(), m.rows(), m.cols(), o.generation};
    if (entry.texture && entry.source == source && entry.transposed == transposed && entry.block == block &&
        entry.colormap == o.colormap && entry.range == o.range && entry.pooling == o.pooling && entry.rows == rows &&
        entry.cols == cols)
        return entry.texture;
    if (entry.texture && over_budget()) {
        deferred_ = true;
        return entry.texture;  // rebuilt in a later frame
    }
    const std::uint64_t start = now_ns();
    // Each drawn row and column of the block belongs to one texel row / column. The matrix is read
    // in storage order (row-major), each cell added to its texel's pool.
    auto texel_of = [](int cells, int texels) {
        std::vector<int> of(static_cast<size_t>(cells));
        for (int t = 0; t < texels; ++t) {
            const int a = static_cast<int>(static_cast<long>(t) * cells / texels);
            const int b = std::max(a + 1, static_cast<int>(static_cast<long>(t + 1) * cells / texels));
            for (int k = a; k < b && k < cells; ++k) of[static_cast<size_t>(k)] = t;
        }
        return of;
    };
    const std::vector<int> texel_row = texel_of(block.rows, rows), texel_col = texel_of(block.cols, cols);
    std::vector<core::BlockPool> pools(static_cast<size_t>(rows) * cols);
    // Storage rows are drawn rows, or drawn columns when transposed.
    const int s_row0 = transposed ? block.col0 : block.row0, s_rows = transposed ? block.cols : block.rows;
    const int s_col0 = transposed ? block.row0 : block.col0, s_cols = transposed ? block.rows : block.cols;
    for (int sr = 0; sr < s_rows; ++sr) {
        const double* row = m.data() + static_cast<Eigen::Index>(s_row0 + sr) * m.cols() + s_col0;
        for (int sc = 0; sc < s_cols; ++sc) {
            const int tr = transposed ? texel_row[static_cast<size_t>(sc)] : texel_row[static_cast<size_t>(sr)];
            const int tc = transposed ? texel_col[static_cast<size_t>(sr)] : texel_col[static_cast<size_t>(sc)];
            pools[static_cast<size_t>(tr) * cols + tc].add(o.pooling, row[sc]);
        }
    }
    std::vector<std::uint32_t> pixels(pools.size());
    for (size_t k = 0; k < pools.size(); ++k) pixels[k] = cell_color(pools[k].result(o.pooling), o, masked);
    entry.texture = upload_(entry.texture, cols, rows, pixels.data());
    entry.source = source;
    entry.transposed = transposed;
    entry.block = block;
    entry.rows = rows;
    entry.cols = cols;
    entry.colormap = o.colormap;
    entry.range = o.range;
    entry.pooling = o.pooling;
    charge(start);
    return entry.texture;
}

bool HeatmapCache::over_budget() const { return rebuilt_this_frame_ && budget_left_ms_ <= 0; }

void HeatmapCache::charge(std::uint64_t start_ns) {
    budget_left_ms_ -= (now_ns() - start_ns) * 1e-6;
    rebuilt_this_frame_ = true;
}

void HeatmapCache::set_texture_functions(TextureUploader upload, TextureDestroyer destroy) {
    if (!upload) {  // the GL context goes away: forget every texture
        for (auto& [id, entry] : textures_)
            if (entry.texture && destroy_) destroy_(entry.texture);
        textures_.clear();
        for (auto& [id, entry] : images_)
            if (entry.texture && destroy_) destroy_(entry.texture);
        images_.clear();
    }
    upload_ = upload;
    destroy_ = destroy;
}

void HeatmapCache::end_frame() {
    budget_left_ms_ = rebuild_budget_ms_;
    rebuilt_this_frame_ = false;
    behind_ = std::exchange(deferred_, false);
    const int now = ImGui::GetFrameCount();
    for (auto it = textures_.begin(); it != textures_.end();) {
        if (now - it->second.last_frame > cache_frames) {
            if (it->second.texture && destroy_) destroy_(it->second.texture);
            it = textures_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = images_.begin(); it != images_.end();) {
        if (now - it->second.last_frame > cache_frames) {
            if (it->second.texture && destroy_) destroy_(it->second.texture);
            it = images_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = stats_.begin(); it != stats_.end();)
        it = now - it->second.last_frame > cache_frames ? stats_.erase(it) : ++it;
}

ImTextureID HeatmapCache::image(ImGuiID id, std::uint64_t version, int cols, int rows,
                                const std::function<void(std::vector<std::uint32_t>&)>& paint) {
    if (!upload_ || cols <= 0 || rows <= 0) return nullptr;
    Image& entry = images_[id];
    entry.last_frame = ImGui::GetFrameCount();
    if (entry.texture && entry.version == version && entry.cols == cols && entry.rows == rows) return entry.texture;
    std::vector<std::uint32_t> rgba(static_cast<std::size_t>(cols) * static_cast<std::size_t>(rows), 0);
    paint(rgba);
    entry.texture = upload_(entry.texture, cols, rows, rgba.data());
    entry.version = version;
    entry.cols = cols;
    entry.rows = rows;
    return entry.texture;
}

const core::ValueStats& HeatmapCache::stats(const core::Matrix& m, std::uint64_t generation, bool percentiles) {
    Stats& entry = stats_[m.data()];
    entry.last_frame = ImGui::GetFrameCount();
    const Source source{m.data(), m.rows(), m.cols(), generation};
    const bool known = entry.source.data != nullptr;
    const bool current = entry.source == source && (entry.stats.has_percentiles || !percentiles);
    if (current) return entry.stats;
    if (m.size() > estimate_cells && over_budget()) {
        // Past this frame's budget, a large matrix keeps the range it had, or, new (another
        // trace's storage), gets one estimated from a sample; either is made exact in a later frame.
        deferred_ = true;
        if (!known || entry.source.rows != m.rows() || entry.source.cols != m.cols()) {
            entry.stats = core::estimate_value_stats(m, percentiles, estimate_cells);
            entry.source = {m.data(), m.rows(), m.cols(), ~std::uint64_t{0}};  // known, not current
        }
        return entry.stats;
    }
    const std::uint64_t start = now_ns();
    entry.stats = core::value_stats(m, percentiles);
    entry.source = source;
    charge(start);
    return entry.stats;
}

core::ColorRange heatmap_range(UiContext& ui, const core::Matrix& m, core::MatrixId id, std::uint64_t generation) {
    const core::ColorScale colors = core::info(id).colors;
    const core::Scaling scaling = ui.scaling(id, m.cols());
    if (colors == core::ColorScale::unit_interval && scaling == core::Scaling::fixed) return {0, 1, false};
    if (ui.clips_outliers(id, m.cols())) return core::auto_outlier_range(ui.heatmaps.stats(m, generation, true));
    return core::color_range(colors, scaling, ui.heatmaps.stats(m, generation, scaling == core::Scaling::percentile));
}

ImVec2 heatmap_gutters(const HeatmapOptions& o) {
    // As wide as the widest row label, up to max_row_label ems (longer labels are cut).
    float label_w = 0;
    if (o.row_labels) {
        const float most = ImGui::GetFontSize() * max_row_label;
        for (const std::string& s : *o.row_labels)
            if (label_w < most) label_w = std::max(label_w, text_width_up_to(s, most));
        if (label_w > 0) label_w += 6;
    }
    return {label_w, o.col_labels ? ImGui::GetTextLineHeight() + 2 : 0};
}

ColLabelRoom col_label_room(const UiContext& ui, const HeatmapOptions& o) {
    ColLabelRoom room;
    if (!o.col_labels) return room;
    room.upright_h = ImGui::GetTextLineHeight() + 2;
    // The widest label in the UI font, up to max_row_label ems, and in the numbers font.
    const float most = ImGui::GetFontSize() * max_row_label;
    const auto widest = [&](ImFont* font) {
        if (font) ImGui::PushFont(font);
        float w = 0;
        for (const std::string& s : *o.col_labels) w = std::max(w, text_width_up_to(s, most));
        if (font) ImGui::PopFont();
        return w;
    };
    const float widest_ui = widest(nullptr);
    const float widest_small = ui.fonts.numbers ? widest(ui.fonts.numbers) : widest_ui;
    room.upright_from = std::min(widest_ui, widest_small) + 3;  // a label fits where it and 3 pixels do
    room.turned_from = (ui.fonts.numbers ? ui.fonts.numbers->FontSize : ImGui::GetFontSize()) + 2;
    room.turned_h = std::max(room.upright_h, widest_ui + 4);
    return room;
}

namespace {

// Where a heatmap's parts go this frame.
struct HeatmapGeometry {
    int rows = 0, cols = 0;  // of the matrix as drawn
    float line_h = 0;
    float label_w = 0, label_h = 0;      // the row labels' gutter and the column labels'
    bool labels_turned = false;          // the column labels are turned (ColLabelRoom)
    float cell = 0;                      // a cell's side
    ImVec2 size;                         // the cells' view
    double row0 = 0, col0 = 0;           // the (fractional) first row and column in view
    ImVec2 origin, p0, p1;               // the whole item's corner; the cells' view
    int r0 = 0, r1 = 0, c0 = 0, c1 = 0;  // the rows and columns at least partly in view
    // Screen position of the top-left corner of cell (r, c).
    float x_of(double c) const { return static_cast<float>(p0.x + (c - col0) * cell); }
    float y_of(double r) const { return static_cast<float>(p0.y + (r - row0) * cell); }
};

// The label gutters and the cells' geometry: the cell side, the view's size and the (fractional)
// first row and column.
HeatmapGeometry heatmap_geometry(const UiContext& ui, const HeatmapOptions& o, int rows, int cols) {
    HeatmapGeometry g;
    g.rows = rows;
    g.cols = cols;
    const float line_h = g.line_h = ImGui::GetTextLineHeight();
    const HeatmapOptions::Viewport* vp = o.viewport ? &*o.viewport : nullptr;
    // Label gutters: fitted, only when the cells are tall enough for a label (measured only then);
    // with a viewport always, so zooming does not move the cells.
    if (vp) {
        const ImVec2 gutters = heatmap_gutters(o);
        g.label_w = gutters.x;
        g.label_h = gutters.y;
    } else {
        g.label_h = o.col_labels ? line_h + 2 : 0;
        const float cell_without_labels =
            std::min({o.max_cell, o.max_size.x / std::max(cols, 1), (o.max_size.y - g.label_h) / std::max(rows, 1)});
        if (o.row_labels && cell_without_labels >= line_h * 0.8f) g.label_w = heatmap_gutters(o).x;
    }
    const auto fitted_cell = [&] {
        return std::max(o.min_cell, std::min({o.max_cell, (o.max_size.x - g.label_w) / std::max(cols, 1),
                                              (o.max_size.y - g.label_h) / std::max(rows, 1)}));
    };
    if (vp) {
        g.cell = vp->cell;
        g.size = {std::max(vp->size.x - g.label_w, 1.0f), std::max(vp->size.y - g.label_h, 1.0f)};
        g.row0 = vp->row0;
        g.col0 = vp->col0;
    } else {
        g.cell = fitted_cell();
        // Column labels too wide for their columns are turned: their gutter grows to the longest,
        // and the cells are fitted again below it (they keep the turned labels' gutter even where
        // that leaves them narrower than a line of text).
        if (o.col_labels) {
            const ColLabelRoom room = col_label_room(ui, o);
            if (room.turned(g.cell)) {
                g.labels_turned = true;
                g.label_h = room.turned_h;
                g.cell = fitted_cell();
            }
        }
        g.size = {g.cell * cols, g.cell * rows};
    }
    g.origin = ImGui::GetCursorScreenPos();
    g.p0 = {g.origin.x + g.label_w, g.origin.y + g.label_h};
    g.p1 = {g.p0.x + g.size.x, g.p0.y + g.size.y};
    return g;
}

// The rows and columns at least partly inside both the view and the draw list's clip rectangle.
void visible_cells(const ImDrawList* draw, HeatmapGeometry& g) {
    const ImVec2 clip_min = draw->GetClipRectMin(), clip_max = draw->GetClipRectMax();
    const float cell = g.cell;
    const auto first = [&](float clip, float start, double offset, int count) {
        return std::clamp(static_cast<int>(std::floor(offset + (clip - start) / cell)), 0, count);
    };
    const auto last = [&](float clip, float start, double offset, int count) {
        return std::clamp(static_cast<int>(std::ceil(offset + (clip - start) / cell)), 0, count);
    };
    g.r0 = first(std::max(clip_min.y, g.p0.y), g.p0.y, g.row0, g.rows);
    g.r1 = last(std::min(clip_max.y, g.p1.y), g.p0.y, g.row0, g.rows);
    g.c0 = first(std::max(clip_min.x, g.p0.x), g.p0.x, g.col0, g.cols);
    g.c1 = last(std::min(clip_max.x, g.p1.x), g.p0.x, g.col0, g.cols);
}

// Draws `text` turned a quarter turn to the left (read from bottom to top), the line's top-left
// corner before the turn at `pivot`: it takes
// [pivot.x, pivot.x + line) across and [pivot.y − width, pivot.y] up. The glyphs are laid out
// unclipped and turned; the draw list's clip rectangle clips them where they end up.
void add_text_turned(ImDrawList* draw, ImFont* font, float size, ImVec2 pivot, ImU32 color, const std::string& text) {
    const int first = draw->VtxBuffer.Size;
    const ImVec4 everywhere{-FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX};
    draw->AddText(font, size, pivot, color, text.c_str(), nullptr, 0, &everywhere);
    for (int k = first; k < draw->VtxBuffer.Size; ++k) {
        ImVec2& p = draw->VtxBuffer[k].pos;
        p = {pivot.x + (p.y - pivot.y), pivot.y - (p.x - pivot.x)};
    }
}

// The column labels turned (ColLabelRoom), one a column, each centred on its column and ending at
// the gutter's bottom: in the UI font where a line of it fits a column, else in the numbers font.
void draw_turned_col_labels(UiContext& ui, const HeatmapOptions& o, const HeatmapGeometry& g, float col_label_y,
                            ImU32 text_col, const std::string& name) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    ImFont* font = ui.fonts.numbers && g.cell < g.line_h + 2 ? ui.fonts.numbers : ImGui::GetFont();
    const float font_size = font->FontSize;
    ImGui::PushFont(font);
    const float bottom = col_label_y + g.label_h - 2;
    const int c_end = std::min(g.c1, static_cast<int>(o.col_labels->size()));
    for (int c = g.c0; c < c_end; ++c) {
        const std::string& label = (*o.col_labels)[c];
        const std::string s = fitted_text(label, g.label_h - 4);  // whole up to max_row_label ems
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        const ImVec2 pivot{g.x_of(c) + (g.cell - font_size) / 2, bottom};
        add_text_turned(draw, font, font_size, pivot, text_col, s);
        if (ui.report)
            ui.report_label(name + ": col " + std::to_string(c), label, s, {pivot.x, bottom - w},
                            {pivot.x + font_size, bottom}, s != label);
    }
    ImGui::PopFont();
}

// The column labels, only where they fit, at col_label_y.
void draw_col_labels(UiContext& ui, const HeatmapOptions& o, const HeatmapGeometry& g, float col_label_y,
                     ImU32 text_col, const std::string& name) {
    if (g.labels_turned) return draw_turned_col_labels(ui, o, g, col_label_y, text_col, name);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    // Every visible column's label in the UI font, else in the smaller numbers font, those wider
    // than their column cut ("<pa…"); where most cuts would leave less than two characters, a
    // label every k columns, each from its column's left edge. Either way no column's label is
    // dropped while its neighbours keep theirs.
    const int c_end = std::min(g.c1, static_cast<int>(o.col_labels->size()));
    ImFont* font = ImGui::GetFont();
    if (ui.fonts.numbers)
        for (int c = g.c0; c < c_end; ++c)
            if (text_width_up_to((*o.col_labels)[c], g.cell) + 3 > g.cell) {
                font = ui.fonts.numbers;
                break;
            }
    const float font_size = font->FontSize;
    ImGui::PushFont(font);
    // The widest label matters up to four digits' width (a label every k columns has that room).
    const float four_digits = ImGui::CalcTextSize("x000").x;
    float widest = 0;
    for (int c = g.c0; c < c_end && widest < four_digits; ++c)
        widest = std::max(widest, text_width_up_to((*o.col_labels)[c], four_digits));
    const int spaced = std::max(1, static_cast<int>(std::ceil((std::min(widest, four_digits) + 4) / g.cell)));
    // Columns narrower than a character and its "…" leave no cut readable: spaced at once; else
    // each label that does not fit is cut, and spaced when most cuts keep less than two characters.
    int every = spaced;
    if (g.cell >= font_size) {
        const auto characters = [](const std::string& text) {
            return std::count_if(text.begin(), text.end(),
                                 [](char b) { return (static_cast<unsigned char>(b) & 0xC0) != 0x80; });
        };
        int unreadable = 0;
        for (int c = g.c0; c < c_end; ++c) {
            const std::string& label = (*o.col_labels)[c];
            if (const std::string cut = fitted_text(label, g.cell - 3); cut != label && characters(cut) < 3)
                ++unreadable;
        }
        if (2 * unreadable <= c_end - g.c0) every = 1;
    }
    for (int c = (g.c0 + every - 1) / every * every; c < c_end; c += every) {
        const std::string s = fitted_text((*o.col_labels)[c], every == 1 ? g.cell - 3 : every * g.cell - 4);
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        const float x = every == 1 ? g.x_of(c) + (g.cell - w) / 2 : g.x_of(c) + 2;
        if (every > 1 && c > 0 && x + w > g.p1.x + 2) break;  // a label past the cells would run into a neighbour
        draw->AddText(font, font_size, {x, col_label_y + (g.line_h - font_size) / 2}, text_col, s.c_str());
        const std::string& label = (*o.col_labels)[c];
        if (ui.report)
            ui.report_label(name + ": col " + std::to_string(c), label, s, {x, col_label_y},
                            {x + w, col_label_y + g.line_h}, s != label);
    }
    ImGui::PopFont();
}

// Each visible cell as a rectangle of its colour, with its number where it fits.
void draw_cell_rects(UiContext& ui, const core::Matrix& m, const HeatmapOptions& o, const HeatmapGeometry& g,
                     const char* report_as) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const Drawn v{m, o.transposed};
    const bool texture_path = g.cell < texture_cell_threshold;
    const ImU32 masked = ui.color(Color::masked_cell);
    // Visible cells only; without a texture uploader, tiny cells are merged into blocks.
    const int step = texture_path ? std::max({1, static_cast<int>(std::ceil(2.0f / g.cell)), (g.r1 - g.r0 + 127) / 128,
                                              (g.c1 - g.c0 + 127) / 128})
                                  : 1;
    // The small numbers font in small cells; the UI font where cells are large (the lesson).
    ImFont* number_font = ui.fonts.numbers;
    const bool small = number_font && g.cell < ImGui::GetFontSize() * 3.5f;
    ImFont* font = small ? number_font : ImGui::GetFont();
    const float font_size = small ? number_font->FontSize : ImGui::GetFontSize();
    const bool numbers = !texture_path && g.cell >= font_size + 2;
    const float gap = g.cell >= 12 ? 1.0f : 0.0f;
    // Each cell prints the most it has room for: number_digits significant digits, fewer, then
    // 2 digits with values below 1e-3 as "≈0", then 1 digit ("3e4"), each also without its
    // leading zero (".94"), then colour only (the tooltip always has the value exactly). One
    // wide value never blanks the others.
    const std::string about_zero = std::string(ui.symbols().about) + "0";
    auto fitted_text = [&](double value, ImVec2& size) {
        auto fits = [&](const std::string& text) {
            size = font->CalcTextSizeA(font_size, FLT_MAX, 0, text.c_str());
            return size.x + 3 <= g.cell;
        };
        if (!std::isfinite(value)) {
            std::string text = value < 0 ? "-inf" : "inf";
            return fits(text) ? text : std::string();
        }
        return core::fitted_cell_number(value, o.number_digits, about_zero, fits);
    };
    for (int r = g.r0 - g.r0 % step; r < g.r1; r += step)
        for (int c = g.c0 - g.c0 % step; c < g.c1; c += step) {
            const double value = v(r, c);
            const ImVec2 a{g.x_of(c), g.y_of(r)};
            const ImVec2 b{a.x + g.cell * step - gap, a.y + g.cell * step - gap};
            if (o.shown_cells >= 0 && static_cast<long>(r) * g.cols + c >= o.shown_cells) {
                draw->AddRectFilled(a, b, ui.color(Color::hidden_cell));  // not revealed yet
                continue;
            }
            const ImU32 bg = cell_color(value, o, masked);
            draw->AddRectFilled(a, b, bg);
            if (!numbers) continue;
            ImVec2 ts;
            const std::string text = fitted_text(value, ts);
            if (text.empty()) continue;
            draw->AddText(font, font_size, {a.x + (g.cell - gap - ts.x) / 2, a.y + (g.cell - gap - ts.y) / 2},
                          text_color_on(bg), text.c_str());
            if (ui.report && report_as) ui.report->numbers.push_back({report_as, r, c, text, a, b});
        }
}

}  // namespace

HeatmapHit heatmap(UiContext& ui, const char* id, const core::Matrix& m, const HeatmapOptions& o,
                   const char* report_as) {
    HeatmapHit hit;
    ImGui::PushID(id);
    const ImGuiID gid = ImGui::GetID("##cells");
    const Drawn v{m, o.transposed};
    const HeatmapOptions::Viewport* vp = o.viewport ? &*o.viewport : nullptr;
    HeatmapGeometry g = heatmap_geometry(ui, o, v.rows(), v.cols());
    const int rows = g.rows, cols = g.cols;
    const float cell = g.cell, line_h = g.line_h;
    const ImVec2 origin = g.origin, p0 = g.p0, p1 = g.p1;
    hit.cells_min = p0;
    hit.cells_max = p1;
    ImGui::InvisibleButton("##cells", {g.label_w + g.size.x, g.label_h + g.size.y});
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);

    // The rows and columns at least partly inside both the view and the clip rectangle.
    draw->PushClipRect(vp ? ImVec2{origin.x, origin.y} : draw->GetClipRectMin(), vp ? p1 : draw->GetClipRectMax(),
                       true);
    visible_cells(draw, g);
    const int r0 = g.r0, r1 = g.r1, c0 = g.c0, c1 = g.c1;

    // Axis labels, only where they fit; beside the cells when a viewport shows the matrix smaller
    // than the view (centred), else in the gutters.
    const float row_label_x = std::max(origin.x, g.x_of(0) - g.label_w);
    const float col_label_y = std::max(origin.y, g.y_of(0) - g.label_h);
    const std::string name = report_as ? report_as : id;  // the labels' name in the draw report
    if (o.row_labels && cell >= line_h * 0.8f)
        for (int r = r0; r < r1 && r < static_cast<int>(o.row_labels->size()); ++r) {
            const std::string& label = (*o.row_labels)[r];
            const std::string shown = fitted_text(label, g.label_w - 6);
            const ImVec2 at{row_label_x, g.y_of(r) + (cell - line_h) / 2};
            draw->AddText(at, text_col, shown.c_str());
            if (ui.report)
                ui.report_label(name + ": row " + std::to_string(r), label, shown, at,
                                {at.x + ImGui::CalcTextSize(shown.c_str()).x, at.y + line_h}, shown != label);
        }
    if (o.col_labels) draw_col_labels(ui, o, g, col_label_y, text_col, name);
    draw->PopClipRect();
    draw->PushClipRect(p0, p1, true);  // the cells, their marks and the hovered outline stay in the view

    const bool texture_path = cell < texture_cell_threshold;
    if (texture_path && ui.heatmaps.has_textures() && r1 > r0 && c1 > c0 && o.shown_cells < 0) {
        // Fitted: the whole matrix, so scrolling the window reuses the texture. Zoomed (a viewport):
        // the visible block only, at the size it is drawn.
        const CellBlock block = vp ? CellBlock{r0, c0, r1 - r0, c1 - c0} : CellBlock{0, 0, rows, cols};
        const ImVec2 a{g.x_of(block.col0), g.y_of(block.row0)};
        const ImVec2 b{g.x_of(block.col0 + block.cols), g.y_of(block.row0 + block.rows)};
        hit.cells_per_pixel = std::max(1.0f, 1 / cell);
        draw->AddImage(ui.heatmaps.texture(gid, m, o.transposed, block, o, ui.color(Color::masked_cell),
                                           {b.x - a.x, b.y - a.y}),
                       a, b);
    } else if (r1 > r0 && c1 > c0) {
        draw_cell_rects(ui, m, o, g, report_as);
    }

    for (const HeatmapMark& mark : o.marks) {
        const float x0 = mark.col < 0 ? g.x_of(0) : g.x_of(mark.col);
        const float x1 = mark.col < 0 ? g.x_of(cols) : g.x_of(mark.col + 1);
        const float y0 = mark.row < 0 ? g.y_of(0) : g.y_of(mark.row);
        const float y1 = mark.row < 0 ? g.y_of(rows) : g.y_of(mark.row + 1);
        draw->AddRect({x0 - 1, y0 - 1}, {x1, y1}, mark.color ? mark.color : ui.color(Color::operand), 0, 0, ui.px(2));
    }

    // The cell under the pointer.
    if (ImGui::IsItemHovered()) {
        const ImVec2 mouse = ImGui::GetMousePos();
        if (mouse.x >= p0.x && mouse.y >= p0.y && mouse.x < p1.x && mouse.y < p1.y) {
            const int c = static_cast<int>(std::floor(g.col0 + (mouse.x - p0.x) / cell));
            const int r = static_cast<int>(std::floor(g.row0 + (mouse.y - p0.y) / cell));
            if (r >= 0 && r < rows && c >= 0 && c < cols) {
                hit.hovered = true;
                hit.row = r;
                hit.col = c;
                hit.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
                draw->AddRect({g.x_of(c), g.y_of(r)}, {g.x_of(c + 1), g.y_of(r + 1)}, ui.color(Color::hovered_cell), 0,
                              0, ui.px(1.5f));
            }
        }
    }
    draw->PopClipRect();
    ImGui::PopID();
    return hit;
}

}  // namespace attnviz::app
