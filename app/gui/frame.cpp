#include "frame.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

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

namespace {

// The chosen tab of each place, as titles ("tabs=Head view|Gradients|…", one per place, empty for
// the default): titles survive a new version's panel table, indices would not.
std::string tabs_text(const Panels& p) {
    std::string text = "tabs=";
    for (size_t place = 0; place < p.active.size(); ++place) {
        if (place > 0) text += '|';
        if (p.active[place] >= 0) text += explorer_panels()[static_cast<size_t>(p.active[place])].title;
    }
    return text;
}

// A title that is no panel, or a panel of another place, leaves that place's tab as it was.
void read_tabs(const char* line, Panels& p) {
    std::string rest = line + 5;
    for (size_t place = 0; place < p.active.size(); ++place) {
        const size_t bar = rest.find('|');
        const std::string title = rest.substr(0, bar);
        const std::span<const PanelRow> rows = explorer_panels();
        for (size_t k = 0; k < rows.size(); ++k)
            if (title == rows[k].title && static_cast<size_t>(rows[k].place) == place)
                p.active[place] = static_cast<int>(k);
        if (bar == std::string::npos) break;
        rest = rest.substr(bar + 1);
    }
}

}  // namespace

void install_layout_settings(Panels& panels) {
    ImGuiSettingsHandler h;
    h.TypeName = "attnviz";
    h.TypeHash = ImHashStr("attnviz");
    h.UserData = &panels;
    h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler*, const char* name) -> void* {
        return std::strcmp(name, "Layout") == 0 ? reinterpret_cast<void*>(1) : nullptr;
    };
    h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, void*, const char* line) {
        Panels& p = *static_cast<Panels*>(handler->UserData);
        if (std::strncmp(line, "tabs=", 5) == 0) {
            read_tabs(line, p);
            return;
        }
        const LayoutShares before = p.shares;
        read_shares(line, p.shares);
        if (!(p.shares == before)) p.shares_set = true;
    };
    h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* out) {
        const Panels& p = *static_cast<const Panels*>(handler->UserData);
        out->appendf("[attnviz][Layout]\n%s\n%s\n\n", shares_text(p.shares).c_str(), tabs_text(p).c_str());
    };
    ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

Rect status_rect(ImVec2 d, float status_h) { return {{0, d.y - status_h}, {d.x, status_h}}; }

namespace {

const PanelRow panel_table[] = {
    {"Dimensions", Place::left_top, Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_dimensions_panel(s, ui, p.dimensions); }},
    {"Inputs: X and weights", Place::upper_left, Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_inputs_panel(s, ui, p.inputs); }},
    {"Mask", Place::upper_left, Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_mask_panel(s, ui, p.mask); }},
    {"Pipeline", Place::left_bottom, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_pipeline_panel(s, ui, p.pipeline); }},
    {"Attention per head", Place::upper_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_heads_panel(s, ui, p.heads); }},
    {"Head view", Place::upper_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_head_view_panel(s, ui, p.head_view); }},
    {"Model view", Place::upper_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_model_panel(s, ui, p.model); }},
    {"Every intermediate", Place::lower_left, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_trace_panel(s, ui, p.trace); }},
    {"Saturation lab", Place::lower_left, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_saturation_panel(s, ui, p.saturation); }},
    {"Compare", Place::lower_left, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_compare_panel(s, ui, p.compare); }},
    {"Matrix viewer", Place::lower_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_viewer_panel(s, ui, p.viewer); }},
    {"Gradients", Place::lower_right, Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_gradient_panel(s, ui, p.gradients); }},
};

void record_window(UiContext& ui, const char* title) {
    if (ui.report) ui.report->windows.push_back({title, ImGui::GetWindowPos(), ImGui::GetWindowSize()});
}

// The tabs of a place holding several panels, at the top of the panel shown. Returns false when
// another tab was chosen (that panel is drawn from the next frame on; this one draws nothing more).
int panels_in_place(Place place) {
    int count = 0;
    for (const PanelRow& row : panel_table) count += row.place == place;
    return count;
}

