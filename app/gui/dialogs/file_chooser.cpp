#include "dialogs/file_chooser.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/base/file_io.hpp"
#include "core/base/format.hpp"

extern char** environ;

namespace attnviz::app {

namespace fs = std::filesystem;

namespace {

bool matches(const std::string& name, const FileFilter& filter) {
    if (filter.extensions.empty()) return true;
    for (const std::string& ext : filter.extensions)
        if (name.size() >= ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) return true;
    return false;
}

std::string home_dir() {
    const char* home = std::getenv("HOME");
    return home && *home ? home : "/";
}

std::string working_dir() {
    std::error_code ec;
    const fs::path p = fs::current_path(ec);
    return ec ? home_dir() : p.string();
}

// Runs argv (no shell), its standard output captured; returns the exit status (−1: could not run).
int run_capture(const std::vector<std::string>& args, std::string& out) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> argv;
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (spawned != 0) {
        ::close(fds[0]);
        return -1;
    }
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::vector<DirEntry> list_directory(const std::string& dir, const FileFilter& filter, bool hidden,
                                     std::string& error) {
    std::vector<DirEntry> folders, files;
    error.clear();
    std::error_code ec;
    fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) {
        error = dir + ": cannot be read: " + ec.message();
        return {};
    }
    for (; it != end; it.increment(ec)) {
        if (ec) {
            error = dir + ": " + ec.message();
            break;
        }
        DirEntry e;
        e.name = it->path().filename().string();
        if (!hidden && !e.name.empty() && e.name[0] == '.') continue;
        std::error_code type_ec;
        e.directory = it->is_directory(type_ec);
        if (!e.directory && !matches(e.name, filter)) continue;
        if (!e.directory) e.size = it->file_size(type_ec);
        if (type_ec) e.size = 0;
        const auto when = it->last_write_time(type_ec);
        if (!type_ec)
            e.modified = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::file_clock::to_sys(when).time_since_epoch())
                             .count();
        (e.directory ? folders : files).push_back(std::move(e));
    }
    const auto by_name = [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; };
    std::sort(folders.begin(), folders.end(), by_name);
    std::sort(files.begin(), files.end(), by_name);
    folders.insert(folders.end(), files.begin(), files.end());
    return folders;
}

std::string size_text(std::uintmax_t bytes) { return core::format_bytes(static_cast<long long>(bytes)); }

std::string date_text(std::int64_t seconds) {
    if (seconds <= 0) return "";
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    char buf[32];
    return ::localtime_r(&t, &tm) && std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm) ? buf : "";
}

std::string save_target(const std::string& dir, const std::string& name, const FileFilter& filter) {
    fs::path p(name);
    if (p.is_relative()) p = fs::path(dir) / p;
    if (!p.has_extension() && !filter.extensions.empty()) p += filter.extensions.front();
    return p.lexically_normal().string();
}

std::string native_dialog_tool() {
    const char* off = std::getenv("ATTNVIZ_NATIVE_DIALOGS");
    if (off && std::string(off) == "0") return "";
    const char* x = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    if (!(x && *x) && !(wayland && *wayland)) return "";
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (const char* tool : {"zenity", "kdialog"}) {
        size_t start = 0;
        while (start <= dirs.size()) {
            const size_t colon = std::min(dirs.find(':', start), dirs.size());
            const fs::path candidate = fs::path(dirs.substr(start, colon - start)) / tool;
            if (::access(candidate.c_str(), X_OK) == 0) return tool;
            start = colon + 1;
        }
    }
    return "";
}

// ---------------------------------------------------------------------------------------------

FileChooser::FileChooser() : dir_(working_dir()) {}

const FileFilter& FileChooser::filter() const {
    static const FileFilter all{"All files", {}};
    return filters_.empty() ? all : filters_[static_cast<size_t>(std::clamp<int>(filter_, 0, filters_.size() - 1))];
}

