// What of tensors.hpp needs none of the readers' internals: a tensor found by name, and IEEE half
// and bfloat16 as doubles. Opening a file is in tensors_open.cpp, each format's reader in
// tensors_safetensors.cpp, tensors_npy.cpp and tensors_npz.cpp, reading a tensor in tensors_read.cpp.
#include "core/io/tensors.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace attnviz::core {

const TensorInfo* TensorFile::find(std::string_view name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Conversions and writing

double half_to_double(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    double v;
    if (exponent == 0)
        v = std::ldexp(mantissa, -24);  // subnormal: mantissa · 2^−24
    else if (exponent == 31)
        v = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else {  // normal: (1 + mantissa/1024) · 2^(exponent − 15), built as a double's bits
        const std::uint64_t b = std::uint64_t(exponent - 15 + 1023) << 52 | std::uint64_t(mantissa) << 42;
        std::memcpy(&v, &b, 8);
    }
    return sign ? -v : v;
}

double bfloat16_to_double(std::uint16_t bits) {
    const std::uint32_t f32 = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    return f;
}

}  // namespace attnviz::core