bool draw_tabs(int index, const PanelRow& row, UiContext& ui, Panels& p) {
    if (panels_in_place(row.place) < 2) return true;
    bool keep = true;
    const std::string id = std::string("##tabs ") + row.title;
    if (ImGui::BeginTabBar(id.c_str(), ImGuiTabBarFlags_FittingPolicyScroll)) {
        const bool appearing = ImGui::IsWindowAppearing();
        for (size_t k = 0; k < std::size(panel_table); ++k) {
            if (panel_table[k].place != row.place) continue;
            const bool self = static_cast<int>(k) == index;
            // The tab of this panel is chosen when its window appears (ImGui selects it from the next
            // frame on; in this one a new tab bar shows its first tab, which is no choice of the
            // user's); afterwards the user's click rules.
            const ImGuiTabItemFlags flags = self && appearing ? ImGuiTabItemFlags_SetSelected : 0;
            if (ImGui::BeginTabItem(panel_table[k].title, nullptr, flags)) {
                // A tab bar's first frame shows its first tab whatever is asked (ImGui's way of
                // avoiding a blank frame): only afterwards does another tab mean the user chose it.
                if (!self && !ImGui::IsWindowAppearing()) {
                    p.active[static_cast<size_t>(row.place)] = static_cast<int>(k);
                    if (p.maximized == index) p.maximized = static_cast<int>(k);
                    ImGui::MarkIniSettingsDirty();
                    keep = false;
                }
                ImGui::EndTabItem();
            }
            ui.report_item(std::string("tab: ") + panel_table[k].title);
        }
        ImGui::EndTabBar();
    }
    return keep;
}

// A panel in its place (or the whole work area when maximised). The places tile the window, so
// panels are neither moved nor resized by hand: the splitters between them share the space, and a
// double-click on a title (or a place's tabs) maximises that panel or restores the layout.
void draw_panel(int index, const PanelRow& row, AppState& state, UiContext& ui, Panels& p, const Layout& l,
                const Rect& work) {
    const Rect& r = p.maximized == index ? work : l[static_cast<size_t>(row.place)];
    ImGui::SetNextWindowPos(r.pos);
    ImGui::SetNextWindowSize(r.size);
    // In a place holding several panels the tabs name them: the title bar would only repeat the
    // chosen tab, so the tab bar takes its room (and its double-click).
    const bool tabbed = panels_in_place(row.place) > 1;
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   (tabbed ? ImGuiWindowFlags_NoTitleBar : 0);
    if (ImGui::Begin(row.title, nullptr, flags)) {
        record_window(ui, row.title);
        const ImVec2 pos = ImGui::GetWindowPos();
        const float title_h = ImGui::GetFrameHeight() + (tabbed ? ImGui::GetStyle().WindowPadding.y : 0);
        if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && ImGui::IsMouseDoubleClicked(0) &&
            ImGui::GetMousePos().y < pos.y + title_h)
            p.maximized = p.maximized == index ? -1 : index;
        if (ImGui::IsWindowHovered() && ImGui::GetMousePos().y < pos.y + title_h)
            ImGui::SetTooltip(p.maximized == index ? "Double-click to restore the layout"
                                                   : "Double-click to maximise; drag the borders to resize");
        if (draw_tabs(index, row, ui, p)) row.draw(state, ui, p);
    }
    ImGui::End();
}

