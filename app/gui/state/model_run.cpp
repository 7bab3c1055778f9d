#include "state/model_run.hpp"

#include <atomic>
#include <chrono>
#include <new>

#include "core/base/text.hpp"

namespace attnviz::app {

namespace {

using Outcome = ModelRun::Outcome;

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Block `layer`'s heads' numbers from its float trace (the summaries are computed in double), with
// the thumbnails of its norm-weighted attention (none when the block's W_O cannot be read: the model
// view then draws the weights and says why).
std::shared_ptr<const core::LayerSummary> summarize(const model::ModelFolder& folder, const model::RunState<float>& run,
                                                    int layer) {
    const core::TraceT<float>& trace = run.layers[static_cast<size_t>(layer)].trace;
    std::vector<core::Matrix> weights;
    weights.reserve(trace.heads.size());
    for (const core::HeadTraceT<float>& h : trace.heads) weights.push_back(h.weights.cast<double>());
    std::vector<const core::Matrix*> pointers;
    for (const core::Matrix& w : weights) pointers.push_back(&w);
    core::LayerSummary summary = core::summarize_layer(pointers);
    if (const core::Result<std::vector<core::Matrix>> norm = model::norm_weighted_block(folder, run, layer))
        for (const core::Matrix& m : *norm.value) summary.norm_thumbnails.push_back(core::thumbnail(m));
    return std::make_shared<const core::LayerSummary>(std::move(summary));
}

// What the panels show of a run: the blocks' summaries (those before `from` taken from `base`), the
// prediction, rollout and the residual norms; the logit lens comes after (ModelRun::start_lens).
// `done`: the blocks' summaries already made as they ran (RunProgress), used as they are.
std::shared_ptr<ModelResults> analyse(const model::ModelFolder& folder, const model::Tokenizer& tokenizer,
                                      std::shared_ptr<const model::RunState<float>> run, const ModelResults* base,
                                      int from, std::vector<std::shared_ptr<const core::LayerSummary>> done = {}) {
    auto r = std::make_shared<ModelResults>();
    for (const std::int32_t id : run->token_ids) r->texts.push_back(tokenizer.decode({id}));
    const int blocks = static_cast<int>(run->layers.size());
    r->summaries = std::move(done);
    r->summaries.resize(static_cast<size_t>(blocks));
    std::atomic<bool> out_of_memory = false;  // nothing may leave an OpenMP loop: said after it
#pragma omp parallel for schedule(dynamic)
    for (int l = 0; l < blocks; ++l) {  // the blocks share the cores
        try {
            std::shared_ptr<const core::LayerSummary>& summary = r->summaries[static_cast<size_t>(l)];
            if (!summary)
                summary = base && l < from ? base->summaries[static_cast<size_t>(l)] : summarize(folder, *run, l);
        } catch (const std::bad_alloc&) {
            out_of_memory = true;
        }
    }
    if (out_of_memory) throw std::bad_alloc();
    r->logits = run->logits_last.cast<double>();
    if (folder.config().causal()) {
        r->lens_to_come = true;  // ModelRun::start_lens
    } else {
        r->lens_problem = std::string("no LM head: ") + model::to_string(folder.config().architecture) +
                          " is an encoder, it predicts no next token";
    }
    r->rollout = model::attention_rollout(*run);
    r->norms = model::residual_norms(*run);
    r->edited_layer = from;
    r->run = std::move(run);
    return r;
}

// The tokens of `text` run through the model, or why not (the text's problem). Each block's numbers
// are made as soon as it has run and handed to `progress`, which can stop the run.
Outcome run_text(const model::ModelFolder& folder, const model::Tokenizer& tokenizer, const std::string& text,
                 std::int64_t budget, RunProgress& progress) {
    const auto start = std::chrono::steady_clock::now();
    Outcome out;
    out.text_problem = true;
    core::Result<model::Encoding> encoded = tokenizer.encode(text);
    if (!encoded) {
        out.problem = "The tokenizer cannot take this text: " + problems_text(encoded.problems);
        return out;
    }
    const std::vector<std::int32_t>& ids = encoded.value->ids;
    if (ids.empty()) {
        out.problem = "No tokens: type a sentence.";
        return out;
    }
    if (const core::Problems p = model::token_problems(folder.config(), ids); !p.empty()) {
        out.problem = problems_text(p);
        return out;
    }
    // The blocks' sessions are labelled with the tokens as the model panels show them (GPT-2's
    // "Ġworld" as "·world"), so the Inputs panel and the head view read as the sentence box does.
    std::vector<std::string> labels;
    for (const std::int32_t id : ids) labels.push_back(visible_token(tokenizer.decode({id})));
    {
        std::lock_guard<std::mutex> lock(progress.m);
        progress.n = static_cast<int>(ids.size());
        progress.heads = folder.config().heads;
        progress.summaries.clear();
    }
    progress.total = folder.config().layers;
    const auto after_block = [&](const model::RunState<float>& state, int done) {
        std::shared_ptr<const core::LayerSummary> summary = summarize(folder, state, done - 1);
        {
            std::lock_guard<std::mutex> lock(progress.m);
            progress.summaries.push_back(std::move(summary));
        }
        progress.done = done;
        return !progress.cancelled.load();
    };
    core::Result<model::RunState<float>> run = model::run_model<float>(folder, ids, std::move(labels), budget, -1,
                                                                       after_block);
    if (!run) {
        out.stopped = progress.cancelled.load();
        out.problem = out.stopped ? "cancelled" : problems_text(run.problems);
        return out;
    }
    std::vector<std::shared_ptr<const core::LayerSummary>> done;
    {
        std::lock_guard<std::mutex> lock(progress.m);
        done = progress.summaries;
    }
    out.results = analyse(folder, tokenizer, std::make_shared<const model::RunState<float>>(std::move(*run.value)),
                          nullptr, -1, std::move(done));
    out.results->compute_ms = ms_since(start);
    return out;
}

// Block `layer`'s session replaced by `session` in a copy of `base`'s run, that block and every
// later one rerun, unless `stopped` says so before a block (a newer edit came).
Outcome run_edit(const model::ModelFolder& folder, const model::Tokenizer& tokenizer,
                 std::shared_ptr<const ModelResults> base, int layer, core::Session session,
                 const std::function<bool()>& stopped) {
    const auto start = std::chrono::steady_clock::now();
    Outcome out;
    if (!(session.config == base->run->layers[static_cast<size_t>(layer)].config)) {
        out.problem = "The edit of layer " + std::to_string(layer) + " was made on another sentence: not run";
        return out;
    }
    auto run = std::make_shared<model::RunState<float>>(model::copy_for_rerun(*base->run, layer));
    run->layers[static_cast<size_t>(layer)].edited = std::make_shared<const core::Session>(std::move(session));
    if (const core::Problems p = model::rerun_from(folder, *run, layer, stopped); !p.empty()) {
        out.stopped = stopped();
        out.problem = "The edit of layer " + std::to_string(layer) +
                      " could not run through the model: " + problems_text(p);
        return out;
    }
    out.results = analyse(folder, tokenizer, std::move(run), base.get(), layer);
    out.results->compute_ms = ms_since(start);
    return out;
}

// Opens the folder and its tokenizer and runs `text`.
Outcome open_folder(const std::string& path, const std::string& text, std::int64_t budget, RunProgress& progress) {
    Outcome out;
    core::Result<model::ModelFolder> folder = model::ModelFolder::open(path);
    if (!folder) {
        out.problem = "Could not open the model " + path + ": " + problems_text(folder.problems);
        return out;
    }
    core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(path);
    if (!tokenizer) {
        out.problem = "Could not open the model " + path + ": no tokenizer: " + problems_text(tokenizer.problems);
        return out;
    }
    out = run_text(*folder.value, *tokenizer.value, text, budget, progress);
    if (out.stopped) return out;
    if (!out.results) {
        out.problem = "Could not run the model " + path + " on \"" + core::bounded_text(text, 40) +
                      "\": " + out.problem;
        out.text_problem = false;
        return out;
    }
    out.folder = std::make_shared<const model::ModelFolder>(std::move(*folder.value));
    out.tokenizer = std::make_shared<const model::Tokenizer>(std::move(*tokenizer.value));
    return out;
}

}  // namespace

std::string visible_token(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == ' ')
            out += "\xC2\xB7";  // ·
        else if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else if (const auto byte = static_cast<unsigned char>(c); byte < 0x20 || byte == 0x7F)
            out += "\\x" + std::string{"0123456789ABCDEF"[byte >> 4], "0123456789ABCDEF"[byte & 15]};
        else
            out += c;
    }
    return out.empty() ? "\xE2\x88\x85" : out;  // ∅
}

