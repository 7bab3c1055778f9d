#include "core/render/colormaps.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>

namespace attnviz::core {

namespace {

struct Stop {
    float t, r, g, b;
};

// Viridis, sampled at five points: perceptually ordered, readable in greyscale.
constexpr Stop viridis[] = {
    {0.00f, 68, 1, 84}, {0.25f, 59, 82, 139}, {0.50f, 33, 145, 140}, {0.75f, 94, 201, 98}, {1.00f, 253, 231, 37}};
// Cividis, sampled at five entries of matplotlib's 256 (lib/matplotlib/_cm_listed.py, _cividis_data:
// entries 0, 64, 128, 191 and 255, each channel times 255, rounded): blue to yellow, its luminance
// rising all the way, for readers with a colour-vision deficiency.
constexpr Stop cividis[] = {{0.0f, 0, 34, 78},
                            {64 / 255.0f, 67, 78, 108},
                            {128 / 255.0f, 124, 123, 120},
                            {191 / 255.0f, 187, 173, 109},
                            {1.0f, 254, 232, 56}};
// Blue, near-white at 0, red.
constexpr Stop coolwarm[] = {{0.00f, 59, 76, 192}, {0.50f, 242, 242, 242}, {1.00f, 180, 4, 38}};

using Table = std::array<Rgba, 256>;

// Entry k is t = k/255 interpolated linearly between the stops around it, each channel truncated.
template <std::size_t N>
Table build(const Stop (&stops)[N]) {
    Table table{};
    for (int k = 0; k < 256; ++k) {
        const float t = k / 255.0f;
        std::size_t s = 0;
        while (s + 2 < N && t > stops[s + 1].t) ++s;
        const Stop& a = stops[s];
        const Stop& b = stops[s + 1];
        const float u = (t - a.t) / (b.t - a.t);
        auto channel = [u](float from, float to) { return static_cast<std::uint8_t>(from + (to - from) * u); };
        table[static_cast<std::size_t>(k)] = {channel(a.r, b.r), channel(a.g, b.g), channel(a.b, b.b), 255};
    }
    return table;
}

const Table& table(Colormap map) {
    static const Table sequential = build(viridis);
    static const Table diverging = build(coolwarm);
    static const Table blind_safe = build(cividis);
    switch (map) {
        case Colormap::sequential: return sequential;
        case Colormap::cividis: return blind_safe;
        case Colormap::diverging: break;
    }
    return diverging;
}

template <std::size_t N>
std::vector<ColorStop> stops_of(const Stop (&stops)[N]) {
    std::vector<ColorStop> out;
    for (const Stop& s : stops)
        out.push_back(
            {s.t,
             {static_cast<std::uint8_t>(s.r), static_cast<std::uint8_t>(s.g), static_cast<std::uint8_t>(s.b), 255}});
    return out;
}

}  // namespace

Rgba colormap_rgba(Colormap map, float t) {
    if (!(t >= 0)) t = 0;  // also NaN
    if (t > 1) t = 1;
    return table(map)[static_cast<std::size_t>(t * 255.0f + 0.5f)];
}

std::vector<ColorStop> colormap_stops(Colormap map) {
    switch (map) {
        case Colormap::sequential: return stops_of(viridis);
        case Colormap::cividis: return stops_of(cividis);
        case Colormap::diverging: break;
    }
    return stops_of(coolwarm);
}

float relative_luminance(Rgba c) {
    auto linear = [](std::uint8_t channel) {
        const float v = channel * (1.0f / 255.0f);  // as ImGui converts colours
        return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
    };
    return 0.2126f * linear(c.r) + 0.7152f * linear(c.g) + 0.0722f * linear(c.b);
}

float contrast_ratio(Rgba a, Rgba b) {
    const float la = relative_luminance(a), lb = relative_luminance(b);
    return (std::max(la, lb) + 0.05f) / (std::min(la, lb) + 0.05f);
}

Rgba text_color_on(Rgba bg) { return relative_luminance(bg) > 0.18f ? Rgba{0, 0, 0, 255} : Rgba{255, 255, 255, 255}; }

Rgba head_rgba(int head, int heads) {
    static constexpr Rgba tab10[] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                                     {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
    if (heads <= static_cast<int>(std::size(tab10)) && head >= 0 && head < heads) return tab10[head];
    float hue = static_cast<float>(head) * 0.618034f;
    hue -= static_cast<float>(static_cast<int>(hue));
    // HSV (saturation 0.65, value 0.95) to RGB, rounded to 8 bits as ImGui converts colours.
    constexpr float s = 0.65f, v = 0.95f;
    const float h6 = std::fmod(hue, 1.0f) / (60.0f / 360.0f);
    const int sector = static_cast<int>(h6);
    const float f = h6 - static_cast<float>(sector);
    const float p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    float r = v, g = p, b = q;  // sector 5
    switch (sector) {
        case 0: r = v, g = t, b = p; break;
        case 1: r = q, g = v, b = p; break;
        case 2: r = p, g = v, b = t; break;
        case 3: r = p, g = q, b = v; break;
        case 4: r = t, g = p, b = v; break;
        default: break;
    }
    const auto byte = [](float x) { return static_cast<std::uint8_t>(std::clamp(x, 0.0f, 1.0f) * 255.0f + 0.5f); };
    return {byte(r), byte(g), byte(b), 255};
}

std::string hex(Rgba c) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s = "#";
    for (std::uint8_t v : {c.r, c.g, c.b}) {
        s += digits[v >> 4];
        s += digits[v & 15];
    }
    return s;
}

}  // namespace attnviz::core
