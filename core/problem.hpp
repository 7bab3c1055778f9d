// A problem found in user input: the field it concerns and what is wrong.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnviz::core {

struct Problem {
    std::string path;     // e.g. "heads[1].W_K", "config.n", "" for the whole document
    std::string message;  // e.g. "expected 4×2, got 4×3"

    // "heads[1].W_K: expected 4×2, got 4×3"
    std::string str() const { return path.empty() ? message : path + ": " + message; }
    bool operator==(const Problem&) const = default;
};

using Problems = std::vector<Problem>;

// A value, or the problems that prevented it. Exactly one of the two is set.
template <class T>
struct Result {
    std::optional<T> value;
    Problems problems;

    static Result ok(T v) { return Result{std::move(v), {}}; }
    static Result fail(Problems p) { return Result{std::nullopt, std::move(p)}; }
    explicit operator bool() const { return value.has_value(); }
};

}  // namespace attnviz::core
