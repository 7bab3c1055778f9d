#include "core/model/hub_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/base/file_io.hpp"

namespace attnviz::model {

namespace fs = std::filesystem;

namespace {

std::string variable(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
}

bool is_name_part(const std::string& part) {
    if (part.empty() || part.size() > 96 || part.front() == '-' || part.front() == '.') return false;
    if (part.find("--") != std::string::npos || part.find("..") != std::string::npos) return false;
    return std::all_of(part.begin(), part.end(), is_name_char);
}

// A commit id as refs/main holds it: hex digits (40 for git's SHA-1), the line's end trimmed.
std::string read_ref(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > 256) return "";
    const core::Result<std::string> text = core::read_file(file.string());
    if (!text) return "";
    std::string ref = *text.value;
    while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r' || ref.back() == ' ')) ref.pop_back();
    const bool hex = !ref.empty() && std::all_of(ref.begin(), ref.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    return hex ? ref : "";
}

// The snapshot folder of one repository folder (models--ORG--NAME), or a problem's message.
struct Snapshot {
    std::string folder;
    std::string why_not;
};

Snapshot snapshot_of(const fs::path& repo) {
    const fs::path snapshots = repo / "snapshots";
    const std::string ref = read_ref(repo / "refs" / "main");
    if (!ref.empty() && is_dir(snapshots / ref)) return {(snapshots / ref).string(), ""};
    std::vector<std::string> found;
    std::error_code ec;
    for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec))
        if (is_dir(it->path())) found.push_back(it->path().filename().string());
    std::sort(found.begin(), found.end());
    if (found.size() == 1) return {(snapshots / found.front()).string(), ""};
    const std::string main = ref.empty() ? "no refs/main" : "refs/main names " + ref + ", which is not there";
    if (found.empty()) return {"", main + " and no snapshot (an interrupted download?)"};
    std::string list;
    for (const std::string& f : found) list += (list.empty() ? "" : ", ") + f;
    return {"", main + ", and " + std::to_string(found.size()) + " snapshots (" + list + "): give the folder of one, " +
                    (snapshots / found.front()).string()};
}

std::uintmax_t bytes_of(const fs::path& folder) {
    std::uintmax_t total = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code size_ec;
        if (!fs::is_regular_file(it->path(), size_ec)) continue;  // follows the link to its blob
        const std::uintmax_t size = fs::file_size(it->path(), size_ec);
        if (!size_ec) total += size;
    }
    return total;
}

std::string model_type_of(const fs::path& folder) {
    const fs::path config = folder / "config.json";
    std::error_code ec;
    if (!fs::is_regular_file(config, ec) || fs::file_size(config, ec) > (std::uintmax_t{1} << 20)) return "";
    const core::Result<std::string> text = core::read_file(config.string());
    if (!text) return "";
    const nlohmann::json doc = nlohmann::json::parse(*text.value, nullptr, false);
    if (!doc.is_object()) return "";
    const auto type = doc.find("model_type");
    return type != doc.end() && type->is_string() ? type->get<std::string>() : "";
}

}  // namespace

HubEnvironment HubEnvironment::from_process() {
    return {variable("HF_HUB_CACHE"), variable("HF_HOME"), variable("XDG_CACHE_HOME"), variable("HOME")};
}

std::vector<std::string> hub_cache_folders(const HubEnvironment& env) {
    std::vector<std::string> out;
    const auto add = [&](const std::string& base, const char* rest) {
        if (base.empty()) return;
        std::string folder = (fs::path(base) / rest).lexically_normal().string();
        if (folder.size() > 1 && folder.back() == '/') folder.pop_back();
        if (std::find(out.begin(), out.end(), folder) == out.end()) out.push_back(folder);
    };
    add(env.hf_hub_cache, "");
    add(env.hf_home, "hub");
    add(env.xdg_cache_home, "huggingface/hub");
    add(env.home, ".cache/huggingface/hub");
    return out;
}

bool is_hub_name(const std::string& text) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos) return is_name_part(text);
    return is_name_part(text.substr(0, slash)) && is_name_part(text.substr(slash + 1));
}

std::string hub_repo_folder(const std::string& name) {
    std::string out = "models--";
    for (const char c : name) {
        if (c == '/')
            out += "--";
        else
            out += c;
    }
    return out;
}

core::Result<std::string> find_cached_model(const std::string& name, const HubEnvironment& env) {
    using R = core::Result<std::string>;
    const std::vector<std::string> caches = hub_cache_folders(env);
    std::string looked;
    for (const std::string& cache : caches) {
        const fs::path repo = fs::path(cache) / hub_repo_folder(name);
        looked += (looked.empty() ? "" : ", ") + repo.string();
        if (!is_dir(repo)) continue;
        const Snapshot s = snapshot_of(repo);
        if (s.folder.empty()) return R::fail({{name, repo.string() + ": " + s.why_not}});
        return R::ok(s.folder);
    }
    return R::fail(
        {{name, "no such folder here, nor in the Hugging Face hub cache (looked in " +
                    (looked.empty() ? std::string("none: neither $HF_HUB_CACHE, $HF_HOME nor $HOME is set") : looked) +
                    "); to download it: huggingface-cli download " + name}});
}

core::Result<std::string> resolve_model_argument(const std::string& argument, const HubEnvironment& env) {
    // A missing file named by its type (session.json, model.safetensors) is left for its command.
    static const char* const file_types[] = {".json", ".safetensors", ".npz", ".npy", ".bin", ".model", ".txt", ".csv"};
    const std::string type = fs::path(argument).extension().string();
    const bool file_name = std::any_of(std::begin(file_types), std::end(file_types),
                                       [&](const char* t) { return type == t; });
    std::error_code ec;
    if (file_name || fs::exists(argument, ec) || !is_hub_name(argument)) return core::Result<std::string>::ok(argument);
    return find_cached_model(argument, env);
}

std::vector<CachedModel> list_cached_models(const HubEnvironment& env) {
    std::vector<CachedModel> out;
    std::set<std::string> names;
    for (const std::string& cache : hub_cache_folders(env)) {
        std::error_code ec;
        for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string folder = it->path().filename().string();
            if (folder.rfind("models--", 0) != 0 || !is_dir(it->path())) continue;
            std::string name = folder.substr(8);
            const size_t sep = name.find("--");
            if (sep != std::string::npos) name.replace(sep, 2, "/");
            if (!is_hub_name(name) || names.count(name)) continue;
            const Snapshot s = snapshot_of(it->path());
            if (s.folder.empty()) continue;
            names.insert(name);
            out.push_back({name, s.folder, model_type_of(s.folder), bytes_of(s.folder)});
        }
    }
    std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) { return a.name < b.name; });
    return out;
}

}  // namespace attnviz::model
