#include "panels/lab/gradient_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>
#include <queue>

#include "core/base/format.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

using core::MatrixId;

std::string output_label(int row, int col) {
    return "output[" + std::to_string(row) + "][" + std::to_string(col) + "]";
}

// Orders a heap with the smallest |value| kept on top, the first to make room for a larger one.
bool larger(const GradientEntry& a, const GradientEntry& b) { return std::abs(a.value) > std::abs(b.value); }

// The entries of largest magnitude (not 0) over every matrix shown, largest first: a heap of the
// `count` largest so far, so the millions of entries at BERT's size are looked at once each.
std::vector<GradientEntry> largest_entries(const core::Params& d, const std::vector<MatrixRef>& shown, int count) {
    std::priority_queue<GradientEntry, std::vector<GradientEntry>, decltype(&larger)> heap(&larger);
    if (count <= 0) return {};
    for (const MatrixRef& ref : shown) {
        const core::Matrix& m = *gradient_matrix(d, ref);
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            for (Eigen::Index r = 0; r < m.rows(); ++r) {
                const double v = m(r, c);
                if (v == 0 || (static_cast<int>(heap.size()) == count && std::abs(v) <= std::abs(heap.top().value)))
                    continue;
                heap.push({ref, static_cast<int>(r), static_cast<int>(c), v});
                if (static_cast<int>(heap.size()) > count) heap.pop();
            }
    }
    std::vector<GradientEntry> out;
    for (; !heap.empty(); heap.pop()) out.push_back(heap.top());
    std::reverse(out.begin(), out.end());
    return out;
}

// Whether the gradient on screen is of this trace and cell.
bool shows(const GradientPanel& p, std::uint64_t generation) {
    return p.result && p.result->generation == generation && p.result->gradients.row == p.row &&
           p.result->gradients.col == p.col;
}

// A finished computation's result on screen (or its refusal noted).
void adopt(GradientPanel& p, core::Result<GradientResult> r, std::uint64_t generation, int row, int col) {
    if (!r) {
        p.problem = r.problems.empty() ? std::string("the gradient could not be computed") : r.problems.front().str();
        p.problem_generation = generation;
        p.problem_row = row;
        p.problem_col = col;
        return;
    }
    p.problem.clear();
    r.value->serial = ++p.serial;
    p.result = std::make_shared<const GradientResult>(std::move(*r.value));
}

// compute_gradient, with running out of memory as a refusal.
core::Result<GradientResult> compute_or_refuse(const Snapshot& snapshot, int row, int col) {
    try {
        return compute_gradient(snapshot, row, col);
    } catch (const std::bad_alloc&) {
        return core::Result<GradientResult>::fail(
            {{"", "not enough memory for the gradient of " + output_label(row, col)}});
    }
}

// The labels of a matrix's rows when they are tokens: X's are the queries', Y's the keys'.
const std::vector<std::string>* tile_tokens(const GradientResult& r, MatrixRef ref) {
    return ref.id == MatrixId::X ? &r.tokens : ref.id == MatrixId::Y ? &r.kv_tokens : nullptr;
}

// The token a row of X or Y stands for, as ` "cat"`, or "" for matrices of other rows.
std::string row_token(const GradientResult& r, MatrixRef ref, int row) {
    const std::vector<std::string>* labels = tile_tokens(r, ref);
    if (!labels || row < 0 || row >= static_cast<int>(labels->size())) return "";
    return " " + quoted_label((*labels)[static_cast<size_t>(row)]);
}

// "heads 1–2" (or "heads 1-2" in ASCII): the heads sharing the K/V group of its first head.
std::string group_heads(const core::Config& c, int owner, core::Notation nt) {
    const int last = owner + c.group_size();
    return "heads " + std::to_string(owner + 1) + (nt == core::Notation::unicode ? "–" : "-") + std::to_string(last);
}

