// A fake Hugging Face hub cache, laid out as huggingface_hub writes it: each file of a snapshot a
// relative symlink into the repository's blobs/, refs/main naming the snapshot's commit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace attnviz::test {

// Puts `source`'s files (links followed) into CACHE/models--ORG--NAME as the snapshot `commit`,
// each file's blob named after it and the commit; `main`: whether refs/main names it. Returns the
// snapshot folder.
inline std::filesystem::path add_to_hub_cache(const std::filesystem::path& cache, const std::string& repo_folder,
                                              const std::filesystem::path& source, const std::string& commit,
                                              bool main = true) {
    namespace fs = std::filesystem;
    const fs::path repo = cache / repo_folder, blobs = repo / "blobs", snapshot = repo / "snapshots" / commit;
    fs::create_directories(blobs);
    fs::create_directories(snapshot);
    for (const fs::directory_entry& e : fs::directory_iterator(source)) {
        const std::string blob = commit.substr(0, 8) + "-" + e.path().filename().string();
        fs::copy_file(fs::canonical(e.path()), blobs / blob, fs::copy_options::overwrite_existing);
        fs::create_symlink(fs::path("../../blobs") / blob, snapshot / e.path().filename());
    }
    if (main) {
        fs::create_directories(repo / "refs");
        std::ofstream(repo / "refs" / "main", std::ios::binary) << commit;  // no newline, as the hub writes it
    }
    return snapshot;
}

}  // namespace attnviz::test
