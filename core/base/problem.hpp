// A problem found in user input: the field it concerns and what is wrong.
#pragma once

#include <cstddef>
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

// How many problems a reader reports in full; beyond them one last problem says how many more.
inline constexpr std::size_t max_reported_problems = 20;

// "and 3 more problems": the last problem of a capped list (path ""), and its count back.
inline std::string more_problems_message(std::size_t n) {
    return "and " + std::to_string(n) + " more problem" + (n == 1 ? "" : "s");
}
inline std::optional<std::size_t> more_problems_count(const Problem& p) {
    const std::string& m = p.message;
    if (!p.path.empty() || m.rfind("and ", 0) != 0) return std::nullopt;
    std::size_t n = 0, k = 4;
    if (k >= m.size() || m[k] < '0' || m[k] > '9') return std::nullopt;
    for (; k < m.size() && m[k] >= '0' && m[k] <= '9'; ++k) n = n * 10 + static_cast<std::size_t>(m[k] - '0');
    if (m.compare(k, std::string::npos, n == 1 ? " more problem" : " more problems") != 0) return std::nullopt;
    return n;
}

// How many problems a list stands for: its length, a final "and N more problems" counted as N.
inline std::size_t problem_count(const Problems& problems) {
    if (problems.empty()) return 0;
    const auto more = more_problems_count(problems.back());
    return more ? problems.size() - 1 + *more : problems.size();
}

// Collects problems, keeping the first `keep` in full and counting the rest, so a file with
// millions of bad values costs neither memory nor millions of lines. Every reader (session,
// lesson, CSV) reports through one of these; take() gives the kept problems and, when some were
// only counted, a last one "and N more problems" (N exact).
class ProblemList {
public:
    explicit ProblemList(std::size_t keep = max_reported_problems) : keep_(keep) {}

    // Whether the next problem is kept in full (so its text is worth building).
    bool keeps_next() const { return kept_.size() < keep_; }

    void push_back(Problem p) {
        if (keeps_next())
            kept_.push_back(std::move(p));
        else
            ++more_;
    }
    void add(std::string path, std::string message) { push_back({std::move(path), std::move(message)}); }
    // Builds the problem only when it is kept: make() returns a Problem.
    template <class Make>
    void add_lazy(Make&& make) {
        if (keeps_next())
            kept_.push_back(make());
        else
            ++more_;
    }
    // Appends another list's problems after these, in order, the count staying exact.
    void append(ProblemList&& other) {
        for (Problem& p : other.kept_) push_back(std::move(p));
        more_ += other.more_;
        other.kept_.clear();
        other.more_ = 0;
    }

    bool empty() const { return kept_.empty() && more_ == 0; }
    std::size_t size() const { return kept_.size() + more_; }  // every problem, kept or counted

    Problems take() && {
        Problems out = std::move(kept_);
        if (more_) out.push_back({"", more_problems_message(more_)});
        return out;
    }

private:
    std::size_t keep_;
    Problems kept_;
    std::size_t more_ = 0;
};

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
