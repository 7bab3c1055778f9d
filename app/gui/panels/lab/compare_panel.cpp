#include "panels/lab/compare_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <optional>

#include "core/base/format.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

// Starts A's trace: at once when B's would be computed at once too, else on the worker (same
// thread settings as B's worker: the same inputs then give the same bits).
void start_trace(const AppState& state, ComparePanel& p) {
    const core::Config& c = p.pin->config;
    if (const std::optional<core::Problem> problem = core::memory_problem(c, state.memory_budget())) {
        p.error = "A's trace is not computed: " + problem->message;
        return;
    }
    if (core::forward_flops(c) <= state.sync_limit()) {
        p.a = compute_snapshot(*p.pin, 1);
    } else {
        if (!p.worker) p.worker = std::make_unique<TraceWorker>();
        ++p.requested;
        p.worker->request(core::SessionPatch(p.pin, *p.pin), p.requested);  // the worker copies it
        p.awaiting = true;
    }
}

// A's trace from the worker, when the one asked for is done.
void take_trace(ComparePanel& p) {
    if (!p.awaiting || !p.worker) return;
    std::shared_ptr<Snapshot> done = p.worker->take();
    if (!done || done->generation != p.requested) return;  // none yet, or an older pin's
    p.awaiting = false;
    p.a = std::move(done);
}

const core::Matrix* a_matrix(const ComparePanel& p, core::MatrixRef ref) {
    return p.a ? core::find_matrix(p.a->session.params, p.a->trace, ref) : nullptr;
}

std::string number(double v, core::Notation notation) {
    if (std::isfinite(v)) return core::format_number(v, 6);
    if (v < 0) return core::symbols(notation).neg_inf;
    return notation == core::Notation::unicode ? "+∞" : "+inf";
}

std::string cell_text(int row, int col) { return "[" + std::to_string(row) + "][" + std::to_string(col) + "]"; }

// "\"x1\", \"x2\"" for a cell whose row and column are tokens; "\"x1\"" when only one is; "" otherwise.
std::string tokens_of(const core::Session& s, core::MatrixId id, int row, int col) {
    const core::MatrixInfo& mi = core::info(id);
    const auto token = [&](core::Dim dim, int k) {
        const std::vector<std::string>* labels = core::token_labels(s, dim);
        return labels && k < static_cast<int>(labels->size()) ? quoted_label((*labels)[static_cast<size_t>(k)])
                                                              : std::string();
    };
    const std::string r = token(mi.rows, row), c = token(mi.cols, col);
    return r.empty() ? c : c.empty() ? r : r + ", " + c;
}

}  // namespace

void update_compare(const AppState& state, ComparePanel& p) {
    const Snapshot& b = state.shown();
    const std::shared_ptr<const core::Session>& pin = b.session.pin;
    bool renew = false;
    if (pin != p.pin) {
        // Another pin of the same inputs (pinned again with no edit in between): A's trace stays.
        const bool same_inputs = pin && p.pin && pin->config == p.pin->config && pin->params == p.pin->params;
        p.pin = pin;
        renew = true;
        if (!same_inputs) {
            p.a.reset();
            p.error.clear();
            p.awaiting = false;
            if (pin) start_trace(state, p);
        }
    }
    take_trace(p);
    if (!p.pin) {
        p.compared = false;
        p.of_a = nullptr;
        return;
    }
    if (!renew && p.of_generation == b.generation && p.of_a == p.a.get() && p.of_ref == p.chosen) return;
    p.of_generation = b.generation;
    p.of_a = p.a.get();
    p.of_ref = p.chosen;
    p.inputs = core::changed_inputs(*p.pin, b.session);
    p.compared = false;
    const core::Matrix* ma = a_matrix(p, p.chosen);
    const core::Matrix* mb = state.matrix(p.chosen);
    if (!ma || !mb || !core::same_shape(p.chosen, p.pin->config, b.session.config) || ma->rows() != mb->rows() ||
        ma->cols() != mb->cols())
        return;
    p.comparison = core::compare(*ma, *mb, compare_top_k);
    p.stats = core::value_stats(p.comparison.difference, true);
    p.compared = true;
    ++p.serial;
}