// The tooltip of one gradient entry: the exact value, the token of its row, what it means, and a
// group's sum for shared K/V.
void entry_tooltip(const GradientResult& r, const GradientEntry& e, core::Notation nt, bool transposed) {
    const char* d = nt == core::Notation::unicode ? "∂" : "d ";
    const std::string out = output_label(r.gradients.row, r.gradients.col);
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::Text("%s%s / %s%s = %s", d, out.c_str(), d, core::label(CellRef{e.ref, e.row, e.col}, nt).c_str(),
                core::format_exact(e.value).c_str());
    if (const std::string token = row_token(r, e.ref, e.row); !token.empty())
        ImGui::TextDisabled("row %d of %s is the token%s", e.row, core::name(e.ref.id), token.c_str());
    if (transposed)
        ImGui::TextDisabled("drawn transposed (column vectors): this is row %d, column %d of the row form", e.row,
                            e.col);
    ImGui::TextUnformatted(gradient_meaning(e, r.gradients.row, r.gradients.col, nt).c_str());
    if (core::is_kv_shared(e.ref.id) && r.config.grouped())
        ImGui::TextDisabled("%s is shared by %s (one K/V group): this sums the paths through each of them.",
                            core::label(e.ref, nt).c_str(), group_heads(r.config, e.ref.head, nt).c_str());
    if (e.ref.id == MatrixId::W_O)
        ImGui::TextDisabled("Only column %d of W_O reaches %s: %s[k][%d] is concat[%d][k].", r.gradients.col,
                            out.c_str(), gradient_title(e.ref, nt).c_str(), r.gradients.col, r.gradients.row);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

}  // namespace

const core::Matrix* gradient_matrix(const core::Params& d, MatrixRef ref) {
    // A K/V group's gradient is shown once, at its first head (where the params hold it).
    if (core::is_kv_shared(ref.id) && ref.head >= 0 && d.kv_owner(ref.head) != ref.head) return nullptr;
    // The mask (left empty) and the computed matrices have no gradient.
    const core::Matrix* m = core::find_input(d, ref);
    return m && m->size() > 0 ? m : nullptr;
}

core::Result<GradientResult> compute_gradient(const Snapshot& s, int row, int col, int largest) {
    const auto start = std::chrono::steady_clock::now();
    core::Result<core::Gradients> g = core::output_gradient(s.session.config, s.session.params, s.trace, row, col);
    if (!g) return core::Result<GradientResult>::fail(std::move(g.problems));
    GradientResult r;
    r.generation = s.generation;
    r.config = s.session.config;
    r.tokens = s.session.tokens;
    r.kv_tokens = s.session.kv_tokens;
    r.value = s.trace.output(row, col);
    r.gradients = std::move(*g.value);
    // What the layer has a gradient of, in the panel's order: the registry's inputs, a head's
    // together (X, Y, mask, then each head's W_Q … b_V, then W_O, b_O).
    std::vector<MatrixRef> candidates;
    bool heads_done = false;
    for (MatrixId id : core::all_matrix_ids) {
        if (!core::is_input(id)) continue;
        if (!core::is_per_head(id)) {
            candidates.push_back({id, 0});
        } else if (!heads_done) {
            heads_done = true;
            for (int h = 0; h < r.config.heads; ++h)
                for (MatrixId head_id : core::all_matrix_ids)
                    if (core::is_input(head_id) && core::is_per_head(head_id)) candidates.push_back({head_id, h});
        }
    }
    for (const MatrixRef& ref : candidates)
        if (const core::Matrix* m = gradient_matrix(r.gradients.d, ref)) {
            r.shown.push_back(ref);
            r.max_abs.push_back(m->cwiseAbs().maxCoeff());
            r.all_max_abs = std::max(r.all_max_abs, r.max_abs.back());
        }
    r.largest = largest_entries(r.gradients.d, r.shown, largest);
    r.compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return core::Result<GradientResult>::ok(std::move(r));
}

std::string gradient_title(MatrixRef ref, core::Notation nt) {
    return (nt == core::Notation::unicode ? "∂/∂" : "d/d") + core::label(ref, nt);
}

std::string gradient_meaning(const GradientEntry& e, int out_row, int out_col, core::Notation nt) {
    const std::string in = core::label(CellRef{e.ref, e.row, e.col}, nt);
    const std::string out = output_label(out_row, out_col);
    if (e.value == 0)
        return "A small change of " + in + " leaves " + out + " as it is (to first order: the derivative is 0).";
    const core::Symbols& s = core::symbols(nt);
    const char* eps = nt == core::Notation::unicode ? "ε" : "eps";
    return "Raising " + in + " by " + eps + (e.value > 0 ? " raises " : " lowers ") + out + " by " + s.about + " " +
           core::format_number(std::abs(e.value), 3) + s.dot + eps + ".";
}

