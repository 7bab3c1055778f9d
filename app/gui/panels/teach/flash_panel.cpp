#include "panels/teach/flash_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <limits>

#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

std::string value_text(double v, const UiContext& ui) {
    if (v == minus_infinity) return ui.symbols().neg_inf;
    return core::format_number(v, 4);
}

// What a row of the step's tile held before it: the row tile's previous step, or where the softmax
// starts (core::softmax_start: m = −∞, ℓ = 0, or softmax₁'s m = 0, ℓ = 1) at its first key tile.
const core::OnlineSoftmaxStep* before(const core::OnlineSoftmaxRun& run, int step) {
    if (step == 0) return nullptr;
    const core::OnlineSoftmaxStep& prev = run.steps[static_cast<size_t>(step - 1)];
    return prev.row_begin == run.steps[static_cast<size_t>(step)].row_begin ? &prev : nullptr;
}

// Head, tile sizes and the step, with Prev and Next.
void draw_controls(const core::Config& c, UiContext& ui, FlashPanel& p) {
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(font * 6);
    int head = p.head + 1;
    if (ImGui::SliderInt("head", &head, 1, c.heads)) p.head = std::clamp(head, 1, c.heads) - 1;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 6);
    ImGui::SliderInt("B_r", &p.block_rows, 1, std::max(1, c.n), "%d", ImGuiSliderFlags_AlwaysClamp);
    ui.report_item("flash: block rows");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("B_r: the query rows of a tile");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 6);
    ImGui::SliderInt("B_c", &p.block_cols, 1, std::max(1, c.kv_len()), "%d", ImGuiSliderFlags_AlwaysClamp);
    ui.report_item("flash: block cols");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("B_c: the keys of a tile");
    if (!p.run) return;
    const int total = static_cast<int>(p.run->steps.size());
    if (ImGui::Button("< Prev")) p.step = std::max(0, p.step - 1);
    ImGui::SameLine();
    if (ImGui::Button("Next >")) p.step = std::min(total - 1, p.step + 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 8);
    int shown = p.step + 1;
    if (ImGui::SliderInt("##step", &shown, 1, total, "step %d", ImGuiSliderFlags_AlwaysClamp)) p.step = shown - 1;
    ImGui::SameLine();
    ImGui::Text("of %d", total);
    ui.report_item("flash: step");
}

// The head's scores with the step's tile outlined, and the keys its rows have seen shaded.
void draw_scores(const core::Session& s, const core::HeadTrace& h, UiContext& ui, const core::OnlineSoftmaxStep& step,
                 ImVec2 room) {
    HeatmapOptions o;
    o.colormap = ui.colormap(core::MatrixId::scores);
    o.range = heatmap_range(ui, h.scores, core::MatrixId::scores, 0);
    o.max_size = room;
    o.max_cell = ImGui::GetFontSize() * 4;
    o.row_labels = &s.tokens;
    o.col_labels = &core::key_tokens(s);
    const HeatmapHit hit = heatmap(ui, "##flash scores", h.scores, o, "flash: scores");
    if (ui.report) ui.report->heatmaps.push_back({"flash: scores", hit.cells_min, hit.cells_max});
    const float cw = (hit.cells_max.x - hit.cells_min.x) /
                     static_cast<float>(std::max<Eigen::Index>(1, h.scores.cols()));
    const float ch = (hit.cells_max.y - hit.cells_min.y) /
                     static_cast<float>(std::max<Eigen::Index>(1, h.scores.rows()));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 seen_min{hit.cells_min.x, hit.cells_min.y + ch * static_cast<float>(step.row_begin)};
    const ImVec2 seen_max{hit.cells_min.x + cw * static_cast<float>(step.col_begin),
                          hit.cells_min.y + ch * static_cast<float>(step.row_end)};
    if (step.col_begin > 0) draw->AddRectFilled(seen_min, seen_max, IM_COL32(255, 255, 255, 60));
    const ImVec2 tile_min{hit.cells_min.x + cw * static_cast<float>(step.col_begin), seen_min.y};
    const ImVec2 tile_max{hit.cells_min.x + cw * static_cast<float>(step.col_end), seen_max.y};
    draw->AddRect(tile_min, tile_max, ui.color(Color::selected_cell), 0, 0, ui.px(3));
}

