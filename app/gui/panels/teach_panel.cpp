#include "teach_panel.hpp"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "../assets.hpp"
#include "../fonts.hpp"
#include "../widgets/colormap.hpp"
#include "../widgets/fitted_text.hpp"
#include "../widgets/matrix_view.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "core/presets.hpp"

namespace attnviz::app {

namespace {

// Whether the session on screen is seed 001's worked example, value for value.
bool is_worked_example(const AppState& state) {
    static const core::Session worked = core::worked_example();
    const core::Session& s = state.shown().session;
    return s.config == worked.config && s == worked;
}

const core::LessonStep* current(const TeachPanel& p) {
    if (!p.lesson || p.lesson->steps.empty()) return nullptr;
    return &p.lesson->steps[std::clamp(p.step, 0, static_cast<int>(p.lesson->steps.size()) - 1)];
}

void reset_exercise(const AppState& state, TeachPanel& p) {
    const core::Matrix* result = teach_result(state, p);
    p.exercise = core::Exercise(result ? *result : core::Matrix());
    p.typed.assign(result ? static_cast<size_t>(result->size()) : 0, "");
    p.exercise_generation = state.generation();
}

// Keeps the exercise on the current result: created when first needed, and after a change of the
// session retargeted so each answer, and the text typed for it, stays at its (row, column).
void sync_exercise(const AppState& state, TeachPanel& p) {
    const core::Matrix* result = teach_result(state, p);
    if (!result) return;
    if (p.exercise.rows() == 0) {
        reset_exercise(state, p);
        return;
    }
    if (p.exercise_generation == state.generation()) return;
    const int old_cols = p.exercise.cols();
    const int old_rows = p.exercise.rows();
    p.exercise.retarget(*result);
    std::vector<std::string> typed(static_cast<size_t>(result->size()));
    for (int r = 0; r < std::min(old_rows, p.exercise.rows()); ++r)
        for (int c = 0; c < std::min(old_cols, p.exercise.cols()); ++c)
            typed[static_cast<size_t>(r) * p.exercise.cols() + c] =
                std::move(p.typed[static_cast<size_t>(r) * old_cols + c]);
    p.typed = std::move(typed);
    p.exercise_generation = state.generation();
}

// The field colour of each mark, in CellMark order.
constexpr Color mark_colors[] = {Color::exercise_empty, Color::exercise_right, Color::exercise_wrong,
                                 Color::exercise_revealed};

// The learner's grid: one text field per result cell, coloured right / wrong / revealed.
void exercise_grid(AppState& state, const UiContext& ui, TeachPanel& p, MatrixRef result) {
    sync_exercise(state, p);
    const core::Exercise& ex = p.exercise;
    ImGui::Text("Your %s: type each cell (right within %g)", state.label(result).c_str(), core::exercise_tolerance);
    const float w = ImGui::GetFontSize() * 5;
    for (int r = 0; r < ex.rows(); ++r) {
        for (int c = 0; c < ex.cols(); ++c) {
            if (c) ImGui::SameLine();
            ImGui::PushID(r * ex.cols() + c);
            const core::CellMark mark = ex.mark(r, c);
            ImGui::PushStyleColor(ImGuiCol_FrameBg, ui.color(mark_colors[static_cast<int>(mark)]));
            ImGui::SetNextItemWidth(w);
            if (mark == core::CellMark::revealed) {
                std::string shown = core::format_number(ex.expected()(r, c));
                ImGui::InputText("##cell", &shown, ImGuiInputTextFlags_ReadOnly);
            } else {
                std::string& text = p.typed[static_cast<size_t>(r) * ex.cols() + c];
                std::string edited = text;
                if (ImGui::InputText("##cell", &edited)) teach_answer(state, p, r, c, edited);
            }
            ImGui::PopStyleColor();
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("%s", mark == core::CellMark::right      ? "right"
                                        : mark == core::CellMark::wrong    ? "not yet: the rule is written below"
                                        : mark == core::CellMark::revealed ? "revealed"
                                                                           : "type a number");
            ImGui::SameLine(0, 2);
            if (ImGui::SmallButton("?")) p.exercise.reveal(r, c);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Reveal this cell");
            ImGui::PopID();
        }
    }
    ImGui::Text("%d of %d right", ex.count(core::CellMark::right), ex.rows() * ex.cols());
    ImGui::SameLine();
    if (ImGui::SmallButton("reveal all")) p.exercise.reveal_all();
    ImGui::SameLine();
    if (ImGui::SmallButton("start over")) reset_exercise(state, p);
    if (ex.solved()) {
        ImGui::SameLine();
        ImGui::TextColored(ui.color_vec(Color::solved), "All right!");
    }
}

// The seed's way of writing each result cell, "(1+1)", in a small table.
void expansion_table(const AppState& state, MatrixRef result, const core::Matrix& m) {
    const int rows = static_cast<int>(std::min<Eigen::Index>(m.rows(), max_expansion_side));
    const int cols = static_cast<int>(std::min<Eigen::Index>(m.cols(), max_expansion_side));
    ImGui::Text("%s as the seed writes it%s:", state.label(result).c_str(),
                rows < m.rows() || cols < m.cols() ? " (its first cells)" : "");
    if (!ImGui::BeginTable("expansion", cols, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (int r = 0; r < rows; ++r) {
        ImGui::TableNextRow();
        for (int c = 0; c < cols; ++c) {
            ImGui::TableNextColumn();
            const auto e = state.explain({result, r, c});
            if (e)
                ImGui::Text("%s = %s", core::cell_expansion(*e.value).c_str(),
                            core::format_number(e.value->value).c_str());
        }
    }
    ImGui::EndTable();
}

void step_list(AppState& state, UiContext& ui, TeachPanel& p) {
    const int total = static_cast<int>(p.lesson->steps.size());
    ImGui::PushTextWrapPos(0);
    text_bounded(p.lesson->title);
    // What the numbers are from: the seed's worked example, or the session on screen.
    const core::Config& c = state.shown_config();
    if (is_worked_example(state))
        ImGui::TextDisabled("on seed 001's worked example");
    else
        ImGui::TextDisabled("on your session: n = %d, h = %d", c.n, c.heads);
    ImGui::PopTextWrapPos();
    char progress[32];
    std::snprintf(progress, sizeof progress, "step %d of %d", p.step + 1, total);
    // The label is centred on the bar and drawn twice, each copy clipped to one side of the fill's end:
    // the part over the yellow fill reads dark, the part over the empty track reads light.
    const float fraction = static_cast<float>(p.step + 1) / total;
    ImGui::ProgressBar(fraction, {-1, 0}, "");
    const ImVec2 bar_min = ImGui::GetItemRectMin();
    const ImVec2 bar_max = ImGui::GetItemRectMax();
    const ImVec2 text_size = ImGui::CalcTextSize(progress);
    const ImVec2 text_pos{bar_min.x + (bar_max.x - bar_min.x - text_size.x) * 0.5f,
                          bar_min.y + (bar_max.y - bar_min.y - text_size.y) * 0.5f};
    const float fill_end = bar_min.x + (bar_max.x - bar_min.x) * fraction;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->PushClipRect(bar_min, {fill_end, bar_max.y}, true);
    draw->AddText(text_pos, text_color_on(ImGui::GetColorU32(ImGuiCol_PlotHistogram)), progress);
    draw->PopClipRect();
    draw->PushClipRect({fill_end, bar_min.y}, bar_max, true);
    draw->AddText(text_pos, ImGui::GetColorU32(ImGuiCol_Text), progress);
    draw->PopClipRect();
    if (ImGui::Button("< Prev")) teach_go_to(state, p, p.step - 1);
    ImGui::SameLine();
    if (ImGui::Button("Next >")) teach_go_to(state, p, p.step + 1);
    ImGui::SameLine();
    ImGui::TextDisabled("or ← →");
    ImGui::Separator();
    for (int k = 0; k < total; ++k) {
        // The title is the lesson's text, never an ID: an empty title or one with "##" is shown as it is.
        ImGui::PushID(k);
        const ImVec2 at = ImGui::GetCursorPos();
        if (ImGui::Selectable("##step", k == p.step)) teach_go_to(state, p, k);
        ImGui::SameLine();
        ImGui::SetCursorPos(at);
        text_fitted(p.lesson->steps[k].title);
        ImGui::PopID();
    }
    ImGui::Separator();
    if (ImGui::Button("Reset to the worked example")) {
        state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads");
        teach_go_to(state, p, p.step);
    }
    apply_typed_value(state, p.x_editor);
    if (ImGui::CollapsingHeader("Edit X")) {
        ImGui::TextDisabled("Every step follows your numbers.");
        matrix_editor(state, ui, p.x_editor, {core::MatrixId::X, 0}, true);
    }
}

}  // namespace

std::string default_lesson_path() { return assets_dir() + "/lessons/worked-example.json"; }

bool load_lesson(TeachPanel& p, const std::string& path) {
    p.lesson_path = path.empty() ? default_lesson_path() : path;
    p.lesson.reset();
    p.error.clear();
    const core::Result<std::string> text = core::read_file(p.lesson_path);
    if (!text) {
        p.error = "The lesson could not be read: " + text.problems.front().str();
        return false;
    }
    core::Result<core::Lesson> lesson = core::parse_lesson(*text.value);
    if (!lesson) {
        p.error = "The lesson " + p.lesson_path + " has problems:";
        for (const core::Problem& problem : lesson.problems) p.error += "\n  " + problem.str();
        return false;
    }
    p.lesson = std::move(*lesson.value);
    p.step = std::clamp(p.step, 0, static_cast<int>(p.lesson->steps.size()) - 1);
    return true;
}

const core::Matrix* teach_result(const AppState& state, const TeachPanel& p) {
    const core::LessonStep* step = current(p);
    if (!step || !step->has_result || !core::exists(step->result, state.shown_config())) return nullptr;
    return state.matrix(step->result);
}

void teach_go_to(AppState& state, TeachPanel& p, int step) {
    if (!p.lesson) return;
    p.step = std::clamp(step, 0, static_cast<int>(p.lesson->steps.size()) - 1);
    p.playing = false;
    p.revealed = -1;
    p.exercising = false;
    p.exercise = core::Exercise();  // made when the learner starts it (sync_exercise)
    p.typed.clear();
    if (teach_result(state, p))
        state.select({current(p)->result, 0, 0});
    else
        state.clear_selection();
}

void teach_answer(AppState& state, TeachPanel& p, int row, int col, const std::string& text) {
    sync_exercise(state, p);
    if (row < 0 || col < 0 || row >= p.exercise.rows() || col >= p.exercise.cols()) return;
    p.typed[static_cast<size_t>(row) * p.exercise.cols() + col] = text;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0')
        p.exercise.clear(row, col);
    else
        p.exercise.answer(row, col, v);
}

void draw_teach_panel(AppState& state, UiContext& ui, TeachPanel& p, float dt) {
    if (!p.lesson) {
        ImGui::PushTextWrapPos(0);
        text_bounded(p.error.empty() ? "No lesson is loaded." : p.error, ui.color_vec(Color::error_text));
        ImGui::PopTextWrapPos();
        if (ImGui::Button("Reload the lesson")) load_lesson(p, p.lesson_path);
        ui.report_item("teach: reload the lesson");
        return;
    }
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.WantTextInput) {  // ← → move between steps unless the learner is typing
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) teach_go_to(state, p, p.step + 1);
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) teach_go_to(state, p, p.step - 1);
    }
    const float font = ImGui::GetFontSize();

