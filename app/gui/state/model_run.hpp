// The model mode: a Hugging Face model folder (core/model/model_folder.hpp), a sentence, and the
// whole forward pass of that sentence (core/model/runtime.hpp), kept for the model view (one row per
// block), the Next token panel and the Model analysis panel (logit lens, rollout, residual norms).
//
// Everything that reads the folder or runs the model runs on this object's Worker, one job at a
// time: opening (the folder and its tokenizer read, then the first run), a run of a new sentence
// (started once the sentence box has not changed for a moment), and a rerun after an edit of the
// block being edited (rerun_from: the blocks before it are reused). A job works on its own copy of
// the run, so the previous results stay shown, marked computing, until it finishes; a failure
// leaves them as they were and says why (the sentence box for its text, the app's message else).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/layer_summary.hpp"
#include "core/attention/session_patch.hpp"
#include "core/model/analysis.hpp"
#include "core/model/model_folder.hpp"
#include "core/model/runtime.hpp"
#include "core/model/tokenizer.hpp"
#include "state/app_state.hpp"
#include "state/model_layers.hpp"
#include "state/worker.hpp"

namespace attnviz::app {

// The sentence a model opens with when none is given.
inline constexpr const char* default_model_text = "The quick brown fox jumps over the lazy dog.";

// A token's text as the model panels show it: spaces as "·" (GPT-2's " world" is "·world"), line
// breaks and tabs as \n, \r and \t, the other control characters as \xNN, "∅" for a token that
// decodes to nothing, so every token shows.
std::string visible_token(const std::string& text);

// One forward pass as the model panels show it (the run in float, every number of it computed on
// the worker).
struct ModelResults {
    std::shared_ptr<const model::RunState<float>> run;
    std::vector<std::string> texts;                                    // n: each token decoded, for chips and grids
    std::vector<std::shared_ptr<const core::LayerSummary>> summaries;  // per block: its heads' numbers
    Eigen::RowVectorXd logits;                                         // 1×vocab: the last position's (causal LMs)
    std::optional<model::LogitLens> lens;                              // (L+1)×n; none for encoders
    std::string lens_problem;                                          // why there is no lens
    // The lens is being computed: a job of its own after the rest, which a newer run cancels (it
    // reads the whole LM head for every stream and position, seconds for a real model).
    bool lens_to_come = false;
    std::vector<core::Matrix> rollout;  // per block, n×n
    core::Matrix norms;                 // (L+1)×n: ‖x_l[i]‖
    int edited_layer = -1;              // the block an edit reran from; -1: a new sentence
    double compute_ms = 0;              // the time the run (or rerun) and these numbers took on the worker
    std::uint64_t serial = 0;           // new with every run
};

// How far a run of a sentence through the model has come, shared by its job (which writes it after
// each block) and the window (which reads it every frame): the blocks done of all, each done
// block's numbers for the model view as they come, and the window's wish to stop it.
struct RunProgress {
    std::atomic<int> done{0}, total{0};  // blocks; total 0 until the folder is open and the text tokenized
    std::atomic<bool> cancelled{false};
    mutable std::mutex m;                                              // guards what follows
    int n = 0, heads = 0;                                              // the run's tokens and each block's heads
    std::vector<std::shared_ptr<const core::LayerSummary>> summaries;  // of blocks 0 … done − 1
};

class ModelRun {
public:
    ModelRun() = default;
    ~ModelRun() = default;  // the worker goes first (declared last)
    ModelRun(const ModelRun&) = delete;
    ModelRun& operator=(const ModelRun&) = delete;

    // Opens a model folder and runs `text` through it, on the worker. The model open so far (if
    // any) stays until the new one has opened and run; a failure is said in the app's message.
    // `edit_layer` ≥ 0: once open, that block becomes the session being edited (attnviz --model DIR
    // without a session: the first; a block the model does not have: none).
    void open(const std::string& folder, std::string text, std::int64_t memory_budget, int edit_layer = -1);
    // A folder is being opened (its name), "" when none.
    const std::string& opening() const { return opening_; }
    // No model: the model view goes back to layers opened beside the session.
    void close(Layers& layers);
    bool is_open() const { return folder_ != nullptr; }
    // Opening, running or rerunning, a sentence waiting to be run, or the logit lens to come: the
    // window draws frames meanwhile, so that what comes is shown without waiting for input.
    bool busy() const;
    // A job is running whose results will replace those shown.
    bool computing() const { return job_.valid() || pending_.has_value() || edit_waiting_; }
    // Blocks until the worker has finished (tests, screenshots); update() then takes the results
    // (and starts the logit lens's job, which a second wait() and update() take).
    void wait() const {
        job_.wait();
        lens_job_.wait();
    }

    // The blocks done of all by the run of a sentence in flight (opening or a new sentence), for a
    // progress bar; nullopt when none runs or its block count is not known yet.
    struct Progress {
        int done = 0, total = 0;
    };
    std::optional<Progress> progress() const;
    // Stops the run of a sentence in flight after its block running: an opening leaves no model
    // open; a new sentence leaves the previous one's results shown. Said in the app's message.
    void cancel(AppState& state);

    // The sentence box's text: run once it has not changed for `debounce_seconds`.
    void set_text(std::string text, double now);
    const std::string& text() const { return text_; }
    static constexpr double debounce_seconds = 0.25;
    // Why the sentence box's text is not the one shown ("" when it is, or while it runs).
    const std::string& text_problem() const { return text_problem_; }