void FileChooser::open(Mode mode, std::string title, std::vector<FileFilter> filters, std::string suggested) {
    if (state_ == State::native) return;  // one native dialog at a time
    mode_ = mode;
    title_ = std::move(title);
    filters_ = std::move(filters);
    filters_.push_back({"All files", {}});
    filter_ = 0;
    chosen_.reset();
    more_.clear();
    marked.clear();
    const fs::path s(suggested);
    std::error_code ec;
    if (!suggested.empty() && s.has_parent_path() && fs::is_directory(s.parent_path(), ec))
        dir_ = fs::absolute(s.parent_path(), ec).lexically_normal().string();
    name = s.filename().string();
    selected = -1;
    refresh();
    appearing_ = true;
    state_ = State::browser;
    if (use_native)
        if (const std::string tool = native_dialog_tool(); !tool.empty()) start_native(tool);
}

void FileChooser::start_native(const std::string& tool) {
    std::vector<std::string> args{tool};
    const std::string start = (fs::path(dir_) / name).string();
    const FileFilter& f = filter();
    std::string patterns;
    for (const std::string& ext : f.extensions) patterns += (patterns.empty() ? "*" : " *") + ext;
    if (tool == "zenity") {
        args.insert(args.end(), {"--file-selection", "--title=" + title_, "--filename=" + start});
        if (mode_ == Mode::save) args.insert(args.end(), {"--save", "--confirm-overwrite"});
        if (mode_ == Mode::open_several) args.insert(args.end(), {"--multiple", "--separator=\n"});
        if (mode_ == Mode::folder) args.push_back("--directory");
        for (const FileFilter& each : filters_) {
            std::string p;
            for (const std::string& ext : each.extensions) p += " *" + ext;
            args.push_back("--file-filter=" + each.name + " |" + (p.empty() ? " *" : p));
        }
    } else if (mode_ == Mode::folder) {
        args.insert(args.end(), {"--title", title_, "--getexistingdirectory", start});
    } else {
        args.insert(args.end(), {"--title", title_, mode_ == Mode::save ? "--getsavefilename" : "--getopenfilename",
                                 start, patterns.empty() ? "*" : patterns + "|" + f.name});
        if (mode_ == Mode::open_several) args.insert(args.end(), {"--multiple", "--separate-output"});
    }
    state_ = State::native;
    native_ = worker_.submit([args](const Worker::Stop&) {
        NativeAnswer answer;
        answer.status = run_capture(args, answer.output);
        return answer;
    });
}

void FileChooser::refresh() {
    entries_ = list_directory(dir_, filter(), show_hidden, error_);
    marked.clear();  // indices of the listing they were marked in
    selected = std::min(selected, static_cast<int>(entries_.size()) - 1);
}

bool FileChooser::go_to(const std::string& dir) {
    std::error_code ec;
    fs::path p(dir);
    if (p.is_relative()) p = fs::path(dir_) / p;
    p = fs::weakly_canonical(p, ec);
    if (ec || !fs::is_directory(p, ec)) {
        error_ = dir + ": not a folder";
        return false;
    }
    std::string listing_error;
    std::vector<DirEntry> listed = list_directory(p.string(), filter(), show_hidden, listing_error);
    if (!listing_error.empty() && listed.empty()) {
        error_ = listing_error;  // stay where we are, and say why
        return false;
    }
    dir_ = p.string();
    entries_ = std::move(listed);
    error_ = listing_error;
    selected = entries_.empty() ? -1 : 0;
    marked.clear();
    return true;
}

void FileChooser::choose(const std::string& path) {
    std::error_code ec;
    if (mode_ == Mode::folder) {
        if (fs::is_directory(path, ec)) {
            chosen_ = path;
            state_ = State::closed;
        } else {
            error_ = path + ": not a folder";
        }
        return;
    }
    if (mode_ == Mode::save && fs::exists(path, ec)) {
        replace_ = path;
        state_ = State::ask_replace;
        replace_asked_ = ImGui::GetCurrentContext() ? ImGui::GetFrameCount() : 0;
        return;
    }
    if (mode_ != Mode::save && !fs::is_regular_file(path, ec)) {
        error_ = path + ": no such file";
        return;
    }
    chosen_ = path;
    state_ = State::closed;
}