    // Left: the steps, and X to edit (drawn first, so an edit is in this frame's trace).
    ImGui::BeginChild("steps", {font * 17, 0}, true);
    step_list(state, ui, p);
    ImGui::EndChild();
    state.update();
    ImGui::SameLine();

    ImGui::BeginChild("step", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
    const core::LessonStep& step = *current(p);
    // The snapshot this step's text is written from, held: "Use the worked example" below shows a
    // new one at once, and the text after the button still reads this one.
    const std::shared_ptr<const Snapshot> written_from = state.shown_snapshot();
    const core::Config& c = written_from->session.config;
    // Every number of the text comes from the session on screen; an exercise's cells stay hidden.
    core::LessonContext context{&written_from->session, &written_from->trace, is_worked_example(state), std::nullopt,
                                state.column_vectors()};
    if (p.exercising && step.has_result) context.hidden = step.result;
    ImGui::PushTextWrapPos(0);
    if (c.n > max_lesson_tokens || c.heads > max_lesson_heads) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::TextWrapped(
            "This lesson is written for up to %d tokens and %d heads; your session has n = %d and h = %d, "
            "so its matrices are too large to follow cell by cell.",
            max_lesson_tokens, max_lesson_heads, c.n, c.heads);
        ImGui::PopStyleColor();
        if (ImGui::Button("Use the worked example"))
            state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads");
        ImGui::Separator();
    }
    if (c.cross() || c.mask == core::Mask::custom) {
        // The lesson teaches self-attention: its words (K = X·W_K, "every token looks at every
        // token", the causal triangle) do not describe this layer.
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::TextWrapped(
            "This lesson teaches self-attention%s; your session uses %s%s%s. The matrices below are yours, but "
            "where the text says K = X%sW_K or speaks of every key, it describes the worked example, not this layer.",
            c.mask == core::Mask::custom ? " without a custom mask" : "",
            c.cross() ? "cross-attention (K and V from Y)" : "",
            c.cross() && c.mask == core::Mask::custom ? " and " : "",
            c.mask == core::Mask::custom ? "a custom mask" : "", ui.symbols().dot);
        ImGui::PopStyleColor();
        if (ImGui::Button("Use the worked example##cross"))
            state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads");
        ImGui::Separator();
    }
    if (ui.fonts.title) ImGui::PushFont(ui.fonts.title);
    text_bounded(step.title, ui.color_vec(Color::step_title));
    if (ui.fonts.title) ImGui::PopFont();
    if (!step.formula.empty()) {
        ImGui::Spacing();
        text_bounded(core::fill_template(step.formula, context), ui.color_vec(Color::step_formula));
    }
    ImGui::Spacing();
    text_bounded(core::fill_template(step.text, context));
    ui.report_item("teach: text");
    ImGui::PopTextWrapPos();
    ImGui::Separator();

