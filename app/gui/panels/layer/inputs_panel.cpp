#include "panels/layer/inputs_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include "core/attention/presets.hpp"
#include "core/attention/stiefel.hpp"
#include "core/base/format.hpp"
#include "core/io/csv.hpp"
#include "core/io/tensors.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

namespace {

// The display format of a field `width` pixels wide holding v.
const char* field_format(double v, float width) {
    if (v == 0) return "0";  // not "-0" for a negative zero
    // Three significant digits, or fewer where they do not fit the field ("-0.000213" in a field a
    // few digits wide); only the display changes, the value keeps every digit.
    const float room = width - 2 * ImGui::GetStyle().FramePadding.x;
    char text[64];
    for (const char* format : {"%.3g", "%.2g"}) {
        std::snprintf(text, sizeof text, format, v);
        if (ImGui::CalcTextSize(text).x <= room) return format;
    }
    return "%.1g";
}

}  // namespace

void matrix_zero(AppState& state, MatrixRef ref) {
    if (const core::Matrix* m = state.input(ref)) state.set_matrix(ref, core::Matrix::Zero(m->rows(), m->cols()));
}

void matrix_identity(AppState& state, MatrixRef ref) {
    if (const core::Matrix* m = state.input(ref)) state.set_matrix(ref, core::Matrix::Identity(m->rows(), m->cols()));
}

void matrix_random(AppState& state, MatrixRef ref, std::uint64_t seed) {
    const core::Matrix* m = state.input(ref);
    if (!m) return;
    const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());
    const double limit = ref.id == core::MatrixId::X || ref.id == core::MatrixId::Y ? 1.0
                                                                                    : core::glorot_limit(rows, cols);
    state.set_matrix(ref, core::random_matrix(rows, cols, limit, seed));
}

bool matrix_paste(AppState& state, MatrixRef ref, const char* text) {
    const core::Result<core::Matrix> parsed = core::parse_matrix_text(text ? text : "");
    if (!parsed) {
        state.set_message("Paste into " + state.label(ref) + " refused: " + parsed.problems.front().str() +
                              ". Nothing was changed.",
                          true);
        return false;
    }
    if (!state.set_matrix(ref, *parsed.value)) return false;
    state.set_message("Pasted into " + state.label(ref), false);
    return true;
}

bool matrix_load(AppState& state, MatrixRef ref, const std::string& path) {
    const std::string refused = "Load into " + state.label(ref) + " refused: ";
    const core::Result<core::TensorFile> file = core::TensorFile::open(path);
    if (!file) {
        state.set_message(refused + file.problems.front().str() + ". Nothing was changed.", true);
        return false;
    }
    const auto& tensors = file.value->tensors();
    const core::TensorInfo* info = file.value->find(core::name(ref.id));
    if (!info && tensors.size() == 1) info = &tensors.front();
    if (!info) {
        state.set_message(refused + path + " holds " + std::to_string(tensors.size()) + " tensors and none named " +
                              core::name(ref.id) + ". Nothing was changed.",
                          true);
        return false;
    }
    const core::Result<core::Tensor> t = file.value->read(info->name);
    if (!t) {
        state.set_message(refused + t.problems.front().str() + ". Nothing was changed.", true);
        return false;
    }
    if (t.value->shape.empty() || t.value->shape.size() > 2) {
        state.set_message(refused + info->name + " is not a matrix. Nothing was changed.", true);
        return false;
    }
    core::Matrix m(static_cast<Eigen::Index>(t.value->rows()), static_cast<Eigen::Index>(t.value->cols()));
    std::copy(t.value->values.begin(), t.value->values.end(), m.data());
    if (!state.set_matrix(ref, m)) return false;  // a wrong shape is reported by set_matrix
    state.set_message("Loaded " + state.label(ref) + " from " + path, false);
    return true;
}

std::string matrix_copy(const AppState& state, MatrixRef ref) {
    const core::Matrix* m = state.input(ref);
    return m ? core::write_csv(*m) : std::string();
}

// A title with its toolbar, then a grid of drag fields (Ctrl+click or double-click to type).
// Only the visible cells are submitted, so large matrices stay fast.
bool matrix_orthonormalize(AppState& state, MatrixRef ref) {
    const core::Matrix* m = state.input(ref);
    if (!m) return false;
    const core::Result<core::Matrix> q = core::nearest_orthonormal(*m);
    if (!q) {
        state.set_message(state.label(ref) + ": " + q.problems.front().message, true);
        return false;
    }
    if (!state.set_matrix(ref, *q.value)) return false;
    state.set_message(state.label(ref) + " now has orthonormal columns (the nearest such matrix)", false);
    return true;
}

namespace {
// A small button's width, for wrapping the toolbar.
float button_width(const char* label) { return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2; }
}  // namespace

