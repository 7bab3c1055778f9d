#include "head_view.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

namespace attnviz::core {

namespace {

// The stronger of two lines: the larger weight, then the lower head, query, key.
bool stronger(const HeadLine& a, const HeadLine& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    return std::tie(a.head, a.query, a.key) < std::tie(b.head, b.query, b.key);
}

// Marks the top_k strongest entries of a row that are at least min_weight (equal weights: the
// lower key first). `kept` is sized to the row.
void mark_top_k(const double* row, int n_keys, double min_weight, int top_k, std::vector<char>& kept,
                std::vector<int>& order) {
    order.clear();
    for (int j = 0; j < n_keys; ++j)
        if (row[j] >= min_weight) order.push_back(j);
    kept.assign(static_cast<std::size_t>(n_keys), 0);
    const auto k = std::min(order.size(), static_cast<std::size_t>(top_k));
    const auto by_weight = [row](int a, int b) { return row[a] != row[b] ? row[a] > row[b] : a < b; };
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), by_weight);
    for (std::size_t r = 0; r < k; ++r) kept[static_cast<std::size_t>(order[r])] = 1;
}

// The tokens as flags over [0, count), out-of-range ones left out.
std::vector<char> flags(std::span<const int> tokens, Eigen::Index count) {
    std::vector<char> f(static_cast<std::size_t>(count), 0);
    for (int t : tokens)
        if (t >= 0 && t < count) f[static_cast<std::size_t>(t)] = 1;
    return f;
}

// A selection checked against the number of tokens it chooses from: each in range, none twice.
Problems check_selection(std::span<const int> tokens, Eigen::Index count, const char* what) {
    std::vector<char> seen(static_cast<std::size_t>(count), 0);
    for (int t : tokens) {
        if (t < 0 || t >= count)
            return {{what, std::to_string(t) + " is out of range: there are " + std::to_string(count)}};
        if (seen[static_cast<std::size_t>(t)]++) return {{what, std::to_string(t) + " is selected twice"}};
    }
    return {};
}

// The heads given (non-null), checked to share one shape.
Result<std::vector<const Matrix*>> given_heads(HeadWeights heads) {
    std::vector<const Matrix*> given;
    for (std::size_t h = 0; h < heads.size(); ++h) {
        if (!heads[h]) continue;
        if (!given.empty() && (heads[h]->rows() != given[0]->rows() || heads[h]->cols() != given[0]->cols()))
            return Result<std::vector<const Matrix*>>::fail(
                {{"heads[" + std::to_string(h) + "]", "weights of another shape than the first head's"}});
        given.push_back(heads[h]);
    }
    if (given.empty()) return Result<std::vector<const Matrix*>>::fail({{"heads", "no head is chosen"}});
    return Result<std::vector<const Matrix*>>::ok(std::move(given));
}

// The mean over heads of a per-head value.
template <class PerHead>
Result<Eigen::VectorXd> mean_over_heads(HeadWeights heads, PerHead per_head) {
    Result<std::vector<const Matrix*>> given = given_heads(heads);
    if (!given) return Result<Eigen::VectorXd>::fail(std::move(given.problems));
    Eigen::VectorXd mean;
    for (const Matrix* w : *given.value) {
        Result<Eigen::VectorXd> one = per_head(*w);
        if (!one) return one;
        if (mean.size() == 0)
            mean = std::move(*one.value);
        else
            mean += *one.value;
    }
    mean /= static_cast<double>(given.value->size());
    return Result<Eigen::VectorXd>::ok(std::move(mean));
}

}  // namespace