// Per row of the tile: m and ℓ before and after, and the rescaling of what was summed.
void draw_step_table(const core::Session& s, UiContext& ui, const core::OnlineSoftmaxRun& run, int index) {
    const core::OnlineSoftmaxStep& step = run.steps[static_cast<size_t>(index)];
    const core::OnlineSoftmaxStep* prev = before(run, index);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "Each row of the tile rescales what it summed, \xe2\x84\x93 and \xc3\x95, by "
        "e^(m_old \xe2\x88\x92 m_new), then adds the tile's e^(s \xe2\x88\x92 m_new) terms:");
    ImGui::PopTextWrapPos();
    if (!ImGui::BeginTable("##flash rows", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* head :
         {"query", "m before", "m after", "e^(m_old \xe2\x88\x92 m_new)", "\xe2\x84\x93 before", "\xe2\x84\x93 after"})
        ImGui::TableSetupColumn(head);
    ImGui::TableHeadersRow();
    for (int r = 0; r < step.row_end - step.row_begin; ++r) {
        const size_t k = static_cast<size_t>(r);
        const core::SoftmaxStart start = core::softmax_start(s.config.softmax);
        const double m_old = prev ? prev->m[k] : start.m, l_old = prev ? prev->l[k] : start.l;
        // Nothing summed yet: nothing to rescale (1), as the core's step does.
        const double rescale = m_old == minus_infinity ? 1.0 : std::exp(m_old - step.m[k]);
        const int i = step.row_begin + r;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(
            (std::to_string(i) + " " + quoted_label(i < static_cast<int>(s.tokens.size()) ? s.tokens[i] : "")).c_str());
        for (double v : {m_old, step.m[k], rescale, l_old, step.l[k]}) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(value_text(v, ui).c_str());
        }
        ui.report_value("flash: m " + std::to_string(i), step.m[k]);
        ui.report_value("flash: l " + std::to_string(i), step.l[k]);
        ui.report_value("flash: rescale " + std::to_string(i), rescale);
    }
    ImGui::EndTable();
}

// The rows of O finished so far (each row tile's, after its last key tile); the others hidden.
void draw_output_so_far(const core::Session& s, UiContext& ui, const core::OnlineSoftmaxRun& run,
                        const core::OnlineSoftmaxStep& step) {
    const int n_kv = static_cast<int>(core::key_tokens(s).size());
    const int done = step.col_end >= n_kv ? step.row_end : step.row_begin;
    ImGui::Spacing();
    if (done == 0) {
        ImGui::TextDisabled("O: no row tile has met its last key tile yet.");
        return;
    }
    ImGui::TextUnformatted(
        done == step.row_end && step.col_end >= n_kv
            ? "These rows' last key tile: O = diag(\xe2\x84\x93)\xe2\x81\xbb\xc2\xb9\xc2\xb7\xc3\x95 gives "
              "their rows of Z."
            : "O so far (a row tile's rows appear after its last key tile):");
    HeatmapOptions o;
    o.colormap = ui.colormap(core::MatrixId::Z);
    o.range = heatmap_range(ui, run.O, core::MatrixId::Z, 0);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    o.max_size = {avail.x - ImGui::GetFontSize() * 4,
                  std::max(ImGui::GetFontSize() * 8, avail.y - ImGui::GetFontSize() * 2)};
    o.max_cell = ImGui::GetFontSize() * 4;
    o.row_labels = &s.tokens;
    o.shown_cells = static_cast<long>(done) * run.O.cols();
    const HeatmapHit hit = heatmap(ui, "##flash O", run.O, o, "flash: O");
    if (ui.report) ui.report->heatmaps.push_back({"flash: O", hit.cells_min, hit.cells_max});
}

// The end: O against Z, and the traffic of n × n data saved.
void draw_summary(const core::Config& c, UiContext& ui, const FlashPanel& p) {
    const core::OnlineSoftmaxRun& run = *p.run;
    ImGui::PushTextWrapPos(0);
    ImGui::Text(
        "After each row tile's last key tile: O = diag(\xe2\x84\x93)\xe2\x81\xbb\xc2\xb9\xc2\xb7\xc3\x95. "
        "max |O \xe2\x88\x92 Z| over the head = %s (double).",
        core::format_number(run.max_difference, 3).c_str());
    ui.report_value("flash: max difference", run.max_difference);
    ImGui::TextDisabled(
        "Standard attention writes and reads the %d \xc3\x97 %d scores and weights: %lld accesses of "
        "n \xc3\x97 n data. The tiles keep none of it; they read K and V once per row tile: %lld "
        "values instead of %lld.",
        c.n, c.kv_len(), static_cast<long long>(run.standard_nn_accesses), static_cast<long long>(run.tiled_kv_reads),
        static_cast<long long>(run.standard_kv_reads));
    ImGui::PopTextWrapPos();
    ui.report_value("flash: standard n x n accesses", static_cast<double>(run.standard_nn_accesses));
    ui.report_value("flash: tiled K and V reads", static_cast<double>(run.tiled_kv_reads));
}

}  // namespace