void matrix_editor(AppState& state, UiContext& ui, InputsPanel& panel, MatrixRef ref, bool with_tokens) {
    const core::Matrix* m = state.input(ref);
    if (!m) return;
    ImGui::PushID(static_cast<int>(ref.id) * 1000 + ref.head);
    const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());
    ImGui::AlignTextToFramePadding();
    ImGui::Text("%s  %s", state.label(ref).c_str(), core::format_shape(rows, cols).c_str());  // row form
    same_line_if_fits(button_width("zero"));
    if (ImGui::SmallButton("zero")) matrix_zero(state, ref);
    same_line_if_fits(button_width("identity"));
    if (ImGui::SmallButton("identity")) matrix_identity(state, ref);
    same_line_if_fits(button_width("random"));
    if (ImGui::SmallButton("random")) matrix_random(state, ref, ++panel.random_seed);
    same_line_if_fits(button_width("paste"));
    if (ImGui::SmallButton("paste")) matrix_paste(state, ref, ImGui::GetClipboardText());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Paste CSV or TSV from the clipboard (%d rows of %d)", rows, cols);
    same_line_if_fits(button_width("load"));
    if (ImGui::SmallButton("load")) {
        panel.load_ref = ref;
        panel.load_files.open(FileChooser::Mode::open,
                              "Load " + state.label(ref) + " (" + std::to_string(rows) + "×" + std::to_string(cols) +
                                  ") from a tensor file",
                              {{"Tensor files (*.npy, *.npz, *.safetensors)", {".npy", ".npz", ".safetensors"}}});
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Load a %d×%d matrix from a .npy (or .npz, .safetensors) file", rows, cols);
    if (panel.load_ref == ref)
        if (const std::optional<std::string> path = panel.load_files.draw(ui)) matrix_load(state, ref, *path);
    same_line_if_fits(button_width("copy"));
    if (ImGui::SmallButton("copy")) {
        ImGui::SetClipboardText(matrix_copy(state, ref).c_str());
        state.set_message("Copied " + state.label(ref) + " as CSV", false);
    }
    // Seed 004's constraint on the projections: orthonormal columns (WᵀW = I).
    if (ref.id == core::MatrixId::W_Q || ref.id == core::MatrixId::W_K || ref.id == core::MatrixId::W_V) {
        same_line_if_fits(button_width("orthonormalize"));
        if (ImGui::SmallButton("orthonormalize")) matrix_orthonormalize(state, ref);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "The nearest matrix with orthonormal columns (polar decomposition), as seed 004 constrains\n"
                "W_Q, W_K, W_V to the Stiefel manifold. Now ||WᵀW − I|| = %.3g (0: orthonormal).",
                core::stiefel_distance(*m));
    }

    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = ImGui::GetFontSize();
    const float label_w = with_tokens ? font * 5.0f : font * 1.6f;
    // Fields of four ems, narrower (down to 2.75 ems, three digits and a sign) where that makes
    // every column fit the panel: a small matrix needs no horizontal scrolling. A matrix too wide
    // even then keeps four ems (and scrolls).
    const float fitted_w = (ImGui::GetContentRegionAvail().x - label_w) / static_cast<float>(std::max(cols, 1)) -
                           style.ItemSpacing.x;
    const float cell_w = fitted_w >= font * 2.75f ? std::min(std::floor(fitted_w), font * 4.0f) : font * 4.0f;
    const float row_h = ImGui::GetFrameHeight() + style.ItemSpacing.y;
    const float col_w = cell_w + style.ItemSpacing.x;
    const float grid_h = std::min(rows, 10) * row_h + style.ScrollbarSize + style.WindowPadding.y;
    ImGui::BeginChild("grid", {0, grid_h}, false, ImGuiWindowFlags_HorizontalScrollbar);
    const float scroll_x = ImGui::GetScrollX(), view_w = ImGui::GetWindowWidth();
    const int c0 = std::max(0, static_cast<int>((scroll_x - label_w) / col_w));
    const int c1 = std::min(cols, static_cast<int>((scroll_x + view_w - label_w) / col_w) + 1);
    ImGuiListClipper clipper;
    clipper.Begin(rows, row_h);
    while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            ImGui::PushID(r);
            const float y = r * row_h;
            ImGui::SetCursorPos({0, y});
            if (with_tokens) {
                // X's rows are the queries' tokens, Y's the keys' (cross-attention).
                const bool keys = ref.id == core::MatrixId::Y;
                std::string token = (keys ? state.session().kv_tokens : state.session().tokens)[r];
                ImGui::SetNextItemWidth(label_w - style.ItemSpacing.x);
                if (ImGui::InputText("##token", &token))
                    keys ? state.set_kv_token(r, token) : state.set_token(r, token);
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("Label of %s %d (row %d of %s)", keys ? "key/value token" : "token", r + 1, r,
                                      keys ? "Y" : "X");
            } else {
                ImGui::AlignTextToFramePadding();
                ImGui::TextDisabled("%d", r);
            }
            for (int c = c0; c < c1; ++c) {
                ImGui::SetCursorPos({label_w + c * col_w, y});
                ImGui::PushID(c);
                const CellRef cell{ref, r, c};
                const bool typing_here = panel.typed && panel.typed->cell == cell;
                double v = typing_here ? panel.typed->value : (*m)(r, c);
                const bool mark = state.is_operand(ref, r, c);
                if (mark) ImGui::PushStyleColor(ImGuiCol_FrameBg, ui.color(Color::operand_field));
                ImGui::SetNextItemWidth(cell_w);
                const ImGuiID field = ImGui::GetID("##v");
                if (ImGui::DragScalar("##v", ImGuiDataType_Double, &v, 0.01f, nullptr, nullptr, field_format(v, cell_w),
                                      ImGuiSliderFlags_NoRoundToFormat)) {
                    if (ImGui::TempInputIsActive(field))
                        panel.typed = InputsPanel::Typed{cell, v, field};  // applied on Enter or focus loss
                    else
                        state.set_cell(cell, dragged_value(v));  // a drag: at once, each frame's latest value
                }
                if (mark) ImGui::PopStyleColor();
                if (ui.report) ui.report_item(core::label(cell, core::Notation::ascii));
                if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
                    ImGui::SetTooltip("%s[%d][%d] = %.17g\nDrag to change; double-click or Ctrl+click to type.",
                                      state.label(ref).c_str(), r, c, v);
                ImGui::PopID();
            }
            ImGui::PopID();
        }
    }
    // Reserve the full extent so the scrollbars cover every row and column.
    ImGui::SetCursorPos({label_w + cols * col_w, rows * row_h});
    ImGui::Dummy({0, 0});
    ImGui::EndChild();
    ImGui::PopID();
}

