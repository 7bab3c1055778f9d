#include "core/model/weight_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <type_traits>

#include "core/base/file_io.hpp"
#include "core/io/json_read.hpp"

namespace attnviz::model {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Why `file` is not a plain file name of the index's own folder, or "" when it is one.
std::string shard_name_problem(const std::string& file) {
    if (file.empty()) return "an empty file name";
    if (file == "." || file == "..") return "\"" + file + "\" is not a file name";
    if (file.find_first_of(std::string("/\\\0", 3)) != std::string::npos)
        return core::describe_text(file) + " is not a plain file name (shards lie beside the index)";
    return "";
}

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

bool can_open(const fs::path& p) { return std::ifstream(p, std::ios::binary).is_open(); }

// PyTorch's pickled weights, pytorch_model.bin or its shards pytorch_model-00001-of-00002.bin.
bool has_pytorch_bin(const fs::path& folder) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("pytorch_model", 0) == 0 && it->path().extension() == ".bin") return true;
    }
    return false;
}

// How to turn pytorch_model*.bin into the model.safetensors attnviz reads.
std::string conversion_advice(const std::string& folder) {
    return "only PyTorch's pytorch_model.bin is here, which attnviz does not read (a pickle, which can run code "
           "when loaded); convert it to model.safetensors with Python's torch and safetensors packages:\n"
           "    import glob, torch; from safetensors.torch import save_file\n"
           "    save_file({k: v.clone() for f in sorted(glob.glob(\"" +
           folder + "/pytorch_model*.bin\")) for k, v in torch.load(f, map_location=\"cpu\").items()}, \"" + folder +
           "/model.safetensors\", metadata={\"format\": \"pt\"})";
}

}  // namespace

core::Result<WeightIndex> read_weight_index(std::string_view text, const std::string& name) {
    using R = core::Result<WeightIndex>;
    const auto refuse = [&](const std::string& field, const std::string& message) {
        return R::fail({{name + (field.empty() ? "" : ": " + field), message}});
    };
    const core::Result<json> doc = core::read_json(text);
    if (!doc) return refuse(doc.problems.front().path, doc.problems.front().message);
    if (!doc.value->is_object()) return refuse("", "expected a JSON object, got " + core::describe_json(*doc.value));
    const auto map = doc.value->find("weight_map");
    if (map == doc.value->end()) return refuse("weight_map", "missing (the shard of each tensor)");
    if (!map->is_object() || map->empty())
        return refuse("weight_map", "expected an object of tensor names and their shards' file names, got " +
                                        core::describe_json(*map));
    WeightIndex index;
    core::ProblemList problems;
    std::set<std::string> shards;
    for (const auto& [tensor, file] : map->items()) {
        const std::string field = core::path_key("weight_map", tensor);
        if (!file.is_string()) {
            problems.add(name + ": " + field, "expected a shard's file name, got " + core::describe_json(file));
            continue;
        }
        const std::string shard = file.get<std::string>();
        if (const std::string problem = shard_name_problem(shard); !problem.empty()) {
            problems.add(name + ": " + field, problem);
            continue;
        }
        shards.insert(shard);
        index.weight_map.emplace(tensor, shard);
    }
    if (!problems.empty()) return R::fail(std::move(problems).take());
    index.shards.assign(shards.begin(), shards.end());
    return R::ok(std::move(index));
}

core::Result<WeightFiles> WeightFiles::open(const std::string& folder, bool* unreadable) {
    using R = core::Result<WeightFiles>;
    bool ignored = false;
    bool& io = unreadable ? *unreadable : ignored;
    io = false;
    const fs::path dir(folder);
    const fs::path single = dir / "model.safetensors", index_path = dir / "model.safetensors.index.json";
    WeightFiles w;
    // One file to open, its problems kept; a file that cannot be opened at all is an I/O failure.
    const auto open_file = [&](const fs::path& path, core::ProblemList& problems) -> bool {
        if (!can_open(path)) {
            io = true;
            problems.add(path.string(), "cannot open it for reading");
            return false;
        }
        core::Result<core::TensorFile> f = core::TensorFile::open(path.string());
        if (!f) {
            for (core::Problem& p : f.problems) problems.push_back(std::move(p));
            return false;
        }
        w.files_.push_back(std::move(*f.value));
        return true;
    };

    core::ProblemList problems;
    if (is_file(single)) {
        w.label_ = single.string();
        if (!open_file(single, problems)) return R::fail(std::move(problems).take());
        for (const core::TensorInfo& t : w.files_.front().tensors()) w.where_.emplace(t.name, 0);
        return R::ok(std::move(w));
    }
    if (!is_file(index_path)) {
        if (has_pytorch_bin(dir)) return R::fail({{folder, conversion_advice(folder)}});
        return R::fail({{folder,
                         "no weights: neither model.safetensors nor model.safetensors.index.json (with its "
                         "shards) is in the folder"}});
    }
    w.label_ = index_path.string();
    const core::Result<std::string> text = core::read_file(index_path.string(), max_index_bytes, "a weight index");
    if (!text) {
        io = !core::is_over_limit(text.problems);
        return R::fail(text.problems);
    }
    const core::Result<WeightIndex> index = read_weight_index(*text.value, w.label_);
    if (!index) return R::fail(index.problems);
    // Each shard once, then each tensor of the index in the shard it names.
    std::map<std::string, std::size_t> shard_file;
    for (const std::string& shard : index.value->shards) {
        if (!is_file(dir / shard)) {
            problems.add(w.label_, "names the shard \"" + shard + "\", which is not in the folder");
            continue;
        }
        if (open_file(dir / shard, problems)) shard_file.emplace(shard, w.files_.size() - 1);
    }
    for (const auto& [tensor, shard] : index.value->weight_map) {
        const auto f = shard_file.find(shard);
        if (f == shard_file.end()) continue;  // its shard was refused above
        if (!w.files_[f->second].find(tensor))
            problems.add(w.files_[f->second].label() + ": " + tensor,
                         "the index places it in this shard, which does not hold it");
        else
            w.where_.emplace(tensor, f->second);
    }
    if (!problems.empty()) return R::fail(std::move(problems).take());
    return R::ok(std::move(w));
}

