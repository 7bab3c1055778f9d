#include "core/attention/head_view.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace attnviz::core {

namespace {

// The stronger of two lines: the larger weight, then the lower head, query, key.
bool stronger(const HeadLine& a, const HeadLine& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    return std::tie(a.head, a.query, a.key) < std::tie(b.head, b.query, b.key);
}

// The k-th largest value of a row (NaN never counts), for 0 < k < the row's length: one pass
// keeping the k largest so far when k is small (a new value rarely enters), else a selection.
double kth_largest(const double* row, int n_keys, int k, std::vector<double>& scratch) {
    constexpr double none = -std::numeric_limits<double>::infinity();
    scratch.clear();
    if (k <= 16) {
        scratch.assign(static_cast<std::size_t>(k), none);  // ascending: scratch[0] is the k-th
        for (int j = 0; j < n_keys; ++j) {
            const double x = row[j];
            if (!(x > scratch[0])) continue;
            std::size_t at = 0;
            while (at + 1 < scratch.size() && scratch[at + 1] < x) {
                scratch[at] = scratch[at + 1];
                ++at;
            }
            scratch[at] = x;
        }
        return scratch[0];
    }
    for (int j = 0; j < n_keys; ++j)
        if (!std::isnan(row[j])) scratch.push_back(row[j]);
    if (scratch.size() < static_cast<std::size_t>(k)) return none;
    const auto kth = scratch.begin() + (k - 1);
    std::nth_element(scratch.begin(), kth, scratch.end(), std::greater<>());
    return *kth;
}

// Whether key j of a row is among its top k, by counting the stronger keys (for a few keys of a
// row: cheaper than ranking the row). `w` is at least min_weight, so every stronger key is too.
bool in_top_k(const Eigen::Ref<const Eigen::RowVectorXd>& row, int j, int top_k) {
    const double w = row(j);
    const auto stronger = (row.array() > w).count() + (row.head(j).array() == w).count();
    return stronger < top_k;
}

// Collects the lines that pass the filters, keeping at most about twice the bound: when full, the
// strongest `bound` stay and the weakest of them becomes the bar a new line must pass (a line
// below it could never be among the strongest `bound`).
class Strongest {
public:
    explicit Strongest(std::size_t bound) : bound_(bound) {}
    void add(const HeadLine& line) {
        if (bar_ && !stronger(line, *bar_)) {
            ++dropped_;
            return;
        }
        lines_.push_back(line);
        if (lines_.size() >= 2 * bound_ + 1024) prune();
    }
    // Below this weight a line is dropped at once (−∞ until the collector first fills).
    double floor() const { return bar_ ? bar_->weight : -std::numeric_limits<double>::infinity(); }
    // Lines dropped without being offered (weaker than the floor).
    void drop(std::size_t count) { dropped_ += count; }
    // The strongest `bound` lines, weakest first, and how many were dropped.
    std::vector<HeadLine> take(std::size_t& dropped) {
        prune();
        std::sort(lines_.begin(), lines_.end(), [](const HeadLine& a, const HeadLine& b) { return stronger(b, a); });
        dropped = dropped_;
        return std::move(lines_);
    }

private:
    void prune() {
        if (lines_.size() <= bound_) return;
        const auto end = lines_.begin() + static_cast<std::ptrdiff_t>(bound_);
        std::nth_element(lines_.begin(), end, lines_.end(), stronger);
        dropped_ += lines_.size() - bound_;
        lines_.erase(end, lines_.end());
        if (bound_ == 0) {
            bar_ = HeadLine{0, 0, 0, std::numeric_limits<double>::infinity()};
            return;
        }
        bar_ = *std::min_element(lines_.begin(), lines_.end(),
                                 [](const HeadLine& a, const HeadLine& b) { return stronger(b, a); });
    }

    std::size_t bound_;
    std::vector<HeadLine> lines_;
    std::optional<HeadLine> bar_;
    std::size_t dropped_ = 0;
};

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
    Strongest strongest(o.max_lines);
    std::vector<double> scratch;
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
            if (whole_row) {
                // The counts by whole-row comparisons; then a scan for the lines that pass (few,
                // with top-k), whose test is rarely true.
                const auto values = w.row(i).array();
                const auto at_least = static_cast<std::size_t>((values >= o.min_weight).count());
                out.considered += static_cast<std::size_t>(n_keys);
                out.below_min += static_cast<std::size_t>(n_keys) - at_least;
                if (!top_k || at_least <= static_cast<std::size_t>(o.top_k)) {
                    // Every key at least min_weight passes; those under the collector's floor are
                    // dropped by a count, the rest offered.
                    const double floor = std::max(o.min_weight, strongest.floor());
                    if (floor > o.min_weight)
                        strongest.drop(at_least - static_cast<std::size_t>((values >= floor).count()));
                    for (int j = 0; j < n_keys; ++j)
                        if (row[j] >= floor) strongest.add({static_cast<int>(h), i, j, row[j]});
                    continue;
                }
                // More than k keys reach min_weight, so the k-th largest does: the top k are the
                // keys above it and, of those equal to it, the lowest.
                const double kth = kth_largest(row, n_keys, o.top_k, scratch);
                auto ties = static_cast<std::ptrdiff_t>(o.top_k) - static_cast<std::ptrdiff_t>((values > kth).count());
                out.beyond_top_k += at_least - static_cast<std::size_t>(o.top_k);
                for (int j = 0; j < n_keys; ++j)
                    if (row[j] > kth || (row[j] == kth && ties-- > 0))
                        strongest.add({static_cast<int>(h), i, j, row[j]});
                continue;
            }
            // Only the isolated keys of this row: each ranked within the row.
            for (int j : isolated_keys) {
                ++out.considered;
                if (!(row[j] >= o.min_weight))
                    ++out.below_min;
                else if (top_k && !in_top_k(w.row(i), j, o.top_k))
                    ++out.beyond_top_k;
                else
                    strongest.add({static_cast<int>(h), i, j, row[j]});
            }
        }
    }
    out.lines = strongest.take(out.over_bound);
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