void update_flash(const AppState& state, FlashPanel& p) {
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Config& c = shown->session.config;
    p.head = std::clamp(p.head, 0, std::max(0, c.heads - 1));
    p.block_rows = std::clamp(p.block_rows, 1, std::max(1, c.n));
    p.block_cols = std::clamp(p.block_cols, 1, std::max(1, c.kv_len()));
    if (p.run && p.run_generation == shown->generation && p.run_head == p.head && p.run_rows == p.block_rows &&
        p.run_cols == p.block_cols)
        return;
    p.run.reset();
    p.error.clear();
    p.run_generation = shown->generation;
    p.run_head = p.head;
    p.run_rows = p.block_rows;
    p.run_cols = p.block_cols;
    if (static_cast<long>(c.n) * c.kv_len() > max_flash_cells) {
        p.error = "The stepper follows heads of up to " + std::to_string(max_flash_cells) +
                  " scores (n \xc3\x97 n_kv); this session has " + std::to_string(c.n) + " \xc3\x97 " +
                  std::to_string(c.kv_len()) + ". `attnviz flash` writes the steps of any size.";
        return;
    }
    if (shown->trace.heads.empty()) return;
    core::Result<core::OnlineSoftmaxRun> run = core::online_softmax(shown->trace, p.head, p.block_rows, p.block_cols);
    if (!run) {
        p.error = run.problems.front().str();
        return;
    }
    p.run = std::move(*run.value);
    p.step = std::clamp(p.step, 0, static_cast<int>(p.run->steps.size()) - 1);
}

void draw_flash_panel(AppState& state, UiContext& ui, FlashPanel& p) {
    update_flash(state, p);
    const std::shared_ptr<const Snapshot> shown = state.shown_snapshot();
    const core::Config& c = shown->session.config;
    draw_controls(c, ui, p);
    update_flash(state, p);  // the controls may have changed the tiles
    if (!p.error.empty()) {
        text_wrapped_bounded(p.error, ui.color_vec(Color::error_text));
        return;
    }
    if (!p.run || p.run->steps.empty()) return;
    const core::OnlineSoftmaxStep& step = p.run->steps[static_cast<size_t>(p.step)];
    ImGui::Text("Rows %d\xe2\x80\xa6%d meet keys %d\xe2\x80\xa6%d%s", step.row_begin, step.row_end - 1, step.col_begin,
                step.col_end - 1, step.col_begin == 0 ? " (their first tile: nothing to rescale)" : "");
    ui.report_item("flash: tile");
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const core::HeadTrace& h = shown->trace.heads[static_cast<size_t>(p.head)];
    if (avail.x < font * 48) {  // narrow: one under the other, the window scrolls
        // The scores fit the room left, so the tile is in view with the step's controls.
        draw_scores(shown->session, h, ui, step,
                    {avail.x - font * 4, std::max(font * 6, std::min(avail.x * 0.7f, avail.y - font * 2))});
        draw_step_table(shown->session, ui, *p.run, p.step);
        draw_output_so_far(shown->session, ui, *p.run, step);
    } else {
        const float left = avail.x * 0.4f, height = std::max(font * 10, avail.y - font * 5);
        ImGui::BeginChild("##flash scores", {left, height}, false);
        draw_scores(shown->session, h, ui, step, {left - font * 4, std::max(font * 6, height - font * 3)});
        ImGui::EndChild();
        ImGui::SameLine();
        ImGui::BeginChild("##flash table", {0, height}, false);
        draw_step_table(shown->session, ui, *p.run, p.step);
        draw_output_so_far(shown->session, ui, *p.run, step);
        ImGui::EndChild();
    }
    draw_summary(c, ui, p);
}

}  // namespace attnviz::app
