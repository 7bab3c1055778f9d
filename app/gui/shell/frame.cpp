#include "shell/frame.hpp"

#include <imgui_internal.h>

#include "shell/presentation_menu.hpp"
#include "shell/workspaces.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace attnviz::app {

namespace {

constexpr PanelRow panel_table[] = {
    {PanelId::dimensions, "Dimensions", Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_dimensions_panel(s, ui, p.dimensions); }},
    {PanelId::inputs, "Inputs: X and weights", Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_inputs_panel(s, ui, p.inputs); }},
    {PanelId::mask, "Mask", Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) { draw_mask_panel(s, ui, p.mask); }},
    {PanelId::pipeline, "Pipeline", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_pipeline_panel(s, ui, p.pipeline); }},
    {PanelId::heads, "Attention per head", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_heads_panel(s, ui, p.heads); }},
    {PanelId::head_view, "Head view", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) {
         draw_head_view_panel(s, ui, p.head_view, &p.attentions, &p.model.run);
     }},
    {PanelId::model, "Model view", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_model_panel(s, ui, p.model, &p.attentions); }},
    {PanelId::trace, "Every intermediate", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_trace_panel(s, ui, p.trace); }},
    {PanelId::saturation, "Saturation lab", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_saturation_panel(s, ui, p.saturation); }},
    {PanelId::compare, "Compare", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_compare_panel(s, ui, p.compare); }},
    {PanelId::viewer, "Matrix viewer", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_viewer_panel(s, ui, p.viewer); }},
    {PanelId::gradients, "Gradients", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_gradient_panel(s, ui, p.gradients); }},
    {PanelId::next_token, "Next token", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_next_token_panel(s, ui, p.next_token, p.model.run); }},
    {PanelId::model_analysis, "Model analysis", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_model_analysis_panel(s, ui, p.model_analysis, p.model.run); }},
    {PanelId::kv_cache, "KV cache stepper", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_kv_cache_panel(s, ui, p.kv_cache); }},
    {PanelId::flash, "FlashAttention stepper", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_flash_panel(s, ui, p.flash); }},
    {PanelId::lab, "Attention lab", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_lab_panel(s, ui, p.lab, p.compare.a.get(), &p.model.run); }},
    // The lesson edits the session (a step may set its cells): drawn with the edits.
    {PanelId::lesson, "Lesson", Stage::edits,
     [](AppState& s, UiContext& ui, Panels& p) {
         if (!p.teach.lesson && p.teach.error.empty()) {  // shown first: the lesson as teach mode starts it
             load_lesson(p.teach, p.teach.lesson_path);
             if (p.teach.lesson) teach_go_to(s, p.teach, p.teach.step);
         }
         draw_teach_panel(s, ui, p.teach, ImGui::GetIO().DeltaTime);
     }},
    {PanelId::attribution, "Attribution", Stage::views,
     [](AppState& s, UiContext& ui, Panels& p) { draw_attribution_panel(s, ui, p.attribution, p.model.run); }},
};

// Row k is PanelId k, and every PanelId has its row.
constexpr bool rows_in_id_order() {
    for (size_t k = 0; k < std::size(panel_table); ++k)
        if (static_cast<size_t>(panel_table[k].id) != k) return false;
    return std::size(panel_table) == static_cast<size_t>(PanelId::count);
}
static_assert(rows_in_id_order(), "the panel table's rows are in PanelId order");

void record_window(UiContext& ui, const char* title) {
    if (ui.report) ui.report->windows.push_back({title, ImGui::GetWindowPos(), ImGui::GetWindowSize()});
}