bool choose_output_cell(AppState& state, GradientPanel& p, int row, int col) {
    const core::Matrix& out = state.trace().output;
    if (row < 0 || col < 0 || row >= out.rows() || col >= out.cols()) {
        state.set_message("There is no cell " + output_label(row, col) + ": the output is " +
                              core::format_shape(out.rows(), out.cols()) + ".",
                          true);
        return false;
    }
    p.row = p.field_row = row;
    p.col = p.field_col = col;
    p.note.clear();
    return true;
}

bool update_gradient(const AppState& state, GradientPanel& p) {
    // A newly selected output cell, clicked in any view.
    const CellRef* selected = state.selection();
    const std::optional<CellRef> now = selected ? std::optional<CellRef>(*selected) : std::nullopt;
    if (now != p.seen) {
        p.seen = now;
        if (p.follow && now && now->matrix.id == MatrixId::output && now->row >= 0 && now->col >= 0) {
            p.row = p.field_row = now->row;
            p.col = p.field_col = now->col;
            p.note.clear();
        }
    }
    // The output shrank under the cell: its nearest cell instead, and a note saying so.
    const core::Matrix& out = state.trace().output;
    if (out.size() == 0) return false;
    if (p.row >= out.rows() || p.col >= out.cols()) {
        const int row = std::min(p.row, static_cast<int>(out.rows()) - 1);
        const int col = std::min(p.col, static_cast<int>(out.cols()) - 1);
        p.note = output_label(p.row, p.col) + " is gone (the output is now " +
                 core::format_shape(out.rows(), out.cols()) + "): showing " + output_label(row, col) + ".";
        p.row = p.field_row = row;
        p.col = p.field_col = col;
    }
    if (p.job.ready()) adopt(p, std::move(*p.job.take()), p.job_generation, p.job_row, p.job_col);
    const std::uint64_t generation = state.generation();
    if (shows(p, generation)) return true;
    // One computation at a time: the newest trace and cell go once the running one is done.
    if (p.job.valid()) return false;
    if (!p.problem.empty() && p.problem_generation == generation && p.problem_row == p.row && p.problem_col == p.col)
        return false;  // refused already: not again every frame
    p.problem.clear();
    ++p.computed;
    if (core::forward_flops(state.shown_config()) <= p.sync_limit_flops) {
        adopt(p, compute_or_refuse(state.shown(), p.row, p.col), generation, p.row, p.col);
        return shows(p, generation);
    }
    p.job = p.worker.submit([snapshot = state.shown_snapshot(), row = p.row, col = p.col](const Worker::Stop&) {
        return compute_or_refuse(*snapshot, row, col);
    });
    p.job_generation = generation;
    p.job_row = p.row;
    p.job_col = p.col;
    return false;
}

bool gradient_busy(const GradientPanel& p) { return p.job.valid(); }

void wait_for_gradient(const GradientPanel& p) {
    if (p.job.valid()) p.job.wait();
}

