// Readers for the files real model weights come in: safetensors (Hugging Face), NumPy .npy and
// .npz. No GUI dependency. Every reader refuses a malformed, truncated or lying file with a
// problem naming the file and the tensor, and never reads past what the file holds: sizes and
// offsets are checked against the file's real size before anything is allocated or read.
//
// Opening reads only the headers (and an .npz's directory); a tensor's bytes are read when asked
// for, with pread, so one attention layer of a 500 MB checkpoint costs that layer's size.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/half.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

struct TensorInfo {
    std::string name;                  // safetensors key, .npz entry without ".npy", or the .npy's name
    std::string dtype;                 // as the file says: "F32", "BF16", "<f8", ">f2" …
    std::vector<std::uint64_t> shape;  // as stored (C order: the last index varies fastest)
    // Where its data is, internal to the reader: the byte offset in the file (safetensors, .npy) or
    // in its .npz entry (inflated, if deflated), and the byte count.
    std::uint64_t offset = 0, bytes = 0;
    bool fortran_order = false;  // .npy: stored column-major (read() returns C order anyway)
    int entry = -1;              // .npz: which zip entry
};

struct Tensor {
    std::string name;
    std::vector<std::uint64_t> shape;
    std::vector<double> values;  // C order, each value converted to double exactly
    // The number of rows and columns as a matrix: a 2-D tensor as it is, a 1-D one as one row.
    std::uint64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
    std::uint64_t cols() const { return shape.empty() ? 1 : shape.back(); }
};

class TensorFile {
public:
    // A .safetensors, .npy or .npz file, told apart by its first bytes.
    static Result<TensorFile> open(const std::string& path);
    // The same from bytes in memory; `label` stands for the path in messages.
    static Result<TensorFile> from_bytes(std::string bytes, const std::string& label);

    std::string_view format() const { return format_; }  // "safetensors", "npy" or "npz"
    const std::string& label() const { return label_; }
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(std::string_view name) const;
    // safetensors' __metadata__ (string values); empty for NumPy files.
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // A tensor's values as doubles. Refused: a dtype other than F64/F32/F16/BF16 (<f8, <f4, <f2,
    // either byte order), a read that fails or comes up short, an .npz entry that is corrupt (CRC
    // mismatch, bad deflate data, an inflated size other than the directory's), and a NaN or
    // infinite value (named with its index).
    Result<Tensor> read(std::string_view name) const;
    // Rows first_row … first_row + count − 1 of a 1-D or 2-D tensor (a 1-D one is one row), as a
    // tensor of shape {count, cols}: only those rows' bytes are converted (and, outside .npz, read),
    // so a table of more than max_tensor_values values (a large vocabulary's embeddings) is read a
    // piece at a time. Refused as read() refuses, and: rows outside the tensor, no rows, more
    // dimensions, and a Fortran-order .npy larger than read() takes (its rows are not contiguous).
    Result<Tensor> read_rows(std::string_view name, std::uint64_t first_row, std::uint64_t count) const;
    // The same rows converted straight to T (float or double) into out, which holds count × cols
    // values: F32 and F16/BF16 exactly, F64 rounded for float. No doubles are made on the way (a
    // model's weights reach its compute type so). Refused as read_rows refuses.
    template <class T>
    Problems read_rows_into(std::string_view name, std::uint64_t first_row, std::uint64_t count, T* out) const;

    // A tensor's values where they lie, for use as they are: when the file was read into memory by
    // keep_in_memory (and the tensor is not in an .npz) and they are stored as T (F32 or <f4 for
    // float, F64 or <f8 for double, BF16 for bfloat16, F16 or <f2 for float16) in this machine's
    // byte order, in C order, and every one is finite (a pass over them). Else nullptr:
    // read_rows_into converts them.
    template <class T>
    const T* in_place(std::string_view name) const;

    // Reads the whole file into memory once (its tensors' data aligned for any dtype), so that later
    // reads convert from there instead of reading the disk again (a model's weights kept
    // resident). A file in memory stays as it is.
    Problems keep_in_memory();
    bool in_memory() const;
    std::uint64_t byte_size() const;  // the file's size in bytes

    struct Source;  // where the bytes come from: a file or memory

private:
    std::shared_ptr<const Source> source_;
    std::string label_, format_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, std::string> metadata_;
    struct Entry {  // an .npz member
        std::uint64_t data_offset = 0, compressed = 0, size = 0;
        std::uint32_t crc = 0;
        bool deflated = false;
    };
    std::vector<Entry> entries_;

    static Result<TensorFile> parse(std::shared_ptr<const Source> source, const std::string& label);
    // The values `info` describes: a tensor of the file, or rows of one (read_rows).
    Result<Tensor> read_info(const TensorInfo& info) const;
    // Whether read_info can take `info` (a dtype it reads, not too many values), and its count of values.
    Problems readable(const TensorInfo& info, std::uint64_t& count) const;
    // Decodes the `count` values `info` describes into out (readable() passed).
    template <class T>
    Problems decode(const TensorInfo& info, std::uint64_t count, T* out) const;
    // Rows first_row … first_row + count − 1 of `info` as a tensor of their own (read_rows checks);
    // `strided` when they are not contiguous (a Fortran-order .npy): then `info` itself, read whole.
    Result<TensorInfo> rows_info(const TensorInfo& info, std::uint64_t first_row, std::uint64_t count,
                                 bool& strided) const;
    Problems parse_safetensors();
    Problems parse_npz();
    // Hands an .npz entry's bytes to `take` in order, a piece at a time (inflating a deflated one
    // as it goes), then checks its size and CRC: "" or what is wrong. `take` returns false to stop
    // (with a problem of its own); nothing more is read then.
    using PieceSink = std::function<bool(const char* piece, std::uint64_t size)>;
    std::string stream_entry(const Entry& e, const PieceSink& take) const;
};

// The largest header or directory a reader accepts (a real one is a few kilobytes to megabytes).
inline constexpr std::uint64_t max_tensor_header_bytes = std::uint64_t{100} << 20;
// The largest tensor read() converts (1 GiB of doubles), so a lying shape cannot exhaust memory.
inline constexpr std::uint64_t max_tensor_values = std::uint64_t{1} << 27;

// A .npy file (version 1.0, '<f8', C order) of a rows×cols matrix in row-major `values`: what
// attnviz writes and the tests build files with. Read back, the values are the same bit for bit.
std::string npy_bytes(const std::vector<std::uint64_t>& shape, const std::vector<double>& values);

// IEEE half and bfloat16 bit patterns as doubles (exact).
double half_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);

}  // namespace attnviz::core
