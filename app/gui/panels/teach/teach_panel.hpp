// Teach mode: the lesson player. It walks seed 001's worked example (or the user's own session)
// step by step: formula, explanation, the operand and result matrices with the cells involved
// outlined, and the arithmetic of the selected result cell. Play reveals the result cell by cell;
// the exercise hides it and checks what the learner types.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/teach/exercise.hpp"
#include "core/teach/lesson.hpp"
#include "panels/layer/inputs_panel.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// A learner types at most this many cells; larger results offer no exercise.
inline constexpr long max_exercise_cells = 64;
// The seed's way of writing cells, "(1+1)", is shown for at most this many rows and columns.
inline constexpr int max_expansion_side = 8;

struct TeachPanel {
    std::string lesson_path;
    std::vector<core::LessonEntry> library;  // the lesson picker's list (lesson_folders()), read when it opens
    std::optional<core::Lesson> lesson;
    std::string error;  // why the lesson could not be loaded; the app keeps running
    int step = 0;

    bool playing = false;
    float cells_per_second = 1.5f;
    double play_time = 0;
    long revealed = -1;  // cells of the result shown while playing; -1: all

    bool exercising = false;
    core::Exercise exercise;
    std::vector<std::string> typed;  // the learner's text per result cell, row-major
    std::uint64_t exercise_generation = 0;

    InputsPanel x_editor;  // "Edit X" inside the lesson

    // View > Focus: only the step's text and the matrices it names, large (no step list, play,
    // exercise or arithmetic), for a room; ← → still move between steps.
    bool focus = false;
};

// The sizes the lesson is written for: beyond them it says so and offers the worked example.
inline constexpr int max_lesson_tokens = 8, max_lesson_heads = 4;

// lessons/worked-example.json in the assets directory (assets.hpp).
std::string default_lesson_path();

// The folders of the lesson library: lessons/ in the assets directory, then the user's own,
// $XDG_DATA_HOME/attnviz/lessons (~/.local/share/attnviz/lessons), whose lessons replace shipped
// ones of the same name.
std::vector<std::string> lesson_folders();

// The library's lesson called `name` (its file's name without ".json"), or nullopt with the names
// there are in `problem`.
std::optional<core::LessonEntry> find_lesson(const std::string& name, std::string& problem);

// Opens a lesson from its first step and, when `with_session`, replaces the session with the one it
// starts from (undoable, as a preset is); false, with panel.error or the app's message saying why,
// when the lesson or its session cannot be read (the session on screen stays).
bool open_lesson(AppState& state, TeachPanel& panel, const std::string& path, bool with_session = true);

// Replaces the session with the one the open lesson starts from; false (said in the app) when it has
// none or it cannot be read.
bool start_lesson_session(AppState& state, const TeachPanel& panel);

// Loads (or reloads) a lesson, the default one for an empty path; on failure keeps no lesson and sets panel.error
// naming the problem.
bool load_lesson(TeachPanel& panel, const std::string& path);

// Moves to a step (clamped): stops playing, resets the exercise, selects the result's first cell.
void teach_go_to(AppState& state, TeachPanel& panel, int step);

// Types an answer into the exercise of the current step, as the learner's grid does.
void teach_answer(AppState& state, TeachPanel& panel, int row, int col, const std::string& text);

// The result matrix of the current step, or nullptr when it has none (or it does not exist here).
const core::Matrix* teach_result(const AppState& state, const TeachPanel& panel);

void draw_teach_panel(AppState& state, UiContext& ui, TeachPanel& panel, float dt);

}  // namespace attnviz::app
