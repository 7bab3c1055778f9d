// The weights of a model folder, as Hugging Face writes them: one model.safetensors, or shards
// (model-00001-of-00004.safetensors …) that model.safetensors.index.json lists. Opening reads the
// files' headers only (core::TensorFile); a tensor's values are read, in its stored dtype and
// converted then, when it is asked for.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/problem.hpp"
#include "core/io/tensors.hpp"

namespace attnviz::model {

// The largest index accepted (a real one is a few hundred kilobytes).
inline constexpr std::size_t max_index_bytes = std::size_t{64} << 20;

// model.safetensors.index.json: which shard holds each tensor.
struct WeightIndex {
    std::map<std::string, std::string> weight_map;  // tensor name → shard file name
    std::vector<std::string> shards;                // each shard named, once, sorted
};

// The index of a model.safetensors.index.json's text; `name` (the file) starts every problem's
// path. Refused: text that is not a JSON object, a missing or empty "weight_map", a shard that is
// not a text or not a plain file name of the same folder (empty, ".", "..", or with a '/' or '\').
// "metadata" and any other field are ignored.
core::Result<WeightIndex> read_weight_index(std::string_view text, const std::string& name);

class WeightFiles {
public:
    // The weights of `folder`: model.safetensors, else the shards of model.safetensors.index.json.
    // Refused with a problem naming the file: a folder without either (one with only PyTorch's
    // pytorch_model.bin is told how to convert it), a malformed file, an index naming a shard the
    // folder does not have or a tensor its shard does not hold. `unreadable`, when given, tells
    // whether the failure was a file that could not be read rather than one read and refused.
    static core::Result<WeightFiles> open(const std::string& folder, bool* unreadable = nullptr);

    // The file messages about the weights as a whole name: FOLDER/model.safetensors or
    // FOLDER/model.safetensors.index.json.
    const std::string& label() const { return label_; }
    // A tensor's header (name, dtype, shape), or nullptr when no file holds it.
    const core::TensorInfo* find(std::string_view name) const;
    // The file that holds a tensor (find() is not null), whose label() starts its messages.
    const core::TensorFile& file_of(std::string_view name) const;
    // A tensor's values as doubles (core::TensorFile::read of the file holding it).
    core::Result<core::Tensor> read(std::string_view name) const;
    // Rows of a table (core::TensorFile::read_rows of the file holding it).
    core::Result<core::Tensor> read_rows(std::string_view name, std::uint64_t first_row, std::uint64_t count) const;
    // The same converted straight to T (float or double) into out, count × cols values
    // (core::TensorFile::read_rows_into); read_into takes every row of a 1-D or 2-D tensor.
    template <class T>
    core::Problems read_rows_into(std::string_view name, std::uint64_t first_row, std::uint64_t count, T* out) const;
    template <class T>
    core::Problems read_into(std::string_view name, T* out) const;

    // The bytes of the weights' files together: the weights as stored.
    std::uint64_t byte_size() const;
    // Reads every file into memory once (core::TensorFile::keep_in_memory): a run then converts the
    // weights from there, one block at a time, instead of reading the disk again.
    core::Problems keep_in_memory();
    // Whether the files are held in memory (else each run reads them from the disk).
    bool in_memory() const;
    // A tensor's values where they lie in memory, to be used as they are, when they are stored as T
    // (F32 for float, F64 for double, BF16 for core::bfloat16, F16 for core::float16) and finite
    // (core::TensorFile::in_place, looked for once by keep_in_memory); else nullptr, and read_into
    // converts them.
    template <class T>
    const T* in_place(std::string_view name) const;
    // Every tensor's name, sorted.
    std::vector<std::string> names() const;

private:
    std::string label_;
    std::vector<core::TensorFile> files_;
    std::map<std::string, std::size_t, std::less<>> where_;  // tensor name → its file in files_
    // The tensors usable in place (keep_in_memory), by name: their values in files_' memory, as the
    // one type they are stored in (the others null).
    struct InPlace {
        const float* f32;
        const double* f64;
        const core::bfloat16* bf16;
        const core::float16* f16;
    };
    std::map<std::string, InPlace, std::less<>> in_place_;
};

}  // namespace attnviz::model