    const core::Matrix* result = teach_result(state, p);
    const MatrixRef result_ref = step.result;
    if (result) {
        const long total = static_cast<long>(result->size());
        if (p.playing) {
            p.play_time += dt;
            p.revealed = std::min<long>(total, static_cast<long>(p.play_time * p.cells_per_second) + 1);
            const CellRef newest{result_ref, static_cast<int>((p.revealed - 1) / result->cols()),
                                 static_cast<int>((p.revealed - 1) % result->cols())};
            if (p.revealed > 0 && (!state.selection() || !(*state.selection() == newest))) state.select(newest);
            if (p.revealed >= total && p.play_time * p.cells_per_second >= total + 1) {
                p.playing = false;
                p.revealed = -1;
            }
        }
        if (ImGui::Button(p.playing ? "Stop" : "Play")) {
            p.playing = !p.playing;
            p.play_time = 0;
            p.revealed = p.playing ? 0 : -1;
            p.exercising = false;
        }
        ImGui::SameLine();
        ImGui::SetNextItemWidth(font * 8);
        ImGui::SliderFloat("cells per second", &p.cells_per_second, 0.25f, 8.0f, "%.2g");
        if (step.exercise) {
            ImGui::SameLine();
            const bool small_enough = result->size() <= max_exercise_cells;
            ImGui::BeginDisabled(!small_enough);
            if (ImGui::Checkbox("exercise: hide the result, type it", &p.exercising) && p.exercising) {
                p.playing = false;
                p.revealed = -1;
                sync_exercise(state, p);
            }
            ImGui::EndDisabled();
            if (!small_enough && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                ImGui::SetTooltip("The exercise is for results of at most %ld cells; this one has %ld.",
                                  max_exercise_cells, static_cast<long>(result->size()));
        }
    }

    // The operands, then the result.
    // Each matrix's box: the width shared by the step's matrices, at most about half the height
    // (the arithmetic goes below), so a 5-token step has room for its numbers.
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const float shown = static_cast<float>(step.show.size() + (result ? 1 : 0));
    const float box = std::clamp(room.x / (shown + 0.7f) - font * 2, font * 5, std::max(font * 5, room.y * 0.45f));
    MatrixViewOptions o;
    o.max_size = {box, box};
    // One cell size for the whole step, so operands and result line up; large enough to read
    // from the back of a classroom, small enough that every matrix fits its box.
    o.max_cell = 84;
    auto fit = [&](const MatrixRef& lm) {
        if (const core::Matrix* mm = core::exists(lm, c) ? state.matrix(lm) : nullptr)
            o.max_cell =
                std::min({o.max_cell, box / std::max<float>(1, mm->cols()), box / std::max<float>(1, mm->rows())});
    };
    for (const MatrixRef& lm : step.show) fit(lm);
    if (result) fit(step.result);
    o.max_cell = std::max(o.max_cell, font * 1.5f);
    o.token_rows = o.token_cols = true;
    o.follow_orientation = false;  // the lesson is written with row vectors, as seed 001
    std::vector<std::string> missing;
    bool first = true;
    for (const MatrixRef& m : step.show) {
        if (!core::exists(m, c)) {
            missing.push_back(core::label(m, state.notation()));
            continue;
        }
        if (!first) ImGui::SameLine(0, font * 1.2f);
        first = false;
        ImGui::PushID(static_cast<int>(&m - step.show.data()));  // a lesson may show one matrix twice
        matrix_view(state, ui, m, o);
        ImGui::PopID();
    }
    if (result) {
        if (!first) ImGui::SameLine(0, font * 1.2f);
        ImGui::BeginGroup();
        if (!first) ImGui::TextDisabled("%s result", ui.symbols().arrow);
        MatrixViewOptions ro = o;
        if (p.exercising)
            ro.shown_cells = 0;
        else if (p.playing)
            ro.shown_cells = p.revealed;
        ImGui::PushID("result");
        matrix_view(state, ui, result_ref, ro);
        ImGui::PopID();
        ImGui::EndGroup();
    }
    if (!missing.empty()) {
        std::string list;
        for (const std::string& s : missing) list += (list.empty() ? "" : ", ") + s;
        ImGui::TextDisabled("Not in this session (h = %d%s): %s", c.heads, c.output_projection ? "" : ", no W_O",
                            list.c_str());
    }
    if (step.has_result && !result)
        ImGui::TextDisabled("This step's result, %s, does not exist in this session.",
                            core::label(step.result, state.notation()).c_str());

    if (result) {
        ImGui::Separator();
        if (p.exercising)
            exercise_grid(state, ui, p, result_ref);
        else if (step.expansion)
            expansion_table(state, result_ref, *result);
        // The arithmetic of the selected result cell (hidden while it is still to be found).
        const core::Explanation* e = state.selected_explanation();
        const bool hidden = p.exercising || (p.playing && p.revealed <= 0);
        if (e && (p.exercising || !hidden)) {
            ImGui::Spacing();
            if (p.exercising) ImGui::TextUnformatted("The rule (the numbers are yours to find):");
            ImGui::PushTextWrapPos(0);
            draw_explanation(*e, !p.exercising);
            ImGui::PopTextWrapPos();
        } else if (!hidden) {
            ImGui::TextDisabled("Click a cell to see its arithmetic.");
        }
    }
    ImGui::EndChild();
}

}  // namespace attnviz::app
