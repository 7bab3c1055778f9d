// AppState: the one owner of the session, its trace, the selection and the user-facing messages.
//
// Two sessions live here. The editable one (session(), config(), input()) is what the editors show
// and the setters change; every change asks for a recompute. The shown one is an immutable
// snapshot (shown(): a session and the trace computed from exactly it): every view, explain(), the
// tooltips, the lesson and the heatmap caches read only that, so a cell is never explained against
// a trace of other values. update() (once a frame) computes small sessions at once and hands large
// ones to a worker thread; the newest request wins and the last snapshot stays on screen meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/attention/explain.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/session.hpp"
#include "core/io/import.hpp"
#include "state/trace_worker.hpp"

namespace attnviz::app {

// The registry's references (core/attention/registry.hpp): a matrix, and a cell or row or column of one.
using core::CellRef;
using core::MatrixRef;

struct Message {
    std::string text;
    bool error = false;
    std::string time;  // "14:05:09", when it was logged
};

class AppState {
public:
    explicit AppState(core::Session session);

    // The editable session (what the editors show and the setters change).
    const core::Session& session() const { return session_; }
    const core::Config& config() const { return session_.config; }
    // An input matrix of the editable session, or nullptr.
    const core::Matrix* input(MatrixRef ref) const;

    // The shown snapshot: a session and its trace, computed from exactly that session.
    const Snapshot& shown() const { return *shown_; }
    const core::Config& shown_config() const { return shown_->session.config; }
    const core::Trace& trace() const { return shown_->trace; }
    // The shown snapshot, shared: a reader on another thread (the gradient view's) keeps it alive and
    // unchanged while it reads (adopt() leaves the buffers of a snapshot still held alone).
    std::shared_ptr<const Snapshot> shown_snapshot() const { return shown_; }
    // A matrix of the shown snapshot, or nullptr when it does not exist (a head out of range, W_O while off).
    const core::Matrix* matrix(MatrixRef ref) const;
    // The arithmetic of a cell, in the notation the loaded font can show.
    core::Result<core::Explanation> explain(const CellRef& cell) const;
    std::string label(MatrixRef ref) const;  // "Q⁽¹⁾" or "Q(1)"

    // --- Setters. Each leaves the session valid; a refused change sets an error message and
    // leaves everything as it was.
    bool set_cell(const CellRef& cell, double value);
    bool set_matrix(MatrixRef ref, const core::Matrix& values);  // shape must match
    // Resizes, keeping what fits; growing back restores what a shrink dropped. A change of the
    // scale or the softmax alone keeps the session as it is and its undo step holds only the old
    // scale and softmax. `merge`
    // names a change that goes on (a slider's drag): consecutive changes with the same name undo
    // as one step.
    bool set_config(const core::Config& config, const std::string& merge = "");
    bool set_token(int row, const std::string& label);
    bool set_kv_token(int row, const std::string& label);  // a label of Y's rows (cross-attention)
    // Keeps the session as it is now inside it ("pinned", saved with it) to compare later edits
    // with; unpin() drops it. Both are undoable changes of the session.
    void pin();
    void unpin();
    // Replaces the session with another (a preset: the worked example, random values, a sentence;
    // an imported layer): a new session, not yet saved, with no file, so that Save asks where and
    // never writes a preset over the file that was open. Undo brings back the session and its file.
    // Must be valid.
    void set_session(core::Session session, const std::string& description);
    bool open_file(const std::string& path);  // a bad file is reported; the current work stays
    // A checkpoint (.safetensors, .npz, .npy; what open_file does with one): its layer (0, or the one its metadata
    // names) as `attnviz import` would, with the heads from a config.json beside it. Unsaved afterwards.
    bool import_checkpoint(const std::string& path, core::ImportOptions options = {});
    static bool is_checkpoint(const std::string& path);
    bool save_file(const std::string& path);
    // Unsaved work recovered after a crash (an autosave): the session as it was, unsaved, with the
    // file it came from (empty: none) so that Save writes there. Undo takes it back. Refused (with a
    // message) when it needs more memory than the budget.
    bool restore_unsaved(core::Session session, const std::string& file, const std::string& description);
    void randomize(std::uint64_t seed);  // every value of the session, same dimensions

    // Undo and redo of every change to the session (cells, matrices, dimensions, tokens, presets,
    // opened files). Consecutive edits of one cell (a drag) undo as one step. A step keeps only
    // what its change replaced: one number for a cell, one matrix for a matrix, the whole session
    // for a change of dimensions, a preset or an opened file.
    bool undo();
    bool redo();
    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }
    const std::string& undo_label() const;  // what undo() would take back, e.g. "edit of X[0][1]"
    const std::string& redo_label() const;
    // At most this many steps and this many bytes are kept; older steps are dropped first (the
    // newest step is always kept).
    static constexpr size_t max_undo_steps = 1000;
    static constexpr std::int64_t max_undo_bytes = std::int64_t{256} << 20;  // 256 MiB
    // The bytes the kept undo and redo steps hold.
    std::int64_t undo_bytes() const;

