// Gradients (sensitivity): how one output cell depends on every input of the layer. For the chosen
// cell output[i][j] the panel shows ∂output[i][j]/∂X (and ∂/∂Y under cross-attention), each head's
// ∂/∂W_Q, ∂/∂W_K, ∂/∂W_V (and its biases'), and ∂/∂W_O (and ∂/∂b_O), as diverging heatmaps, with
// the largest |∂| listed: the inputs this output cell depends on most. The numbers come from
// core::output_gradient (backpropagation through the whole layer).
//
// The cell follows the selection when an output cell is clicked in any view, or is typed in the
// panel. The gradient is computed when the shown trace or the cell changes, never per frame: at
// once for small layers, on a thread of its own for large ones (at n = 512, d_model = 768, h = 12 it
// costs about as much as the forward pass, a quarter second), the previous gradient staying on
// screen, marked "computing…", meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/gradient.hpp"
#include "state/app_state.hpp"
#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// One entry of a gradient: ∂output[row][col] / ∂ref[r][c].
struct GradientEntry {
    MatrixRef ref;
    int row = 0, col = 0;
    double value = 0;
};

// A gradient ready to draw, computed from one snapshot: immutable once made (shared with the
// thread that computed it).
struct GradientResult {
    std::uint64_t generation = 0;                // the shown trace's (AppState::generation()) it was computed from
    std::uint64_t serial = 0;                    // new for every result: keys the heatmaps' textures
    core::Config config;                         // of that snapshot
    std::vector<std::string> tokens, kv_tokens;  // the labels of X's and Y's rows then
    double value = 0;                            // output[row][col] itself
    core::Gradients gradients;                   // its row and col: the output cell
    // The matrices the panel shows, in its order: X, Y; per head W_Q, W_K, W_V, b_Q, b_K, b_V (the
    // K/V ones only for the first head of a K/V group, which holds the group's); W_O, b_O.
    std::vector<MatrixRef> shown;
    std::vector<double> max_abs;         // per shown matrix, its largest |∂|
    double all_max_abs = 0;              // over all of them
    std::vector<GradientEntry> largest;  // the largest |∂| (not 0), largest first
    double compute_ms = 0;
};

// How many entries GradientResult::largest keeps.
inline constexpr int gradient_largest = 10;

// The gradient of output[row][col] in a snapshot, on any thread. Refused like
// core::output_gradient (a cell outside the output).
core::Result<GradientResult> compute_gradient(const Snapshot& snapshot, int row, int col,
                                              int largest = gradient_largest);

// The gradient of an input in `d` (d.X, d.heads[h].W_Q, …), or nullptr when it holds none (a
// matrix the layer does not have, the K/V of a head that shares its group's).
const core::Matrix* gradient_matrix(const core::Params& d, MatrixRef ref);

// "∂/∂W_Q⁽¹⁾" ("d/dW_Q(1)" in ASCII).
std::string gradient_title(MatrixRef ref, core::Notation notation);

// What a gradient entry means, in words: "Raising X[2][1] by ε changes output[0][3] by ≈ 0.413·ε."
std::string gradient_meaning(const GradientEntry& entry, int out_row, int out_col, core::Notation notation);

struct GradientPanel {
    int row = 0, col = 0;              // the output cell shown (or asked for)
    int field_row = 0, field_col = 0;  // the panel's fields (applied on Enter or "show")
    bool follow = true;                // an output cell selected in any view becomes the cell shown
    std::optional<CellRef> seen;       // the selection last looked at (only a new one is followed)
    bool one_scale = false;            // every matrix on ±the largest |∂| of all; else each on its own
    std::string note;                  // why the cell shown is not the one asked for (the output shrank)
    std::string problem;               // why there is no gradient (out of memory), for this trace and cell:
    std::uint64_t problem_generation = 0;
    int problem_row = -1, problem_col = -1;
    // Sessions whose forward pass is at most this many floating-point operations get their
    // gradient at once on the UI thread; larger ones on a thread of their own.
    double sync_limit_flops = 5e7;

    std::shared_ptr<const GradientResult> result;  // the gradient on screen (null: none yet)
    // A gradient being computed off the UI thread (on `worker`), and what it is of.
    Worker::Job<core::Result<GradientResult>> job;
    std::uint64_t job_generation = 0;
    int job_row = -1, job_col = -1;
    std::uint64_t serial = 0;   // the last result's
    int computed = 0;           // gradients computed so far (at once or on the thread)
    int highlighted = -1;       // an entry of the largest list hovered: outlined in its heatmap
    Worker worker{"gradient"};  // computes `job`; last: joined before the members above go
};

// Shows the gradient of output[row][col]: refused with an error message (and nothing changes)
// when the shown output has no such cell.
bool choose_output_cell(AppState& state, GradientPanel& panel, int row, int col);
// Follows the selection, takes a finished gradient, and starts the one the shown trace and the cell
// need when it is not there yet (at once or on the thread). Called by the panel every frame it is
// drawn; returns whether the gradient on screen is the one wanted.
bool update_gradient(const AppState& state, GradientPanel& panel);
// Whether a gradient is being computed off the UI thread (the window keeps drawing until it is in).
bool gradient_busy(const GradientPanel& panel);
// Blocks until the gradient being computed is done (tests, screenshots); the next update takes it.
void wait_for_gradient(const GradientPanel& panel);

void draw_gradient_panel(AppState& state, UiContext& ui, GradientPanel& panel);

}  // namespace attnviz::app
