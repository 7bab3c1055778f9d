// libFuzzer target for the tensor file readers (safetensors, .npy, .npz): open from bytes, then read
// every tensor listed. A read either fails with a problem or gives as many values as its shape (and
// its rows read alone the same values); a safetensors file that opens has tensors that tile its
// data section exactly; every message is printable (the file's names and bytes in it escaped).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/format.hpp"
#include "core/io/tensors.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

namespace {

void check_printable(const core::Problems& problems) {
    for (const core::Problem& p : problems)
        check(core::printable(p.str()) == p.str(), "a message holds control characters or invalid UTF-8", p.str());
}

// The non-empty tensors, in order of their offsets, each begin where the one before ends, from the
// end of the header to the end of the file.
void check_tiled(const core::TensorFile& file, const std::uint8_t* data, std::size_t size) {
    std::vector<const core::TensorInfo*> order;
    for (const core::TensorInfo& t : file.tensors())
        if (t.bytes > 0) order.push_back(&t);
    std::sort(order.begin(), order.end(),
              [](const core::TensorInfo* a, const core::TensorInfo* b) { return a->offset < b->offset; });
    std::uint64_t header = 0;  // the 8-byte little-endian length before the header
    for (int k = 7; k >= 0; --k) header = (header << 8) | data[k];
    std::uint64_t at = 8 + header;  // the data section's first byte
    for (const core::TensorInfo* t : order) {
        check(t->offset == at, "the tensors of a safetensors file that opened do not tile its data");
        at += t->bytes;
    }
    check(at == size, "bytes after the last tensor of a safetensors file that opened");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::TensorFile> file =
        core::TensorFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (!file) {
        check(!file.problems.empty(), "TensorFile failed without saying why");
        check_printable(file.problems);
        return 0;
    }
    if (file.value->format() == "safetensors") check_tiled(*file.value, data, size);
    for (const core::TensorInfo& info : file.value->tensors()) {
        const core::Result<core::Tensor> t = file.value->read(info.name);
        if (!t) {
            check(!t.problems.empty(), "read failed without saying why");
            check_printable(t.problems);
            continue;
        }
        std::uint64_t count = 1;
        for (std::uint64_t d : t.value->shape) count *= d;
        check(count == t.value->values.size(), "a tensor's values do not fill its shape");
        // Its last row and its second half read alone give the same values as the whole.
        if (t.value->shape.empty() || t.value->shape.size() > 2 || count == 0) continue;
        const std::uint64_t rows = t.value->rows(), cols = t.value->cols();
        for (const std::uint64_t first : {rows - 1, rows / 2}) {
            const core::Result<core::Tensor> part = file.value->read_rows(info.name, first, rows - first);
            check(static_cast<bool>(part), "rows of a tensor that reads whole are refused");
            if (!part) continue;
            check(part.value->values.size() == (rows - first) * cols, "rows read alone do not fill their shape");
            for (std::uint64_t k = 0; k < part.value->values.size(); ++k)
                check(part.value->values[k] == t.value->values[first * cols + k],
                      "rows read alone differ from the whole");
        }
    }
    return 0;
}