    // Configurations whose inputs and trace need more than this many bytes are refused with the
    // figure (core::memory_problem); core::default_memory_budget unless set.
    void set_memory_budget(std::int64_t bytes) { memory_budget_ = bytes; }
    std::int64_t memory_budget() const { return memory_budget_; }

    // Asks for the trace of the editable session when it changed (computed at once when small, on
    // the worker otherwise) and shows the newest finished snapshot. Returns whether a new one is shown.
    bool update();
    // Whether the editable session changed since the last update().
    bool dirty() const { return dirty_; }
    // Whether the shown snapshot is older than the editable session (a trace is being computed).
    bool computing() const { return dirty_ || awaited_ != 0; }
    // While held (the frame draws its views), update() shows no new snapshot: a view that edits
    // the session (a slider, a button) cannot free the snapshot that it and the views after it
    // are reading; the next update() after the hold shows it.
    void hold_snapshot(bool held) { snapshot_held_ = held; }
    // Blocks until the trace of the editable session is shown (tests, benchmarks, screenshots).
    void wait_for_trace();
    double compute_ms() const { return shown_->compute_ms; }
    // The shown snapshot's number; caches keyed on it (heatmap textures) know when to refresh.
    std::uint64_t generation() const { return shown_->generation; }
    // Sessions whose forward pass is at most this many floating-point operations are computed at
    // once on the UI thread (well under a frame); larger ones on the worker.
    void set_sync_limit(double flops) { sync_limit_flops_ = flops; }
    double sync_limit() const { return sync_limit_flops_; }

    // The selected cell (clicked), whose operands the views highlight.
    const CellRef* selection() const { return has_selection_ ? &selection_ : nullptr; }
    void select(const CellRef& cell);
    // Selects and views the cell if it exists; otherwise sets an error message. Returns whether it did.
    bool select_checked(const CellRef& cell);
    void clear_selection() { has_selection_ = false; }
    // The selected cell's arithmetic, computed once per selection and per recompute (not per frame);
    // nullptr without a selection.
    const core::Explanation* selected_explanation() const { return has_selection_ ? &selected_explanation_ : nullptr; }
    // What produced the selected cell (rows, columns or cells of other matrices), for highlights.
    const std::vector<CellRef>& selection_operands() const { return selected_explanation_.operands; }
    // Whether an operand of the selected cell covers cell (row, col) of `ref` (row/col < 0: any).
    bool is_operand(MatrixRef ref, int row, int col) const;
    // The matrix the viewer shows; the pipeline sets it.
    MatrixRef viewed() const { return viewed_; }
    void view(MatrixRef ref) { viewed_ = ref; }

    const Message& message() const { return message_; }
    // Shows a message in the status bar and keeps it in the message log (the newest max_log).
    void set_message(std::string text, bool error = false);
    const std::vector<Message>& message_log() const { return log_; }
    static constexpr size_t max_log = 200;
    const std::string& file_path() const { return file_path_; }
    // Whether the session changed since it was last opened or saved (a new session counts as saved).
    bool modified() const { return modified_; }
    // Counts the changes of the session (every edit, undo and redo): what an autosave compares.
    std::uint64_t revision() const { return revision_; }
    // Every change of the session counts (an edit, an undo, a new file, …): the count now, and the
    // matrices edited (set_cell, set_matrix) since the count was `since`, or nullopt when anything
    // else changed since then (or too many changes to recall): then any matrix may differ. What a
    // copy of the session made at `since` needs to become the session again (core::SessionPatch).
    std::uint64_t change_count() const { return change_count_; }
    std::optional<std::vector<MatrixRef>> matrices_edited_since(std::uint64_t since) const;

    // The column-vector view (seed 004): every matrix drawn as the transpose of its row form, so
    // tokens are columns. Only the views change; the session and the math stay in row form.
    bool column_vectors() const { return column_vectors_; }
    void set_column_vectors(bool on) { column_vectors_ = on; }
    // "rows×cols" of a matrix as the views draw it (transposed in the column-vector view, unless
    // the view keeps row form).
    std::string shape_text(MatrixRef ref, bool follow_orientation = true) const;