void ModelRun::supersede() {
    superseded_->store(true);
    superseded_ = std::make_shared<std::atomic<bool>>(false);
}

void ModelRun::open(const std::string& folder, std::string text, std::int64_t memory_budget, int edit_layer) {
    supersede();
    memory_budget_ = memory_budget;
    opening_ = folder;
    opening_text_ = text;
    edit_layer_ = edit_layer;
    pending_.reset();
    text_changed_at_ = -1;
    lens_job_.cancel();
    rerun_stop_.reset();
    progress_ = std::make_shared<RunProgress>();
    streamed_ = 0;
    job_ = worker_.submit([folder, text = std::move(text), memory_budget, progress = progress_](const Worker::Stop&) {
        try {
            return open_folder(folder, text, memory_budget, *progress);
        } catch (const std::bad_alloc&) {
            Outcome out;
            out.problem = "Could not open the model " + folder + ": out of memory";
            return out;
        }
    });
}

void ModelRun::close(Layers& layers) {
    supersede();
    if (progress_) progress_->cancelled = true;
    progress_.reset();
    job_.cancel();
    lens_job_.cancel();
    pending_.reset();
    edit_waiting_ = false;
    rerun_stop_.reset();
    folder_.reset();
    tokenizer_.reset();
    results_.reset();
    before_.reset();
    opening_.clear();
    text_problem_.clear();
    editing_ = -1;
    edited_.reset();
    layers.clear();
}

