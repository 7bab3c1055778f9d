// Files for the model tests: the reference models' folders, reading a file whole, and scratch
// folders (with copies of a reference model to spoil).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace attnviz::test {

namespace fs = std::filesystem;

inline const fs::path models_dir = fs::path(ATTNVIZ_TESTS_DIR) / "reference/models";

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A scratch folder removed at the end of the test.
class ScratchFolder {
public:
    ScratchFolder() {
        char name[] = "/tmp/attnviz-model-XXXXXX";
        if (mkdtemp(name)) path = name;
    }
    ~ScratchFolder() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;

    // A copy of a reference model's folder (its tokenizer.json a copy of the file the link names).
    fs::path copy_of(const std::string& model) const {
        const fs::path to = path / model;
        fs::create_directories(to);
        for (const fs::directory_entry& e : fs::directory_iterator(models_dir / model))
            fs::copy_file(fs::canonical(e.path()), to / e.path().filename());
        return to;
    }
    void write(const fs::path& file, const std::string& text) const { std::ofstream(file, std::ios::binary) << text; }

    fs::path path;
};

}  // namespace attnviz::test
