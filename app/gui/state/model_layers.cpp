#include "state/model_layers.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <new>

#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/session_file.hpp"

namespace attnviz::app {

std::string problems_text(const core::Problems& problems) {
    std::string text;
    for (size_t k = 0; k < problems.size() && k < 4; ++k) text += (k ? "; " : "") + problems[k].str();
    if (problems.size() > 4) text += "; …";
    return text;
}

namespace {

// Row 0's numbers are computed on the UI thread up to this many weights (all heads together):
// about a millisecond. Beyond, the weights are copied and summarized on the worker.
constexpr std::int64_t sync_weights = std::int64_t{1} << 18;

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// A row for a session: its name, where it came from (for tooltips), its file and its shape.
Layers::Row row_of(std::shared_ptr<const core::Session> session, std::string name, std::string source,
                   std::string path) {
    Layers::Row row;
    row.name = std::move(name);
    row.source = std::move(source);
    row.path = std::move(path);
    row.n = session->config.n;
    row.keys = session->config.kv_len();
    row.heads = session->config.heads;
    row.mechanisms = row_mechanisms(session->config);
    row.session = std::move(session);
    return row;
}

}  // namespace

std::string row_mechanisms(const core::Config& c) {
    std::string out;
    if (c.window > 0) out = "window " + std::to_string(c.window);
    if (c.softcap > 0) out += (out.empty() ? "" : ", ") + std::string("soft-cap ") + core::format_number(c.softcap);
    if (c.qk_norm.on) out += (out.empty() ? "" : ", ") + std::string("q/k norms");
    return out;
}

struct Layers::Slot {
    std::mutex m;
    bool done = false;
    std::shared_ptr<const core::LayerSummary> summary;
    std::string error;

    // The session's trace computed (within the memory budget), summarized and dropped.
    void fill(const core::Session& session, std::int64_t budget) {
        std::shared_ptr<const core::LayerSummary> made;
        std::string problem;
        if (const std::optional<core::Problem> p = core::memory_problem(session.config, budget))
            problem = p->message;
        else
            try {
                made = std::make_shared<const core::LayerSummary>(core::summarize_session(session));
            } catch (const std::bad_alloc&) {
                problem = "out of memory while computing its trace";
            }
        set(std::move(made), std::move(problem));
    }
    void set(std::shared_ptr<const core::LayerSummary> made, std::string problem) {
        std::lock_guard<std::mutex> lock(m);
        summary = std::move(made);
        error = std::move(problem);
        done = true;
    }
};

struct Layers::Shared : std::enable_shared_from_this<Layers::Shared> {
    std::mutex m;
    std::uint64_t epoch = 1;  // clear() starts a new one: what earlier requests still bring is dropped
    std::int64_t budget = core::default_memory_budget;
    std::int64_t held = 0;  // bytes of the sessions read (taken by poll() or not)
    struct Loaded {
        std::uint64_t epoch;
        Row row;
        std::shared_ptr<Slot> slot;
    };
    std::vector<Loaded> loaded;
    struct Note {
        std::string text;
        bool error;
    };
    std::vector<Note> notes;

