#include "state/app_state.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <new>

#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/import.hpp"
#include "core/io/session_file.hpp"

namespace attnviz::app {

AppState::AppState(core::Session session) : session_(std::move(session)) {
    dirty_ = false;
    adopt(compute_snapshot(session_, ++requested_));
}

const core::Matrix* AppState::matrix(MatrixRef ref) const {
    return core::find_matrix(shown_->session.params, shown_->trace, ref);
}

const core::Matrix* AppState::input(MatrixRef ref) const { return core::find_input(session_.params, ref); }

core::Matrix* AppState::mutable_matrix(MatrixRef ref) { return core::find_input(session_.params, ref); }

core::Result<core::Explanation> AppState::explain(const CellRef& cell) const {
    return core::explain(shown_->session.params, shown_->trace, cell, notation_);
}

std::string AppState::shape_text(MatrixRef ref, bool follow_orientation) const {
    const core::Matrix* m = matrix(ref);
    if (!m) return "";
    const bool t = follow_orientation && column_vectors_;
    return core::format_shape(t ? m->cols() : m->rows(), t ? m->rows() : m->cols());
}

std::string AppState::label(MatrixRef ref) const { return core::label(ref, notation_); }

void AppState::set_message(std::string text, bool error) {
    // Messages echo file names and the files' own text: escape sequences and invalid UTF-8 are
    // shown escaped, never drawn or copied out raw.
    message_ = {core::printable(text), error, ""};
    if (message_.text.empty()) return;
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    char buf[16] = "";
    if (::localtime_r(&now, &tm)) std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    message_.time = buf;
    log_.push_back(message_);
    if (log_.size() > max_log) log_.erase(log_.begin());
}

bool AppState::set_cell(const CellRef& cell, double value) {
    core::Matrix* m = mutable_matrix(cell.matrix);
    if (!m || cell.row < 0 || cell.col < 0 || cell.row >= m->rows() || cell.col >= m->cols()) {
        set_message("There is no cell [" + std::to_string(cell.row) + "][" + std::to_string(cell.col) + "] in " +
                        label(cell.matrix) + " to edit.",
                    true);
        return false;
    }
    if (const auto problem = core::value_problem(value)) {
        set_message(label(cell.matrix) + ": " + *problem + "; the old value is kept.", true);
        return false;
    }
    if (cell.matrix.id == core::MatrixId::mask) {
        if (value != 0 && value != 1) {
            set_message("A mask cell is 0 or 1 (1: query i may attend to key j), not " + core::format_number(value) +
                            "; the old value is kept.",
                        true);
            return false;
        }
        if (value == 0 && (*m)(cell.row, cell.col) == 1 && m->row(cell.row).sum() <= 1) {
            set_message("Query " + std::to_string(cell.row) +
                            " would attend to no key: every row of the mask keeps at least one key.",
                        true);
            return false;
        }
    }
    if ((*m)(cell.row, cell.col) == value) return true;
    const std::string name = core::label(cell, core::Notation::ascii);
    remember(CellChange{cell, (*m)(cell.row, cell.col)}, "edit of " + name, "cell " + name);
    (*m)(cell.row, cell.col) = value;
    mark_dirty(cell.matrix);
    return true;
}

bool AppState::set_matrix(MatrixRef ref, const core::Matrix& values) {
    core::Matrix* m = mutable_matrix(ref);
    if (!m) {
        set_message(label(ref) + " cannot be edited.", true);
        return false;
    }
    if (values.rows() != m->rows() || values.cols() != m->cols()) {
        set_message(label(ref) + ": expected " + core::format_shape(m->rows(), m->cols()) + ", got " +
                        core::format_shape(values.rows(), values.cols()) + "; nothing was changed.",
                    true);
        return false;
    }
    for (Eigen::Index k = 0; k < values.size(); ++k)
        if (const auto problem = core::value_problem(values.data()[k])) {
            set_message(label(ref) + ": " + *problem + "; nothing was changed.", true);
            return false;
        }
    if (ref.id == core::MatrixId::mask)
        if (const core::Problems problems = core::mask_problems(values); !problems.empty()) {
            set_message(problems.front().str() + "; nothing was changed.", true);
            return false;
        }
    remember(MatrixChange{ref, *m}, "change of " + core::label(ref, core::Notation::ascii));
    *m = values;
    mark_dirty(ref);
    return true;
}

bool AppState::set_config(const core::Config& config, const std::string& merge) {
    if (config == session_.config) return true;
    const core::Problems problems = core::validate(config);
    if (!problems.empty()) {
        std::string text = "Not applied: ";
        for (size_t k = 0; k < problems.size(); ++k) text += (k ? "; " : "") + problems[k].str();
        set_message(text, true);
        return false;
    }
    core::Config same_scale = config;
    same_scale.scale = session_.config.scale;
    same_scale.softmax = session_.config.softmax;
    if (same_scale == session_.config) {
        // Only the divisor or the softmax changes: every matrix keeps its shape and values (a drag
        // of the saturation lab's slider at n = 512 copies nothing), and the selection stays.
        const bool softmax = config.softmax != session_.config.softmax;
        remember(ScaleChange{session_.config.scale, session_.config.softmax},
                 softmax ? "change of the softmax" : "change of the scale", merge);
        session_.config.scale = config.scale;
        session_.config.softmax = config.softmax;
        set_message("", false);
        mark_dirty();
        update();
        return true;
    }
    if (refuse_over_budget(config, "Not applied")) return false;
    remember(SessionChange{session_, std::nullopt}, "change of the dimensions", merge);
    // Values a smaller dimension drops are kept aside, so growing it back brings them back.
    const core::Mask mask_before = session_.config.mask;
    const bool mask_known = memory_.params.mask.size() > 0 || session_.params.mask.size() > 0;
    const core::Session memory_before = memory_;
    memory_ = core::remembered(memory_, session_);
    session_ = core::resized(session_, config, memory_);
    core::Matrix& mask = session_.params.mask;
    if (config.mask == core::Mask::custom && mask_before == core::Mask::causal && !mask_known) {
        // A first custom mask starts from the causal one it replaces.
        for (Eigen::Index i = 0; i < mask.rows(); ++i)
            for (Eigen::Index j = 0; j < mask.cols(); ++j) mask(i, j) = j <= i ? 1.0 : 0.0;
    }
    if (config.mask == core::Mask::custom)
        if (const core::Problems problems = core::mask_problems(mask); !problems.empty()) {
            take_back();
            memory_ = memory_before;
            set_message("Not applied: the custom mask would leave " + problems.front().str() +
                            ". Allow a key in that row first.",
                        true);
            return false;
        }
    if (const auto note = core::shape_note(config))
        set_message(*note, false);
    else
        set_message("", false);
    session_reshaped();
    return true;
}

bool AppState::set_token(int row, const std::string& text) {
    if (row < 0 || row >= static_cast<int>(session_.tokens.size())) return false;
    if (session_.tokens[row] == text) return true;
    remember(TokenChange{row, session_.tokens[row]}, "edit of token " + std::to_string(row + 1),
             "token " + std::to_string(row));
    session_.tokens[row] = text;
    mark_dirty();  // the views label their rows and columns from the shown snapshot's session
    return true;
}

bool AppState::set_kv_token(int row, const std::string& text) {
    if (row < 0 || row >= static_cast<int>(session_.kv_tokens.size())) return false;
    if (session_.kv_tokens[row] == text) return true;
    remember(TokenChange{row, session_.kv_tokens[row], true}, "edit of key token " + std::to_string(row + 1),
             "key token " + std::to_string(row));
    session_.kv_tokens[row] = text;
    mark_dirty();
    return true;
}

void AppState::pin() {
    remember(SessionChange{session_, std::nullopt}, "pin");
    core::Session now = session_;
    now.pin.reset();  // a pin never holds another
    session_.pin = std::make_shared<const core::Session>(std::move(now));
    set_message("Pinned this session as A: edit on, and Compare shows B " + std::string("− A"), false);
    mark_dirty();
}

void AppState::unpin() {
    if (!session_.pin) return;
    remember(SessionChange{session_, std::nullopt}, "unpin");
    session_.pin.reset();
    mark_dirty();
}

void AppState::set_session(core::Session session, const std::string& description) {
    replace_document(std::move(session), "", description);
}

bool AppState::replace_document(core::Session session, const std::string& file, const std::string& description) {
    if (refuse_over_budget(session.config, "Not applied")) return false;
    // Another document: undo brings back the session and the file it was, together.
    remember(SessionChange{session_, file_path_}, description.empty() ? "new session" : description);
    session_ = std::move(session);
    file_path_ = file;
    memory_ = {};  // another session: nothing of the old one comes back on growing
    set_message(description, false);
    session_reshaped();
    return true;
}

void AppState::session_reshaped() {
    has_selection_ = false;
    viewed_.head = std::min(viewed_.head, session_.config.heads - 1);
    mark_dirty();
    update();
}

bool AppState::is_checkpoint(const std::string& path) {
    const std::string ext = std::filesystem::path(path).extension().string();
    return ext == ".safetensors" || ext == ".npz" || ext == ".npy";
}

bool AppState::import_checkpoint(const std::string& path, core::ImportOptions options) {
    core::Problems problems;
    try {
        const core::Result<core::TensorFile> file = core::TensorFile::open(path);
        problems = file.problems;
        if (file) {
            // As `attnviz import`: what is not given comes from the tensor names, config.json beside
            // the checkpoint, or the file's metadata.
            const auto config = std::filesystem::path(path).parent_path() / "config.json";
            if (const core::Result<std::string> text = core::read_file(config.string()); text) {
                options.config_json = *text.value;
                options.config_label = config.string();
            }
            core::Result<core::ImportedLayer> layer = core::import_layer(*file.value, options);
            if (layer) {
                std::string description = "Imported a layer of " + path + " (" +
                                          core::to_string(layer.value->convention) + ")";
                for (const std::string& note : layer.value->notes)
                    if (note.rfind("convention", 0) != 0) description += "; " + note;
                if (refuse_over_budget(layer.value->session.config, "Could not import " + path + unchanged_note()))
                    return false;
                set_session(std::move(layer.value->session), description);  // not saved yet: Save asks where
                return true;
            }
            problems = layer.problems;
        }
    } catch (const std::bad_alloc&) {
        problems = {{"", "out of memory"}};
    }
    std::string msg = "Could not import " + path + unchanged_note() + ": ";
    for (size_t k = 0; k < problems.size() && k < 4; ++k) msg += (k ? "; " : "") + problems[k].str();
    set_message(msg, true);
    return false;
}

bool AppState::open_file(const std::string& path) {
    if (is_checkpoint(path)) return import_checkpoint(path);
    core::Problems problems;
    // Running out of memory while reading the file or computing its trace is reported like any
    // other problem, and the current session stays as it was.
    try {
        const core::Result<std::string> text = core::read_file(path);
        problems = text.problems;
        if (text) {
            core::Result<core::Session> parsed = core::parse_session(*text.value);
            if (parsed && refuse_over_budget(parsed.value->config, "Could not open " + path + unchanged_note()))
                return false;
            if (parsed) {
                const bool was_modified = modified_;
                // The file as an absolute path, so that Save, the title and the autosave's record
                // name the same file whatever the current folder is later (or in another process).
                std::string file = core::canonical_path(path);
                remember(SessionChange{session_, file_path_}, "Opened " + path);  // may throw, before anything changed
                session_ = std::move(*parsed.value);
                memory_ = {};
                try {
                    set_message("Opened " + path, false);
                    session_reshaped();
                } catch (const std::bad_alloc&) {
                    take_back();  // the session (and file) remember() just kept
                    modified_ = was_modified;
                    throw;
                }
                file_path_ = std::move(file);
                modified_ = false;
                return true;
            }
            problems = parsed.problems;
        }
    } catch (const std::bad_alloc&) {
        problems = {{"", "out of memory"}};
    }
    std::string msg = "Could not open " + path + unchanged_note() + ": ";
    constexpr size_t shown = 8;
    for (size_t k = 0; k < problems.size() && k < shown; ++k) msg += (k ? "; " : "") + problems[k].str();
    const size_t total = core::problem_count(problems);  // a final "and N more problems" counts N
    if (total > shown && problems.size() > shown) msg += "; and " + std::to_string(total - shown) + " more";
    set_message(msg, true);
    return false;
}

bool AppState::save_file(const std::string& path) {
    const core::Problems problems = core::write_file_atomic(path, core::write_session(session_));
    if (!problems.empty()) {
        set_message("Could not save: " + problems.front().str(), true);
        return false;
    }
    file_path_ = core::canonical_path(path);
    modified_ = false;
    set_message("Saved " + path, false);
    return true;
}

std::string AppState::unchanged_note() const {
    // Before the first change and without a file, the session is the one attnviz started with:
    // there is no work of the user's that a failure could have touched.
    return revision_ == 0 && file_path_.empty() ? "" : " (your current session is unchanged)";
}

bool AppState::restore_unsaved(core::Session session, const std::string& file, const std::string& description) {
    if (refuse_over_budget(session.config, "Could not restore the unsaved work")) return false;
    // An autosave written before paths were recorded absolute names its file relative to a folder
    // that is not known: Save must ask where rather than write into the current folder.
    const bool known = file.empty() || std::filesystem::path(file).is_absolute();
    if (!replace_document(std::move(session), known ? file : "", description)) return false;
    if (!known)
        set_message(description + ". It came from " + file +
                        ", a path without its folder: Save asks where to write it, so no other file is replaced.",
                    false);
    modified_ = true;
    return true;
}

void AppState::randomize(std::uint64_t seed) {
    core::Session s = core::random_session(session_.config, seed);
    // Values only: the labels, the mask and the pin stay.
    s.tokens = session_.tokens;
    s.kv_tokens = session_.kv_tokens;
    s.params.mask = session_.params.mask;
    s.pin = session_.pin;
    set_session(std::move(s), "Random values from seed " + std::to_string(seed));
}

bool AppState::select_checked(const CellRef& cell) {
    const core::Result<core::Explanation> e = explain(cell);
    if (!e) {
        set_message("Cannot select " + e.problems.front().str(), true);
        return false;
    }
    select(cell);
    view(cell.matrix);
    return true;
}

std::int64_t AppState::UndoStep::bytes() const {
    struct Size {
        std::int64_t operator()(const CellChange&) const { return 0; }
        std::int64_t operator()(const MatrixChange& c) const {
            return c.values.size() * static_cast<std::int64_t>(sizeof(double));
        }
        std::int64_t operator()(const TokenChange& c) const { return static_cast<std::int64_t>(c.label.size()); }
        std::int64_t operator()(const SessionChange& c) const {
            return core::session_bytes(c.session) + static_cast<std::int64_t>(c.file ? c.file->size() : 0);
        }
        std::int64_t operator()(const ScaleChange&) const { return 0; }
    };
    return static_cast<std::int64_t>(sizeof(UndoStep) + what.size()) + std::visit(Size{}, change);
}

std::int64_t AppState::undo_bytes() const {
    std::int64_t bytes = 0;
    for (const auto* steps : {&undo_, &redo_})
        for (const UndoStep& step : *steps) bytes += step.bytes();
    return bytes;
}

void AppState::remember(Change change, std::string what, const std::string& merge) {
    modified_ = true;
    ++revision_;
    // "Opened X", "Saved X" and the like describe the session as it was: an edit ends them. An
    // error stays until the user has read it (or the next message replaces it).
    if (!message_.error) message_ = {};
    redo_.clear();
    if (!merge.empty() && merge == last_merge_ && !undo_.empty()) return;  // the same edit goes on
    last_merge_ = merge;
    undo_.push_back({std::move(change), std::move(what)});
    std::int64_t bytes = 0;
    for (const UndoStep& step : undo_) bytes += step.bytes();
    while (undo_.size() > max_undo_steps || (undo_.size() > 1 && bytes > max_undo_bytes)) {
        bytes -= undo_.front().bytes();
        undo_.erase(undo_.begin());
    }
}

// Every step was taken on the session as it is when the step comes back (undo and redo are
// last-in, first-out), so a cell or matrix step always finds its matrix in the same shape.
bool AppState::swap_in(Change& change) {
    struct Swap {
        AppState& s;
        bool operator()(CellChange& c) const {
            std::swap((*s.mutable_matrix(c.cell.matrix))(c.cell.row, c.cell.col), c.value);
            return false;
        }
        bool operator()(MatrixChange& c) const {
            s.mutable_matrix(c.ref)->swap(c.values);
            return false;
        }
        bool operator()(TokenChange& c) const {
            std::swap((c.keys ? s.session_.kv_tokens : s.session_.tokens)[static_cast<size_t>(c.row)], c.label);
            return false;
        }
        bool operator()(SessionChange& c) const {
            std::swap(s.session_, c.session);
            if (c.file) std::swap(s.file_path_, *c.file);
            return true;
        }
        bool operator()(ScaleChange& c) const {
            std::swap(s.session_.config.scale, c.scale);
            std::swap(s.session_.config.softmax, c.softmax);
            return false;
        }
    };
    return std::visit(Swap{*this}, change);
}

void AppState::restore(std::vector<UndoStep>& from, std::vector<UndoStep>& to) {
    UndoStep step = std::move(from.back());
    from.pop_back();
    const bool reshaped = swap_in(step.change);
    to.push_back(std::move(step));
    last_merge_.clear();  // the next edit starts a new step
    modified_ = true;
    ++revision_;
    if (reshaped)
        session_reshaped();
    else
        mark_dirty();
}

void AppState::take_back() {
    if (undo_.empty()) return;
    const bool reshaped = swap_in(undo_.back().change);
    undo_.pop_back();
    last_merge_.clear();
    ++revision_;
    if (reshaped)
        session_reshaped();
    else
        mark_dirty();
}

bool AppState::refuse_over_budget(const core::Config& config, const std::string& what) {
    const std::optional<core::Problem> problem = core::memory_problem(config, memory_budget_);
    if (!problem) return false;
    set_message(what + ": " + problem->message, true);
    return true;
}

bool AppState::undo() {
    if (undo_.empty()) return false;
    set_message("Undid: " + undo_.back().what, false);
    restore(undo_, redo_);
    return true;
}

bool AppState::redo() {
    if (redo_.empty()) return false;
    set_message("Redid: " + redo_.back().what, false);
    restore(redo_, undo_);
    return true;
}

const std::string& AppState::undo_label() const {
    static const std::string none;
    return undo_.empty() ? none : undo_.back().what;
}

const std::string& AppState::redo_label() const {
    static const std::string none;
    return redo_.empty() ? none : redo_.back().what;
}

void AppState::select(const CellRef& cell) {
    selection_ = cell;
    has_selection_ = true;
    refresh_selection();
}

void AppState::refresh_selection() {
    selected_explanation_ = core::Explanation{};
    if (!has_selection_) return;
    core::Result<core::Explanation> e = explain(selection_);
    if (e)
        selected_explanation_ = std::move(*e.value);
    else
        has_selection_ = false;  // the cell no longer exists
}

bool AppState::is_operand(MatrixRef ref, int row, int col) const {
    if (!has_selection_) return false;
    for (const CellRef& op : selected_explanation_.operands)
        if (op.covers(ref, row, col)) return true;
    return false;
}

bool AppState::update() {
    if (snapshot_held_) return false;
    bool shown = false;
    if (worker_)
        if (std::shared_ptr<Snapshot> done = worker_->take()) {
            if (done->generation >= awaited_) awaited_ = 0;
            if (done->generation > shown_->generation) {
                adopt(std::move(done));
                shown = true;
            }
        }
    if (dirty_) {
        if (core::forward_flops(session_.config) <= sync_limit_flops_) {
            dirty_ = false;
            awaited_ = 0;  // this trace supersedes whatever the worker is still computing
            asked_generation_ = ++requested_;
            asked_at_change_ = change_count_;
            adopt(compute_snapshot(session_, requested_, &spare_));
            shown = true;
        } else if (!worker_ || worker_->idle()) {
            // One request at a time, with the session as it is now: while the worker computes,
            // edits only mark the session dirty, and the newest state goes once it is free (no
            // copy of the session per frame, and the buffers of the trace it replaces are reused).
            dirty_ = false;
            if (!worker_) worker_ = std::make_unique<TraceWorker>();
            awaited_ = ++requested_;
            // The worker copies the session: only the matrices changed since the trace shown go
            // from here (a real layer's weights are tens of megabytes; a drag changes a cell).
            // Where the trace shown is of the session last asked for and only edits of named
            // matrices followed, only those are compared (a drag's frame: X, not every weight).
            std::shared_ptr<const core::Session> shown;
            if (shown_) shown = std::shared_ptr<const core::Session>(shown_, &shown_->session);
            std::optional<std::vector<MatrixRef>> edited;
            if (shown_ && shown_->generation == asked_generation_) edited = matrices_edited_since(asked_at_change_);
            worker_->request(core::SessionPatch(std::move(shown), session_, edited), awaited_, std::move(spare_));
            asked_generation_ = awaited_;
            asked_at_change_ = change_count_;
        }
    }
    return shown;
}

void AppState::wait_for_trace() {
    snapshot_held_ = false;
    update();
    while (worker_ && computing()) {
        worker_->wait();
        update();
    }
}

void AppState::count_change(const std::optional<MatrixRef>& edited) {
    dirty_ = true;
    changes_.push_back({++change_count_, edited});
    if (changes_.size() > recalled_changes) {
        recalled_from_ = changes_.front().count;
        changes_.erase(changes_.begin());
    }
}

std::optional<std::vector<MatrixRef>> AppState::matrices_edited_since(std::uint64_t since) const {
    if (since < recalled_from_ || since > change_count_) return std::nullopt;
    std::vector<MatrixRef> edited;
    for (const CountedChange& c : changes_) {
        if (c.count <= since) continue;
        if (!c.edited) return std::nullopt;
        if (std::find(edited.begin(), edited.end(), *c.edited) == edited.end()) edited.push_back(*c.edited);
    }
    return edited;
}

void AppState::adopt(std::shared_ptr<Snapshot> snapshot) {
    if (snapshot->out_of_memory) {
        // Not enough memory for this session's trace: the change that asked for it is taken back
        // (the session before it had a trace), and nothing of the user's work is lost.
        if (!shown_ && undo_.empty()) throw std::bad_alloc();
        take_back();
        set_message("Not enough memory for that trace; the change was taken back.", true);
        return;
    }
    // The old snapshot's buffers go to the next trace, unless a reader still holds it.
    if (shown_ && shown_.use_count() == 1) spare_ = std::move(shown_->trace);
    shown_ = std::move(snapshot);
    refresh_selection();
}

}  // namespace attnviz::app
