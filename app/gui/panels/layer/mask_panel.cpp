#include "panels/layer/mask_panel.hpp"

#include <algorithm>
#include <array>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/attention/masks.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

bool apply_mask_preset(AppState& state, const core::Result<core::Matrix>& preset, const std::string& what) {
    if (!preset) {
        state.set_message("Mask not changed: " + preset.problems.front().str(), true);
        return false;
    }
    if (!state.set_matrix({core::MatrixId::mask, 0}, *preset.value)) return false;
    state.set_message("Mask: " + what, false);
    return true;
}

namespace {

// A grid of 0 and 1 filling the panel's room, the session's tokens on both axes: the mask's, or the
// rule's.
HeatmapOptions grid_options(const AppState& state, UiContext& ui) {
    HeatmapOptions o;
    o.colormap = ui.colormap(core::MatrixId::mask);
    o.range = {0, 1, false};
    o.number_digits = 1;
    o.max_cell = ImGui::GetFontSize() * 3;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    o.max_size = {std::max(avail.x, 50.0f), std::max(avail.y, 50.0f)};
    o.row_labels = &state.session().tokens;
    o.col_labels = &core::key_tokens(state.session());
    return o;
}

// The mask the layer's rule makes (causal, none, each with or without a sliding window): 1 where
// query i may attend to key j. Kept while the rule and the shape stay.
const core::Matrix& rule_mask(const core::Config& c, MaskPanel& panel) {
    const std::array<int, 4> key{c.n, c.kv_len(), static_cast<int>(c.mask), c.window};
    if (panel.rule_key != key) {
        panel.rule_key = key;
        ++panel.rule_generation;
        panel.rule.resize(c.n, c.kv_len());
        for (int i = 0; i < c.n; ++i)
            for (int j = 0; j < c.kv_len(); ++j) panel.rule(i, j) = c.hides(i, j) ? 0.0 : 1.0;
    }
    return panel.rule;
}

// What the rule hides from query i's key j, for the grid's tooltip.
const char* hidden_by(const core::Config& c, int i, int j) {
    if (c.mask == core::Mask::causal && j > i) return "hidden by the causal mask (a later token)";
    if (c.window > 0 && j <= i - c.window) return "hidden by the sliding window (too far back)";
    return "may attend";
}

// The sliding window's field: 0 for none; a change is one undoable edit of the config.
void draw_window_field(AppState& state, UiContext& ui, MaskPanel& panel) {
    const core::Config& c = state.config();
    if (!panel.window_editing) panel.layer_window = c.window;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::InputInt("sliding window (keys; 0: none)", &panel.layer_window);
    ui.report_item("mask: sliding window");
    panel.window_editing = ImGui::IsItemActive();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Query i sees only the last w keys up to itself: keys i - w + 1 ... i\n"
            "(Mistral, Qwen2, Phi-3; Gemma 2 on every other layer). 0: no window.");
    if (ImGui::IsItemDeactivatedAfterEdit() && panel.layer_window != c.window) {
        core::Config changed = c;
        changed.window = std::max(panel.layer_window, 0);
        if (state.set_config(changed))
            state.set_message(changed.window > 0 ? "Sliding window of " + std::to_string(changed.window) + " keys"
                                                 : std::string("No sliding window"),
                              false);
    }
}

