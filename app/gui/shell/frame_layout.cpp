#include "shell/frame_layout.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>

namespace attnviz::app {

namespace {

// The smallest a place gets: a title bar and a few lines, a few words wide.
constexpr float min_place_w = 150, min_place_h = 80;

// `share` of `total`, kept within [lo, total − hi] (and at 0 when even that cannot be).
float clamped(float share, float total, float lo, float hi) {
    const float v = std::round(share * total);
    return std::max(0.0f, std::min(std::max(v, lo), total - hi));
}

// The geometry the places and splitters share.
struct Tiles {
    float top, height, width;
    float left_w, left_top_h, right_x, right_w, upper_h, upper_left_w, lower_left_w;
};

Tiles tiles(ImVec2 d, float menu_h, float status_h, const LayoutShares& s) {
    const auto shown = [&](Place p) { return !s.hidden[static_cast<size_t>(p)]; };
    const bool left = shown(Place::left_top) || shown(Place::left_bottom);
    const bool upper = shown(Place::upper_left) || shown(Place::upper_right);
    const bool lower = shown(Place::lower_left) || shown(Place::lower_right);
    const bool right = upper || lower;
    // A share between two parts: all to one when the other is hidden (or both are).
    const auto split = [](bool first, bool second, float share, float total, float lo) {
        if (!first) return 0.0f;
        if (!second) return total;
        return clamped(share, total, lo, lo);
    };
    Tiles t;
    t.top = menu_h;
    t.height = std::max(0.0f, d.y - status_h - menu_h);
    t.width = d.x;
    t.left_w = !left ? 0 : !right ? t.width : clamped(s.left, t.width, min_place_w, 2 * min_place_w);
    t.left_top_h = split(shown(Place::left_top), shown(Place::left_bottom), s.left_top, t.height, min_place_h);
    t.right_x = t.left_w;
    t.right_w = t.width - t.left_w;
    t.upper_h = split(upper, lower, s.upper, t.height, min_place_h);
    t.upper_left_w = split(shown(Place::upper_left), shown(Place::upper_right), s.upper_left, t.right_w, min_place_w);
    t.lower_left_w = split(shown(Place::lower_left), shown(Place::lower_right), s.lower_left, t.right_w, min_place_w);
    return t;
}

// A splitter: the border it lies on, and the share it moves.
struct Splitter {
    ImVec2 min, max;  // the border (a line: min.x == max.x or min.y == max.y)
    bool vertical;    // dragged left and right
    float LayoutShares::*share;
    float origin, extent;  // share = (mouse − origin) / extent
};

std::array<Splitter, 5> splitters_of(const Tiles& t) {
    const float bottom = t.top + t.height;
    return {{
        {{t.left_w, t.top}, {t.left_w, bottom}, true, &LayoutShares::left, 0, t.width},
        {{0, t.top + t.left_top_h}, {t.left_w, t.top + t.left_top_h}, false, &LayoutShares::left_top, t.top, t.height},
        {{t.right_x, t.top + t.upper_h}, {t.width, t.top + t.upper_h}, false, &LayoutShares::upper, t.top, t.height},
        {{t.right_x + t.upper_left_w, t.top},
         {t.right_x + t.upper_left_w, t.top + t.upper_h},
         true,
         &LayoutShares::upper_left,
         t.right_x,
         t.right_w},
        {{t.right_x + t.lower_left_w, t.top + t.upper_h},
         {t.right_x + t.lower_left_w, bottom},
         true,
         &LayoutShares::lower_left,
         t.right_x,
         t.right_w},
    }};
}

// Whether both sides of a splitter have room (neither is a hidden panel's empty place).
bool splitter_active(const Splitter& sp, const Tiles& t) {
    const float at = sp.vertical ? sp.min.x : sp.min.y;
    const float lo = sp.vertical ? (sp.share == &LayoutShares::left ? 0 : t.right_x) : t.top;
    const float hi = sp.vertical ? (sp.share == &LayoutShares::left ? t.width : t.width) : t.top + t.height;
    return at > lo + 0.5f && at < hi - 0.5f;
}

}  // namespace

LayoutShares default_shares(ImVec2 d) {
    LayoutShares s;
    if (d.x > 0) s.left = std::clamp(d.x * 0.22f, 270.0f, 420.0f) / d.x;
    return s;
}

Layout tiled_layout(ImVec2 d, float menu_h, float status_h, const LayoutShares& shares) {
    const Tiles t = tiles(d, menu_h, status_h, shares);
    Layout l;
    auto at = [&](Place p) -> Rect& { return l[static_cast<size_t>(p)]; };
    const float lower_y = t.top + t.upper_h, lower_h = t.height - t.upper_h;
    at(Place::left_top) = {{0, t.top}, {t.left_w, t.left_top_h}};
    at(Place::left_bottom) = {{0, t.top + t.left_top_h}, {t.left_w, t.height - t.left_top_h}};
    at(Place::upper_left) = {{t.right_x, t.top}, {t.upper_left_w, t.upper_h}};
    at(Place::upper_right) = {{t.right_x + t.upper_left_w, t.top}, {t.right_w - t.upper_left_w, t.upper_h}};
    at(Place::lower_left) = {{t.right_x, lower_y}, {t.lower_left_w, lower_h}};
    at(Place::lower_right) = {{t.right_x + t.lower_left_w, lower_y}, {t.right_w - t.lower_left_w, lower_h}};
    return l;
}

std::string shares_text(const LayoutShares& s) {
    char buf[200];
    std::string hidden;
    for (bool h : s.hidden) hidden += h ? '1' : '0';
    std::snprintf(buf, sizeof buf, "left=%.4f left_top=%.4f upper=%.4f upper_left=%.4f lower_left=%.4f hidden=%s",
                  s.left, s.left_top, s.upper, s.upper_left, s.lower_left, hidden.c_str());
    return buf;
}

void read_shares(const std::string& text, LayoutShares& shares) {
    LayoutShares s;
    if (std::sscanf(text.c_str(), "left=%f left_top=%f upper=%f upper_left=%f lower_left=%f", &s.left, &s.left_top,
                    &s.upper, &s.upper_left, &s.lower_left) != 5)
        return;
    for (float v : {s.left, s.left_top, s.upper, s.upper_left, s.lower_left})
        if (!(v > 0.02f && v < 0.98f)) return;  // a fraction of the area, or nothing of it is used
    // Hidden panels, as one digit each (optional: older layouts have none).
    if (const size_t at = text.find(" hidden="); at != std::string::npos) {
        const std::string digits = text.substr(at + 8, s.hidden.size());
        if (digits.size() == s.hidden.size() && digits.find_first_not_of("01") == std::string::npos)
            for (size_t k = 0; k < s.hidden.size(); ++k) s.hidden[k] = digits[k] == '1';
    }
    shares = s;
}

Rect status_rect(ImVec2 d, float status_h) { return {{0, d.y - status_h}, {d.x, status_h}}; }

void handle_splitters(LayoutShares& shares, Splitters& s, ImVec2 display, float menu_h, float status_h) {
    const ImGuiIO& io = ImGui::GetIO();
    const Tiles t = tiles(display, menu_h, status_h, shares);
    const std::array<Splitter, 5> all = splitters_of(t);
    if (s.dragging >= 0) {
        const Splitter& sp = all[static_cast<size_t>(s.dragging)];
        if (io.MouseDown[0] && sp.extent > 0) {
            const float at = sp.vertical ? io.MousePos.x : io.MousePos.y;
            shares.*sp.share = std::clamp((at - sp.origin) / sp.extent, 0.03f, 0.97f);
            ImGui::SetMouseCursor(sp.vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
        } else {
            s.dragging = -1;
            ImGui::MarkIniSettingsDirty();
        }
        return;
    }
    // Not while a widget is used or hovered (a scrollbar at a border wins), nor under a popup.
    if (ImGui::IsAnyItemActive() || ImGui::IsAnyItemHovered() ||
        ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel))
        return;
    const float half = splitter_width / 2;
    for (size_t k = 0; k < all.size(); ++k) {
        const Splitter& sp = all[k];
        if (!splitter_active(sp, t)) continue;  // a hidden panel on one side: nothing to share
        const ImVec2 a{sp.min.x - (sp.vertical ? half : 0), sp.min.y - (sp.vertical ? 0 : half)};
        const ImVec2 b{sp.max.x + (sp.vertical ? half : 0), sp.max.y + (sp.vertical ? 0 : half)};
        if (io.MousePos.x < a.x || io.MousePos.x > b.x || io.MousePos.y < a.y || io.MousePos.y > b.y) continue;
        ImGui::SetMouseCursor(sp.vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
        if (ImGui::IsMouseClicked(0)) s.dragging = static_cast<int>(k);
        return;
    }
}

}  // namespace attnviz::app