HeadLines head_lines(HeadWeights heads, const LineOptions& o) {
    HeadLines out;
    const bool isolate = !o.queries.empty() || !o.keys.empty();
    std::vector<char> kept;
    std::vector<int> order, columns;
    for (std::size_t h = 0; h < heads.size(); ++h) {
        if (!heads[h]) continue;
        const Matrix& w = *heads[h];
        const auto n = static_cast<int>(w.rows()), n_keys = static_cast<int>(w.cols());
        const std::vector<char> in_queries = flags(o.queries, n), in_keys = flags(o.keys, n_keys);
        // The isolated keys in order: the only columns of a row whose query is not isolated.
        std::vector<int> isolated_keys;
        for (int j = 0; j < n_keys; ++j)
            if (in_keys[static_cast<std::size_t>(j)]) isolated_keys.push_back(j);
        const bool top_k = o.top_k > 0 && o.top_k < n_keys;
        for (int i = 0; i < n; ++i) {
            const bool whole_row = !isolate || in_queries[static_cast<std::size_t>(i)];
            if (!whole_row && isolated_keys.empty()) continue;
            const double* row = w.row(i).data();  // row-major: the row is contiguous
            if (top_k) mark_top_k(row, n_keys, o.min_weight, o.top_k, kept, order);
            const auto line = [&](int j) {
                ++out.considered;
                if (!(row[j] >= o.min_weight))
                    ++out.below_min;
                else if (top_k && !kept[static_cast<std::size_t>(j)])
                    ++out.beyond_top_k;
                else
                    out.lines.push_back({static_cast<int>(h), i, j, row[j]});
            };
            if (whole_row)
                for (int j = 0; j < n_keys; ++j) line(j);
            else
                for (int j : isolated_keys) line(j);
        }
    }
    if (out.lines.size() > o.max_lines) {
        const auto bound = out.lines.begin() + static_cast<std::ptrdiff_t>(o.max_lines);
        std::nth_element(out.lines.begin(), bound, out.lines.end(), stronger);
        out.over_bound = out.lines.size() - o.max_lines;
        out.lines.erase(bound, out.lines.end());
    }
    std::sort(out.lines.begin(), out.lines.end(), [](const HeadLine& a, const HeadLine& b) { return stronger(b, a); });
    return out;
}

Result<Eigen::VectorXd> attention_of_queries(const Matrix& w, std::span<const int> queries, Aggregate how) {
    if (Problems p = check_selection(queries, w.rows(), "query"); !p.empty())
        return Result<Eigen::VectorXd>::fail(std::move(p));
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(w.cols());  // n_keys
    for (int i : queries) sum += w.row(i).transpose();
    if (how == Aggregate::mean && !queries.empty()) sum /= static_cast<double>(queries.size());
    return Result<Eigen::VectorXd>::ok(std::move(sum));
}

Result<Eigen::VectorXd> attention_to_keys(const Matrix& w, std::span<const int> keys, Aggregate how) {
    if (Problems p = check_selection(keys, w.cols(), "key"); !p.empty())
        return Result<Eigen::VectorXd>::fail(std::move(p));
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(w.rows());  // n
    for (int j : keys) sum += w.col(j);
    if (how == Aggregate::mean && !keys.empty()) sum /= static_cast<double>(keys.size());
    return Result<Eigen::VectorXd>::ok(std::move(sum));
}

Result<Eigen::VectorXd> attention_of_queries(HeadWeights heads, std::span<const int> queries, Aggregate how) {
    return mean_over_heads(heads, [&](const Matrix& w) { return attention_of_queries(w, queries, how); });
}

Result<Eigen::VectorXd> attention_to_keys(HeadWeights heads, std::span<const int> keys, Aggregate how) {
    return mean_over_heads(heads, [&](const Matrix& w) { return attention_to_keys(w, keys, how); });
}

std::vector<Ranked> strongest(std::span<const double> values, int k) {
    std::vector<Ranked> all(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) all[i] = {static_cast<int>(i), values[i]};
    // NaN ranks last (as −∞), so the order stays a strict weak ordering whatever the values.
    const auto key = [](double v) { return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v; };
    const auto first = [&](const Ranked& a, const Ranked& b) {
        const double va = key(a.value), vb = key(b.value);
        return va != vb ? va > vb : a.index < b.index;
    };
    const std::size_t keep = k > 0 ? std::min(all.size(), static_cast<std::size_t>(k)) : all.size();
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), first);
    all.resize(keep);
    return all;
}

std::vector<Ranked> top_keys(const Matrix& w, int query, int k) {
    if (query < 0 || query >= w.rows()) return {};
    return strongest({w.row(query).data(), static_cast<std::size_t>(w.cols())}, k);
}

std::vector<Ranked> top_queries(const Matrix& w, int key, int k) {
    if (key < 0 || key >= w.cols()) return {};
    const Eigen::VectorXd column = w.col(key);
    return strongest({column.data(), static_cast<std::size_t>(column.size())}, k);
}

}  // namespace attnviz::core