double default_min_weight(int n_keys) {
    return std::min(0.02f, 1.0f / static_cast<float>(std::max(n_keys, 1)));  // in float, as the panel's slider holds it
}

int default_top_k(int n_keys) { return n_keys >= 64 ? 3 : 0; }

bool default_scaled_opacity(int n_keys) { return n_keys >= 16; }

double opaque_weight(const HeadLines& lines, bool scaled) {
    if (!scaled || lines.lines.empty()) return 1;
    const double at = lines.lines[(lines.lines.size() - 1) * 99 / 100].weight;
    return at > 0 ? at : 1;
}

TokenChoice parse_token_choice(const std::string& text, int n, int n_keys) {
    TokenChoice out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, comma - at);
        at = comma + 1;
        const bool key = !item.empty() && (item[0] == 'k' || item[0] == 'K');
        const std::string digits = key ? item.substr(1) : item;
        const int count = key ? n_keys : n;
        int t = -1;
        if (!digits.empty() && digits.size() < 10 && digits.find_first_not_of("0123456789") == std::string::npos)
            t = std::stoi(digits);
        if (t < 0) {
            if (out.problem.empty())
                out.problem = "'" + item + "' is no token: a query row from 0 (2) or k and a key column (k2)";
            continue;
        }
        if (t >= count) {
            if (out.problem.empty())
                out.problem = std::string(key ? "key " : "query ") + std::to_string(t) + " does not exist: there are " +
                              std::to_string(count);
            continue;
        }
        std::vector<int>& own = key ? out.keys : out.queries;
        const auto place = std::lower_bound(own.begin(), own.end(), t);
        if (place == own.end() || *place != t) own.insert(place, t);
    }
    return out;
}

Result<Matrix> mean_of_heads(HeadWeights heads) {
    Result<std::vector<const Matrix*>> given = given_heads(heads);
    if (!given) return Result<Matrix>::fail(std::move(given.problems));
    Matrix mean = *given.value->front();
    for (std::size_t h = 1; h < given.value->size(); ++h) mean += *(*given.value)[h];
    mean /= static_cast<double>(given.value->size());
    return Result<Matrix>::ok(std::move(mean));
}

bool is_special_token(std::string_view token) {
    const std::size_t first = token.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return false;
    token = token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
    static constexpr std::string_view named[] = {"[CLS]", "[SEP]", "[PAD]",  "[MASK]", "<s>",  "</s>",
                                                 "<pad>", "<unk>", "<mask>", "<bos>",  "<eos>"};
    if (std::find(std::begin(named), std::end(named), token) != std::end(named)) return true;
    // <|endoftext|>, <|begin_of_text|>, <|eot_id|>, <|im_start|>: GPT-2's, Llama 3's and Qwen's form.
    return token.size() > 4 && token.starts_with("<|") && token.ends_with("|>") &&
           token.find_first_of(" \t") == std::string_view::npos;
}

KeptTokens kept_tokens(const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                       bool hide_special) {
    KeptTokens kept;
    for (auto [tokens, out] : {std::pair{&query_tokens, &kept.queries}, std::pair{&key_tokens, &kept.keys}})
        for (std::size_t t = 0; t < tokens->size(); ++t)
            if (!hide_special || !is_special_token((*tokens)[t])) out->push_back(static_cast<int>(t));
    return kept;
}

Matrix renormalised_weights(const Matrix& w, const KeptTokens& kept) {
    Matrix out(static_cast<Eigen::Index>(kept.queries.size()), static_cast<Eigen::Index>(kept.keys.size()));
    const bool every_key = out.cols() == w.cols();  // nothing to renormalise: the rows are as read
    for (Eigen::Index r = 0; r < out.rows(); ++r) {
        const Eigen::Index i = kept.queries[static_cast<std::size_t>(r)];
        double sum = 0;
        for (Eigen::Index c = 0; c < out.cols(); ++c) sum += out(r, c) = w(i, kept.keys[static_cast<std::size_t>(c)]);
        if (!every_key && sum > 0) out.row(r) /= sum;
    }
    return out;
}

}  // namespace attnviz::core