// Without a custom mask: the rule in words and as a grid (the window drawn), the window's field,
// what a custom mask is and the way to start one.
void draw_no_custom_mask(AppState& state, UiContext& ui, MaskPanel& panel) {
    const core::Config& c = state.config();
    ImGui::PushTextWrapPos(0);
    std::string rule = c.mask == core::Mask::causal ? "This layer uses the causal mask: query i sees keys 0 to i"
                                                    : "This layer uses no mask: every query sees every key";
    if (c.window > 0)
        rule = c.mask == core::Mask::causal
                   ? "This layer uses the causal mask with a sliding window of " + std::to_string(c.window) +
                         ": query i sees keys i - " + std::to_string(c.window - 1) + " to i"
                   : "This layer uses a sliding window of " + std::to_string(c.window) +
                         " and no causal mask: query "
                         "i sees keys from i - " +
                         std::to_string(c.window - 1) + " on";
    ImGui::TextUnformatted((rule + ".").c_str());
    ImGui::PopTextWrapPos();
    if (!c.cross()) draw_window_field(state, ui, panel);
    if (ImGui::CollapsingHeader("What a custom mask is")) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled(
            "A custom mask is a grid of 1 (the query may attend to the key) and 0 (it may not: its score becomes "
            "%s, its weight 0). Padding, sliding windows and packed documents are such grids.",
            ui.symbols().neg_inf);
        ImGui::PopTextWrapPos();
    }
    const char* start = c.window > 0                   ? "Use a custom mask, starting from this one"
                        : c.mask == core::Mask::causal ? "Use a custom mask, starting from the causal one"
                                                       : "Use a custom mask";
    const bool use_custom = ImGui::Button(start);
    ui.report_item("mask: use a custom mask");
    if (use_custom) {
        // A custom mask holds the window itself (the two together are refused): the grid as drawn.
        const core::Matrix drawn = rule_mask(c, panel);
        const bool windowed = c.window > 0;
        core::Config custom = c;
        custom.mask = core::Mask::custom;
        custom.window = 0;
        if (state.set_config(custom) && windowed) state.set_matrix({core::MatrixId::mask, 0}, drawn);
        return;  // the config changed under `c`: the next frame draws the custom mask
    }
    // The rule's grid, read only: the window's band and the causal triangle.
    HeatmapOptions o = grid_options(state, ui);
    const core::Matrix& grid = rule_mask(c, panel);
    o.generation = panel.rule_generation;
    const HeatmapHit hit = heatmap(ui, "mask rule grid", grid, o, "mask");
    if (ui.report) ui.report->heatmaps.push_back({"mask", hit.cells_min, hit.cells_max});
    if (hit.hovered) {
        const auto& keys = core::key_tokens(state.session());
        ImGui::SetTooltip("query %d %s, key %d %s: %s", hit.row, quoted_label(state.session().tokens[hit.row]).c_str(),
                          hit.col, quoted_label(keys[static_cast<size_t>(hit.col)]).c_str(),
                          hidden_by(c, hit.row, hit.col));
    }
}

void draw_presets(AppState& state, MaskPanel& panel) {
    const core::Config& c = state.config();
    const int n = c.n, m = c.kv_len();
    const float field = ImGui::GetFontSize() * 6;
    if (ImGui::SmallButton("all")) apply_mask_preset(state, core::padding_mask(n, m, 0), "every key allowed");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Every query may attend to every key");
    same_line_if_fits(ImGui::CalcTextSize("causal").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton("causal"))
        apply_mask_preset(state, core::sliding_window_mask(n, m, std::max(n, m), true), "causal");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Query i may attend to keys 0 … i");

    ImGui::SetNextItemWidth(field);
    ImGui::InputInt("##padded", &panel.padded);
    ImGui::SameLine();
    if (ImGui::SmallButton("pad the last keys"))
        apply_mask_preset(state, core::padding_mask(n, m, panel.padded),
                          "the last " + std::to_string(panel.padded) + " keys are padding");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The last k keys are padding (a shorter sequence in a batch): no query attends to them");

    ImGui::SetNextItemWidth(field);
    ImGui::InputInt("##window", &panel.window);
    ImGui::SameLine();
    if (ImGui::SmallButton("window"))
        apply_mask_preset(state, core::sliding_window_mask(n, m, panel.window, panel.causal_window),
                          std::string(panel.causal_window ? "causal " : "") + "sliding window of " +
                              std::to_string(panel.window));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "A sliding window of w keys: |i - j| < w (Longformer), or with 'causal' 0 <= i - j < w\n"
            "(Mistral): the query and the w - 1 keys before it");
    checkbox_on_line("causal##window", &panel.causal_window);

    ImGui::SetNextItemWidth(field);
    ImGui::InputText("##segments", &panel.segments);
    ImGui::SameLine();
    if (ImGui::SmallButton("segments")) {
        const core::Result<std::vector<int>> lengths = core::parse_lengths(panel.segments);
        apply_mask_preset(state,
                          lengths ? core::block_mask(n, m, *lengths.value)
                                  : core::Result<core::Matrix>::fail(lengths.problems),
                          "segments " + panel.segments);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Block-diagonal: the tokens cut into segments of these lengths (documents packed in one\n"
            "sequence), each query attending only within its own, e.g. 3,2,3");
}

}  // namespace