void FileChooser::activate(int index) {
    if (index < 0 || index >= static_cast<int>(entries_.size())) return;
    const DirEntry& e = entries_[static_cast<size_t>(index)];
    if (e.directory) {
        go_to(e.name);
        return;
    }
    name = e.name;
    choose((fs::path(dir_) / e.name).string());
}

void FileChooser::toggle_mark(int index) {
    if (mode_ != Mode::open_several || index < 0 || index >= static_cast<int>(entries_.size()) ||
        entries_[static_cast<size_t>(index)].directory)
        return;
    if (const auto at = std::find(marked.begin(), marked.end(), index); at != marked.end())
        marked.erase(at);
    else
        marked.push_back(index);
    selected = index;
    name.clear();  // the marked files are chosen, not a name
}

std::vector<std::string> FileChooser::take_more() { return std::exchange(more_, {}); }

void FileChooser::confirm() {
    if (mode_ == Mode::folder) {  // the folder selected or named, else the one listed (also for a file selected)
        std::error_code ec;
        const std::string named = (fs::path(dir_) / name).lexically_normal().string();
        choose(name.empty() || fs::is_regular_file(named, ec) ? dir_ : named);
        return;
    }
    if (mode_ == Mode::open_several && !marked.empty() && name.empty()) {
        std::vector<int> order = marked;
        std::sort(order.begin(), order.end());
        std::vector<std::string> paths;
        for (int k : order) paths.push_back((fs::path(dir_) / entries_[static_cast<size_t>(k)].name).string());
        choose(paths.front());
        if (chosen_) more_.assign(paths.begin() + 1, paths.end());
        return;
    }
    if (name.empty()) {
        activate(selected);
        return;
    }
    std::error_code ec;
    fs::path p(name);
    if (p.is_relative()) p = fs::path(dir_) / p;
    if (fs::is_directory(p, ec)) {
        name.clear();
        go_to(p.string());
        return;
    }
    choose(mode_ == Mode::save ? save_target(dir_, name, filter()) : p.lexically_normal().string());
}

std::optional<std::string> FileChooser::draw(UiContext& ui) {
    if (state_ == State::native) {
        if (!native_.ready()) {
            ui.desktop_dialog = true;
            return std::nullopt;
        }
        const NativeAnswer answer = native_.take().value_or(NativeAnswer{});
        std::string out = answer.output;
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
        if (answer.status == 0 && !out.empty()) {
            state_ = State::closed;
            // Several files (open_several): one a line.
            std::vector<std::string> lines;
            for (size_t start = 0; start <= out.size();) {
                const size_t end = std::min(out.find('\n', start), out.size());
                if (end > start) lines.push_back(out.substr(start, end - start));
                start = end + 1;
            }
            dir_ = fs::path(lines.front()).parent_path().string();
            more_.assign(lines.begin() + 1, lines.end());
            return lines.front();
        }
        if (answer.status == 1) {  // cancelled
            state_ = State::closed;
            return std::nullopt;
        }
        state_ = State::browser;  // the tool failed: the built-in browser instead
        appearing_ = true;
    }
    if (state_ == State::closed) {
        std::optional<std::string> out = std::move(chosen_);
        chosen_.reset();
        return out;
    }
    // The title bar says what is asked ("Open a session, …"); the ID stays the same for every title
    // and is this chooser's own: two choosers are two windows, never one holding both.
    ImGui::PushID(this);
    const std::string popup_name = title_ + "###file chooser";
    const char* popup = popup_name.c_str();
    if (appearing_) {
        ImGui::OpenPopup(popup);
        appearing_ = false;
    }
    const ImGuiIO& io = ImGui::GetIO();
    const float font = ImGui::GetFontSize();
    ImGui::SetNextWindowSize({std::min(io.DisplaySize.x * 0.9f, font * 46),
                              std::min(io.DisplaySize.y * 0.85f, font * 30)},
                             ImGuiCond_Appearing);
    bool open = true;
    // Not kept in the layout file: the size is set as it appears, and the ID is this chooser's.
    const bool shown = ImGui::BeginPopupModal(popup, &open, ImGuiWindowFlags_NoSavedSettings);
    // Closed by its title bar's button or by Esc (frame.cpp): cancelled, and gone for good.
    if (!shown && (!open || !ImGui::IsPopupOpen(popup))) state_ = State::closed;
    if (shown) draw_browser(ui);
    ImGui::PopID();
    if (state_ != State::closed) return std::nullopt;
    std::optional<std::string> out = std::move(chosen_);
    chosen_.reset();
    return out;
}

