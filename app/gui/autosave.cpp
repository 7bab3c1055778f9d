#include "autosave.hpp"

namespace attnviz::app {

Autosaver::Autosaver(const std::string& dir, double interval_seconds)
    : store_(interval_seconds > 0 ? dir : std::string()), interval_(interval_seconds) {}

void Autosaver::tick(const AppState& state, std::chrono::steady_clock::time_point now) {
    if (!on()) return;
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
    }
}

}  // namespace attnviz::app
