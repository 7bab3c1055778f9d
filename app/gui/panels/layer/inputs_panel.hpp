// Inputs panel: editors for X (with its token labels), each head's W_Q, W_K, W_V, and W_O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dialogs/file_chooser.hpp"
#include "state/app_state.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct InputsPanel {
    std::uint64_t random_seed = 1000;  // advanced by every per-matrix "random"
    // A value being typed into a cell (double-click or Ctrl+click): it is applied once, on Enter or
    // when the field loses focus, not at every keystroke. A drag applies as it moves.
    struct Typed {
        CellRef cell;
        double value = 0;
        unsigned field = 0;  // the field's ImGui ID
    };
    std::optional<Typed> typed;
    FileChooser load_files;  // a matrix's "load": which file
    MatrixRef load_ref;      // and which matrix it goes to
};

void draw_inputs_panel(AppState& state, UiContext& ui, InputsPanel& panel);

// Applies a typed value once its field is no longer active (Enter, Tab, a click elsewhere); the
// editors call it first thing each frame.
void apply_typed_value(AppState& state, InputsPanel& panel);

// A dragged cell's value as stored: ImGui moves a drag in float steps (2.45 arrives as
// 2.4499999675…), so it is rounded to the finest step a drag makes (10⁻⁴, with Alt held): a drag
// that shows 2.45 stores and saves 2.45. Typed values are kept as typed (parsed as doubles).
double dragged_value(double v);

// Replaces a weight matrix by the nearest one with orthonormal columns (seed 004's Stiefel
// constraint; one undo step). Refused with a message when it has more columns than rows.
bool matrix_orthonormalize(AppState& state, MatrixRef ref);

// One editable matrix with its toolbar (also used inside the lesson to edit X).
void matrix_editor(AppState& state, UiContext& ui, InputsPanel& panel, MatrixRef ref, bool with_tokens);

// The toolbar actions of one matrix, shared with tests: each goes through AppState's setters.
void matrix_zero(AppState& state, MatrixRef ref);
void matrix_identity(AppState& state, MatrixRef ref);
void matrix_random(AppState& state, MatrixRef ref, std::uint64_t seed);
bool matrix_paste(AppState& state, MatrixRef ref, const char* text);  // CSV/TSV, shape checked
std::string matrix_copy(const AppState& state, MatrixRef ref);        // CSV
// The matrix from a .npy (or a .npz/.safetensors holding one tensor, or one named as the matrix);
// a wrong shape or a bad file is reported and nothing changes.
bool matrix_load(AppState& state, MatrixRef ref, const std::string& path);

}  // namespace attnviz::app