bool ModelRun::busy() const { return computing() || lens_job_.valid() || text_changed_at_ >= 0; }

void ModelRun::set_text(std::string text, double now) {
    if (text == text_) return;
    text_ = std::move(text);
    text_changed_at_ = now;
}

void ModelRun::begin_edit(const AppState& state, int layer) {
    if (!results_ || layer < 0 || layer >= static_cast<int>(results_->run->layers.size())) return;
    editing_ = layer;
    unshown_since_ = -1;
    edit_waiting_ = false;
    edited_ = std::make_shared<const core::Session>(state.session());
    edited_at_change_ = state.change_count();
    seen_revision_ = state.revision();
}

void ModelRun::start_lens() {
    lens_serial_ = results_->serial;
    lens_job_ = worker_.submit([folder = folder_, run = results_->run](const Worker::Stop& stop) {
        return model::logit_lens(*folder, *run, [&stop] { return stop.requested(); });
    });
}

void ModelRun::take_lens() {
    std::optional<core::Result<model::LogitLens>> lens;
    try {
        lens = lens_job_.take();
    } catch (const std::exception& e) {
        lens = core::Result<model::LogitLens>::fail({{"", e.what()}});
    }
    if (!lens || !results_ || results_->serial != lens_serial_) return;
    auto r = std::make_shared<ModelResults>(*results_);  // the same results, with their lens
    r->lens_to_come = false;
    if (*lens)
        r->lens = std::move(*lens->value);
    else
        r->lens_problem = problems_text(lens->problems);
    results_ = std::move(r);
}

void ModelRun::submit(Request request) {
    lens_job_.cancel();  // the results it was for are about to be replaced
    supersede();
    if (job_.valid()) {  // one job at a time: the newest request waits for it
        pending_ = std::move(request);
        return;
    }
    std::shared_ptr<const model::ModelFolder> folder = folder_;
    std::shared_ptr<const model::Tokenizer> tokenizer = tokenizer_;
    const std::int64_t budget = memory_budget_;
    std::shared_ptr<const ModelResults> base = results_;
    rerun_stop_ = request.text ? nullptr : std::make_shared<std::atomic<bool>>(false);
    rerun_layer_ = request.layer;
    progress_ = request.text ? std::make_shared<RunProgress>() : nullptr;
    job_ = worker_.submit([folder, tokenizer, budget, base, rerun_stop = rerun_stop_, progress = progress_,
                           request = std::move(request)](const Worker::Stop& stop) {
        try {
            const EveryCore every_core;  // the model view and the prediction wait for this run
            if (request.text) return run_text(*folder, *tokenizer, *request.text, budget, *progress);
            const std::function<bool()> stopped = [&] { return stop.requested() || rerun_stop->load(); };
            return run_edit(*folder, *tokenizer, base, request.layer, request.session->make(), stopped);
        } catch (const std::bad_alloc&) {
            Outcome out;
            out.problem = "Out of memory while running the model";
            return out;
        }
    });
}

