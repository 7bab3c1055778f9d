#include "panels/teach/teach_panel.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/session_file.hpp"
#include "state/assets.hpp"
#include "ui/fonts.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/matrix_view.hpp"
#include "widgets/wrapped_text.hpp"

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

// What a mark says beside its field, not by colour alone (a learner may not tell red from green):
// ✓ right, ✗ wrong, "shown" revealed, nothing while empty; "ok" and "x" where the font lacks ✓ and ✗.
const char* mark_symbol(core::CellMark mark) {
    const bool glyphs = ImGui::GetFont()->FindGlyphNoFallback(0x2713) && ImGui::GetFont()->FindGlyphNoFallback(0x2717);
    switch (mark) {
        case core::CellMark::right: return glyphs ? "✓" : "ok";
        case core::CellMark::wrong: return glyphs ? "✗" : "x";
        case core::CellMark::revealed: return "shown";
        case core::CellMark::empty: break;
    }
    return "";
}

// The learner's grid: one text field per result cell, coloured right / wrong / revealed.
void exercise_grid(AppState& state, UiContext& ui, TeachPanel& p, MatrixRef result) {
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
            // The mark in words or symbols too, in a slot of fixed width so the columns stay aligned.
            ImGui::SameLine(0, 4);
            const ImVec2 at = ImGui::GetCursorPos();
            const char* symbol = mark_symbol(mark);
            ImGui::TextColored(ui.color_vec(mark == core::CellMark::wrong ? Color::error_text : Color::ok_text), "%s",
                               symbol);
            ui.report_item("exercise [" + std::to_string(r) + "][" + std::to_string(c) + "]: " + symbol);
            ImGui::SameLine();
            ImGui::SetCursorPos({at.x + ImGui::CalcTextSize("shown").x, at.y});
            ImGui::Dummy({0, 0});
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

// The seed's way of writing each result cell, "(1+1)": in a small table where it fits the width,
// else one cell a line, wrapped (a session's own numbers make long sums), the first cells only.
void expansion_table(const AppState& state, MatrixRef result, const core::Matrix& m) {
    const int rows = static_cast<int>(std::min<Eigen::Index>(m.rows(), max_expansion_side));
    const int cols = static_cast<int>(std::min<Eigen::Index>(m.cols(), max_expansion_side));
    std::vector<std::string> cells;
    float table_w = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const auto e = state.explain({result, r, c});
            cells.push_back(e ? core::cell_expansion(*e.value) + " = " + core::format_number(e.value->value) : "");
        }
    for (int c = 0; c < cols; ++c) {  // the table's width: its widest cell in each column
        float widest = 0;
        for (int r = 0; r < rows; ++r)
            widest = std::max(widest, ImGui::CalcTextSize(cells[static_cast<size_t>(r * cols + c)].c_str()).x);
        table_w += widest + ImGui::GetStyle().CellPadding.x * 2 + 1;
    }
    const bool table = table_w <= ImGui::GetContentRegionAvail().x;
    const int listed = table ? rows * cols : std::min(rows * cols, max_expansion_side);
    ImGui::Text("%s as the seed writes it%s:", state.label(result).c_str(),
                listed < m.size() ? " (its first cells)" : "");
    if (!table) {
        ImGui::PushTextWrapPos(0);
        for (int k = 0; k < listed; ++k)
            ImGui::Text("%s[%d][%d] = %s", state.label(result).c_str(), k / cols, k % cols,
                        cells[static_cast<size_t>(k)].c_str());
        ImGui::PopTextWrapPos();
        return;
    }
    if (!ImGui::BeginTable("expansion", cols, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (int r = 0; r < rows; ++r) {
        ImGui::TableNextRow();
        for (int c = 0; c < cols; ++c) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(cells[static_cast<size_t>(r * cols + c)].c_str());
        }
    }
    ImGui::EndTable();
}

// The lesson picker: the library's lessons, the open one first in the box; picking one opens it
// at its first step with its session. A lesson that cannot be read is listed, greyed, with why.
// The lesson's title, whole and wrapped (a projector's text is large and a title long), then a
// small box listing the lessons.
void lesson_picker(AppState& state, UiContext& ui, TeachPanel& p) {
    ImGui::PushTextWrapPos(0);
    text_wrapped_at_spaces(p.lesson->title);
    ImGui::PopTextWrapPos();
    ui.report_item("teach: lesson " + p.lesson->title);
    const char* const choose = "Other lessons";
    ImGui::SetNextItemWidth(ImGui::CalcTextSize(choose).x + ImGui::GetFrameHeight() +
                            ImGui::GetStyle().FramePadding.x * 2 + ImGui::GetStyle().ItemInnerSpacing.x);
    const bool open = ImGui::BeginCombo("##lesson", choose);
    ui.report_item("teach: lessons");
    if (!open) return;
    if (ImGui::IsWindowAppearing()) p.library = core::list_lessons(lesson_folders());
    for (size_t k = 0; k < p.library.size(); ++k) {
        const core::LessonEntry& e = p.library[k];
        ImGui::PushID(static_cast<int>(k));
        ImGui::BeginDisabled(!e.problem.empty());
        const ImVec2 at = ImGui::GetCursorPos();
        const bool picked = ImGui::Selectable("##lesson", e.path == p.lesson_path);
        ImGui::SetCursorPos(at);
        text_fitted(e.title);
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
            text_bounded(e.problem.empty() ? e.summary + " (" + std::to_string(e.steps) + " steps)" : e.problem);
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
        ImGui::PopID();
        if (picked && open_lesson(state, p, e.path)) teach_go_to(state, p, 0);
    }
    ImGui::EndCombo();
}

// The way back to the numbers the lesson is written on: its own session, or the worked example
// for a lesson that names none. True when the session was replaced.
bool back_to_the_lessons_session(AppState& state, TeachPanel& p) {
    if (!p.lesson->session.empty())
        return ImGui::Button("Start from the lesson's session") && start_lesson_session(state, p);
    if (!ImGui::Button("Reset to the worked example")) return false;
    state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads");
    return true;
}

void step_list(AppState& state, UiContext& ui, TeachPanel& p) {
    const int total = static_cast<int>(p.lesson->steps.size());
    lesson_picker(state, ui, p);
    ImGui::PushTextWrapPos(0);
    // What the numbers are from: the seed's worked example, or the session on screen.
    const core::Config& c = state.shown_config();
    if (is_worked_example(state))
        ImGui::TextDisabled("on seed 001's worked example");
    else
        ImGui::TextDisabled("on your session: n = %d, h = %d", c.n, c.heads);
    ImGui::PopTextWrapPos();
    char progress[32];
    std::snprintf(progress, sizeof progress, "step %d of %d", p.step + 1, total);
    // The label beside the bar, on the window's colour: over the bar's yellow fill (or across the
    // fill's end) it could not read well in any one colour.
    const float label_w = ImGui::CalcTextSize(progress).x;
    ImGui::ProgressBar(static_cast<float>(p.step + 1) / static_cast<float>(total),
                       {-(label_w + ImGui::GetStyle().ItemSpacing.x), 0}, "");
    ui.report_item("teach: progress bar");
    ImGui::SameLine();
    ImGui::TextUnformatted(progress);
    ui.report_item("teach: progress");
    if (ImGui::Button("< Prev")) teach_go_to(state, p, p.step - 1);
    ImGui::SameLine();
    if (ImGui::Button("Next >")) teach_go_to(state, p, p.step + 1);
    ImGui::SameLine();
    ImGui::TextDisabled("or ← →");
    ImGui::Separator();
    for (int k = 0; k < total; ++k) {
        // The title is the lesson's text, never an ID: an empty title or one with "##" is shown as it
        // is, wrapped to the list's width (read from the back of a room, not cut).
        ImGui::PushID(k);
        const std::string title = bounded_text(p.lesson->steps[k].title);
        const float width = ImGui::GetContentRegionAvail().x;
        const ImVec2 at = ImGui::GetCursorPos();
        const float h = ImGui::CalcTextSize(title.c_str(), nullptr, false, width).y;
        if (ImGui::Selectable("##step", k == p.step, 0, {0, h})) teach_go_to(state, p, k);
        ImGui::SetCursorPos(at);
        ImGui::PushTextWrapPos(at.x + width);
        ImGui::TextUnformatted(title.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopID();
    }
    ImGui::Separator();
    if (back_to_the_lessons_session(state, p)) teach_go_to(state, p, p.step);
    apply_typed_value(state, p.x_editor);
    if (ImGui::CollapsingHeader("Edit X")) {
        ImGui::TextDisabled("Every step follows your numbers.");
        matrix_editor(state, ui, p.x_editor, {core::MatrixId::X, 0}, true);
    }
}

// The room the text under the matrices takes: the arithmetic of the selected cell, and the seed's
// expansions or the exercise's grid.
float below_matrices(const AppState& state, const TeachPanel& p, const core::LessonStep& step,
                     const core::Matrix* result) {
    if (!result) return 0;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const core::Explanation* e = state.selected_explanation();
    float h = line * (2 + (e ? 2 + static_cast<float>(e->lines.size()) : 1));
    const float rows = static_cast<float>(std::min<Eigen::Index>(result->rows(), max_expansion_side));
    if (p.exercising)
        h += static_cast<float>(result->rows()) * ImGui::GetFrameHeightWithSpacing() + line * 2;
    else if (step.expansion)
        h += (rows + 1) * (line + 2);
    return h;
}

// The cell side at which every token label above the columns of these matrices is written whole (in
// the numbers font the heatmap falls back to), at most 4 ems.
float column_label_cell(const AppState& state, const UiContext& ui, const std::vector<MatrixRef>& refs) {
    const float most = ImGui::GetFontSize() * 4;
    if (ui.fonts.numbers) ImGui::PushFont(ui.fonts.numbers);
    float widest = 0;
    for (const MatrixRef& ref : refs)
        if (const std::vector<std::string>* labels = core::token_labels(state.shown().session, core::info(ref.id).cols))
            for (const std::string& label : *labels) widest = std::max(widest, text_width_up_to(label, most));
    if (ui.fonts.numbers) ImGui::PopFont();
    return std::min(std::ceil(widest) + 4, most);
}

// The step's operands, then its result, in one flow with one cell size for all, so operands and
// result line up: the largest (up to 5¼ ems, 84 pixels at 16 px text, to read from the back of a
// classroom; 8 ems in focus, where no text follows them) with which they fill the room above the
// text under them, wrapping to the width; never below a size that shows the numbers (the step then
// scrolls). Cells grow past that, while the matrices still fit the step's whole height (the text under
// them then scrolls), until the token labels above their columns are written whole. Matrices this
// session lacks are named in `missing`.
void step_matrices(AppState& state, UiContext& ui, const TeachPanel& p, const core::LessonStep& step,
                   const core::Matrix* result, std::vector<std::string>& missing) {
    const core::Config& c = state.shown_config();
    const float font = ImGui::GetFontSize();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    MatrixViewOptions o;
    o.token_rows = o.token_cols = true;
    o.follow_orientation = false;  // the lesson is written with row vectors, as seed 001
    struct Shown {
        MatrixRef ref;
        int index;  // in step.show; -1: the result
        FlowItem flow;
    };
    std::vector<Shown> shown;
    const auto add = [&](const MatrixRef& ref, int index) {
        const core::Matrix* m = state.matrix(ref);
        FlowItem f;
        f.rows = static_cast<int>(m->rows());
        f.cols = static_cast<int>(m->cols());
        f.head_h = line * (index < 0 && !shown.empty() ? 2 : 1);  // the result's "→ result" above its title
        f.min_w = ImGui::CalcTextSize(state.label(ref).c_str()).x;
        f.labels = matrix_view_gutters(state, ref, o);
        f.col_labels = matrix_view_col_labels(state, ui, ref, o);
        f.labels_from = ImGui::GetTextLineHeight() * 0.8f;
        shown.push_back({ref, index, f});
    };
    for (size_t k = 0; k < step.show.size(); ++k) {
        if (core::exists(step.show[k], c))
            add(step.show[k], static_cast<int>(k));
        else
            missing.push_back(core::label(step.show[k], state.notation()));
    }
    if (result) add(step.result, -1);
    std::vector<FlowItem> flow;
    for (const Shown& m : shown) flow.push_back(m.flow);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 gap{font * 1.2f, ImGui::GetStyle().ItemSpacing.y};
    const float below = p.focus ? 0 : below_matrices(state, p, step, result);
    const ImVec2 room{avail.x - ImGui::GetStyle().ScrollbarSize, std::max(avail.y - below, avail.y * 0.4f)};
    const float readable = std::round(font * 1.5f), largest = std::round(font * (p.focus ? 8 : 5.25f));
    o.max_cell = flow_cell(flow, room, gap, readable, largest);
    std::vector<MatrixRef> refs;
    for (const Shown& m : shown) refs.push_back(m.ref);
    const float labelled = std::min(column_label_cell(state, ui, refs), largest);
    if (o.max_cell < labelled)
        o.max_cell = std::max(o.max_cell,
                              std::min(labelled, flow_cell(flow, {room.x, avail.y}, gap, readable, largest)));
    bool first = true;
    for (const Shown& m : shown) {
        const float w = std::min(m.flow.width(o.max_cell), room.x);
        flow_place(w, gap.x, false, first);
        o.max_size = {w, m.flow.height(o.max_cell, room.x) - m.flow.head_h};
        ImGui::PushID(m.index);  // a lesson may show one matrix twice
        if (m.index >= 0) {
            matrix_view(state, ui, m.ref, o);
        } else {
            ImGui::BeginGroup();
            if (!first) ImGui::TextDisabled("%s result", ui.symbols().arrow);
            MatrixViewOptions ro = o;
            if (p.exercising)
                ro.shown_cells = 0;
            else if (p.playing)
                ro.shown_cells = p.revealed;
            matrix_view(state, ui, m.ref, ro);
            ImGui::EndGroup();
        }
        ImGui::PopID();
        first = false;
    }
}

}  // namespace

std::vector<std::string> lesson_folders() {
    std::vector<std::string> folders{assets_dir() + "/lessons"};
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        folders.push_back(std::string(xdg) + "/attnviz/lessons");
    else if (const char* home = std::getenv("HOME"); home && *home)
        folders.push_back(std::string(home) + "/.local/share/attnviz/lessons");
    return folders;
}

std::string default_lesson_path() { return assets_dir() + "/lessons/worked-example.json"; }

std::optional<core::LessonEntry> find_lesson(const std::string& name, std::string& problem) {
    std::string names;
    std::string folders;
    for (const std::string& folder : lesson_folders()) folders += (folders.empty() ? "" : " or ") + folder;
    for (core::LessonEntry& e : core::list_lessons(lesson_folders())) {
        if (e.name == name) return std::move(e);
        names += (names.empty() ? "" : ", ") + e.name;
    }
    problem = "no lesson \"" + core::printable(name) + "\" in " + folders + " (" +
              (names.empty() ? "it holds none" : names) + ")";
    return std::nullopt;
}

bool start_lesson_session(AppState& state, const TeachPanel& p) {
    if (!p.lesson || p.lesson->session.empty()) return false;
    const std::string file =
        (std::filesystem::path(p.lesson_path).parent_path() / p.lesson->session).lexically_normal().string();
    const core::Result<std::string> text = core::read_file(file);
    core::Result<core::Session> session = text ? core::parse_session(*text.value)
                                               : core::Result<core::Session>::fail(text.problems);
    if (!session) {
        state.set_message("The lesson's session " + file + " could not be opened: " + session.problems.front().str(),
                          true);
        return false;
    }
    const core::Config& c = session.value->config;
    state.set_session(std::move(*session.value),
                      "The session of the lesson \"" + p.lesson->title + "\": n = " + std::to_string(c.n) +
                          ", d_model = " + std::to_string(c.d_model) + ", h = " + std::to_string(c.heads));
    return true;
}

bool open_lesson(AppState& state, TeachPanel& p, const std::string& path, bool with_session) {
    p.step = 0;
    if (!load_lesson(p, path)) {
        state.set_message(p.error, true);
        return false;
    }
    if (with_session && !p.lesson->session.empty()) return start_lesson_session(state, p);
    return true;
}

bool load_lesson(TeachPanel& p, const std::string& path) {
    p.lesson_path = path.empty() ? default_lesson_path() : path;
    p.lesson.reset();
    p.error.clear();
    const core::Result<std::string> text = core::read_file(p.lesson_path, core::max_lesson_bytes, "a lesson");
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

namespace {

// A session the lesson does not describe: too large to follow cell by cell, or without what the
// lesson's text is about (its "requires"). Each with the way back to the lesson's own session.
void draw_session_warnings(AppState& state, UiContext& ui, TeachPanel& p, const core::LessonContext& context) {
    const core::Config& c = context.session->config;
    std::string warning;
    if (c.n > max_lesson_tokens || c.heads > max_lesson_heads)
        warning = "This lesson is written for up to " + std::to_string(max_lesson_tokens) + " tokens and " +
                  std::to_string(max_lesson_heads) + " heads; your session has n = " + std::to_string(c.n) +
                  " and h = " + std::to_string(c.heads) + ", so its matrices are too large to follow cell by cell.";
    const std::vector<std::string> unmet = core::unmet_requirements(*p.lesson, context);
    if (!unmet.empty()) {
        std::string lacks;
        for (size_t k = 0; k < unmet.size(); ++k)
            lacks += (k == 0 ? "" : k + 1 == unmet.size() ? " and " : ", ") + unmet[k];
        warning += (warning.empty() ? "" : " ") + std::string("This lesson is about a session ") + lacks +
                   "; yours is not. The matrices below are yours, but where the text speaks of what it is about, "
                   "it describes the lesson's session.";
    }
    if (warning.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
    text_bounded(warning);
    ImGui::PopStyleColor();
    ui.report_item("teach: warning");
    if (back_to_the_lessons_session(state, p)) teach_go_to(state, p, p.step);
    ImGui::Separator();
}

// The step's title, formula and text, their numbers filled in from the session, each wrapped at
// spaces where the caller pushed a wrap position.
void draw_step_text(UiContext& ui, const core::LessonStep& step, const core::LessonContext& context) {
    if (ui.fonts.title) ImGui::PushFont(ui.fonts.title);
    text_wrapped_at_spaces(step.title, ui.color_vec(Color::step_title));
    if (ui.fonts.title) ImGui::PopFont();
    // Wrapped at spaces only: ImGui's own wrapping would split a filled-in number after its '.'.
    if (!step.formula.empty()) {
        ImGui::Spacing();
        text_wrapped_at_spaces(core::fill_template(step.formula, context), ui.color_vec(Color::step_formula));
    }
    ImGui::Spacing();
    text_wrapped_at_spaces(core::fill_template(step.text, context));
    ui.report_item("teach: text");
}

// Play (the result revealed a cell at a time, dt seconds after the last frame), its speed, and
// the exercise's switch.
void draw_play_controls(AppState& state, TeachPanel& p, const core::LessonStep& step, const core::Matrix& result,
                        float dt) {
    const float font = ImGui::GetFontSize();
    const MatrixRef result_ref = step.result;
    const long total = static_cast<long>(result.size());
    if (p.playing) {
        p.play_time += dt;
        p.revealed = std::min<long>(total, static_cast<long>(p.play_time * p.cells_per_second) + 1);
        const CellRef newest{result_ref, static_cast<int>((p.revealed - 1) / result.cols()),
                             static_cast<int>((p.revealed - 1) % result.cols())};
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
        const bool small_enough = result.size() <= max_exercise_cells;
        ImGui::BeginDisabled(!small_enough);
        if (ImGui::Checkbox("exercise: hide the result, type it", &p.exercising) && p.exercising) {
            p.playing = false;
            p.revealed = -1;
            sync_exercise(state, p);
        }
        ImGui::EndDisabled();
        if (!small_enough && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("The exercise is for results of at most %ld cells; this one has %ld.", max_exercise_cells,
                              static_cast<long>(result.size()));
    }
}

// Under the matrices: the exercise's grid or the result's expansion, then the arithmetic of the
// selected result cell (hidden while it is still to be found).
void draw_result(AppState& state, UiContext& ui, TeachPanel& p, const core::LessonStep& step,
                 const core::Matrix& result) {
    ImGui::Separator();
    if (p.exercising)
        exercise_grid(state, ui, p, step.result);
    else if (step.expansion)
        expansion_table(state, step.result, result);
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

// Focus: the line above the step — the lesson, the step's place, and the way out (or Esc).
void focus_bar(UiContext& ui, TeachPanel& p) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s: step %d of %d (← →)", p.lesson->title.c_str(), p.step + 1,
                        static_cast<int>(p.lesson->steps.size()));
    ui.report_item("teach: focus step");
    const char* way_out = "Leave focus (Esc)";
    const float w = ImGui::CalcTextSize(way_out).x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SameLine(std::max(ImGui::GetWindowContentRegionMax().x - w, ImGui::GetCursorPosX()));
    if (ImGui::SmallButton(way_out)) p.focus = false;
    ui.report_item("teach: leave focus");
}

// The step: its text, its matrices, and (out of focus) play, the exercise and the arithmetic.
void draw_step(AppState& state, UiContext& ui, TeachPanel& p, float dt) {
    ImGui::BeginChild("step", {0, 0}, false);  // no horizontal scrollbar: everything wraps to its width
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
    draw_session_warnings(state, ui, p, context);
    draw_step_text(ui, step, context);
    ImGui::PopTextWrapPos();
    ImGui::Separator();

    const core::Matrix* result = teach_result(state, p);
    if (result && !p.focus) draw_play_controls(state, p, step, *result, dt);
    std::vector<std::string> missing;
    step_matrices(state, ui, p, step, result, missing);
    if (!missing.empty()) {
        std::string list;
        for (const std::string& s : missing) list += (list.empty() ? "" : ", ") + s;
        ImGui::TextDisabled("Not in this session (h = %d%s): %s", c.heads, c.output_projection ? "" : ", no W_O",
                            list.c_str());
    }
    if (step.has_result && !result)
        ImGui::TextDisabled("This step's result, %s, does not exist in this session.",
                            core::label(step.result, state.notation()).c_str());
    if (result && !p.focus) draw_result(state, ui, p, step, *result);
    ImGui::EndChild();
}

}  // namespace

void draw_teach_panel(AppState& state, UiContext& ui, TeachPanel& p, float dt) {
    if (!p.lesson) {
        text_wrapped_bounded(p.error.empty() ? "No lesson is loaded." : p.error, ui.color_vec(Color::error_text));
        if (ImGui::Button("Reload the lesson")) load_lesson(p, p.lesson_path);
        ui.report_item("teach: reload the lesson");
        return;
    }
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.WantTextInput) {  // ← → move between steps unless the learner is typing
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) teach_go_to(state, p, p.step + 1);
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) teach_go_to(state, p, p.step - 1);
    }
    if (p.focus) {  // for a room: the step alone, large
        focus_bar(ui, p);
        draw_step(state, ui, p, dt);
        return;
    }
    // Left: the steps, and X to edit (drawn first, so an edit is in this frame's trace).
    ImGui::BeginChild("steps", {ImGui::GetFontSize() * 17, 0}, true);
    step_list(state, ui, p);
    ImGui::EndChild();
    state.update();
    ImGui::SameLine();
    draw_step(state, ui, p, dt);
}

}  // namespace attnviz::app
