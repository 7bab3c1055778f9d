// What the fuzz targets share: a check that stays on in Release builds (assert() does not) and
// says what broke, with the document that broke it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace attnviz::fuzz {

// Stops the run: libFuzzer then saves the input that got here as a crash reproducer.
[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    if (!detail.empty()) std::fprintf(stderr, "%.*s\n", static_cast<int>(detail.size()), detail.data());
    std::abort();
}

inline void check(bool ok, const char* what, std::string_view detail = {}) {
    if (!ok) fail(what, detail);
}

inline std::string_view as_text(const unsigned char* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace attnviz::fuzz
