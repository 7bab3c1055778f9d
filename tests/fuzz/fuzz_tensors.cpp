// libFuzzer target for the tensor file readers (safetensors, .npy, .npz): open from bytes, then read
// every tensor listed. A read either fails with a problem or gives as many values as its shape.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/tensors.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::TensorFile> file =
        core::TensorFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (!file) {
        check(!file.problems.empty(), "TensorFile failed without saying why");
        return 0;
    }
    for (const core::TensorInfo& info : file.value->tensors()) {
        const core::Result<core::Tensor> t = file.value->read(info.name);
        if (!t) {
            check(!t.problems.empty(), "read failed without saying why");
            continue;
        }
        std::uint64_t count = 1;
        for (std::uint64_t d : t.value->shape) count *= d;
        check(count == t.value->values.size(), "a tensor's values do not fill its shape");
    }
    return 0;
}