    core::Notation notation() const { return notation_; }
    void set_notation(core::Notation n) { notation_ = n; }

private:
    // What a change replaced, enough to put it back: undo and redo swap it with the session's
    // current state, so the same step then holds what the other direction needs.
    struct CellChange {
        CellRef cell;
        double value = 0;
    };
    struct MatrixChange {
        MatrixRef ref;
        core::Matrix values;
    };
    struct TokenChange {
        int row = 0;
        std::string label;
        bool keys = false;  // a label of Y's rows (kv_tokens), not X's
    };
    struct SessionChange {
        core::Session session;
        // The file path that goes with it, when the change replaced the document (open, preset,
        // import, restore); nullopt for a change within one document (dimensions, pin).
        std::optional<std::string> file;
    };
    struct ScaleChange {  // the scale and the softmax: what turns scores_raw into weights
        core::Scale scale;
        core::Softmax softmax = core::Softmax::standard;
    };
    using Change = std::variant<CellChange, MatrixChange, TokenChange, SessionChange, ScaleChange>;
    struct UndoStep {
        Change change;
        std::string what;
        std::int64_t bytes() const;
    };
    // Call before a change: keeps what it replaces for undo(). `merge` names an edit that
    // continues the previous one (the same cell again), which then needs no new step.
    void remember(Change change, std::string what, const std::string& merge = "");
    // Swaps the step's state with the session's; returns whether the session was reshaped.
    bool swap_in(Change& change);
    void restore(std::vector<UndoStep>& from, std::vector<UndoStep>& to);
    // Takes the newest undo step back without keeping it for redo (a change that could not be made).
    void take_back();
    // Replaces the session and its file as one undo step (refused over the memory budget).
    bool replace_document(core::Session session, const std::string& file, const std::string& description);
    // " (your current session is unchanged)" for a message about a failure, or "" while there is
    // no work of the user's yet (the session attnviz started with, unchanged and without a file).
    std::string unchanged_note() const;
    // The budget's refusal of a config, as a message; false when it fits.
    bool refuse_over_budget(const core::Config& config, const std::string& what);
    // Shows a finished snapshot (when it is newer than the shown one).
    void adopt(std::shared_ptr<Snapshot> snapshot);
    core::Matrix* mutable_matrix(MatrixRef ref);
    // The session changed: its trace is computed again, and the change is counted, with the matrix
    // it edited (set_cell, set_matrix) or as any other change.
    void mark_dirty() { count_change(std::nullopt); }
    void mark_dirty(const MatrixRef& edited) { count_change(edited); }
    void count_change(const std::optional<MatrixRef>& edited);
    // After the session was replaced or reshaped (dimensions, preset, file, undo): the old
    // selection's cells no longer mean anything, the viewed head may be gone, and the trace is
    // recomputed at once, so no reader ever pairs the new params with a trace of other shapes.
    void session_reshaped();
    void refresh_selection();

    core::Session session_;
    // Every value the session had at sizes larger than now (core::remembered): what growing a
    // dimension back restores. Forgotten when another session replaces this one.
    core::Session memory_;
    std::shared_ptr<Snapshot> shown_;      // never null after construction; read-only once shown
    core::Trace spare_;                    // buffers of an earlier trace, lent to the next one
    std::unique_ptr<TraceWorker> worker_;  // started when a session is first too large to compute at once
    bool dirty_ = true;
    // The newest changes of the session, oldest first: the count after each, and the matrix it
    // edited (none: any other change). The changes after recalled_from_ are all here.
    struct CountedChange {
        std::uint64_t count;
        std::optional<MatrixRef> edited;
    };
    std::vector<CountedChange> changes_;
    std::uint64_t change_count_ = 0;
    std::uint64_t recalled_from_ = 0;
    static constexpr size_t recalled_changes = 64;
    // The newest trace asked for: its generation, and the change count then (its session's).
    std::uint64_t asked_generation_ = 0, asked_at_change_ = 0;
    std::uint64_t awaited_ = 0;    // the generation asked of the worker and not shown yet (0: none)
    std::uint64_t requested_ = 0;  // the generation of the newest request
    double sync_limit_flops_ = 5e7;
    bool snapshot_held_ = false;
    std::int64_t memory_budget_ = core::default_memory_budget;
    CellRef selection_;
    bool has_selection_ = false;
    core::Explanation selected_explanation_;
    MatrixRef viewed_;
    Message message_;
    std::vector<Message> log_;
    std::string file_path_;
    core::Notation notation_ = core::Notation::unicode;
    bool column_vectors_ = false;
    std::vector<UndoStep> undo_, redo_;
    std::string last_merge_;  // the merge key of the newest undo step
    bool modified_ = false;
    std::uint64_t revision_ = 0;
};

}  // namespace attnviz::app
