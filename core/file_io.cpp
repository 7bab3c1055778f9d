#include "file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace attnviz::core {

Result<std::string> read_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return Result<std::string>::fail({{path, "is a directory, not a file"}});
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        return Result<std::string>::fail({{path, "is not a regular file"}});
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_read_bytes)
        return Result<std::string>::fail({{path, "is " + std::to_string(size) + " bytes, over the limit of " +
                                                     std::to_string(max_read_bytes) + " for a file attnviz reads"}});
    std::ifstream in(path, std::ios::binary);
    if (!in) return Result<std::string>::fail({{path, std::string("cannot open: ") + std::strerror(errno)}});
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return Result<std::string>::fail({{path, std::string("cannot read: ") + std::strerror(errno)}});
    return Result<std::string>::ok(buf.str());
}

Problems write_file_atomic(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::random_device rd;
    std::string tmp_name = target.filename().string();
    tmp_name.insert(0, 1, '.');
    tmp_name.append(".tmp-").append(std::to_string(rd() % 1000000u));
    const fs::path tmp = target.parent_path() / tmp_name;
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return {{path, std::string("cannot write: ") + std::strerror(errno)}};
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int saved_errno = errno;
    const bool flushed = std::fflush(f) == 0;
    const bool closed = std::fclose(f) == 0;
    if (!written || !flushed || !closed) {
        std::error_code ec;
        fs::remove(tmp, ec);
        return {{path, std::string("cannot write: ") + std::strerror(written ? errno : saved_errno)}};
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        const std::string reason = ec.message();
        fs::remove(tmp, ec);
        return {{path, "cannot replace the file: " + reason}};
    }
    return {};
}

}  // namespace attnviz::core
