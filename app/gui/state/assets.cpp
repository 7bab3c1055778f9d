#include "state/assets.hpp"

#include <cstdlib>
#include <filesystem>

namespace attnviz::app {

std::string assets_dir() {
    if (const char* dir = std::getenv("ATTNVIZ_ASSETS"); dir && *dir) return dir;
    std::error_code ec;
    // The running executable, symlinks resolved (a /usr/local/bin/attnviz link to an install elsewhere).
    const std::filesystem::path exe = std::filesystem::canonical("/proc/self/exe", ec);
    if (ec) return "share/attnviz";
    return (exe.parent_path().parent_path() / "share" / "attnviz").string();
}

}  // namespace attnviz::app
