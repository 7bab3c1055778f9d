// The two 16-bit formats model weights are stored in: bfloat16 (the top half of a float: 8 exponent
// bits) and IEEE half (float16: 5 exponent bits, 10 of mantissa), as their bits, and their values
// as float. A model's BF16 or F16 weights are multiplied as they lie (core::product), widened as
// they are used.
#pragma once

#include <cstdint>
#include <cstring>

namespace attnviz::core {

struct bfloat16 {
    std::uint16_t bits;
};
struct float16 {
    std::uint16_t bits;
};
static_assert(sizeof(bfloat16) == 2 && sizeof(float16) == 2);

// Their values as float, exactly.
inline float to_float(bfloat16 b) {
    const std::uint32_t f32 = static_cast<std::uint32_t>(b.bits) << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    return f;
}
inline float to_float(float16 h) {
    // Exponent and mantissa moved to a float's places give the value · 2^−112 (a half's subnormals
    // as float subnormals): times 2^112, exact. Infinity and NaN keep their kind.
    const std::uint32_t magnitude = static_cast<std::uint32_t>(h.bits & 0x7fff) << 13;
    float f;
    std::memcpy(&f, &magnitude, 4);
    f *= 0x1p112f;
    if ((h.bits & 0x7c00) == 0x7c00) {  // exponent all ones: infinity or NaN
        const std::uint32_t special = 0x7f800000u | magnitude;
        std::memcpy(&f, &special, 4);
    }
    return (h.bits & 0x8000) ? -f : f;
}

}  // namespace attnviz::core
