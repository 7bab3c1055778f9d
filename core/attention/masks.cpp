#include "core/attention/masks.hpp"

#include <cstdlib>
#include <numeric>

namespace attnviz::core {

namespace {

Result<Matrix> shape_problem(int n, int m) {
    if (n >= 1 && m >= 1) return Result<Matrix>::ok(Matrix());
    return Result<Matrix>::fail(
        {{"mask", "needs at least one query and one key, got " + std::to_string(n) + "×" + std::to_string(m)}});
}

}  // namespace

Result<Matrix> padding_mask(int n, int m, int padded) {
    if (Result<Matrix> bad = shape_problem(n, m); !bad) return bad;
    if (padded < 0 || padded >= m)
        return Result<Matrix>::fail(
            {{"padding", "between 0 and " + std::to_string(m - 1) + " of the " + std::to_string(m) +
                             " keys can be padding (a query needs one "
                             "key to attend to), got " +
                             std::to_string(padded)}});
    Matrix mask = Matrix::Ones(n, m);
    mask.rightCols(padded).setZero();
    return Result<Matrix>::ok(std::move(mask));
}

Result<Matrix> sliding_window_mask(int n, int m, int width, bool causal) {
    if (Result<Matrix> bad = shape_problem(n, m); !bad) return bad;
    if (width < 1) return Result<Matrix>::fail({{"window", "must be at least 1, got " + std::to_string(width)}});
    Matrix mask = Matrix::Zero(n, m);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            const int ahead = i - j;  // how far key j lies before query i
            mask(i, j) = (causal ? ahead >= 0 && ahead < width : std::abs(ahead) < width) ? 1.0 : 0.0;
        }
    for (int i = 0; i < n; ++i)
        if (mask.row(i).sum() == 0)
            return Result<Matrix>::fail(
                {{"window", "query " + std::to_string(i) + " has no key within the window (" + std::to_string(m) +
                                " keys, width " + std::to_string(width) + "); widen it"}});
    return Result<Matrix>::ok(std::move(mask));
}

Result<Matrix> block_mask(int n, int m, const std::vector<int>& lengths) {
    if (Result<Matrix> bad = shape_problem(n, m); !bad) return bad;
    if (n != m)
        return Result<Matrix>::fail(
            {{"segments", "segments cut one sequence: they need as many keys as queries, got " + std::to_string(n) +
                              " queries and " + std::to_string(m) + " keys"}});
    long total = 0;
    for (int len : lengths) {
        if (len < 1)
            return Result<Matrix>::fail({{"segments", "each length must be at least 1, got " + std::to_string(len)}});
        total += len;
    }
    if (total != n)
        return Result<Matrix>::fail({{"segments", "the lengths add up to " + std::to_string(total) + ", not to the " +
                                                      std::to_string(n) + " tokens"}});
    Matrix mask = Matrix::Zero(n, m);
    int start = 0;
    for (int len : lengths) {
        mask.block(start, start, len, len).setOnes();
        start += len;
    }
    return Result<Matrix>::ok(std::move(mask));
}

Result<std::vector<int>> parse_lengths(const std::string& text) {
    std::vector<int> out;
    size_t at = 0;
    while (at <= text.size()) {
        size_t comma = text.find(',', at);
        if (comma == std::string::npos) comma = text.size();
        std::string part = text.substr(at, comma - at);
        while (!part.empty() && part.front() == ' ') part.erase(part.begin());
        while (!part.empty() && part.back() == ' ') part.pop_back();
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || v < 1 || v > 100000)
            return Result<std::vector<int>>::fail(
                {{"segments", "'" + part + "' is not a length (a whole number ≥ 1); write them as 3,2,3"}});
        out.push_back(static_cast<int>(v));
        at = comma + 1;
    }
    return Result<std::vector<int>>::ok(std::move(out));
}

}  // namespace attnviz::core