// The session being edited changed: it runs through the model from its block once the worker is
// free and a frame has passed without an edit (a single edit: the next frame; a drag, one edit a
// frame: when it pauses), or once the edits have gone max_unshown_seconds unshown. An edit stops
// the rerun in flight of the block's older session before its next block. So the first edit of a
// drag starts no rerun that its next edit would stop, and its frame does not also copy the session
// for one. Editing ends when the session is no longer that block (its shape changed, another file
// was opened).
void ModelRun::check_edit(AppState& state, Layers& layers, double now) {
    const bool changed = state.revision() != seen_revision_;
    if (editing_ < 0 || !edited_ || !results_) return;
    if (changed) {
        seen_revision_ = state.revision();
        if (!(state.config() == edited_->config) || !state.file_path().empty()) {
            state.set_message("The session being edited is no longer layer " + std::to_string(editing_) +
                                  " of the model (its shape changed or another file was opened): its edits no "
                                  "longer run through the model. Click a layer in the model view to edit it.",
                              false);
            editing_ = -1;
            edit_waiting_ = false;
            layers.end_editing();
            return;
        }
        edit_waiting_ = true;
        if (unshown_since_ < 0) unshown_since_ = now;
    }
    if (!edit_waiting_) return;
    const bool overdue = now - unshown_since_ >= max_unshown_seconds;
    if (job_.valid()) {
        if (changed && !overdue && rerun_stop_ && rerun_layer_ == editing_)
            rerun_stop_->store(true);  // a rerun of this block's older session: replaced by this one
        return;
    }
    if (changed && !overdue) return;  // an edit this frame: wait for one without
    edit_waiting_ = false;
    if (state.session() == *edited_) {
        unshown_since_ = -1;  // edited back to what the model shows
        return;
    }
    // Only the matrices edited since edited_ was the session are compared (a drag's: X), where
    // nothing else changed.
    submit({std::nullopt, editing_,
            core::SessionPatch(edited_, state.session(), state.matrices_edited_since(edited_at_change_))});
    submitted_at_change_ = state.change_count();
}

void ModelRun::take(AppState& state, Layers& layers, Outcome outcome) {
    if (!outcome.results) {
        if (outcome.text_problem)
            text_problem_ = outcome.problem;
        else
            state.set_message(outcome.problem, true);
        opening_.clear();
        return;
    }
    text_problem_.clear();
    const bool opened = outcome.folder != nullptr;
    if (opened) {
        folder_ = std::move(outcome.folder);
        tokenizer_ = std::move(outcome.tokenizer);
        text_ = opening_text_;
        state.set_message("Opened the model " + folder_->folder() + " (" +
                              model::to_string(folder_->config().architecture) + ", " +
                              std::to_string(folder_->config().layers) + " layers): click a head to edit its layer",
                          false);
        opening_.clear();
    }
    const int edited_layer = outcome.results->edited_layer;
    const bool edit = edited_layer >= 0;
    before_ = edit ? results_ : nullptr;
    if (!edit) {  // a new sentence: the blocks are as read, and an edit made on the old one is dropped
        // Said where the block carries edits: its shown run is an edit's, or an edit is still to run.
        const bool had_edits = editing_ >= 0 && !opened &&
                               ((results_ && results_->edited_layer == editing_) || edit_waiting_ ||
                                (edited_ && !(state.session() == *edited_)));
        if (had_edits)
            state.set_message(
                "The new sentence runs through the model's own weights: the session being edited "
                "(layer " +
                    std::to_string(editing_) +
                    " on the previous sentence) keeps its edits, which no longer run through the "
                    "model. Click a head in the model view to edit its layer on this sentence.",
                false);
        editing_ = -1;
        edited_.reset();
        edit_waiting_ = false;
    }
    outcome.results->serial = ++serial_;
    results_ = std::move(outcome.results);
    if (edit && edited_layer == editing_) {
        edited_ = results_->run->layers[static_cast<size_t>(edited_layer)].edited;
        edited_at_change_ = submitted_at_change_;
    }
    std::vector<Layers::Row> rows;
    const std::shared_ptr<const model::RunState<float>> run = results_->run;
    for (size_t l = 0; l < run->layers.size(); ++l) {
        Layers::Row row;
        row.name = "layer " + std::to_string(l);
        row.source = folder_->folder() + ", block " + std::to_string(l);
        row.session = run->layers[l].edited;
        row.make_session = [folder = folder_, run, l] {
            return model::layer_session(*folder, *run, static_cast<int>(l));
        };
        row.summary = results_->summaries[l];
        const core::Config& c = run->layers[l].config;
        row.n = c.n;
        row.keys = c.kv_len();
        row.heads = c.heads;
        row.mechanisms = row_mechanisms(c);
        rows.push_back(std::move(row));
    }
    layers.set_model_rows(std::move(rows), edit);
    if (results_->lens_to_come) start_lens();
    if (opened && edit_layer_ >= 0 && edit_layer_ + 1 < layers.size()) {
        layers.open_in_editor(state, edit_layer_ + 1, 0);
        if (layers.editing(state, edit_layer_ + 1)) begin_edit(state, edit_layer_);
    }
    if (opened) edit_layer_ = -1;
}

