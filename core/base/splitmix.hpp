// splitmix64 (Steele, Lea, Flood 2014): a small generator whose output is the same on every
// platform (unlike the standard library's distributions, whose algorithms each library picks).
// The saturation lab's √d_k experiment and the sentence sessions' word embeddings draw from it.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnviz::core {

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ULL); }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1) from the top 53 bits
    // A standard normal (mean 0, variance 1) by Marsaglia's polar method: only +, ×, ÷, sqrt
    // (exact in IEEE arithmetic) and one std::log, so every platform with a correctly rounded log
    // (glibc's is) draws the same numbers.
    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        // A point uniform in the unit disc (rejection from the square), then both of its
        // coordinates scaled by sqrt(−2·ln r² / r²): two independent standard normals.
        double u, v, r2;
        do {
            u = 2 * uniform() - 1;
            v = 2 * uniform() - 1;
            r2 = u * u + v * v;
        } while (r2 >= 1 || r2 == 0);
        const double f = std::sqrt(-2 * std::log(r2) / r2);
        spare_ = v * f;
        has_spare_ = true;
        return u * f;
    }

    // splitmix64's output function of one state: a well mixed 64-bit function of a 64-bit value.
    static std::uint64_t mix(std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
    double spare_ = 0;
    bool has_spare_ = false;
};

}  // namespace attnviz::core