void FileChooser::draw_browser(UiContext& ui) {
    const ImGuiIO& io = ImGui::GetIO();
    const float font = ImGui::GetFontSize();
    if (ImGui::Button("Up")) go_to("..");
    ui.report_item("files: up");
    ImGui::SameLine();
    if (ImGui::Button("Home")) go_to(home_dir());
    ImGui::SameLine();
    ImGui::TextDisabled("%s", dir_.c_str());
    if (!error_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::TextWrapped("%s", error_.c_str());
        ImGui::PopStyleColor();
    }
    const float footer = ImGui::GetFrameHeightWithSpacing() * 2.6f;
    if (ImGui::BeginTable("files", 3,
                          ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                              ImGuiTableFlags_Resizable,
                          {0, -footer})) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, font * 6);
        ImGui::TableSetupColumn("Modified", ImGuiTableColumnFlags_WidthFixed, font * 8.5f);
        ImGui::TableHeadersRow();
        int activated = -1;
        for (int k = 0; k < static_cast<int>(entries_.size()); ++k) {
            const DirEntry& e = entries_[static_cast<size_t>(k)];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            const std::string label = (e.directory ? e.name + "/" : e.name) + "##" + std::to_string(k);
            const bool is_marked = std::find(marked.begin(), marked.end(), k) != marked.end();
            if (ImGui::Selectable(label.c_str(), selected == k || is_marked,
                                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
                if (mode_ == Mode::open_several && io.KeyCtrl) {
                    toggle_mark(k);
                } else {
                    marked.clear();
                    selected = k;
                    if (!e.directory || mode_ == Mode::folder) name = e.name;
                    if (ImGui::IsMouseDoubleClicked(0)) activated = k;
                }
            }
            if (selected == k && ImGui::IsWindowAppearing()) ImGui::SetScrollHereY();
            ImGui::TableNextColumn();
            if (!e.directory) ImGui::TextUnformatted(size_text(e.size).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(date_text(e.modified).c_str());
        }
        ImGui::EndTable();
        if (activated >= 0) activate(activated);
    }
    // Keyboard: arrows move, Enter opens or chooses, Backspace goes up (not while typing a name, nor
    // while a question over the browser has the keyboard).
    const bool keys = !io.WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_ChildWindows);
    if (keys && !entries_.empty()) {
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)))
            selected = std::min(selected + 1, static_cast<int>(entries_.size()) - 1);
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) selected = std::max(selected - 1, 0);
        if (selected >= 0 && !entries_[static_cast<size_t>(selected)].directory)
            name = entries_[static_cast<size_t>(selected)].name;
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter))) activate(selected);
    }
    if (keys && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Backspace))) go_to("..");
    ImGui::SetNextItemWidth(-font * 17);
    const bool enter = ImGui::InputText("##name", &name, ImGuiInputTextFlags_EnterReturnsTrue);
    ui.report_item("files: name");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##filter", filter().name.c_str())) {
        for (int k = 0; k < static_cast<int>(filters_.size()); ++k)
            if (ImGui::Selectable(filters_[static_cast<size_t>(k)].name.c_str(), k == filter_)) {
                filter_ = k;
                refresh();
            }
        ImGui::EndCombo();
    }
    if (ImGui::Checkbox("hidden files", &show_hidden)) refresh();
    ImGui::SameLine();
    const char* action = mode_ == Mode::save ? "Save" : mode_ == Mode::folder ? "Open folder" : "Open";
    const bool pressed = ImGui::Button(action);
    ui.report_item(std::string("files: ") + action);
    if (enter || pressed) confirm();
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) state_ = State::closed;
    ui.report_item("files: cancel");
    if (mode_ == Mode::folder) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", name.empty() ? "opens the folder listed" : "opens the folder selected");
    }
    if (mode_ == Mode::open_several) {
        ImGui::SameLine();
        if (marked.empty())
            ImGui::TextDisabled("Ctrl+click: several files");
        else
            ImGui::TextDisabled("%zu files marked", marked.size());
    }

    if (state_ == State::ask_replace && !ImGui::IsPopupOpen("Replace?")) ImGui::OpenPopup("Replace?");
    if (ImGui::BeginPopupModal("Replace?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::Text("%s already exists. Replace it?", replace_.c_str());
        if (ImGui::Button("Replace")) {
            chosen_ = replace_;
            state_ = State::closed;
            ImGui::CloseCurrentPopup();
        }
        ui.report_item("files: replace");
        ImGui::SameLine();
        if (ImGui::Button("Keep it")) {
            state_ = State::browser;
            ImGui::CloseCurrentPopup();
        }
        ImGui::EndPopup();
    } else if (state_ == State::ask_replace && ImGui::GetFrameCount() > replace_asked_) {
        state_ = State::browser;  // closed by Esc: as "Keep it"
    }
    if (state_ == State::closed) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

// ---------------------------------------------------------------------------------------------

std::string config_dir() {
    fs::path dir;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        dir = fs::path(xdg) / "attnviz";
    else if (const char* home = std::getenv("HOME"); home && *home)
        dir = fs::path(home) / ".config" / "attnviz";
    else
        return "";
    std::error_code ec;
    fs::create_directories(dir, ec);
    return ec ? "" : dir.string();
}

RecentFiles::RecentFiles(std::string file) : file_(std::move(file)) {
    if (file_.empty()) return;
    const core::Result<std::string> text = core::read_file(file_, std::uintmax_t{1} << 20, "the list of recent files");
    if (!text) return;
    const nlohmann::json doc = nlohmann::json::parse(*text.value, nullptr, false);
    if (!doc.is_object() || !doc.contains("recent") || !doc["recent"].is_array()) return;
    // Only absolute paths: a relative one would name another file from every working directory.
    for (const nlohmann::json& p : doc["recent"])
        if (p.is_string() && fs::path(p.get<std::string>()).is_absolute() && paths_.size() < max)
            paths_.push_back(p.get<std::string>());
}

void RecentFiles::add(const std::string& path) {
    // Absolute and canonical (links and "..", resolved as far as the path exists): the file the
    // session came from, whichever folder attnviz is started in next.
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    if (ec) return;
    const fs::path canonical = fs::weakly_canonical(absolute, ec);
    const std::string p = (ec ? absolute.lexically_normal() : canonical).string();
    paths_.erase(std::remove(paths_.begin(), paths_.end(), p), paths_.end());
    paths_.insert(paths_.begin(), p);
    if (paths_.size() > max) paths_.resize(max);
    save();
}

void RecentFiles::clear() {
    paths_.clear();
    save();
}

void RecentFiles::save() const {
    if (file_.empty()) return;
    const nlohmann::json doc = {{"format", "attnviz-recent"}, {"recent", paths_}};
    core::write_file_atomic(file_, doc.dump(1) + "\n");  // a failure only loses the list
}

std::vector<FileFilter> session_filters() {
    return {{"Sessions, checkpoints (*.json, *.safetensors, *.npz, *.npy)", {".json", ".safetensors", ".npz", ".npy"}},
            {"Sessions (*.json)", {".json"}},
            {"Checkpoints (*.safetensors, *.npz, *.npy)", {".safetensors", ".npz", ".npy"}}};
}

}  // namespace attnviz::app