    void note(std::string text, bool error) {
        std::lock_guard<std::mutex> lock(m);
        notes.push_back({std::move(text), error});
    }
    // Queues `task` on `worker`: it runs unless clear() moved past `task_epoch` (0: runs whatever
    // happens); what it throws becomes an error message.
    void post(Worker& worker, std::uint64_t task_epoch, std::function<void()> task, Worker::Priority priority) {
        worker.post(
            [self = shared_from_this(), task_epoch, task = std::move(task)](const Worker::Stop&) {
                {
                    std::lock_guard<std::mutex> lock(self->m);
                    if (task_epoch != 0 && task_epoch != self->epoch) return;  // cleared meanwhile
                }
                try {
                    task();
                } catch (const std::exception& e) {
                    self->note(std::string("The model view could not load a layer: ") + e.what(), true);
                }
            },
            priority);
    }
    // Keeps room for a session within the budget; false (with a message) when there is none.
    bool reserve(std::int64_t bytes, const std::string& what) {
        std::lock_guard<std::mutex> lock(m);
        if (held + bytes > budget) {
            notes.push_back({"Not opened beside this session: " + what +
                                 " (the layers open beside need more than "
                                 "the memory budget; close some first)",
                             true});
            return false;
        }
        held += bytes;
        return true;
    }
    void add(std::uint64_t task_epoch, Row row, std::shared_ptr<Slot> slot) {
        std::lock_guard<std::mutex> lock(m);
        loaded.push_back({task_epoch, std::move(row), std::move(slot)});
    }
};

Layers::Layers() : shared_(std::make_shared<Shared>()) {
    rows_.push_back({});
    slots_.push_back(nullptr);
}

void Layers::enqueue(std::function<void()> task, Worker::Priority priority) {
    std::uint64_t epoch = 0;
    if (priority != Worker::Priority::urgent) {
        std::lock_guard<std::mutex> lock(shared_->m);
        epoch = shared_->epoch;
    }
    shared_->post(worker_, epoch, std::move(task), priority);
}

void Layers::start_summary(Row& row, std::shared_ptr<Slot>& slot, std::shared_ptr<const core::Session> session) {
    row.summary.reset();
    row.error.clear();
    slot = std::make_shared<Slot>();
    std::int64_t budget;
    {
        std::lock_guard<std::mutex> lock(shared_->m);
        budget = shared_->budget;
    }
    enqueue([slot, session, budget] { slot->fill(*session, budget); });
}

void Layers::add(std::string name, core::Session session, std::string path, std::string source) {
    auto shared_session = std::make_shared<const core::Session>(std::move(session));
    {
        std::lock_guard<std::mutex> lock(shared_->m);
        shared_->held += core::session_bytes(*shared_session);
    }
    std::string shown_source = source.empty() ? (path.empty() ? name : path) : std::move(source);
    rows_.push_back(row_of(shared_session, std::move(name), std::move(shown_source), std::move(path)));
    slots_.push_back(nullptr);
    start_summary(rows_.back(), slots_.back(), shared_session);
}

void Layers::open_files(const std::vector<std::string>& paths) {
    for (const std::string& given : paths) {
        // Kept absolute, as the session's own file is: a row is "the file being edited" by its path.
        const std::string path = core::canonical_path(given);
        if (AppState::is_checkpoint(path)) {
            import_checkpoint(path, {});
            continue;
        }
        std::shared_ptr<Shared> shared = shared_;
        enqueue([shared, path] {
            std::uint64_t epoch;
            std::int64_t budget;
            {
                std::lock_guard<std::mutex> lock(shared->m);
                epoch = shared->epoch;
                budget = shared->budget;
            }
            std::shared_ptr<const core::Session> session;
            try {
                core::Result<std::string> text = core::read_file(path);
                core::Result<core::Session> parsed = text ? core::parse_session(*text.value)
                                                          : core::Result<core::Session>::fail(text.problems);
                if (!parsed) {
                    shared->note("Could not open " + path + " beside this session: " + problems_text(parsed.problems),
                                 true);
                    return;
                }
                session = std::make_shared<const core::Session>(std::move(*parsed.value));
            } catch (const std::bad_alloc&) {
                shared->note("Could not open " + path + " beside this session: out of memory", true);
                return;
            }
            if (!shared->reserve(core::session_bytes(*session), path)) return;
            Row row = row_of(session, file_name(path), path, path);
            auto slot = std::make_shared<Slot>();
            shared->add(epoch, std::move(row), slot);
            shared->note("Opened " + path + " beside this session (Model view)", false);
            slot->fill(*session, budget);
        });
    }
}

void Layers::import_checkpoint(const std::string& path, core::ImportOptions options, const std::string& spec) {
    std::shared_ptr<Shared> shared = shared_;
    Worker* worker = &worker_;  // the task runs on it, so it is there
    enqueue([shared, worker, path, options, spec]() mutable {
        const std::string failed = "Could not import the layers of " + path + " beside this session: ";
        std::shared_ptr<const core::TensorFile> file;
        std::vector<int> layers;
        try {
            core::Result<core::TensorFile> f = core::TensorFile::open(path);
            if (!f) {
                shared->note(failed + problems_text(f.problems), true);
                return;
            }
            // As File > Import layer: the head counts and RoPE's base from a config.json beside it.
            if (options.config_json.empty())
                if (const core::Result<std::string> text =
                        core::read_file((std::filesystem::path(path).parent_path() / "config.json").string());
                    text)
                    options.config_json = *text.value;
            const core::Result<core::LayerListing> listed = core::list_layers(*f.value, options.convention);
            if (!listed) {
                shared->note(failed + problems_text(listed.problems), true);
                return;
            }
            const core::Result<std::vector<int>> chosen = core::select_layers(spec, listed.value->layers);
            if (!chosen) {
                shared->note(failed + problems_text(chosen.problems), true);
                return;
            }
            options.convention = listed.value->convention;
            layers = *chosen.value;
            file = std::make_shared<const core::TensorFile>(std::move(*f.value));
        } catch (const std::bad_alloc&) {
            shared->note(failed + "out of memory", true);
            return;
        }
        shared->note("Importing " + std::to_string(layers.size()) + " layer" + (layers.size() == 1 ? "" : "s") +
                         " of " + path + " (" + core::to_string(*options.convention) + ") beside this session",
                     false);
        // One task per layer, so that row 0 (urgent) never waits for a whole model. They go ahead
        // of the tasks of normal priority, in order, so that the layers come in order and before
        // whatever was asked for after this checkpoint.
        std::uint64_t epoch;
        {
            std::lock_guard<std::mutex> lock(shared->m);
            epoch = shared->epoch;
        }
        for (const int layer : layers)
            shared->post(
                *worker, epoch,
                [shared, file, options, layer, path, epoch] {
                    std::int64_t budget;
                    {
                        std::lock_guard<std::mutex> lock(shared->m);
                        budget = shared->budget;
                    }
                    const std::string what = "layer " + std::to_string(layer);
                    std::shared_ptr<const core::Session> session;
                    std::vector<std::string> notes;
                    try {
                        core::Result<core::ImportedLayer> imported = core::import_layer_of_several(*file, options,
                                                                                                   layer);
                        if (!imported) {
                            shared->note("Could not import " + what + " of " + path + ": " +
                                             problems_text(imported.problems),
                                         true);
                            return;
                        }
                        notes = std::move(imported.value->notes);
                        session = std::make_shared<const core::Session>(std::move(imported.value->session));
                    } catch (const std::bad_alloc&) {
                        shared->note("Could not import " + what + " of " + path + ": out of memory", true);
                        return;
                    }
                    if (!shared->reserve(core::session_bytes(*session), what + " of " + path)) return;
                    Row row = row_of(session, what, file_name(path) + ", " + what, "");
                    row.notes = std::move(notes);
                    auto slot = std::make_shared<Slot>();
                    shared->add(epoch, std::move(row), slot);
                    slot->fill(*session, budget);
                },
                Worker::Priority::high);
    });
}

void Layers::sync(const AppState& state) {
    Row& r = rows_.front();
    r.name = "this session";
    r.source = state.file_path().empty() ? "the session being edited (unsaved)"
                                         : "the session being edited: " + state.file_path();
    if (state.generation() == row0_generation_) return;
    if (slots_.front()) return;  // one at a time: the newest trace is taken once this one is done
    const Snapshot& shown = state.shown();
    const core::Config& c = shown.session.config;
    r.n = c.n;
    r.keys = c.kv_len();
    r.heads = c.heads;
    r.mechanisms = row_mechanisms(c);
    r.error = shown.out_of_memory ? "its trace did not fit in memory" : "";
    row0_generation_ = state.generation();
    std::int64_t weights = 0;
    for (const core::HeadTrace& h : shown.trace.heads) weights += h.weights.size();
    // Its summary with the norm-weighted thumbnails (which take V and W_O: a pass as long as the values').
    if (weights <= sync_weights && core::forward_flops(c) <= state.sync_limit()) {
        r.summary =
            std::make_shared<const core::LayerSummary>(core::summarize_layer(c, shown.session.params, shown.trace));
        r.serial = ++serial_;
        return;
    }
    // The worker shares the snapshot, which stays while it reads however the session moves on.
    std::shared_ptr<const Snapshot> snapshot = state.shown_snapshot();
    auto slot = std::make_shared<Slot>();
    slots_.front() = slot;
    enqueue(
        [slot, snapshot] {
            try {
                const core::Session& s = snapshot->session;
                slot->set(std::make_shared<const core::LayerSummary>(
                              core::summarize_layer(s.config, s.params, snapshot->trace)),
                          "");
            } catch (const std::bad_alloc&) {
                slot->set(nullptr, "out of memory while summarizing it");
            }
        },
        Worker::Priority::urgent);
}

bool Layers::poll(AppState& state) {
    std::vector<Shared::Loaded> loaded;
    std::vector<Shared::Note> notes;
    std::uint64_t epoch;
    {
        std::lock_guard<std::mutex> lock(shared_->m);
        loaded.swap(shared_->loaded);
        notes.swap(shared_->notes);
        epoch = shared_->epoch;
    }
    bool changed = !loaded.empty() || !notes.empty();
    for (const Shared::Note& n : notes) state.set_message(n.text, n.error);
    const int first_new = size();
    for (Shared::Loaded& l : loaded) {
        if (l.epoch != epoch) {  // cleared meanwhile
            std::lock_guard<std::mutex> lock(shared_->m);
            shared_->held -= core::session_bytes(*l.row.session);
            continue;
        }
        rows_.push_back(std::move(l.row));
        slots_.push_back(std::move(l.slot));
    }
    for (size_t k = 0; k < rows_.size(); ++k) {
        if (!slots_[k]) continue;
        // Held here until its lock is released: the row lets go of it below, and the worker may
        // have let go already (its mutex must not go with it while locked).
        const std::shared_ptr<Slot> slot = slots_[k];
        std::lock_guard<std::mutex> lock(slot->m);
        if (!slot->done) continue;
        rows_[k].summary = std::move(slot->summary);
        rows_[k].error = std::move(slot->error);
        rows_[k].serial = ++serial_;
        slots_[k].reset();
        changed = true;
    }
    if (open_first && size() > first_new) {
        open_first = false;
        open_row(state, first_new);
    }
    return changed;
}

bool Layers::busy() const {
    for (const std::shared_ptr<Slot>& s : slots_)
        if (s) return true;
    if (worker_.busy()) return true;
    std::lock_guard<std::mutex> lock(shared_->m);
    return !shared_->loaded.empty() || !shared_->notes.empty();
}

void Layers::wait() { worker_.wait(); }

void Layers::remove(int k) {
    if (k < 1 || k >= size() || !rows_[static_cast<size_t>(k)].held) return;  // a model's blocks close with it
    if (const std::shared_ptr<const core::Session>& s = rows_[static_cast<size_t>(k)].session) {
        std::lock_guard<std::mutex> lock(shared_->m);
        shared_->held -= core::session_bytes(*s);
    }
    rows_.erase(rows_.begin() + k);
    slots_.erase(slots_.begin() + k);
    if (editing_row_ == k)
        editing_row_ = -1;
    else if (editing_row_ > k)
        --editing_row_;
}

void Layers::clear() {
    {
        std::lock_guard<std::mutex> lock(shared_->m);
        ++shared_->epoch;  // what is queued or on its way is dropped
        for (size_t k = 1; k < rows_.size(); ++k)
            if (rows_[k].session && rows_[k].held) shared_->held -= core::session_bytes(*rows_[k].session);
    }
    rows_.resize(1);
    slots_.resize(1);
    editing_row_ = -1;
    model_ = false;
}

void Layers::set_model_rows(std::vector<Row> rows, bool keep_editing) {
    const int editing = keep_editing ? editing_row_ : -1;
    clear();
    model_ = true;
    for (Row& row : rows) {
        row.serial = ++serial_;
        row.held = false;  // the run's
        rows_.push_back(std::move(row));
        slots_.push_back(nullptr);
    }
    editing_row_ = editing < size() ? editing : -1;
}

void Layers::end_editing() { editing_row_ = -1; }

void Layers::set_memory_budget(std::int64_t bytes) {
    std::lock_guard<std::mutex> lock(shared_->m);
    shared_->budget = bytes;
}

bool Layers::open_row(AppState& state, int k) {
    const Row& r = rows_[static_cast<size_t>(k)];
    std::shared_ptr<const core::Session> session = r.session;
    if (!session && r.make_session) {
        core::Result<core::Session> made = r.make_session();
        if (!made) {
            state.set_message("Could not open " + r.source + ": " + problems_text(made.problems), true);
            return false;
        }
        session = std::make_shared<const core::Session>(std::move(*made.value));
    }
    if (!session) return false;
    bool opened = !r.path.empty() && state.open_file(r.path);
    if (!opened) {
        const std::string why = r.path.empty() ? "" : " (its file could not be read again)";
        opened = state.restore_unsaved(*session, "", "Opened " + r.source + " from the model view, unsaved" + why);
    }
    if (!opened) return false;
    editing_row_ = k;
    editing_revision_ = state.revision();
    return true;
}

void Layers::open_in_editor(AppState& state, int k, int head) {
    if (k < 0 || k >= size()) return;
    // Refused (and said why): the session stays. A model's block being edited is the session already.
    if (k > 0 && !(model_ && k == editing_row_) && !open_row(state, k)) return;
    if (head >= 0 && head < state.config().heads) state.view({core::MatrixId::weights, head});
}

bool Layers::editing(const AppState& state, int k) const {
    if (k < 1 || k >= size()) return false;
    if (model_) return k == editing_row_;  // its edits run through the model: it stays the one edited
    if (k == editing_row_ && state.revision() == editing_revision_) return true;
    const Row& r = rows_[static_cast<size_t>(k)];
    return !r.path.empty() && r.path == state.file_path() && !state.modified();
}

}  // namespace attnviz::app