    // Once a frame: takes what the worker finished (a model opened, a run, a failure), starts the
    // sentence's run once it is due, and reruns from the block being edited when the session being
    // edited changed. Rows 1.. of `layers` become the blocks of each new run.
    void update(AppState& state, Layers& layers, double now);
    // Block `layer` (row layer + 1 of the model view) was opened in the editor: its edits now run
    // through the model.
    void begin_edit(const AppState& state, int layer);
    int editing_layer() const { return editing_; }

    const model::ModelFolder* folder() const { return folder_.get(); }
    const ModelResults* results() const { return results_.get(); }
    // The results the last edit started from (for what it changed); null after a new sentence.
    const ModelResults* before_edit() const { return before_.get(); }
    // A vocabulary id as text (decoded: "Ġworld" shows as " world").
    std::string token_text(std::int32_t id) const;
    // The model's tokenizer (null without one), for work of its own on the worker (a second sentence).
    std::shared_ptr<const model::Tokenizer> tokenizer() const { return tokenizer_; }
    std::string token_piece(std::int32_t id) const;

    // Work on the results shown, queued on the model's worker behind the job running (the attention
    // lab's ablations through the model): `job(folder, run, stopped)` with the run of the results
    // shown; `stopped()` says its result is no longer wanted: its handle was cancelled, or a run or
    // edit was started since (its results will replace these). Needs results().
    // F: T(const model::ModelFolder&, const model::RunState<float>&, const std::function<bool()>&).
    template <class F>
    auto on_results(F job, Worker::Priority priority = Worker::Priority::normal) {
        return worker_.submit(
            [folder = folder_, run = results_->run, superseded = superseded_,
             job = std::move(job)](const Worker::Stop& stop) mutable {
                const std::function<bool()> stopped = [&] { return stop.requested() || superseded->load(); };
                return job(*folder, *run, stopped);
            },
            priority);
    }

    // What a job hands back: the folder and tokenizer it opened (opening only), its results, or
    // why it has none.
    struct Outcome {
        std::shared_ptr<const model::ModelFolder> folder;
        std::shared_ptr<const model::Tokenizer> tokenizer;
        std::shared_ptr<ModelResults> results;
        std::string problem;
        bool text_problem = false;  // the sentence's (shown in the box), else the model's (a message)
        bool stopped = false;       // a rerun stopped for a newer edit of its block: nothing to take
    };
    // Edits wait for a frame without one (a drag's, one a frame, for a pause), and stop the rerun in
    // flight of the block they edit (its results would be replaced at once), until they have gone
    // this long unshown: then a rerun starts and finishes, so a long drag still shows how the model
    // follows it.
    static constexpr double max_unshown_seconds = 1.0;

private:
    struct Request {
        std::optional<std::string> text;  // a new sentence
        int layer = -1;                   // else an edit of this block's session:
        // the session as the matrices it changed of the one last run (copied whole on the worker)
        std::optional<core::SessionPatch> session;
    };
    void submit(Request request);
    // Starts the logit lens of the results shown, and takes it once it is done.
    void start_lens();
    void take_lens();
    void take(AppState& state, Layers& layers, Outcome outcome);
    // While a model opens: the model view's rows from the blocks done so far, the rest computing.
    void stream_rows(Layers& layers);
    void check_edit(AppState& state, Layers& layers, double now);

    std::shared_ptr<const model::ModelFolder> folder_;
    std::shared_ptr<const model::Tokenizer> tokenizer_;
    std::shared_ptr<const ModelResults> results_, before_;
    std::string text_, text_problem_;
    std::string opening_;       // the folder being opened ("" when none)
    std::string opening_text_;  // the sentence it opens with
    int edit_layer_ = -1;
    std::int64_t memory_budget_ = core::default_memory_budget;
    std::optional<Request> pending_;  // a sentence to run once the job running has finished
    // The block's session changed since it was last run through the model: it is run once the
    // worker is free and the edits pause (check_edit), as it is then (a drag's newest edit), not a
    // copy made at every frame.
    bool edit_waiting_ = false;
    double text_changed_at_ = -1;  // ≥ 0: the sentence changed then and is not run yet
    int editing_ = -1;             // the block being edited, -1: none
    // Its session as last run through the model (as opened, then each edit's), to tell an edit from none.
    std::shared_ptr<const core::Session> edited_;
    std::uint64_t edited_at_change_ = 0;     // the session's change count when edited_ was the session
    std::uint64_t submitted_at_change_ = 0;  // the change count of the edit rerun last asked for
    std::uint64_t seen_revision_ = 0;
    double unshown_since_ = -1;  // ≥ 0: the block's session changed then, and the model does not show it yet
    // The rerun in flight (of block rerun_layer_) stops when this is set; null while a sentence runs.
    std::shared_ptr<std::atomic<bool>> rerun_stop_;
    int rerun_layer_ = -1;
    std::uint64_t serial_ = 0;
    Worker::Job<Outcome> job_;
    std::shared_ptr<RunProgress> progress_;  // of the job running a sentence (opening or new); null else
    int streamed_ = 0;                       // blocks of progress_ shown as rows while opening
    Worker::Job<core::Result<model::LogitLens>> lens_job_;
    std::uint64_t lens_serial_ = 0;  // the results it is for
    // Set once a run or edit is started: the work of on_results for the results before it stops.
    std::shared_ptr<std::atomic<bool>> superseded_ = std::make_shared<std::atomic<bool>>(false);
    void supersede();
    Worker worker_{"model run"};  // last: destroyed (joined) before the members its jobs read
};

}  // namespace attnviz::app
