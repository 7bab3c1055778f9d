// Small helpers shared by the GoogleTest files tests/test_*.cpp: problem lists, configs, numbers,
// text and scratch directories. Header-only; everything here is inline.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "core/config.hpp"
#include "core/problem.hpp"

namespace attnviz::test {

// ---------------------------------------------------------------------------------------------
// Problems

// Every problem's str(), one a line: the message to print when a list is not what was expected.
inline std::string all_text(const core::Problems& problems) {
    std::string s;
    for (const core::Problem& p : problems) s += p.str() + "\n";
    return s;
}

// The problem with this path, or nullptr.
inline const core::Problem* find_path(const core::Problems& problems, const std::string& path) {
    for (const core::Problem& p : problems)
        if (p.path == path) return &p;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Configs

// A config with these dimensions; mask and scale default to Config's own defaults.
inline core::Config make_config(int n, int d_model, int heads, int d_k, int d_v, bool output_projection = true,
                                core::Mask mask = core::Config{}.mask, core::Scale scale = core::Config{}.scale) {
    core::Config c;
    c.n = n;
    c.d_model = d_model;
    c.heads = heads;
    c.d_k = d_k;
    c.d_v = d_v;
    c.output_projection = output_projection;
    c.mask = mask;
    c.scale = scale;
    return c;
}

// ---------------------------------------------------------------------------------------------
// Numbers and text

// |a − b| ≤ tol·max(1, |a|, |b|); equal infinities of the same sign also match.
inline ::testing::AssertionResult near_rel(double a, double b, double tol) {
    if (a == b) return ::testing::AssertionSuccess();
    const double scale = std::max({1.0, std::abs(a), std::abs(b)});
    if (std::abs(a - b) <= tol * scale) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << a << " vs " << b << " (diff " << std::abs(a - b) << ")";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------------------------
// Files

// The whole file, bytes as they are; empty when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The names in a directory, sorted.
inline std::vector<std::string> entries(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// A fresh directory temp_directory_path()/<prefix>_XXXXXX (mkdtemp), removed with its contents
// when the object goes. path() is empty when mkdtemp failed: a fixture asserts created() in SetUp.
class TempDir {
public:
    explicit TempDir(const std::string& prefix) {
        std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
        if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    }
    ~TempDir() {
        if (path_.empty()) return;
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    bool created() const { return !path_.empty(); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace attnviz::test
