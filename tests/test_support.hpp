// Small helpers shared by the GoogleTest files tests/test_*.cpp: problem lists, configs, numbers,
// text and scratch directories. Header-only; everything here is inline.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/presets.hpp"
#include "core/base/problem.hpp"
#include "core/io/tensors.hpp"

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

// One head that sends every query to token 0 (q = (10, 0) for all, k_0 = (10, 0), the other keys
// 0: scores 100/√2 against 0), with W_V = W_O = I: a sink, and a head that copies.
inline core::Session sink_session() {
    core::Session s = core::random_session(make_config(3, 2, 1, 2, 2), 1);
    s.params.X = core::Matrix{{1, 0}, {0, 1}, {0, 1}};
    s.params.heads[0].W_Q = core::Matrix{{10, 0}, {10, 0}};
    s.params.heads[0].W_K = core::Matrix{{10, 0}, {0, 0}};
    s.params.heads[0].W_V = core::Matrix::Identity(2, 2);
    s.params.W_O = core::Matrix::Identity(2, 2);
    return s;
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

// ---------------------------------------------------------------------------------------------
// Checkpoints

// A safetensors file of these tensors (stored as F64, so they read back bit for bit) and metadata.
inline std::string safetensors_bytes(const std::vector<core::Tensor>& tensors,
                                     const std::map<std::string, std::string>& metadata = {}) {
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::string data;
    for (const core::Tensor& t : tensors) {
        const size_t start = data.size();
        data.resize(start + t.values.size() * sizeof(double));
        if (!t.values.empty())  // an empty tensor's data() may be null, which memcpy may not be given
            std::memcpy(data.data() + start, t.values.data(), t.values.size() * sizeof(double));  // little-endian host
        header[t.name] = {{"dtype", "F64"}, {"shape", t.shape}, {"data_offsets", {start, data.size()}}};
    }
    const std::string text = header.dump();
    std::string out(8, '\0');
    for (int k = 0; k < 8; ++k) out[static_cast<size_t>(k)] = static_cast<char>((text.size() >> (8 * k)) & 0xff);
    return out + text + data;
}

// A GPT-2 checkpoint of `layers` layers made from the reference one (tests/reference/checkpoints/
// gpt2.safetensors, one layer): layer L holds each of its tensors times (1 + L/2), so every layer
// differs and each is known; `extra` tensors are added as they are. Empty when it cannot be read.
inline std::string stacked_gpt2(const std::string& gpt2_path, int layers, const std::vector<core::Tensor>& extra = {},
                                const std::map<std::string, std::string>& metadata = {}) {
    const core::Result<core::TensorFile> f = core::TensorFile::open(gpt2_path);
    if (!f) return {};
    std::vector<core::Tensor> all;
    for (int l = 0; l < layers; ++l)
        for (const core::TensorInfo& info : f.value->tensors()) {
            core::Result<core::Tensor> t = f.value->read(info.name);
            if (!t) return {};
            t.value->name = "h." + std::to_string(l) +
                            info.name.substr(info.name.find('.', 2));  // h.0.attn… → h.L.attn…
            for (double& v : t.value->values) v *= 1 + l / 2.0;
            all.push_back(std::move(*t.value));
        }
    all.insert(all.end(), extra.begin(), extra.end());
    return safetensors_bytes(all, metadata);
}

}  // namespace attnviz::test
