#include "heatmap.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "core/format.hpp"
#include "ui_context.hpp"

namespace attnviz::app {

namespace {

// Largest texture side: more texels than a screen shows gain nothing. Larger matrices are pooled.
constexpr int max_texture_side = 1024;
// A cached texture or range not used for this many frames is freed.
constexpr int cache_frames = 120;

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
    const double span = o.hi - o.lo;
    return colormap_color(o.colormap, span > 0 ? static_cast<float>((v - o.lo) / span) : 0.5f);
}

}  // namespace

// The texture has (at most) one texel per pixel the matrix is drawn on: each texel shows the value
// of largest magnitude of the cells it covers, so a single strong weight is not lost between samples.
ImTextureID HeatmapCache::texture(ImGuiID id, const core::Matrix& m, bool transposed, const HeatmapOptions& o,
                                  ImU32 masked, ImVec2 drawn) {
    const Drawn v{m, transposed};
    auto texels = [](int cells, float pixels) {
        return std::max(1, std::min({cells, max_texture_side, static_cast<int>(std::ceil(pixels))}));
    };
    const int rows = texels(v.rows(), drawn.y), cols = texels(v.cols(), drawn.x);
    Texture& entry = textures_[id];
    entry.last_frame = ImGui::GetFrameCount();
    const Source source{m.data(), m.rows(), m.cols(), o.generation};
    if (entry.texture && entry.source == source && entry.transposed == transposed && entry.colormap == o.colormap &&
        entry.lo == o.lo && entry.hi == o.hi && entry.rows == rows && entry.cols == cols)
        return entry.texture;
    if (entry.texture && over_budget()) return entry.texture;  // rebuilt in a later frame
    const std::uint64_t start = now_ns();
    std::vector<std::uint32_t> pixels(static_cast<size_t>(rows) * cols);
    for (int r = 0; r < rows; ++r) {
        const int r0 = static_cast<int>(static_cast<long>(r) * v.rows() / rows);
        const int r1 = std::max(r0 + 1, static_cast<int>(static_cast<long>(r + 1) * v.rows() / rows));
        for (int c = 0; c < cols; ++c) {
            const int c0 = static_cast<int>(static_cast<long>(c) * v.cols() / cols);
            const int c1 = std::max(c0 + 1, static_cast<int>(static_cast<long>(c + 1) * v.cols() / cols));
            double strongest = v(r0, c0);
            for (int rr = r0; rr < r1; ++rr)
                for (int cc = c0; cc < c1; ++cc)
                    if (std::abs(v(rr, cc)) > std::abs(strongest) || !std::isfinite(strongest)) strongest = v(rr, cc);
            pixels[static_cast<size_t>(r) * cols + c] = cell_color(strongest, o, masked);
        }
    }
    entry.texture = upload_(entry.texture, cols, rows, pixels.data());
    entry.source = source;
    entry.transposed = transposed;
    entry.rows = rows;
    entry.cols = cols;
    entry.colormap = o.colormap;
    entry.lo = o.lo;
    entry.hi = o.hi;
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
    }
    upload_ = upload;
    destroy_ = destroy;
}