double dragged_value(double v) {
    const double snapped = std::round(v * 1e4) / 1e4;
    return std::abs(snapped - v) < 1e-6 ? snapped : v;  // only float noise is removed
}

void apply_typed_value(AppState& state, InputsPanel& panel) {
    if (!panel.typed || ImGui::GetActiveID() == panel.typed->field) return;  // still being typed
    state.set_cell(panel.typed->cell, panel.typed->value);
    panel.typed.reset();
}

void draw_inputs_panel(AppState& state, UiContext& ui, InputsPanel& panel) {
    apply_typed_value(state, panel);
    if (!ImGui::BeginTabBar("inputs", ImGuiTabBarFlags_FittingPolicyScroll)) return;
    if (ImGui::BeginTabItem("X")) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("%s", state.column_vectors() ? "X is edited in row form; the views draw it transposed"
                                                         : "X: one token per row; edit the labels on the left");
        ImGui::PopTextWrapPos();
        matrix_editor(state, ui, panel, {core::MatrixId::X, 0}, true);
        ImGui::EndTabItem();
    }
    if (state.config().cross() && ImGui::BeginTabItem("Y")) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled(
            "Y: the keys' and values' input (cross-attention), one token per row: K = Y%sW_K, V = Y%sW_V",
            ui.symbols().dot, ui.symbols().dot);
        ImGui::PopTextWrapPos();
        matrix_editor(state, ui, panel, {core::MatrixId::Y, 0}, true);
        ImGui::EndTabItem();
    }
    for (int h = 0; h < state.config().heads; ++h) {
        const std::string tab = "Head " + std::to_string(h + 1);
        if (ImGui::BeginTabItem(tab.c_str())) {
            ImGui::BeginChild("weights");
            const core::Config& c = state.config();
            const int group = c.group_size(), first = h - h % group;
            for (core::MatrixId id : core::all_matrix_ids) {  // the head's inputs: W_Q … b_V
                if (!core::is_input(id) || !core::is_per_head(id) || !core::exists(id, c)) continue;
                // A K/V group's matrices are one matrix: the same editor in each of its heads.
                if (core::is_kv_shared(id) && group > 1 && (id == core::MatrixId::W_K || id == core::MatrixId::b_K))
                    ImGui::TextDisabled(
                        "%s and %s below are shared by heads %d to %d (K/V group %d): an edit here "
                        "changes them for all %d.",
                        core::name(id), id == core::MatrixId::W_K ? "W_V" : "b_V", first + 1, first + group,
                        c.kv_group(h) + 1, group);
                matrix_editor(state, ui, panel, {id, h}, false);
            }
            ImGui::EndChild();
            ImGui::EndTabItem();
        }
    }
    if (state.config().output_projection && ImGui::BeginTabItem("W_O")) {
        matrix_editor(state, ui, panel, {core::MatrixId::W_O, 0}, false);
        if (core::exists(core::MatrixId::b_O, state.config()))
            matrix_editor(state, ui, panel, {core::MatrixId::b_O, 0}, false);
        ImGui::EndTabItem();
    }
    if (state.config().qk_norm.on) {
        const bool open = ImGui::BeginTabItem("q/k norms");
        ui.report_item("inputs: q/k norms");
        if (open) {
            ImGui::TextWrapped(
                "Before RoPE, each token's queries of every head together are divided by their RMS "
                "(eps %s) and multiplied by q_norm; its keys of every K/V group by k_norm.",
                core::format_number(state.config().qk_norm.eps).c_str());
            matrix_editor(state, ui, panel, {core::MatrixId::q_norm, 0}, false);
            matrix_editor(state, ui, panel, {core::MatrixId::k_norm, 0}, false);
            ImGui::EndTabItem();
        }
    }
    ImGui::EndTabBar();
}

}  // namespace attnviz::app