namespace {

// A matrix's heatmap may be this much taller than wide: a weight of d_model rows and a few
// columns gets cells large enough for its numbers.
constexpr float tile_aspect = 1.25f;
// A tile's largest cell: 2½ ems (40 px at 16 px text).
float tile_max_cell() { return ImGui::GetFontSize() * 2.5f; }
constexpr float min_bias_cell = 4;  // a bias strip thinner than this is fitted on its own

// A tile's title: "∂/∂W_Q⁽¹⁾", with its own range when each matrix has its own scale, or "= 0"
// when the output cell does not depend on it at all here.
std::string tile_title(const GradientPanel& p, const GradientResult& r, size_t index, core::Notation nt) {
    std::string title = gradient_title(r.shown[index], nt);
    const double own = r.max_abs[index];
    if (own == 0) return title + " = 0";
    return p.one_scale ? title : title + "  ±" + core::format_compact(own, 2);
}

// One matrix of the gradient: its title (and its own range when each matrix has its own scale)
// above its heatmap, `side` pixels wide at most; hovering a cell explains it. A bias is drawn
// with the cell size of the weight above it (`cell`), so their columns line up.
void draw_gradient_matrix(UiContext& ui, const GradientPanel& p, const GradientResult& r, size_t index, float side,
                          bool transposed, float cell = 0) {
    const MatrixRef ref = r.shown[index];
    const core::Matrix& m = *gradient_matrix(r.gradients.d, ref);
    const core::Notation nt = ui.notation();
    ImGui::PushID(static_cast<int>(ref.id) * 1000 + ref.head);
    const std::string title = tile_title(p, r, index, nt);
    const double own = r.max_abs[index];
    ImGui::TextUnformatted(fitted_text(title, side).c_str());
    if (ImGui::IsItemHovered()) {
        const char* d = nt == core::Notation::unicode ? "∂" : "d ";
        ImGui::SetTooltip("%s%s / %s%s: %s, its largest |value| %s", d,
                          output_label(r.gradients.row, r.gradients.col).c_str(), d, core::label(ref, nt).c_str(),
                          core::format_shape(m.rows(), m.cols()).c_str(), core::format_number(own, 4).c_str());
    }

    HeatmapOptions o;
    o.colormap = Colormap::diverging;
    const double range = p.one_scale ? r.all_max_abs : own;
    o.range = {range > 0 ? -range : -1, range > 0 ? range : 1, false};
    o.max_size = {side, side * tile_aspect};
    o.max_cell = cell > 0 ? cell : tile_max_cell();
    if (cell > 0) o.max_size.y = cell;
    o.generation = r.serial;
    o.transposed = transposed;
    (transposed ? o.col_labels : o.row_labels) = tile_tokens(r, ref);
    if (p.highlighted >= 0 && p.highlighted < static_cast<int>(r.largest.size())) {
        const GradientEntry& e = r.largest[static_cast<size_t>(p.highlighted)];
        if (e.ref == ref)
            o.marks.push_back(transposed ? HeatmapMark{e.col, e.row, ui.color(Color::selected_cell)}
                                         : HeatmapMark{e.row, e.col, ui.color(Color::selected_cell)});
    }
    const std::string report = gradient_title(ref, core::Notation::ascii);
    const HeatmapHit hit = heatmap(ui, "cells", m, o, report.c_str());
    ui.report_item("gradients: " + report);
    if (ui.report) ui.report->heatmaps.push_back({report, hit.cells_min, hit.cells_max});
    if (hit.hovered) {
        const int row = transposed ? hit.col : hit.row, col = transposed ? hit.row : hit.col;
        entry_tooltip(r, {ref, row, col, m(row, col)}, nt, transposed);
    }
    if (ImGui::BeginPopupContextItem("menu")) {
        ImGui::TextDisabled("%s", title.c_str());
        copy_menu_items(m);
        ImGui::EndPopup();
    }
    ImGui::PopID();
}

// The size of a heatmap cell for a rows×cols matrix within side×side (as the widget fits it,
// labels aside).
float fitted_cell(const core::Matrix& m, float side, bool transposed) {
    const auto rows = static_cast<float>(transposed ? m.cols() : m.rows());
    const auto cols = static_cast<float>(transposed ? m.rows() : m.cols());
    return std::min({tile_max_cell(), side / std::max(cols, 1.0f), side * tile_aspect / std::max(rows, 1.0f)});
}

// The list of the largest |∂|: input, value, and a bar of its share of the largest.
void draw_largest(UiContext& ui, GradientPanel& p, const GradientResult& r, int count) {
    const core::Notation nt = ui.notation();
    p.highlighted = -1;
    if (r.largest.empty()) {
        ImGui::TextDisabled("Every derivative is 0: no input changes this cell (to first order).");
        return;
    }
    const float font = ImGui::GetFontSize();
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg;
    // Not wider than needed: a bar across a maximised panel would be hard to read against its row.
    const float width = std::min(ImGui::GetContentRegionAvail().x, font * 32);
    if (!ImGui::BeginTable("largest", 3, flags, {width, 0})) return;
    ImGui::TableSetupColumn("input");
    ImGui::TableSetupColumn("value");
    ImGui::TableSetupColumn("bar", ImGuiTableColumnFlags_WidthStretch);
    for (size_t k = 0; k < std::min(r.largest.size(), static_cast<size_t>(count)); ++k) {
        const GradientEntry& e = r.largest[k];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(k));
        const std::string name = core::label(CellRef{e.ref, e.row, e.col}, nt) + row_token(r, e.ref, e.row);
        // The row's hover area, then its name as plain text (a token may hold "##" or "%").
        ImGui::Selectable("##entry", false, ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap,
                          {0, ImGui::GetTextLineHeight()});
        const bool hovered = ImGui::IsItemHovered();
        ImGui::SameLine(0, 0);
        ImGui::TextUnformatted(name.c_str());
        if (hovered) {
            p.highlighted = static_cast<int>(k);
            entry_tooltip(r, e, nt, false);
        }
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::format_number(e.value, 4).c_str());
        ImGui::TableNextColumn();
        // A bar as long as |value| is of the largest, in the value's colour.
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const float room = std::max(ImGui::GetContentRegionAvail().x, font);
        const float w = room * static_cast<float>(std::abs(e.value) / std::abs(r.largest.front().value));
        const float h = ImGui::GetTextLineHeight();
        const core::ColorRange range{-r.all_max_abs, r.all_max_abs, false};
        ImGui::GetWindowDrawList()->AddRectFilled({at.x, at.y + h * 0.2f}, {at.x + std::max(w, 1.0f), at.y + h * 0.8f},
                                                  colormap_color(Colormap::diverging, range.position(e.value)));
        ImGui::Dummy({room, h});
    }
    ImGui::EndTable();
}