core::ColorRange compare_range(const ComparePanel& p) {
    return core::color_range(core::ColorScale::diverging, p.clip ? core::Scaling::percentile : core::Scaling::automatic,
                             p.stats);
}

bool compare_busy(const ComparePanel& p) { return p.awaiting; }

void wait_for_compare(const ComparePanel& p) {
    if (p.awaiting && p.worker) p.worker->wait();
}

std::string compare_unavailable(const AppState& state, const ComparePanel& p) {
    if (!p.pin || !p.a || p.compared) return "";
    const core::MatrixRef ref = p.chosen;
    const core::Config &a = p.pin->config, &b = state.shown_config();
    const std::string label = state.label(ref);
    const bool in_a = core::exists(ref, a), in_b = core::exists(ref, b);
    if (!in_a && !in_b) return label + " exists in neither A nor B.";
    if (!in_a || !in_b)
        return label + " exists in " + (in_a ? "A" : "B") + " only: there is nothing to compare it with.";
    const bool t = state.column_vectors();
    const auto shape = [&](const core::Config& c) {
        const int r = core::rows_of(ref.id, c), k = core::cols_of(ref.id, c);
        return core::format_shape(t ? k : r, t ? r : k);
    };
    return "The shapes differ: " + label + " is " + shape(a) + " in A and " + shape(b) +
           " in B, so no cell of it is compared.";
}

std::string changes_text(const AppState& state, const ComparePanel& p) {
    if (!p.pin) return "";
    const core::Notation notation = state.notation();
    const core::Session& b = state.shown().session;
    std::vector<std::string> parts;
    std::string matrices;
    std::vector<core::MatrixId> one_side[2];  // names of matrices in A only, in B only (once each)
    for (const core::InputChange& c : p.inputs) {
        if (c.kind == core::InputChange::Kind::only_a || c.kind == core::InputChange::Kind::only_b) {
            std::vector<core::MatrixId>& ids = one_side[c.kind == core::InputChange::Kind::only_b];
            if (std::find(ids.begin(), ids.end(), c.ref.id) == ids.end()) ids.push_back(c.ref.id);
            continue;
        }
        matrices += (matrices.empty() ? "" : ", ") + core::label(c.ref, notation);
        if (c.kind == core::InputChange::Kind::shape) matrices += " (shape)";
    }
    for (int side = 0; side < 2; ++side) {
        if (one_side[side].empty()) continue;
        std::string names;
        for (core::MatrixId id : one_side[side]) names += (names.empty() ? "" : ", ") + std::string(core::name(id));
        matrices += (matrices.empty() ? "" : ", ") + names + (side ? " (B only)" : " (A only)");
    }
    if (!matrices.empty()) parts.push_back(matrices);
    for (std::string& s : core::config_changes(p.pin->config, b.config, notation)) parts.push_back(std::move(s));
    const bool keys = p.pin->config.cross() && b.config.cross();
    if ((p.pin->tokens.size() == b.tokens.size() && p.pin->tokens != b.tokens) ||
        (keys && p.pin->kv_tokens.size() == b.kv_tokens.size() && p.pin->kv_tokens != b.kv_tokens))
        parts.push_back("token labels");
    std::string text;
    for (const std::string& s : parts) text += (text.empty() ? "" : "; ") + s;
    return text;
}