void draw_mask_panel(AppState& state, UiContext& ui, MaskPanel& panel) {
    const core::Config& c = state.config();
    if (c.mask != core::Mask::custom) {
        panel.painting.reset();
        draw_no_custom_mask(state, ui, panel);
        return;
    }
    const core::Matrix& mask = *state.input({core::MatrixId::mask, 0});
    if (panel.painting && (panel.painting->rows() != mask.rows() || panel.painting->cols() != mask.cols()))
        panel.painting.reset();  // the dimensions changed under the drag
    // One line of controls, so the grid keeps the panel's height: the presets in a popup.
    if (ImGui::SmallButton("presets…")) ImGui::OpenPopup("mask presets");
    if (ImGui::BeginPopup("mask presets")) {
        draw_presets(state, panel);
        ImGui::EndPopup();
    }
    const std::string count = std::to_string(static_cast<long long>(mask.sum())) + " of " +
                              std::to_string(static_cast<long long>(mask.size())) + " pairs allowed";
    same_line_if_fits(ImGui::CalcTextSize(count.c_str()).x);
    ImGui::TextDisabled("%s", count.c_str());
    const char* hint = "rows: queries, columns: keys; click a cell to toggle it, drag to paint";
    same_line_if_fits(ImGui::CalcTextSize(hint).x);
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", hint);
    ImGui::PopTextWrapPos();

    // The grid: the editable session's mask (or the drag's copy), with the tokens on both axes.
    const core::Matrix& shown = panel.painting ? *panel.painting : mask;
    HeatmapOptions o = grid_options(state, ui);
    o.generation = state.revision() * 2 + (panel.painting ? 1 : 0);
    const HeatmapHit hit = heatmap(ui, "mask grid", shown, o, "mask");
    if (ui.report) ui.report->heatmaps.push_back({"mask", hit.cells_min, hit.cells_max});

    const bool down = ImGui::IsMouseDown(ImGuiMouseButton_Left);
    if (hit.hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        panel.painting = mask;
        panel.paint_value = mask(hit.row, hit.col) == 1 ? 0.0 : 1.0;
    }
    if (panel.painting && hit.hovered && down) (*panel.painting)(hit.row, hit.col) = panel.paint_value;
    if (panel.painting && !down) {
        // One edit for the whole drag; a row left without keys is refused by set_matrix, with a message.
        const core::Matrix painted = std::move(*panel.painting);
        panel.painting.reset();
        if (!core::same(painted, mask)) state.set_matrix({core::MatrixId::mask, 0}, painted);
    }
    if (hit.hovered && !panel.painting) {
        const auto& keys = core::key_tokens(state.session());
        const int r = hit.row, k = hit.col;
        ImGui::SetTooltip("query %d %s, key %d %s: %s\nclick to %s", r, quoted_label(state.session().tokens[r]).c_str(),
                          k, quoted_label(keys[static_cast<size_t>(k)]).c_str(),
                          mask(r, k) == 1 ? "may attend" : "masked (score -inf, weight 0)",
                          mask(r, k) == 1 ? "mask it" : "allow it");
    }
}

}  // namespace attnviz::app