// The cell: output [row] [col] show, then the toggles (wrapping when the panel is narrow).
void draw_cell_controls(AppState& state, UiContext& ui, GradientPanel& p) {
    const float font = ImGui::GetFontSize();
    const ImGuiStyle& style = ImGui::GetStyle();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("output");
    bool apply = false;
    for (int* field : {&p.field_row, &p.field_col}) {
        ImGui::SameLine(0, style.ItemInnerSpacing.x);
        ImGui::SetNextItemWidth(font * 3);
        ImGui::PushID(field);
        ImGui::InputInt("##cell", field, 0);
        ImGui::PopID();
        apply |= ImGui::IsItemDeactivatedAfterEdit();  // Enter, or the field left after typing
        ui.report_item(field == &p.field_row ? "gradients: row" : "gradients: column");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(field == &p.field_row ? "The output cell's row (a query token), from 0"
                                                    : "The output cell's column, from 0");
    }
    ImGui::SameLine();
    apply |= ImGui::Button("show");
    ui.report_item("gradients: show");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show the gradient of this output cell");
    if (apply) choose_output_cell(state, p, p.field_row, p.field_col);
    if (checkbox_on_line("follow the selection", &p.follow) && p.follow) p.seen.reset();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: a cell of output clicked in any view (every intermediate, the matrix viewer)\n"
            "shows its gradient here");
    checkbox_on_line("one colour scale", &p.one_scale);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: every matrix on ± the largest |value| of them all, so they compare.\n"
            "Off: each on ± its own largest |value| (in its title), so each shows its pattern.");
}

// What is shown: the cell, its value and its token, or why nothing is. False when there is no
// gradient to show yet.
bool draw_shown_cell(UiContext& ui, const GradientPanel& p, bool current) {
    const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    ImGui::PushTextWrapPos(0);
    if (!p.note.empty()) ImGui::TextColored(dim, "%s", p.note.c_str());
    if (!p.problem.empty()) ImGui::TextColored(ui.color_vec(Color::error_text), "%s", p.problem.c_str());
    if (!p.result) {
        if (p.problem.empty())
            ImGui::TextColored(dim, "computing the gradient of %s%s", output_label(p.row, p.col).c_str(),
                               ui.symbols().ellipsis);
        ImGui::PopTextWrapPos();
        return false;
    }
    const GradientResult& r = *p.result;
    const std::string out = output_label(r.gradients.row, r.gradients.col);
    const std::string token = r.gradients.row < static_cast<int>(r.tokens.size())
                                  ? " (token " + quoted_label(r.tokens[static_cast<size_t>(r.gradients.row)]) + ")"
                                  : std::string();
    ImGui::Text("%s = %s%s: how it changes with each input", out.c_str(), core::format_number(r.value, 4).c_str(),
                token.c_str());
    if (!current) ImGui::TextColored(dim, "computing %s%s", output_label(p.row, p.col).c_str(), ui.symbols().ellipsis);
    ImGui::PopTextWrapPos();
    return true;
}

// The gradient's matrices as tiles flowing in lines: a tile goes on the line when it fits, else on
// a new line.
struct GradientTiles {
    UiContext& ui;
    GradientPanel& p;
    const GradientResult& r;
    core::Notation nt;
    bool transposed = false;
    float gap = 0, right = 0;  // between tiles; the room's right edge
    float side = 0, wide = 0;  // a head's matrix at most; X, Y, W_O at most
    bool in_line = false;      // a tile is on the current line

