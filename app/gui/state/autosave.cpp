#include "state/autosave.hpp"

namespace attnviz::app {

bool AutosaveWriter::save_async(core::Session session, std::string file) {
    if (!enabled() || busy()) return false;
    write_ = worker_.submit([this, session = std::move(session), file = std::move(file)](const Worker::Stop&) {
        store_.save(session, file);
    });
    return true;
}

core::Problems AutosaveWriter::save(const core::Session& session, const std::string& file) {
    wait();
    return store_.save(session, file);
}

Autosaver::Autosaver(const std::string& dir, double interval_seconds)
    : store_(interval_seconds > 0 ? dir : std::string()), interval_(interval_seconds) {
    store_.remove_stale_locks();
}

void Autosaver::tick(AppState& state, std::chrono::steady_clock::time_point now) {
    if (interval_ <= 0) return;
    const auto report = [&](const std::string& cause, const std::string& text) {
        if (cause == reported_) return;
        reported_ = cause;
        state.set_message(text, true);
    };
    if (!store_.enabled()) {
        // Off from the start (the state folder was refused or cannot be made): said once there is
        // work that it would have kept.
        if (state.modified())
            report(store_.problem(), "Autosave is off (" + store_.problem() + "): save your work to keep it.");
        return;
    }
    if (checking_ && !store_.busy()) {
        checking_ = false;
        const core::Problems problems = store_.last_problems();
        if (problems.empty())
            reported_.clear();
        else
            report(problems.front().message, "Autosave failed (" + problems.front().str() +
                                                 "): your unsaved work is not kept safe, save it to keep it.");
    }
    if (!state.modified()) {
        // Saved (or undone back to the file): nothing to recover any more.
        if (store_.has_files() && !store_.busy()) store_.clear();
        written_revision_ = ~std::uint64_t{0};
        return;
    }
    if (state.revision() == written_revision_ || store_.busy()) return;
    if (now - last_write_ < std::chrono::duration<double>(interval_)) return;
    if (store_.save_async(state.session(), state.file_path())) {
        written_revision_ = state.revision();
        last_write_ = now;
        checking_ = true;
    }
}

}  // namespace attnviz::app