// The splitters on the borders between places: hovering one shows a resize cursor, dragging it
// moves the border (and the shares); the shares are saved with the layout.
void handle_splitters(Panels& p, const Tiles& t) {
    const ImGuiIO& io = ImGui::GetIO();
    const std::array<Splitter, 5> all = splitters_of(t);
    Splitters& s = p.splitters;
    if (s.dragging >= 0) {
        const Splitter& sp = all[static_cast<size_t>(s.dragging)];
        if (io.MouseDown[0] && sp.extent > 0) {
            const float at = sp.vertical ? io.MousePos.x : io.MousePos.y;
            p.shares.*sp.share = std::clamp((at - sp.origin) / sp.extent, 0.03f, 0.97f);
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

// The lesson fills the window between the menu and the status bar.
void draw_teach_window(AppState& state, UiContext& ui, Panels& p, float menu_h, float status_h) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos({0, menu_h});
    ImGui::SetNextWindowSize({io.DisplaySize.x, io.DisplaySize.y - menu_h - status_h});
    const char* title = "Teach: attention step by step";
    if (ImGui::Begin(title, nullptr,
                     ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings)) {
        record_window(ui, title);
        draw_teach_panel(state, ui, p.teach, io.DeltaTime);
    }
    ImGui::End();
    state.update();
}

void draw_explorer_windows(AppState& state, UiContext& ui, Panels& p, float menu_h, float status_h) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const Layout l = tiled_layout(display, menu_h, status_h, p.shares);
    const Rect work{{0, menu_h}, {display.x, std::max(0.0f, display.y - menu_h - status_h)}};
    for (Stage stage : {Stage::edits, Stage::views}) {
        // The views read the snapshot the edits led to; an edit a view makes shows from the next frame.
        state.hold_snapshot(stage == Stage::views);
        for (size_t k = 0; k < std::size(panel_table); ++k) {
            const PanelRow& row = panel_table[k];
            // A maximised panel hides the others (edits first: the trace stays up to date).
            const bool shown = p.maximized < 0 ? panel_shown(p, static_cast<int>(k))
                                               : p.maximized == static_cast<int>(k);
            if (row.stage == stage && shown) draw_panel(static_cast<int>(k), row, state, ui, p, l, work);
        }
        if (stage == Stage::edits) state.update();  // edits are in the trace before any view draws
    }
    state.hold_snapshot(false);
    if (p.maximized < 0) handle_splitters(p, tiles(display, menu_h, status_h, p.shares));
}

// Whether panel `index` is on screen: drawn in its place (its place shown, its tab the chosen one),
// or maximised; none is in teach mode. What a check mark in View > Panels means.
bool panel_on_screen(const Panels& p, int index) {
    if (p.teach_mode) return false;
    return p.maximized < 0 ? panel_shown(p, index) : p.maximized == index;
}

// The View menu (appended to the menu bar's): teach mode, the layout, and each panel (checked while
// on screen). Clicking a checked panel hides it with its place (its room goes to its neighbours; at
// least one place stays shown); an unchecked one is brought on screen (its place shown, its tab
// chosen, the layout restored from a maximised panel or from teach mode).
void draw_view_menu(Panels& p, UiContext& ui) {
    if (!ImGui::BeginMainMenuBar()) return;
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Teach mode: the worked example step by step", "F2", p.teach_mode))
            ui.request(Command::toggle_teach);
        ui.report_item(p.teach_mode ? "view: teach mode (checked)" : "view: teach mode");
        if (ImGui::MenuItem("Reset layout")) ui.request(Command::reset_layout);
        ImGui::Separator();
        ImGui::TextDisabled("Panels (checked: on screen; double-click a title to maximise)");
        int shown = 0;
        for (bool hidden : p.shares.hidden) shown += !hidden;
        for (size_t k = 0; k < std::size(panel_table); ++k) {
            const PanelRow& row = panel_table[k];
            const bool on = panel_on_screen(p, static_cast<int>(k));
            if (ImGui::MenuItem(row.title, nullptr, on, !on || shown > 1)) {
                if (on)
                    p.shares.hidden[static_cast<size_t>(row.place)] = true;
                else
                    show_panel(p, row.title);
                p.teach_mode = false;
                p.maximized = -1;
                ImGui::MarkIniSettingsDirty();
            }
            ui.report_item(std::string("view: ") + row.title + (on ? " (checked)" : ""));
        }
        ImGui::EndMenu();
    }
    ImGui::EndMainMenuBar();
}

}  // namespace

std::span<const PanelRow> explorer_panels() { return panel_table; }

int active_panel(const Panels& p, Place place) {
    const int chosen = p.active[static_cast<size_t>(place)];
    if (chosen >= 0 && static_cast<size_t>(chosen) < std::size(panel_table) &&
        panel_table[static_cast<size_t>(chosen)].place == place)
        return chosen;
    for (size_t k = 0; k < std::size(panel_table); ++k)
        if (panel_table[k].place == place) return static_cast<int>(k);
    return -1;
}

bool panel_shown(const Panels& p, int index) {
    if (index < 0 || static_cast<size_t>(index) >= std::size(panel_table)) return false;
    const Place place = panel_table[static_cast<size_t>(index)].place;
    return !p.shares.hidden[static_cast<size_t>(place)] && active_panel(p, place) == index;
}