    int find(MatrixRef ref) const {
        for (size_t k = 0; k < r.shown.size(); ++k)
            if (r.shown[k] == ref) return static_cast<int>(k);
        return -1;
    }
    float room_of(MatrixRef ref) const { return core::is_per_head(ref.id) ? side : wide; }
    // How wide a matrix's tile is drawn (its title, its cells, the bias under it), before drawing it.
    float tile_width(MatrixRef ref, MatrixId bias) const {
        const int k = find(ref);
        if (k < 0) return 0.0f;
        const float room = room_of(ref);
        const core::Matrix& m = *gradient_matrix(r.gradients.d, ref);
        float w = fitted_cell(m, room, transposed) * static_cast<float>(transposed ? m.rows() : m.cols());
        if (const std::vector<std::string>* tokens = tile_tokens(r, ref)) {  // token labels beside the rows
            HeatmapOptions labels;
            (transposed ? labels.col_labels : labels.row_labels) = tokens;
            w += heatmap_gutters(labels).x;
        }
        w = std::max(w, ImGui::CalcTextSize(tile_title(p, r, static_cast<size_t>(k), nt).c_str()).x);
        if (const int b = find({bias, ref.head}); b >= 0)
            w = std::max(w, ImGui::CalcTextSize(tile_title(p, r, static_cast<size_t>(b), nt).c_str()).x);
        return std::min(w, room);
    }
    // The next tile goes on the line when it fits (`spacing` after the last), else on a new line.
    void place(float w, float spacing) {
        if (in_line && ImGui::GetItemRectMax().x + spacing + w <= right) ImGui::SameLine(0, spacing);
        in_line = true;
    }
    void new_line() {
        if (in_line) ImGui::Dummy({0, gap / 2});
        in_line = false;
    }
    void tile(MatrixRef ref, MatrixId bias, float spacing) {
        const int k = find(ref);
        if (k < 0) return;
        const float room = room_of(ref);
        place(tile_width(ref, bias), spacing);
        ImGui::BeginGroup();
        draw_gradient_matrix(ui, p, r, static_cast<size_t>(k), room, transposed);
        if (const int b = find({bias, ref.head}); b >= 0) {
            const core::Matrix& m = *gradient_matrix(r.gradients.d, ref);
            // Under the weight with the same cells, so each bias sits under its column; fitted on
            // its own when those cells are too thin to see (d_model in the hundreds) or when the
            // bias is a column (transposed).
            const float cell = fitted_cell(m, room, false);
            draw_gradient_matrix(ui, p, r, static_cast<size_t>(b), room, transposed,
                                 transposed || cell < min_bias_cell ? 0 : cell);
        }
        ImGui::EndGroup();
    }
};

// The list of the inputs the cell depends on most: beside X (all of it), or under it (at most
// about a third of the room, at least 3 lines).
void draw_depends_most(GradientTiles& t, bool beside, float child_h) {
    const int listed = beside
                           ? gradient_largest
                           : std::clamp(static_cast<int>(child_h / 3 / ImGui::GetFrameHeight()), 3, gradient_largest);
    const std::string out = output_label(t.r.gradients.row, t.r.gradients.col);
    const char* d = t.nt == core::Notation::unicode ? "∂" : "d ";
    const char* title = "Depends most on";
    // Beside X nothing is gained by folding it away: a plain title.
    const bool open = beside ? (ImGui::TextUnformatted(title), true)
                             : ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The inputs with the largest |%s%s / %sinput|: those a small change of moves %s most.\n"
            "Hover one for what its number means; it is outlined in its heatmap.",
            d, out.c_str(), d, out.c_str());
    if (open) draw_largest(t.ui, t.p, t.r, listed);
}