const core::TensorInfo* WeightFiles::find(std::string_view name) const {
    const auto it = where_.find(name);
    return it == where_.end() ? nullptr : files_[it->second].find(name);
}

const core::TensorFile& WeightFiles::file_of(std::string_view name) const { return files_[where_.find(name)->second]; }

namespace {

core::Result<core::Tensor> no_such_tensor(const std::string& label, std::string_view name) {
    return core::Result<core::Tensor>::fail({{label + ": " + std::string(name), "no such tensor in the weights"}});
}

}  // namespace

core::Result<core::Tensor> WeightFiles::read(std::string_view name) const {
    const auto it = where_.find(name);
    return it == where_.end() ? no_such_tensor(label_, name) : files_[it->second].read(name);
}

core::Result<core::Tensor> WeightFiles::read_rows(std::string_view name, std::uint64_t first_row,
                                                  std::uint64_t count) const {
    const auto it = where_.find(name);
    return it == where_.end() ? no_such_tensor(label_, name) : files_[it->second].read_rows(name, first_row, count);
}

template <class T>
core::Problems WeightFiles::read_rows_into(std::string_view name, std::uint64_t first_row, std::uint64_t count,
                                           T* out) const {
    const auto it = where_.find(name);
    if (it == where_.end()) return no_such_tensor(label_, name).problems;
    return files_[it->second].read_rows_into(name, first_row, count, out);
}

template <class T>
core::Problems WeightFiles::read_into(std::string_view name, T* out) const {
    const core::TensorInfo* info = find(name);
    if (!info) return no_such_tensor(label_, name).problems;
    return read_rows_into(name, 0, info->shape.size() == 2 ? info->shape[0] : 1, out);
}

template core::Problems WeightFiles::read_rows_into<float>(std::string_view, std::uint64_t, std::uint64_t,
                                                           float*) const;
template core::Problems WeightFiles::read_rows_into<double>(std::string_view, std::uint64_t, std::uint64_t,
                                                            double*) const;
template core::Problems WeightFiles::read_into<float>(std::string_view, float*) const;
template core::Problems WeightFiles::read_into<double>(std::string_view, double*) const;

std::uint64_t WeightFiles::byte_size() const {
    std::uint64_t bytes = 0;
    for (const core::TensorFile& f : files_) bytes += f.byte_size();
    return bytes;
}

core::Problems WeightFiles::keep_in_memory() {
    for (core::TensorFile& f : files_)
        if (core::Problems p = f.keep_in_memory(); !p.empty()) return p;
    for (const auto& [name, file] : where_) {
        const core::TensorFile& f = files_[file];
        InPlace values{f.in_place<float>(name), f.in_place<double>(name), f.in_place<core::bfloat16>(name),
                       f.in_place<core::float16>(name)};
        if (values.f32 || values.f64 || values.bf16 || values.f16) in_place_.emplace(name, values);
    }
    return {};
}

template <class T>
const T* WeightFiles::in_place(std::string_view name) const {
    const auto it = in_place_.find(name);
    if (it == in_place_.end()) return nullptr;
    const InPlace& v = it->second;
    if constexpr (std::is_same_v<T, float>)
        return v.f32;
    else if constexpr (std::is_same_v<T, double>)
        return v.f64;
    else if constexpr (std::is_same_v<T, core::bfloat16>)
        return v.bf16;
    else
        return v.f16;
}

template const float* WeightFiles::in_place<float>(std::string_view) const;
template const double* WeightFiles::in_place<double>(std::string_view) const;
template const core::bfloat16* WeightFiles::in_place<core::bfloat16>(std::string_view) const;
template const core::float16* WeightFiles::in_place<core::float16>(std::string_view) const;

bool WeightFiles::in_memory() const {
    return std::all_of(files_.begin(), files_.end(), [](const core::TensorFile& f) { return f.in_memory(); });
}

std::vector<std::string> WeightFiles::names() const {
    std::vector<std::string> out;
    out.reserve(where_.size());
    for (const auto& [name, file] : where_) out.push_back(name);
    return out;
}

}  // namespace attnviz::model