void HeatmapCache::end_frame() {
    budget_left_ms_ = rebuild_budget_ms_;
    rebuilt_this_frame_ = false;
    const int now = ImGui::GetFrameCount();
    for (auto it = textures_.begin(); it != textures_.end();) {
        if (now - it->second.last_frame > cache_frames) {
            if (it->second.texture && destroy_) destroy_(it->second.texture);
            it = textures_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = ranges_.begin(); it != ranges_.end();)
        it = now - it->second.last_frame > cache_frames ? ranges_.erase(it) : ++it;
}

double HeatmapCache::max_abs(const core::Matrix& m, std::uint64_t generation) {
    Range& entry = ranges_[m.data()];
    entry.last_frame = ImGui::GetFrameCount();
    const Source source{m.data(), m.rows(), m.cols(), generation};
    const bool known = entry.source.data != nullptr;
    if (!(entry.source == source) && !(known && m.size() > 4096 && over_budget())) {  // large ones may wait a frame
        const std::uint64_t start = now_ns();
        double largest = 0;
        for (Eigen::Index k = 0; k < m.size(); ++k)
            if (std::isfinite(m.data()[k])) largest = std::max(largest, std::abs(m.data()[k]));
        entry.source = source;
        entry.max_abs = largest > 0 ? largest : 1;
        charge(start);
    }
    return entry.max_abs;
}

void heatmap_range(UiContext& ui, const core::Matrix& m, Colormap map, std::uint64_t generation, double& lo,
                   double& hi) {
    if (map == Colormap::sequential) {  // weights: 0..1, or 0..the largest weight for many keys
        lo = 0;
        hi = m.cols() >= auto_weights_from_keys ? ui.heatmaps.max_abs(m, generation) : 1;
        return;
    }
    hi = ui.heatmaps.max_abs(m, generation);
    lo = -hi;
}

HeatmapHit heatmap(UiContext& ui, const char* id, const core::Matrix& m, const HeatmapOptions& o,
                   const char* report_as) {
    HeatmapHit hit;
    ImGui::PushID(id);
    const ImGuiID gid = ImGui::GetID("##cells");
    const Drawn v{m, o.transposed};
    const int rows = v.rows(), cols = v.cols();
    const float line_h = ImGui::GetTextLineHeight();

    // Label gutters: only when the cells are tall enough for a label (measured only then).
    const float label_h = o.col_labels ? line_h + 2 : 0;
    const float cell_without_labels =
        std::min({o.max_cell, o.max_size.x / std::max(cols, 1), (o.max_size.y - label_h) / std::max(rows, 1)});
    float label_w = 0;
    if (o.row_labels && cell_without_labels >= line_h * 0.8f) {
        for (const std::string& s : *o.row_labels) label_w = std::max(label_w, ImGui::CalcTextSize(s.c_str()).x);
        if (label_w > 0) label_w += 6;
    }

    float cell = std::min(
        {o.max_cell, (o.max_size.x - label_w) / std::max(cols, 1), (o.max_size.y - label_h) / std::max(rows, 1)});
    cell = std::max(cell, o.min_cell);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 p0{origin.x + label_w, origin.y + label_h};
    const ImVec2 size{cell * cols, cell * rows};
    ImGui::InvisibleButton("##cells", {label_w + size.x, label_h + size.y});
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);

    // Axis labels, only where they fit.
    if (o.row_labels)
        for (int r = 0; r < rows && r < static_cast<int>(o.row_labels->size()); ++r)
            if (cell >= line_h * 0.8f)
                draw->AddText({origin.x, p0.y + r * cell + (cell - line_h) / 2}, text_col, (*o.row_labels)[r].c_str());
    if (o.col_labels)
        for (int c = 0; c < cols && c < static_cast<int>(o.col_labels->size()); ++c) {
            const char* s = (*o.col_labels)[c].c_str();
            const float w = ImGui::CalcTextSize(s).x;
            if (w + 3 <= cell) draw->AddText({p0.x + c * cell + (cell - w) / 2, origin.y}, text_col, s);
        }

    const ImVec2 clip_min = draw->GetClipRectMin(), clip_max = draw->GetClipRectMax();
    const bool texture_path = cell < texture_cell_threshold;
    const ImU32 masked = ui.color(Color::masked_cell);
    if (texture_path && ui.heatmaps.has_textures() && rows > 0 && cols > 0 && o.shown_cells < 0) {
        draw->AddImage(ui.heatmaps.texture(gid, m, o.transposed, o, masked, size), p0, {p0.x + size.x, p0.y + size.y});
    } else {
        // Visible cells only; without a texture uploader, tiny cells are merged into blocks.
        const int step = texture_path ? std::max({1, static_cast<int>(std::ceil(2.0f / cell)), (rows + 127) / 128,
                                                  (cols + 127) / 128})
                                      : 1;
        const int r0 = std::max(0, static_cast<int>((clip_min.y - p0.y) / cell));
        const int r1 = std::min(rows, static_cast<int>((clip_max.y - p0.y) / cell) + 1);
        const int c0 = std::max(0, static_cast<int>((clip_min.x - p0.x) / cell));
        const int c1 = std::min(cols, static_cast<int>((clip_max.x - p0.x) / cell) + 1);
        // The small numbers font in small cells; the UI font where cells are large (the lesson).
        ImFont* number_font = ui.fonts.numbers;
        const bool small = number_font && cell < ImGui::GetFontSize() * 3.5f;
        ImFont* font = small ? number_font : ImGui::GetFont();
        const float font_size = small ? number_font->FontSize : ImGui::GetFontSize();
        const bool numbers = !texture_path && cell >= font_size + 2;
        const float gap = cell >= 12 ? 1.0f : 0.0f;
        // Precision levels: number_digits down to 2 significant digits; the last level (1) keeps 2
        // digits but writes values below 1e-3 as "≈0" (the tooltip has them exactly).
        const std::string about_zero = std::string(ui.symbols().about) + "0";
        auto cell_text = [&](double v, int level) {
            if (!std::isfinite(v)) return std::string(v < 0 ? "-inf" : "inf");
            if (level == 1) return v != 0 && std::abs(v) < 1e-3 ? about_zero : core::format_compact(v, 2);
            return core::format_compact(v, level);
        };
        auto fits = [&](const std::string& text) {
            return font->CalcTextSizeA(font_size, FLT_MAX, 0, text.c_str()).x + 3 <= cell;
        };
        // One precision for the whole matrix, the highest at which every visible value fits:
        // a matrix shows all its numbers or none, never a patchwork.
        int digits = 0;
        if (numbers)
            for (int d = o.number_digits; d >= 1 && digits == 0; --d) {
                bool all = true;
                for (int r = r0; r < r1 && all; ++r)
                    for (int c = c0; c < c1 && all; ++c) all = fits(cell_text(v(r, c), d));
                if (all) digits = d;
            }
        for (int r = r0 - r0 % step; r < r1; r += step)
            for (int c = c0 - c0 % step; c < c1; c += step) {
                const double value = v(r, c);
                const ImVec2 a{p0.x + c * cell, p0.y + r * cell};
                const ImVec2 b{a.x + cell * step - gap, a.y + cell * step - gap};
                if (o.shown_cells >= 0 && static_cast<long>(r) * cols + c >= o.shown_cells) {
                    draw->AddRectFilled(a, b, ui.color(Color::hidden_cell));  // not revealed yet
                    continue;
                }
                const ImU32 bg = cell_color(value, o, masked);
                draw->AddRectFilled(a, b, bg);
                if (digits == 0) continue;
                const std::string text = cell_text(value, digits);
                const ImVec2 ts = font->CalcTextSizeA(font_size, FLT_MAX, 0, text.c_str());
                draw->AddText(font, font_size, {a.x + (cell - gap - ts.x) / 2, a.y + (cell - gap - ts.y) / 2},
                              text_color_on(bg), text.c_str());
                if (ui.report && report_as) ui.report->numbers.push_back({report_as, r, c, text, a, b});
            }
    }

    for (const HeatmapMark& mark : o.marks) {
        const float x0 = mark.col < 0 ? p0.x : p0.x + mark.col * cell;
        const float x1 = mark.col < 0 ? p0.x + size.x : x0 + cell;
        const float y0 = mark.row < 0 ? p0.y : p0.y + mark.row * cell;
        const float y1 = mark.row < 0 ? p0.y + size.y : y0 + cell;
        draw->AddRect({x0 - 1, y0 - 1}, {x1, y1}, mark.color ? mark.color : ui.color(Color::operand), 0, 0, 2.0f);
    }

    if (ImGui::IsItemHovered()) {
        const ImVec2 mouse = ImGui::GetMousePos();
        const int c = static_cast<int>(std::floor((mouse.x - p0.x) / cell));
        const int r = static_cast<int>(std::floor((mouse.y - p0.y) / cell));
        if (r >= 0 && r < rows && c >= 0 && c < cols) {
            hit.hovered = true;
            hit.row = r;
            hit.col = c;
            hit.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
            draw->AddRect({p0.x + c * cell, p0.y + r * cell}, {p0.x + (c + 1) * cell, p0.y + (r + 1) * cell},
                          ui.color(Color::hovered_cell), 0, 0, 1.5f);
        }
    }
    ImGui::PopID();
    return hit;
}

}  // namespace attnviz::app