// The heads' tiles: W_Q, W_K, W_V, each with its bias under it; a head's matrices on one line,
// heads side by side while they fit.
void draw_head_tiles(GradientTiles& t) {
    const core::Config& c = t.r.config;
    const float gap = t.gap;
    for (int h = 0; h < c.heads; ++h) {
        const int owner = h - h % std::max(1, c.group_size());
        const float note_w = t.side;  // the note of a head sharing its group's K/V
        const float head_w = t.tile_width({MatrixId::W_Q, h}, MatrixId::b_Q) + gap +
                             (owner == h ? t.tile_width({MatrixId::W_K, h}, MatrixId::b_K) + gap +
                                               t.tile_width({MatrixId::W_V, h}, MatrixId::b_V)
                                         : note_w);
        // A head's matrices stay together: a head that does not fit after the last starts a line.
        if (t.in_line && ImGui::GetItemRectMax().x + 2 * gap + head_w > t.right) t.new_line();
        t.tile({MatrixId::W_Q, h}, MatrixId::b_Q, gap * 2);  // a wider gap between heads than within one
        if (owner == h) {
            t.tile({MatrixId::W_K, h}, MatrixId::b_K, gap);
            t.tile({MatrixId::W_V, h}, MatrixId::b_V, gap);
        } else {
            // The group's K/V live in its first head: say so where they would be.
            t.place(note_w, gap);
            ImGui::BeginGroup();
            ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + note_w);
            ImGui::TextDisabled(
                "W_K%s, W_V%s: shared with head %d (one K/V group of %s); their gradient is "
                "under head %d, summed over the group",
                core::head_mark(h + 1, t.nt).c_str(), core::head_mark(h + 1, t.nt).c_str(), owner + 1,
                group_heads(c, owner, t.nt).c_str(), owner + 1);
            ImGui::PopTextWrapPos();
            ImGui::EndGroup();
        }
    }
}

}  // namespace

void draw_gradient_panel(AppState& state, UiContext& ui, GradientPanel& p) {
    const bool current = update_gradient(state, p);
    const float font = ImGui::GetFontSize();
    draw_cell_controls(state, ui, p);
    if (!draw_shown_cell(ui, p, current)) return;
    const GradientResult& r = *p.result;

    const float legend_h = ImGui::GetTextLineHeight() * 2.2f;
    const float child_h = std::max(ImGui::GetContentRegionAvail().y - legend_h, font * 4);
    ImGui::BeginChild("gradients", {0, child_h});
    // The matrices: X (and Y) on the first line, then the heads (W_Q, W_K, W_V, each with its bias
    // under it; a head's matrices on one line, heads side by side while they fit), then W_O (and
    // b_O under it). The list of the largest goes beside X and Y when there is room, else under them.
    const float gap = font;
    const float width = ImGui::GetContentRegionAvail().x;
    const float side = std::clamp((width - 2 * gap) / 3, font * 6, font * 16);  // a head's matrix at most
    GradientTiles t{ui,
                    p,
                    r,
                    ui.notation(),
                    state.column_vectors(),
                    gap,
                    ImGui::GetCursorScreenPos().x + width,
                    side,
                    std::min(width, 2 * side + gap)};
    const float list_w = font * 26;
    const bool beside = t.tile_width({MatrixId::X, 0}, MatrixId::count) + gap +
                            t.tile_width({MatrixId::Y, 0}, MatrixId::count) + 2 * gap + list_w <=
                        width;
    // X (and Y) first, so that a short panel shows a matrix of the gradient rather than a sliver of
    // one under the list; the list beside them where there is room, else under them.
    t.tile({MatrixId::X, 0}, MatrixId::count, gap);
    t.tile({MatrixId::Y, 0}, MatrixId::count, gap);
    if (beside) {
        ImGui::SameLine(0, gap * 2);
        ImGui::BeginGroup();
        draw_depends_most(t, beside, child_h);
        ImGui::EndGroup();
    }
    t.new_line();
    if (!beside) {
        draw_depends_most(t, beside, child_h);
        t.new_line();
    }
    draw_head_tiles(t);
    t.new_line();
    t.tile({MatrixId::W_O, 0}, MatrixId::b_O, gap);
    t.tile({MatrixId::q_norm, 0}, MatrixId::count, gap);  // OLMo 2's q/k norms (absent: skipped)
    t.tile({MatrixId::k_norm, 0}, MatrixId::count, gap);
    ImGui::EndChild();

    // One range for all, or each matrix's own (its title gives it): then the legend is in units of it.
    const char* note = p.one_scale ? "one scale" : "× each one's ±max";
    const float legend_w = std::min(width, font * 26);  // the note included
    if (p.one_scale)
        colormap_legend(Colormap::diverging, {-r.all_max_abs, r.all_max_abs, false}, legend_w, note);
    else
        colormap_legend(Colormap::diverging, {-1, 1, false}, legend_w, note);
}

}  // namespace attnviz::app