// The tabs of a place holding several panels, at the top of the panel shown. Returns false when
// another tab was chosen (that panel is drawn from the next frame on; this one draws nothing more).
bool draw_tabs(int index, const PanelRow& row, UiContext& ui, Panels& p) {
    const std::optional<Place> in = place_in(p.workspace, row.id);
    if (!in || panels_in_place(p.workspace, *in) < 2) return true;
    const Place place = *in;
    bool keep = true;
    const std::string id = std::string("##tabs ") + row.title;
    if (ImGui::BeginTabBar(id.c_str(), ImGuiTabBarFlags_FittingPolicyScroll)) {
        const bool appearing = ImGui::IsWindowAppearing();
        for (const Placement& tab : placements(p.workspace)) {
            if (tab.place != place) continue;
            const auto k = static_cast<size_t>(tab.panel);
            const bool self = static_cast<int>(k) == index;
            // The tab of this panel is chosen when its window appears (ImGui selects it from the next
            // frame on; in this one a new tab bar shows its first tab, which is no choice of the
            // user's); afterwards the user's click rules.
            const ImGuiTabItemFlags flags = self && appearing ? ImGuiTabItemFlags_SetSelected : 0;
            if (ImGui::BeginTabItem(panel_table[k].title, nullptr, flags)) {
                // A tab bar's first frame shows its first tab whatever is asked (ImGui's way of
                // avoiding a blank frame): only afterwards does another tab mean the user chose it.
                if (!self && !ImGui::IsWindowAppearing()) {
                    p.active[static_cast<size_t>(place)] = static_cast<int>(k);
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
// `alone`: the panel has that room to itself (the attentions mode), with its title bar, no tabs.
void draw_panel(int index, const PanelRow& row, AppState& state, UiContext& ui, Panels& p, const Layout& l,
                const Rect& work, const Rect* alone = nullptr) {
    const std::optional<Place> place = place_in(p.workspace, row.id);
    const Rect& r = alone ? *alone : p.maximized == index || !place ? work : l[static_cast<size_t>(*place)];
    ImGui::SetNextWindowPos(r.pos);
    ImGui::SetNextWindowSize(r.size);
    // In a place holding several panels the tabs name them: the title bar would only repeat the
    // chosen tab, so the tab bar takes its room (and its double-click).
    const bool tabbed = !alone && place && panels_in_place(p.workspace, *place) > 1;
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   (tabbed ? ImGuiWindowFlags_NoTitleBar : 0);
    ImGui::SetNextWindowBgAlpha(0);  // no background of its own: the places tile the window (theme.hpp)
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
        if (alone || draw_tabs(index, row, ui, p)) row.draw(state, ui, p);
    }
    ImGui::End();
}

// Weights only (the attentions mode): the head view on the left and the model view on the right,
// side by side (a click on a head of the one shows it in the other), or the one maximised; the
// session's panels wait.
void draw_attentions_windows(AppState& state, UiContext& ui, Panels& p, const Layout& l, const Rect& work) {
    state.update();
    state.hold_snapshot(true);
    const float half = std::floor((work.size.x - splitter_width) / 2);
    const Rect left{work.pos, {half, work.size.y}};
    const Rect right{{work.pos.x + half + splitter_width, work.pos.y},
                     {work.size.x - half - splitter_width, work.size.y}};
    const bool one = p.maximized >= 0 && shows_attentions(panel_table[static_cast<size_t>(p.maximized)].id);
    if (!one)  // the gap between the two, in the colour behind the windows (the panels draw no background)
        ImGui::GetBackgroundDrawList()->AddRectFilled({left.pos.x + left.size.x, work.pos.y},
                                                      {right.pos.x, work.pos.y + work.size.y},
                                                      ui.color(Color::background));
    for (PanelId id : {PanelId::head_view, PanelId::model}) {
        const int index = static_cast<int>(id);
        if (one && p.maximized != index) continue;
        const Rect& room = one ? work : id == PanelId::head_view ? left : right;
        draw_panel(index, panel_table[static_cast<size_t>(index)], state, ui, p, l, work, &room);
    }
    state.hold_snapshot(false);
}

}  // namespace

// The lesson fills the window between the menu and the status bar (drawing no background: theme.hpp).
void draw_teach_window(AppState& state, UiContext& ui, Panels& p, float menu_h, float status_h) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos({0, menu_h});
    ImGui::SetNextWindowSize({io.DisplaySize.x, io.DisplaySize.y - menu_h - status_h});
    ImGui::SetNextWindowBgAlpha(0);
    const char* title = "Teach: attention step by step";
    if (ImGui::Begin(title, nullptr,
                     ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings | (p.teach.focus ? ImGuiWindowFlags_NoTitleBar : 0))) {
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
    if (p.attentions.on()) {
        draw_attentions_windows(state, ui, p, l, work);
        return;
    }
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
    if (p.maximized < 0) handle_splitters(p.shares, p.splitters, display, menu_h, status_h);
}

namespace {

// Whether panel `index` is on screen: drawn in its place (its place shown, its tab the chosen one),
// or maximised; none is in teach mode. What a check mark in View > Panels means.
bool panel_on_screen(const Panels& p, int index) {
    if (p.teach_mode) return false;
    if (p.attentions.on()) {
        const bool view = shows_attentions(panel_table[static_cast<size_t>(index)].id);
        const bool one = p.maximized >= 0 && shows_attentions(panel_table[static_cast<size_t>(p.maximized)].id);
        return view && (!one || p.maximized == index);
    }
    return p.maximized < 0 ? panel_shown(p, index) : p.maximized == index;
}

}  // namespace

// The View menu (appended to the menu bar's): teach mode, the layout, and each panel (checked while
// on screen). Clicking a checked panel hides it with its place (its room goes to its neighbours; at
// least one place stays shown); an unchecked one is brought on screen (its place shown, its tab
// chosen, the layout restored from a maximised panel or from teach mode).
void draw_view_menu(Panels& p, UiContext& ui) {
    presentation_shortcuts(ui, p.appearance);
    if (!ImGui::BeginMainMenuBar()) return;
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Teach mode: the lesson step by step", "F2", p.teach_mode))
            ui.request(command::ToggleTeach{});
        ui.report_item(p.teach_mode ? "view: teach mode (checked)" : "view: teach mode");
        draw_presentation_items(ui, {p.appearance, p.full_screen, p.teach_mode && p.teach.focus});
        ImGui::Separator();
        for (size_t k = 0; k < workspace_count; ++k) {
            const auto w = static_cast<Workspace>(k);
            const std::string label = std::string("Workspace: ") + workspace_name(w);
            const std::string keys = "Ctrl+" + std::to_string(k + 1);
            if (ImGui::MenuItem(label.c_str(), keys.c_str(), p.workspace == w, !p.attentions.on()))
                ui.request(command::SwitchWorkspace{w});
            ui.report_item("view: workspace " + std::string(workspace_name(w)));
        }
        if (ImGui::MenuItem("Find anything...", "Ctrl+K")) ui.request(command::OpenPalette{});
        ui.report_item("view: find anything");
        ImGui::Separator();
        if (ImGui::MenuItem("Reset layout")) ui.request(command::ResetLayout{});
        ImGui::Separator();
        const bool attentions = p.attentions.on();
        ImGui::TextDisabled(attentions ? "Panels (attentions: the head view and the model view; File > Close "
                                         "attentions for the others)"
                                       : "Panels (checked: on screen; double-click a title to maximise)");
        int shown = 0;
        for (bool hidden : p.shares.hidden) shown += !hidden;
        for (size_t k = 0; k < std::size(panel_table); ++k) {
            const PanelRow& row = panel_table[k];
            const bool on = panel_on_screen(p, static_cast<int>(k));
            // With attentions open their two views are all there is (a maximised one restored by a click).
            const bool enabled = attentions ? shows_attentions(row.id) && !on : !on || shown > 1;
            if (ImGui::MenuItem(row.title, nullptr, on, enabled)) {
                if (on)
                    p.shares.hidden[static_cast<size_t>(*place_in(p.workspace, row.id))] = true;
                else
                    show_panel(p, row.id);
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

std::span<const PanelRow> explorer_panels() { return panel_table; }

bool panel_on_screen(const Panels& p, PanelId panel) { return panel_on_screen(p, static_cast<int>(panel)); }

int active_panel(const Panels& p, Place place) {
    const int chosen = p.active[static_cast<size_t>(place)];
    if (chosen >= 0 && static_cast<size_t>(chosen) < std::size(panel_table) &&
        place_in(p.workspace, panel_table[static_cast<size_t>(chosen)].id) == place)
        return chosen;
    for (const Placement& each : placements(p.workspace))
        if (each.place == place) return static_cast<int>(each.panel);
    return -1;
}

bool panel_shown(const Panels& p, int index) {
    if (index < 0 || static_cast<size_t>(index) >= std::size(panel_table)) return false;
    const std::optional<Place> place = place_in(p.workspace, panel_table[static_cast<size_t>(index)].id);
    return place && !p.shares.hidden[static_cast<size_t>(*place)] && active_panel(p, *place) == index;
}

std::optional<PanelId> panel_titled(std::string_view title) {
    for (const PanelRow& row : panel_table)
        if (title == row.title) return row.id;
    return std::nullopt;
}

void show_panel(Panels& p, PanelId panel) {
    if (!place_in(p.workspace, panel)) switch_workspace(p, home_of(panel));
    const auto index = static_cast<size_t>(panel);
    const auto place = static_cast<size_t>(*place_in(p.workspace, panel));
    p.active[place] = static_cast<int>(index);
    p.shares.hidden[place] = false;
}

bool show_panel(Panels& p, std::string_view title) {
    const std::optional<PanelId> panel = panel_titled(title);
    if (panel) show_panel(p, *panel);
    return panel.has_value();
}

namespace {

// The layout of the current workspace is Panels' own fields; the others' are kept in `layouts`.
WorkspaceLayout current_layout(const Panels& p) { return {p.shares, p.shares_set, p.active, p.maximized}; }
void use_layout(Panels& p, const WorkspaceLayout& layout) {
    p.shares = layout.shares;
    p.shares_set = layout.shares_set;
    p.active = layout.active;
    p.maximized = layout.maximized;
}

}  // namespace

void switch_workspace(Panels& p, Workspace w) {
    if (w == p.workspace || static_cast<size_t>(w) >= workspace_count) return;
    p.layouts[static_cast<size_t>(p.workspace)] = current_layout(p);
    use_layout(p, p.layouts[static_cast<size_t>(w)]);
    p.workspace = w;
    if (w != Workspace::teach) p.teach_mode = false;  // teach mode is the Teach workspace's lesson alone
}

namespace {

// Whether a panel is on screen (a hidden tab does no work, so nothing waits for it).
bool on_screen(const Panels& p, PanelId panel) { return panel_on_screen(p, static_cast<int>(panel)); }

// Whether the saturation lab is on screen with work left for the frames to come (its curves are
// computed a block of rows per frame).
bool saturation_drawing(const Panels& p) { return saturation_busy(p.saturation) && on_screen(p, PanelId::saturation); }

}  // namespace

bool animating(const Panels& p, const AppState& state) {
    return (p.teach_mode && p.teach.playing) || state.computing() || saturation_drawing(p) || p.model.layers.busy() ||
           p.model.run.busy() || gradient_busy(p.gradients) || lab_busy(p.lab) || attribution_busy(p.attribution) ||
           (compare_busy(p.compare) && on_screen(p, PanelId::compare));
}

void enter_teach_mode(AppState& state, Panels& p, int step) {
    if (!p.teach.lesson) load_lesson(p.teach, p.teach.lesson_path);
    switch_workspace(p, Workspace::teach);
    p.teach_mode = true;
    teach_go_to(state, p.teach, step);
}

bool shows_attentions(PanelId panel) { return panel == PanelId::head_view || panel == PanelId::model; }

void attentions_opened(const AppState& state, Panels& p) {
    HeadViewPanel& view = p.head_view;
    view.layer.reset();
    view.hidden.clear();
    clear_selection(view);
    p.attentions.revision = state.revision();
    p.attentions.model = p.model.run.folder();
    p.maximized = -1;
}

void end_attentions_if_replaced(const AppState& state, Panels& p) {
    if (p.attentions.on() && (state.revision() != p.attentions.revision || p.model.run.folder() != p.attentions.model))
        close_attentions(p.attentions);
}

namespace {

// The chosen tab of each place, as titles ("tabs=Head view|Gradients|…", one per place, empty for
// the default): titles survive a new version's panel table, indices would not.
std::string tabs_text(const WorkspaceLayout& layout) {
    std::string text = "tabs=";
    for (size_t place = 0; place < layout.active.size(); ++place) {
        if (place > 0) text += '|';
        if (layout.active[place] >= 0) text += explorer_panels()[static_cast<size_t>(layout.active[place])].title;
    }
    return text;
}

// A title that is no panel, or a panel of another place of the workspace, leaves that place's tab
// as it was.
void read_tabs(const char* line, Workspace w, WorkspaceLayout& layout) {
    std::string rest = line + 5;
    for (size_t place = 0; place < layout.active.size(); ++place) {
        const size_t bar = rest.find('|');
        const std::string title = rest.substr(0, bar);
        if (const std::optional<PanelId> panel = panel_titled(title);
            panel && place_in(w, *panel) == static_cast<Place>(place))
            layout.active[place] = static_cast<int>(*panel);
        if (bar == std::string::npos) break;
        rest = rest.substr(bar + 1);
    }
}

}  // namespace

// [attnviz][Layout]: the look, then for each workspace a line "workspace=NAME" followed by its
// shares and its tabs. Lines before the first "workspace=" (a layout of a version without
// workspaces) are the Layer workspace's.
void install_layout_settings(Panels& panels) {
    ImGuiSettingsHandler h;
    h.TypeName = "attnviz";
    h.TypeHash = ImHashStr("attnviz");
    h.UserData = &panels;
    h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) -> void* {
        if (std::strcmp(name, "Layout") != 0) return nullptr;
        Panels& p = *static_cast<Panels*>(handler->UserData);
        p.layout_section = Workspace::layer;
        return &p.layout_section;
    };
    h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, void*, const char* line) {
        Panels& p = *static_cast<Panels*>(handler->UserData);
        if (std::strncmp(line, "workspace=", 10) == 0) {
            if (const std::optional<Workspace> w = workspace_named(line + 10)) p.layout_section = *w;
            return;
        }
        if (read_appearance_line(line, p.appearance)) return;
        // The current workspace's layout is read into the live fields, the others' into `layouts`.
        const bool live = p.layout_section == p.workspace;
        WorkspaceLayout layout = live ? current_layout(p) : p.layouts[static_cast<size_t>(p.layout_section)];
        if (std::strncmp(line, "tabs=", 5) == 0) {
            read_tabs(line, p.layout_section, layout);
        } else {
            const LayoutShares before = layout.shares;
            read_shares(line, layout.shares);
            if (!(layout.shares == before)) {
                layout.shares_set = true;
                hide_empty_places(p.layout_section, layout.shares);  // a file may show them: they stay hidden
            }
        }
        if (live)
            use_layout(p, layout);
        else
            p.layouts[static_cast<size_t>(p.layout_section)] = layout;
    };
    h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* out) {
        const Panels& p = *static_cast<const Panels*>(handler->UserData);
        out->appendf("[attnviz][Layout]\n%s", appearance_lines(p.appearance).c_str());
        for (size_t k = 0; k < workspace_count; ++k) {
            const auto w = static_cast<Workspace>(k);
            const WorkspaceLayout layout = w == p.workspace ? current_layout(p) : p.layouts[k];
            out->appendf("workspace=%s\n", workspace_name(w));
            if (layout.shares_set) out->appendf("%s\n", shares_text(layout.shares).c_str());
            out->appendf("%s\n", tabs_text(layout).c_str());
        }
    };
    ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

std::string window_title(const AppState& state) { return session_title(state, false) + " — attnviz"; }

std::string window_title(const AppState& state, const Panels& p) {
    if (!p.attentions.on()) return window_title(state);
    return std::filesystem::path(p.attentions.path).filename().string() + " (attentions) — attnviz";
}

}  // namespace attnviz::app
