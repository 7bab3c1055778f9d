// Writing tensors as a safetensors file (Hugging Face's format, which tensors.hpp reads): an 8-byte
// little-endian header length, the JSON header {"__metadata__": {…}, NAME: {"dtype", "shape",
// "data_offsets"}, …} padded with spaces to a multiple of 8 bytes, then each tensor's values in C
// order, one after another.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/problem.hpp"

namespace attnviz::core {

// A tensor to write: its values as F32 (`floats`) or F64 (`doubles`), whichever is given; C order.
struct TensorToWrite {
    std::string name;
    std::vector<std::uint64_t> shape;
    const float* floats = nullptr;
    const double* doubles = nullptr;
};

// Writes the tensors (names distinct, not "__metadata__") and the metadata's string values to
// `path` atomically (file_io.hpp). Refused: a name given twice or reserved, a tensor without
// values; the problems of writing.
Problems write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                           const std::map<std::string, std::string>& metadata);

}  // namespace attnviz::core