namespace {

void draw_intro(AppState& state, UiContext& ui) {
    const std::string text = std::string(
                                 "Compare two versions of this session: pin it as it is now (A), keep editing (B), "
                                 "and see B ") +
                             core::symbols(state.notation()).minus +
                             " A of any matrix as a heatmap, with the cells that changed most.";
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Pin this session as A")) state.pin();
    ui.report_item("compare: pin");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Keeps the session as it is now inside it (saved with it); undo takes the pin back");
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Also Edit > Pin as A for Compare. The pin is saved in the session file.");
    ImGui::PopTextWrapPos();
}

// The matrix chooser: every matrix of the registry that both A and B have (a head of both for the
// per-head ones); one whose shape differs says so.
void draw_chooser(const AppState& state, ComparePanel& p) {
    const core::Config &a = p.pin->config, &b = state.shown_config();
    const float font = ImGui::GetFontSize();
    same_line_if_fits(font * 9);
    ImGui::SetNextItemWidth(font * 9);
    if (ImGui::BeginCombo("##compare matrix", core::name(p.chosen.id))) {
        for (core::MatrixId id : core::all_matrix_ids) {
            if (!core::exists(id, a) || !core::exists(id, b)) continue;
            const core::MatrixRef ref{id, std::min(p.chosen.head, std::min(a.heads, b.heads) - 1)};
            const bool differs = !core::same_shape(ref, a, b);
            const std::string text = std::string(core::name(id)) + (differs ? "  (shapes differ)" : "");
            if (ImGui::Selectable(text.c_str(), id == p.chosen.id)) p.chosen = ref;
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The matrix compared: B − A of it, cell by cell");
    const int heads = std::min(a.heads, b.heads);
    if (core::is_per_head(p.chosen.id) && heads > 1) {
        same_line_if_fits(font * 6 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("head").x);
        ImGui::SetNextItemWidth(font * 6);
        int shown = std::min(p.chosen.head, heads - 1) + 1;
        if (ImGui::SliderInt("head", &shown, 1, heads)) p.chosen.head = shown - 1;
    }
}

// Buttons for the matrices that still compare when the chosen one does not.
void draw_still_compared(const AppState& state, ComparePanel& p) {
    const core::Config &a = p.pin->config, &b = state.shown_config();
    const int head = std::clamp(p.chosen.head, 0, std::max(0, std::min(a.heads, b.heads) - 1));
    std::vector<core::MatrixRef> same;
    for (core::MatrixId id : core::all_matrix_ids)
        if (core::same_shape({id, head}, a, b)) same.push_back({id, head});
    if (same.empty()) {
        ImGui::TextDisabled("No matrix has the same shape in A and B.");
        return;
    }
    ImGui::TextDisabled("Still compared (same shape in A and B):");
    for (const core::MatrixRef& ref : same) {
        const std::string label = state.label(ref);
        same_line_if_fits(ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2);
        if (ImGui::SmallButton(label.c_str())) p.chosen = ref;
    }
}

void draw_summary(const AppState& state, const ComparePanel& p) {
    const core::Comparison& c = p.comparison;
    const std::string label = state.label(p.chosen);
    std::string line;
    if (c.changed == 0 && c.masked_a + c.masked_b == 0) {
        line = "B = A: no cell of " + label + " changed (" + std::to_string(c.cells()) + " cells).";
    } else {
        line = "max |B " + std::string(core::symbols(state.notation()).minus) +
               " A| = " + number(c.max_abs, state.notation()) + "; " + std::to_string(c.changed) + " of " +
               std::to_string(c.cells()) + " cells changed";
        if (c.masked_a) line += "; " + std::to_string(c.masked_a) + " masked in A only";
        if (c.masked_b) line += "; " + std::to_string(c.masked_b) + " masked in B only";
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(line.c_str());
    ImGui::PopTextWrapPos();
}

// The heatmap's tooltip: the cell, its tokens, B, A and B − A.
void cell_tooltip(const AppState& state, const ComparePanel& p, int row, int col) {
    const core::Matrix* ma = a_matrix(p, p.chosen);
    const core::Matrix* mb = state.matrix(p.chosen);
    if (!ma || !mb || row >= ma->rows() || col >= ma->cols()) return;
    const core::Notation n = state.notation();
    const double a = (*ma)(row, col), b = (*mb)(row, col);
    const std::string tokens = tokens_of(state.shown().session, p.chosen.id, row, col);
    std::string text = core::label(core::CellRef{p.chosen, row, col}, n) + (tokens.empty() ? "" : "  (" + tokens + ")");
    const std::string minus = core::symbols(n).minus;
    text += "\nB = " + number(b, n) + ", A = " + number(a, n);
    if (std::isfinite(a) && std::isfinite(b))
        text += ", B " + minus + " A = " + number(b - a, n);
    else if (!std::isfinite(a) && !std::isfinite(b))
        text += ": masked in both, no change";
    else
        text += std::isfinite(a) ? ": masked in B only" : ": masked in A only (allowed in B)";
    if (state.column_vectors())
        text += "\n(drawn transposed: row " + std::to_string(row) + ", column " + std::to_string(col) +
                " of the row form)";
    ImGui::SetTooltip("%s", text.c_str());
}

// The width the table of the largest changes needs: its widest cell and numbers, and its padding.
float top_table_width(const ComparePanel& p, core::Notation n) {
    float cell_w = ImGui::CalcTextSize("cell").x, number_w = ImGui::CalcTextSize("B - A").x;
    for (const core::CellPair& cell : p.comparison.top) {
        cell_w = std::max(cell_w, ImGui::CalcTextSize(cell_text(cell.row, cell.col).c_str()).x);
        for (double v : {cell.a, cell.b, cell.delta()})
            number_w = std::max(number_w, ImGui::CalcTextSize(number(v, n).c_str()).x);
    }
    const ImGuiStyle& style = ImGui::GetStyle();
    return cell_w + 3 * number_w + 4 * (2 * style.CellPadding.x + 1) + 1;
}

// The largest changes, one row each; hovering one outlines its cell, clicking selects it.
void draw_top_table(AppState& state, ComparePanel& p, float width) {
    const core::Comparison& c = p.comparison;
    p.highlight_row = p.highlight_col = -1;
    if (c.top.empty()) return;
    const core::Notation n = state.notation();
    ImGui::TextDisabled("Largest changes");
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("changes", 4, flags, {width, 0})) return;
    const std::string delta = std::string("B ") + core::symbols(n).minus + " A";
    ImGui::TableSetupColumn("cell");
    ImGui::TableSetupColumn("A");
    ImGui::TableSetupColumn("B");
    ImGui::TableSetupColumn(delta.c_str());
    ImGui::TableHeadersRow();
    for (size_t k = 0; k < c.top.size(); ++k) {
        const core::CellPair& cell = c.top[k];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(k));
        const std::string where = cell_text(cell.row, cell.col);
        if (ImGui::Selectable(where.c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
            state.select_checked({p.chosen, cell.row, cell.col});
        if (ImGui::IsItemHovered()) {
            p.highlight_row = cell.row;
            p.highlight_col = cell.col;
            const std::string tokens = tokens_of(state.shown().session, p.chosen.id, cell.row, cell.col);
            ImGui::SetTooltip("%s%s: click to select it",
                              core::label(core::CellRef{p.chosen, cell.row, cell.col}, n).c_str(),
                              tokens.empty() ? "" : ("  (" + tokens + ")").c_str());
        }
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(number(cell.a, n).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(number(cell.b, n).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(number(cell.delta(), n).c_str());
    }
    ImGui::EndTable();
}

// The cells masked in one of A and B only, the first few by place.
void draw_mask_changes(const ComparePanel& p) {
    const core::Comparison& c = p.comparison;
    if (c.masks.empty()) return;
    std::string line = "Mask changed at ";
    for (size_t k = 0; k < c.masks.size(); ++k)
        line += (k ? ", " : "") + cell_text(c.masks[k].row, c.masks[k].col) +
                (std::isfinite(c.masks[k].a) ? " (masked in B)" : " (masked in A)");
    const std::int64_t total = c.masked_a + c.masked_b;
    if (total > static_cast<std::int64_t>(c.masks.size()))
        line += ", and " + std::to_string(total - static_cast<std::int64_t>(c.masks.size())) + " more";
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", line.c_str());
    ImGui::PopTextWrapPos();
}

}  // namespace

void draw_compare_panel(AppState& state, UiContext& ui, ComparePanel& p) {
    update_compare(state, p);
    if (!p.pin) {
        draw_intro(state, ui);
        return;
    }
    const float font = ImGui::GetFontSize();
    if (ImGui::Button("Unpin")) state.unpin();
    ui.report_item("compare: unpin");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drop A (undo brings it back)");
    same_line_if_fits(ImGui::CalcTextSize("Pin again (A = now)").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button("Pin again (A = now)")) state.pin();
    ui.report_item("compare: pin again");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Make the session as it is now the new A");
    draw_chooser(state, p);

    // What changed in the inputs and the settings.
    const std::string changes = changes_text(state, p);
    ImGui::PushTextWrapPos(0);
    if (changes.empty())
        ImGui::TextDisabled("The inputs and settings are A's (nothing edited since the pin).");
    else
        ImGui::Text("Changed since A: %s", changes.c_str());
    ImGui::PopTextWrapPos();

    if (!p.a) {
        if (!p.error.empty())
            ImGui::TextColored(ui.color_vec(Color::error_text), "%s", p.error.c_str());
        else if (p.awaiting)
            ImGui::TextDisabled("Computing A's trace...");
        return;
    }
    if (p.a->out_of_memory) {
        ImGui::TextColored(ui.color_vec(Color::error_text), "Not enough memory for A's trace.");
        return;
    }
    if (!p.compared) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextColored(ui.color_vec(Color::error_text), "%s", compare_unavailable(state, p).c_str());
        ImGui::PopTextWrapPos();
        draw_still_compared(state, p);
        return;
    }
    draw_summary(state, p);

    // The heatmap, with the table beside it when both fit (the heatmap at its natural width, or at
    // least 14 lines wide), else below it.
    const core::Comparison& c = p.comparison;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float legend_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetTextLineHeight();
    const float table_w = top_table_width(p, state.notation());
    const bool t = state.column_vectors();
    const core::Session& session = state.shown().session;
    const core::MatrixInfo& mi = core::info(p.chosen.id);
    HeatmapOptions o;
    o.colormap = Colormap::diverging;
    o.range = compare_range(p);
    o.max_cell = ImGui::GetFontSize() * 4;  // 64 px at 16 px text
    o.generation = p.serial;
    o.transposed = t;
    const std::vector<std::string>* row_tokens = core::token_labels(session, mi.rows);
    const std::vector<std::string>* col_tokens = core::token_labels(session, mi.cols);
    o.row_labels = t ? col_tokens : row_tokens;
    o.col_labels = t ? row_tokens : col_tokens;
    const float natural_w = o.max_cell * static_cast<float>(t ? c.difference.rows() : c.difference.cols()) +
                            heatmap_gutters(o).x;
    const bool beside = !c.top.empty() && avail.x >= table_w + font + std::min(natural_w, font * 14);
    const float map_w = beside ? avail.x - table_w - font : avail.x;
    const float map_h = beside ? avail.y - legend_h : std::max(font * 8, avail.y * 0.62f - legend_h);
    o.max_size = {std::max(map_w, font * 4), std::max(map_h, font * 4)};
    if (p.highlight_row >= 0)
        o.marks.push_back(t ? HeatmapMark{p.highlight_col, p.highlight_row, ui.color(Color::selected_cell)}
                            : HeatmapMark{p.highlight_row, p.highlight_col, ui.color(Color::selected_cell)});

    ImGui::BeginGroup();
    const std::string report_name = ui.report ? "B-A " + core::label(p.chosen, core::Notation::ascii) : std::string();
    const HeatmapHit hit = heatmap(ui, "difference", c.difference, o, ui.report ? report_name.c_str() : nullptr);
    if (ui.report) ui.report->heatmaps.push_back({report_name, hit.cells_min, hit.cells_max});
    if (ImGui::BeginPopupContextItem("difference menu")) {
        ImGui::TextDisabled("B - A of %s", core::label(p.chosen, core::Notation::ascii).c_str());
        copy_menu_items(c.difference);
        ImGui::EndPopup();
    }
    if (hit.hovered) {
        const int row = t ? hit.col : hit.row, col = t ? hit.row : hit.col;
        cell_tooltip(state, p, row, col);
        if (hit.clicked) state.select_checked({p.chosen, row, col});
    }
    const std::string note = std::string("B ") + core::symbols(state.notation()).minus + " A";
    // The legend and the clip toggle on one line within the heatmap's room, so the table beside
    // them keeps its width.
    const float clip_w = toggle_width("clip") + ImGui::GetStyle().ItemSpacing.x;
    colormap_legend(Colormap::diverging, o.range, std::clamp(map_w - clip_w, font * 6, font * 18), note.c_str());
    checkbox_on_line("clip", &p.clip);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Colours from -p to p, p the 99th percentile of |B - A|, instead of its largest value:\n"
            "one large change then does not wash out the others (the larger ones take the end colours)");
    ImGui::EndGroup();

    if (beside) ImGui::SameLine(0, font);
    ImGui::BeginGroup();
    draw_top_table(state, p, beside ? table_w : std::min(avail.x, table_w));
    draw_mask_changes(p);
    ImGui::EndGroup();
}

}  // namespace attnviz::app
