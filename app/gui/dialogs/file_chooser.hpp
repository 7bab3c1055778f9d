// The file dialog of Open, Save as, Import layer, Export and a matrix's "load": the desktop's own
// dialog when there is one, else a browser drawn in the app.
//
// Native: zenity (GNOME and most desktops) or kdialog (KDE), when either is installed, a display is
// set and $ATTNVIZ_NATIVE_DIALOGS is not "0". They are what portable-file-dialogs uses on Linux;
// the XDG desktop portal would need a D-Bus library attnviz does not link. The tool runs as a child
// process (argv, never a shell) on the chooser's Worker, so the window keeps drawing; its answer is
// picked up by draw(). If it cannot run or fails, the built-in browser opens instead.
//
// Built-in: the directory shown (that of the suggested path, else the last one used, else the
// working directory), parent and home buttons, folders then files matching the filter with their
// sizes and dates, a filter choice, a name or path field, hidden files on request, arrow keys and
// Enter to move and open, Backspace for the parent. Saving to an existing file asks first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state/worker.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct FileFilter {
    std::string name;                     // "Sessions (*.json)"
    std::vector<std::string> extensions;  // {".json"}; empty: every file
};

// One entry of a directory listing.
struct DirEntry {
    std::string name;
    bool directory = false;
    std::uintmax_t size = 0;
    std::int64_t modified = 0;  // seconds since the epoch
};

// The entries of `dir` as the browser lists them: folders first, then files matching `filter`
// (every file when it has no extensions), each group by name; hidden ones (".name") only when
// asked. An unreadable directory gives an empty list and `error` set.
std::vector<DirEntry> list_directory(const std::string& dir, const FileFilter& filter, bool hidden, std::string& error);

// "4.2 KiB", "2026-11-23 14:05".
std::string size_text(std::uintmax_t bytes);
std::string date_text(std::int64_t seconds);

// The path a save writes: `name` resolved against `dir` (unless absolute), with the filter's first
// extension appended when the name has none.
std::string save_target(const std::string& dir, const std::string& name, const FileFilter& filter);

// Whether native dialogs may be used (a display, and $ATTNVIZ_NATIVE_DIALOGS is not "0"), and the
// tool found on PATH: "zenity", "kdialog" or "".
std::string native_dialog_tool();

class FileChooser {
public:
    // open_several: as open, and Ctrl+click marks several files (the native dialogs' multiple
    // selection), all chosen at once.
    // folder: a folder is chosen, the one selected in the listing (a click), else the one listed
    // (a double-click enters a folder).
    enum class Mode { open, save, open_several, folder };

    FileChooser();
    ~FileChooser() = default;  // waits for a native dialog still open: the user closes it, it is not killed
    FileChooser(const FileChooser&) = delete;
    FileChooser& operator=(const FileChooser&) = delete;

    // Opens the dialog (drawn from the next draw()). `suggested`: a path or a file name.
    void open(Mode mode, std::string title, std::vector<FileFilter> filters, std::string suggested = "");
    // Draws the dialog while it is open; returns the chosen absolute path once (a save only after
    // the user agreed to replace an existing file).
    std::optional<std::string> draw(UiContext& ui);
    // With open_several, the files chosen besides the one draw() returned, in listing order (taken once).
    std::vector<std::string> take_more();
    bool is_open() const { return state_ != State::closed; }

    // The built-in browser's state, for tests and for the next dialog.
    const std::string& directory() const { return dir_; }
    const std::vector<DirEntry>& entries() const { return entries_; }
    const std::string& error() const { return error_; }
    std::string name;         // the name or path field
    int selected = -1;        // index in entries()
    std::vector<int> marked;  // open_several: the files marked with Ctrl+click, indices in entries()
    // Ctrl+click on an entry: marks or unmarks a file (open_several only).
    void toggle_mark(int index);
    bool show_hidden = false;
    bool use_native = true;  // tests turn native dialogs off
    // Moves to a directory (relative to the shown one), listing it; false when it cannot be read.
    bool go_to(const std::string& dir);
    // What Enter or a double-click does with an entry: enters a folder, chooses a file.
    void activate(int index);
    // Confirms the name field: a folder is entered; a file is chosen (a save asks before replacing).
    void confirm();

private:
    enum class State { closed, native, browser, ask_replace };
    void refresh();
    void draw_browser(UiContext& ui);  // inside the open popup
    void choose(const std::string& path);
    void start_native(const std::string& tool);
    const FileFilter& filter() const;

    State state_ = State::closed;
    Mode mode_ = Mode::open;
    std::string title_;
    std::vector<FileFilter> filters_;
    int filter_ = 0;
    std::string dir_;
    std::vector<DirEntry> entries_;
    std::string error_;
    std::string replace_;                // the existing file a save would replace
    int replace_asked_ = 0;              // the frame "Replace?" was asked in
    std::optional<std::string> chosen_;  // returned by the next draw()
    std::vector<std::string> more_;      // chosen with it (open_several)
    bool appearing_ = false;
    // The native dialog's answer: the tool's exit status (−1: it could not run) and what it printed.
    struct NativeAnswer {
        int status = -1;
        std::string output;
    };
    Worker::Job<NativeAnswer> native_;
    // Runs the native dialog (a thread that only waits for the tool: not lowered). Last: destroyed,
    // and so joined, first.
    Worker worker_{"file dialog", false};
};

// Recent files (File > Open Recent): at most `max` absolute canonical paths (links resolved), newest
// first, each once, kept in recent.json in the config directory (written atomically; a malformed
// file counts as empty, a relative path in it is left out).
class RecentFiles {
public:
    static constexpr size_t max = 10;
    explicit RecentFiles(std::string file = "");  // "" keeps them in memory only
    const std::vector<std::string>& paths() const { return paths_; }
    void add(const std::string& path);
    void clear();
    const std::string& file() const { return file_; }

private:
    void save() const;
    std::string file_;
    std::vector<std::string> paths_;
};

// $XDG_CONFIG_HOME/attnviz or ~/.config/attnviz (created); "" when neither is set or it cannot be made.
std::string config_dir();

// The file types of sessions and of what File > Open imports.
std::vector<FileFilter> session_filters();

}  // namespace attnviz::app