bool show_panel(Panels& p, const std::string& title) {
    for (size_t k = 0; k < std::size(panel_table); ++k) {
        if (title != panel_table[k].title) continue;
        const auto place = static_cast<size_t>(panel_table[k].place);
        p.active[place] = static_cast<int>(k);
        p.shares.hidden[place] = false;
        return true;
    }
    return false;
}

namespace {

// Whether the panel with this title is on screen (a hidden tab does no work, so nothing waits for it).
bool on_screen(const Panels& p, std::string_view title) {
    for (size_t k = 0; k < std::size(panel_table); ++k)
        if (std::string_view(panel_table[k].title) == title) return panel_on_screen(p, static_cast<int>(k));
    return false;
}

// Whether the saturation lab is on screen with work left for the frames to come (its curves are
// computed a block of rows per frame).
bool saturation_drawing(const Panels& p) { return saturation_busy(p.saturation) && on_screen(p, "Saturation lab"); }

}  // namespace

bool animating(const Panels& p, const AppState& state) {
    return (p.teach_mode && p.teach.playing) || state.computing() || saturation_drawing(p) || p.model.layers.busy() ||
           gradient_busy(p.gradients) || (compare_busy(p.compare) && on_screen(p, "Compare"));
}

void enter_teach_mode(AppState& state, Panels& p, int step) {
    if (!p.teach.lesson) load_lesson(p.teach, p.teach.lesson_path);
    p.teach_mode = true;
    teach_go_to(state, p.teach, step);
}

std::string window_title(const AppState& state) { return session_title(state, false) + " — attnviz"; }

bool dialog_open(const Panels& p) {
    // The built-in dialogs are ImGui modals; a desktop file dialog is a process of its own, seen
    // through the top-level choosers (those inside a dialog are under its modal).
    return ImGui::GetTopMostPopupModal() != nullptr || p.menu.open_files.is_open() || p.menu.save_files.is_open() ||
           p.model.beside_files.is_open();
}

namespace {

// Whether a command opens a dialog (or may: Save without a file). Quit is not one: it closes what
// is open and asks, so the window's close button always answers.
bool opens_dialog(Command c) {
    switch (c) {
        case Command::open:
        case Command::new_sentence:
        case Command::import_layer:
        case Command::open_beside:
        case Command::import_all_layers:
        case Command::save:
        case Command::save_as:
        case Command::export_file: return true;
        default: return false;
    }
}

// Whether a text field is being edited (a value typed into a cell, a dimension, a label).
bool editing_text() {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    return g.ActiveId != 0 && g.InputTextState.ID == g.ActiveId;
}

// Esc closes the topmost popup (a dialog, as its Cancel does; a menu; a combo's list), one a press;
// without a popup, the Messages or recovery window it is typed in (the recovery as "Decide later").
void close_on_escape(Panels& p) {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    if (!ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) return;
    if (g.OpenPopupStack.Size > 0) {
        ImGui::ClosePopupToLevel(g.OpenPopupStack.Size - 1, true);
        return;
    }
    const std::string_view focused = g.NavWindow ? g.NavWindow->RootWindow->Name : "";
    if (focused == message_log_title) p.status.show_log = false;
    if (focused == recovery_window_title) p.recovery.offers.clear();  // kept on disk, offered at the next start
}

// Every dialog, after every window of the frame: a window that appears in the frame a dialog opens
// (a tab chosen by the command, the lesson) is then never begun above the dialog's modal, which
// ImGui 1.86 cannot order (an assertion).
void draw_dialogs(AppState& state, UiContext& ui, Panels& p) {
    draw_menu_dialogs(state, ui, p.menu, p.quit);
    draw_model_dialogs(state, ui, p.model);
    draw_export_dialog(state, ui, p.export_dialog);
    draw_sentence_dialog(state, ui, p.sentence);
}

}  // namespace