void ModelRun::update(AppState& state, Layers& layers, double now) {
    if (lens_job_.ready()) take_lens();
    if (job_.ready()) {
        std::optional<Outcome> outcome;
        try {
            outcome = job_.take();
        } catch (const std::exception& e) {
            state.set_message(std::string("The model could not run: ") + e.what(), true);
        }
        rerun_stop_.reset();
        const bool opening = !opening_.empty();
        progress_.reset();
        if (outcome && !outcome->stopped) {
            take(state, layers, std::move(*outcome));
            unshown_since_ = edit_waiting_ ? now : -1;  // the edits since wait their turn
        } else if (outcome && opening) {                // an opening cancelled: its streamed rows go
            opening_.clear();
            layers.clear();
        }
        if (pending_ && folder_) {
            Request next = std::move(*pending_);
            pending_.reset();
            submit(std::move(next));
        }
    }
    if (progress_ && !opening_.empty()) stream_rows(layers);
    if (!folder_) return;
    if (text_changed_at_ >= 0 && now - text_changed_at_ >= debounce_seconds) {
        text_changed_at_ = -1;
        submit({text_, -1, std::nullopt});
    }
    check_edit(state, layers, now);
}

std::optional<ModelRun::Progress> ModelRun::progress() const {
    if (!progress_ || !job_.valid() || progress_->total.load() == 0) return std::nullopt;
    return Progress{progress_->done.load(), progress_->total.load()};
}

void ModelRun::cancel(AppState& state) {
    if (!progress_ || !job_.valid()) return;
    progress_->cancelled = true;
    pending_.reset();
    state.set_message(opening_.empty() ? "Cancelled the run of the new sentence: the previous one stays shown"
                                       : "Cancelled opening the model " + opening_,
                      false);
}

void ModelRun::stream_rows(Layers& layers) {
    std::vector<std::shared_ptr<const core::LayerSummary>> done;
    int n = 0, heads = 0;
    {
        std::lock_guard<std::mutex> lock(progress_->m);
        if (static_cast<int>(progress_->summaries.size()) <= streamed_) return;
        done = progress_->summaries;
        n = progress_->n;
        heads = progress_->heads;
    }
    streamed_ = static_cast<int>(done.size());
    std::vector<Layers::Row> rows;
    for (int l = 0; l < progress_->total.load(); ++l) {
        Layers::Row row;
        row.name = "layer " + std::to_string(l);
        row.source = opening_ + ", block " + std::to_string(l);
        row.make_session = [l] {
            return core::Result<core::Session>::fail(
                {{"", "block " + std::to_string(l) + " can be edited once the model has opened"}});
        };
        if (l < static_cast<int>(done.size())) row.summary = done[static_cast<size_t>(l)];
        row.n = row.keys = n;
        row.heads = heads;
        rows.push_back(std::move(row));
    }
    layers.set_model_rows(std::move(rows), false);
}

std::string ModelRun::token_text(std::int32_t id) const {
    return tokenizer_ ? tokenizer_->decode({id}) : "#" + std::to_string(id);
}

std::string ModelRun::token_piece(std::int32_t id) const {
    return tokenizer_ ? tokenizer_->token_text(id) : "#" + std::to_string(id);
}

}  // namespace attnviz::app
