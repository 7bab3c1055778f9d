// Internal to the tensor readers (tensors_*.cpp): where a file's bytes come from
// (TensorFile::Source, and bytes in memory) and what the readers share: ranges read from a source,
// little-endian numbers, sizes that cannot overflow, how a dtype's elements are stored, problems
// naming the tensor, and the .npy header's parser (a .npy file's and each .npz member's).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/io/tensors.hpp"

namespace attnviz::core {

// ---------------------------------------------------------------------------------------------
// Where the bytes come from

struct TensorFile::Source {
    virtual ~Source() = default;
    virtual std::uint64_t size() const = 0;
    // Exactly n bytes at `offset` into out; false when the range is outside the source or the read fails.
    virtual bool read(std::uint64_t offset, std::uint64_t n, char* out) const = 0;
    // All the bytes when they are held in memory (read there in place), else nullptr.
    virtual const char* data() const { return nullptr; }
    // The same when the bytes are held as storage for values of any type, which may be used in place
    // (keep_in_memory's), else nullptr.
    virtual const unsigned char* storage() const { return nullptr; }
};

namespace detail {

using Source = TensorFile::Source;

struct MemorySource final : Source {
    std::string bytes;
    std::uint64_t size() const override { return bytes.size(); }
    bool read(std::uint64_t offset, std::uint64_t n, char* out) const override {
        if (offset > bytes.size() || n > bytes.size() - offset) return false;
        std::memcpy(out, bytes.data() + offset, n);
        return true;
    }
    const char* data() const override { return bytes.data(); }
};

// The helpers below are defined in tensors_open.cpp, parse_npy in tensors_npy.cpp.

// A range read into a string (n is checked against the source before anything is allocated).
std::optional<std::string> read_range(const Source& s, std::uint64_t offset, std::uint64_t n);

std::uint64_t le(const char* p, int bytes);

// a·b, or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> times(std::uint64_t a, std::uint64_t b);

std::optional<std::uint64_t> element_count(const std::vector<std::uint64_t>& shape);

std::string shape_text(const std::vector<std::uint64_t>& shape);

// The bytes of one element of a dtype, or 0 for a dtype this reader does not know at all.
int safetensors_item_size(const std::string& dtype);

// How one element is stored: its size and byte order, and whether it is a float attnviz reads.
struct Element {
    int size = 0;
    bool big_endian = false;
    bool readable = false;  // F64/F32/F16/BF16 or f8/f4/f2
    bool bfloat = false;
};

Element element_of(const std::string& dtype);

// A problem naming the file and the tensor; a tensor's name is the file's text, shown escaped.
Problem problem(const std::string& label, const std::string& tensor, const std::string& message);

// Parses a .npy held in `s` from `base` for `length` bytes into `info` (offset relative to s).
Problems parse_npy(const Source& s, std::uint64_t base, std::uint64_t length, TensorInfo& info,
                   const std::string& label);

}  // namespace detail

}  // namespace attnviz::core