void run_commands(AppState& state, UiContext& ui, Panels& p) {
    for (const std::string& path : ui.dropped_files) open_and_note(state, p.menu, path);  // like File > Open
    ui.dropped_files.clear();
    const std::vector<Command> commands = std::move(ui.commands);
    ui.commands.clear();
    bool dialog = dialog_open(p);
    std::vector<Command> later;  // for the next frame
    for (Command c : commands) {
        // One dialog at a time: a command for another is dropped (the user asks again once it is closed).
        if (opens_dialog(c)) {
            if (dialog) continue;
            dialog = c != Command::save || state.file_path().empty();
        }
        switch (c) {
            case Command::open: p.menu.open_dialog = true; break;
            case Command::new_sentence: p.sentence.open = true; break;
            case Command::import_layer: p.menu.import.open = true; break;
            case Command::open_beside:
                p.model.open_beside = true;
                show_panel(p, "Model view");
                break;
            case Command::import_all_layers:
                p.model.import_all.open = true;
                show_panel(p, "Model view");
                break;
            case Command::save: save_or_ask(state, p.menu); break;
            case Command::save_as: p.menu.save_dialog = true; break;
            case Command::export_file: open_export_dialog(p.export_dialog, ui.export_target); break;
            case Command::quit:
                if (state.modified()) {
                    if (ImGui::GetCurrentContext()->OpenPopupStack.Size > 0)
                        ImGui::ClosePopupToLevel(0, false);  // any open dialog is cancelled
                    p.menu.ask_quit = true;                  // the "Unsaved changes" dialog decides
                } else
                    p.quit = true;
                break;
            case Command::undo:
            case Command::redo:
                // A value being typed is committed first: its field is let go, its panel applies it
                // in the next frame, and the undo runs after that. Undo then takes back what the
                // field shows, never an older step beside a field still showing the typed value.
                if (editing_text()) {
                    ImGui::ClearActiveID();
                    later.push_back(c);
                } else if (c == Command::undo) {
                    state.undo();
                } else {
                    state.redo();
                }
                break;
            case Command::toggle_teach:
                if (p.teach_mode)
                    p.teach_mode = false;
                else
                    enter_teach_mode(state, p, p.teach.step);
                break;
            case Command::show_panel:
                show_panel(p, ui.panel_to_show);
                p.maximized = -1;
                break;
            case Command::compare:
                if (!state.session().pin) state.pin();
                p.compare.chosen = ui.compare_ref;
                show_panel(p, "Compare");
                p.maximized = -1;
                break;
            case Command::reset_layout:
                p.reset_layout = true;
                ImGui::MarkIniSettingsDirty();
                break;
            case Command::count: break;
        }
    }
    for (Command c : later) ui.request(c);
}

void draw_frame(AppState& state, UiContext& ui, Panels& p, float frame_ms) {
    const ImGuiIO& io = ImGui::GetIO();
    if (ui.report) ui.report->clear();
    close_on_escape(p);
    ui.dialog_open = dialog_open(p);
    ui.desktop_dialog = false;  // until a file chooser waits for one
    draw_menu_bar(state, ui, p.menu);
    update_model_panel(state, p.model);  // its layers' results, shown or not
    draw_view_menu(p, ui);
    const float menu_h = ImGui::GetFrameHeight();
    const float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
    for (const std::string& title : p.show_at_start) show_panel(p, title);
    p.show_at_start.clear();
    if (p.reset_layout || !p.shares_set) {
        p.shares = default_shares(io.DisplaySize);
        p.shares_set = true;
        p.maximized = -1;
        p.reset_layout = false;
    }
    for (size_t k = 0; k < std::size(panel_table) && !p.maximize_at_start.empty(); ++k)
        if (p.maximize_at_start == panel_table[k].title) p.maximized = static_cast<int>(k);
    p.maximize_at_start.clear();

    if (p.teach_mode)
        draw_teach_window(state, ui, p, menu_h, status_h);
    else
        draw_explorer_windows(state, ui, p, menu_h, status_h);

    // The status bar is pinned to the bottom edge.
    const Rect status = status_rect(io.DisplaySize, status_h);
    ImGui::SetNextWindowPos(status.pos);
    ImGui::SetNextWindowSize(status.size);
    const ImGuiWindowFlags bar = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    if (ImGui::Begin("##status", nullptr, bar)) draw_status_bar(state, ui, p.status, frame_ms);
    ImGui::End();
    draw_message_log(state, ui, p.status);
    draw_recovery_window(state, ui, p.recovery);
    draw_dialogs(state, ui, p);

    ui.heatmaps.end_frame();
    run_commands(state, ui, p);
}

}  // namespace attnviz::app
