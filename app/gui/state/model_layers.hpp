// The layers the model view shows beside the session being edited: several layers of a model (a
// checkpoint's, or session files side by side), one row each. Row 0 is always this session (the
// shown snapshot, refreshed when its trace changes); the others keep their own session, so a click
// can make one of them the session being edited.
//
// Per row the model view needs, per head, the four summary numbers and a thumbnail of the weights
// (core/attention/layer_summary.hpp), never the full n × n weights: a row's trace is computed, summarized and
// dropped. Reading files, importing a checkpoint's layers and tracing them run on one Worker (at a
// lower priority, as the trace worker), so the window never waits: a row appears once its session
// is read and shows "computing…" until its numbers arrive. Row 0's numbers are computed at once
// while they are cheap, else on the same worker ahead of everything queued; a checkpoint's layers
// come next, in order, then the rest as asked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/attention/layer_summary.hpp"
#include "core/io/import.hpp"
#include "state/app_state.hpp"
#include "state/worker.hpp"

namespace attnviz::app {

// Problems as one line for a message: the first four, "; " between them.
std::string problems_text(const core::Problems& problems);

// What a layer adds to the seeds' attention, as its row says it: its sliding window and soft-cap
// ("window 4, soft-cap 0.5"); "" for plain attention.
std::string row_mechanisms(const core::Config& c);

class Layers {
public:
    struct Row {
        std::string name;                // "this session", "layer-03.json", "layer 5"
        std::string source;              // where it came from, for tooltips: a path, or "model.safetensors, layer 5"
        std::string path;                // the session file it was read from; "" for a checkpoint's layer and row 0
        std::vector<std::string> notes;  // what its import said (X random, …)
        std::shared_ptr<const core::Session> session;  // its inputs; null for row 0 (the AppState's)
        // A model's block not edited: makes its session when it is opened in the editor (session null).
        std::function<core::Result<core::Session>()> make_session;
        std::shared_ptr<const core::LayerSummary> summary;  // null while computing
        std::string error;         // why it has no summary (too large for the memory budget, …)
        std::uint64_t serial = 0;  // new with every summary: keys its thumbnails' textures
        bool held = true;          // its session's bytes count against the budget here (not a model run's block)
        int n = 0, keys = 0, heads = 0;
        std::string mechanisms;  // what the layer adds to plain attention: "window 4, soft-cap 0.5" (row_mechanisms)
        bool computing() const { return !summary && error.empty(); }
    };

    Layers();
    ~Layers() = default;  // the worker goes first: drops what is queued, waits for the step running
    Layers(const Layers&) = delete;
    Layers& operator=(const Layers&) = delete;

    int size() const { return static_cast<int>(rows_.size()); }
    const Row& row(int k) const { return rows_[static_cast<size_t>(k)]; }
    std::span<const Row> rows() const { return rows_; }

    // Row 0 from the shown snapshot when its generation changed: summarized at once when its
    // weights are small, else on the worker (the old numbers stay, marked computing, meanwhile;
    // one at a time, then the newest trace).
    void sync(const AppState& state);
    // Adds a valid session as a row; its numbers are computed on the worker.
    void add(std::string name, core::Session session, std::string path = "", std::string source = "");
    // Session files (.json) read on the worker, one row each; a checkpoint among them brings all
    // its layers (as import_checkpoint with default options).
    void open_files(const std::vector<std::string>& paths);
    // A checkpoint's layers (`spec` as `attnviz import --layer`: all, 2-5, 0,2,4) with these
    // options; the heads come from a config.json beside it as for File > Import layer.
    void import_checkpoint(const std::string& path, core::ImportOptions options, const std::string& spec = "all");
    // Takes what the worker finished: new rows, numbers, and failures, which become error messages
    // in `state` (the other rows stay). Call once a frame. Returns whether anything changed.
    bool poll(AppState& state);
    // Whether something is queued, running, or finished and not taken by poll() yet.
    bool busy() const;
    // Blocks until the worker has nothing left to do (tests, screenshots); poll() then takes it all.
    void wait();
    void remove(int k);  // k ≥ 1
    void clear();        // every row but this session

    // The model mode (model_run.hpp): rows 1.. become the blocks of a model's run, their numbers
    // computed with it. `keep_editing`: the row being edited stays so (an edit's rerun); else none is.
    // clear() ends it.
    void set_model_rows(std::vector<Row> rows, bool keep_editing);
    // The rows are a model run's blocks: this session's row is not shown (it is one of them).
    bool model() const { return model_; }
    // No row is the session being edited any more (a model's block whose edits stopped running).
    void end_editing();

    // The bytes of the sessions held beside this one may not pass this (the app's memory budget):
    // a layer that would is refused with a message.
    void set_memory_budget(std::int64_t bytes);

    // Makes row k (≥ 1) the session being edited, one undo step: a row read from a session file
    // opens that file (Save writes there), a checkpoint's layer comes in unsaved. Then views head
    // `head`'s weights in the matrix viewer (row 0: only that).
    void open_in_editor(AppState& state, int k, int head);
    // Whether row k (≥ 1) is the session being edited: opened from here or from the same file, and
    // not changed since.
    bool editing(const AppState& state, int k) const;
    // With `attnviz --model` and no session: the first row read becomes the session being edited.
    bool open_first = false;

private:
    struct Shared;  // the worker's queue and results, shared with its tasks
    struct Slot;    // a summary being computed for one row
    bool open_row(AppState& state, int k);
    // Queues a task that belongs to this set of rows (dropped once clear() moved on); an urgent one
    // (row 0's numbers) runs whatever happens.
    void enqueue(std::function<void()> task, Worker::Priority priority = Worker::Priority::normal);
    void start_summary(Row& row, std::shared_ptr<Slot>& slot, std::shared_ptr<const core::Session> session);

    std::vector<Row> rows_;
    std::vector<std::shared_ptr<Slot>> slots_;  // per row: its summary in progress (null: none)
    std::shared_ptr<Shared> shared_;
    std::uint64_t row0_generation_ = ~std::uint64_t{0};
    std::uint64_t serial_ = 0;
    int editing_row_ = -1;
    std::uint64_t editing_revision_ = 0;
    bool model_ = false;
    Worker worker_{"model layers"};  // last: destroyed (joined) before the members its tasks read
};

}  // namespace attnviz::app
