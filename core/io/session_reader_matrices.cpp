// Reading a session file's matrices, tokens and heads (session_reader.hpp): each matrix's numbers
// stored as they arrive, within the config's shape and the numbers' budget, and the lists of
// labels and of heads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/io/session_keys.hpp"
#include "core/io/session_reader.hpp"

namespace attnviz::core::detail {

namespace {

// No matrix of a valid session is wider or taller than these, config or not.
constexpr std::int64_t widest = std::max({Limits::max_d_model, Limits::max_d_k, Limits::max_d_v});
constexpr std::int64_t tallest = std::max({std::int64_t{Limits::max_n}, std::int64_t{Limits::max_d_model},
                                           std::int64_t{Limits::max_heads} * Limits::max_d_v});

std::string shape_text(std::int64_t rows, std::int64_t cols) {
    return std::to_string(rows) + "×" + std::to_string(cols);
}

// A head's field by its key, or nullopt for a key that is not one.
std::optional<MatrixId> head_field(const std::string& key) {
    const std::optional<MatrixId> id = matrix_id_from_name(key);
    return id && is_head_field(*id) ? id : std::nullopt;
}

}  // namespace

// -- matrices

void SessionReader::want(MatrixBuild& m, std::int64_t rows, std::int64_t cols) {
    m.want_rows = rows;
    m.want_cols = cols;
}

void SessionReader::drop(MatrixBuild& m) {
    stored_ -= static_cast<std::int64_t>(m.data.size());
    m.storing = false;
    std::vector<double>().swap(m.data);
}

void SessionReader::fail(MatrixBuild& m) {
    m.failed = true;
    drop(m);
}

void SessionReader::store(MatrixBuild& m, std::int64_t c, double v) {
    if (m.want_cols >= 0 && c >= m.want_cols) return drop(m);  // longer than the config says
    if (c >= widest) return drop(m);         // longer than any config allows (before the config is read)
    if (m.cols >= 0 && c >= m.cols) return;  // a ragged row: reported at its end
    if (stored_ >= Limits::max_input_numbers) {
        if (!over_budget_)
            structure_.add(m.path, "the matrices hold more than " + std::to_string(Limits::max_input_numbers) +
                                       " numbers, the limit for a session; the rest are not read");
        over_budget_ = true;
        return drop(m);
    }
    if (m.data.size() == m.data.capacity() && m.want_rows >= 0) {
        // Grow geometrically, but never past the shape the config asks for.
        const std::int64_t full = m.want_rows * m.want_cols;
        const std::int64_t next = std::max<std::int64_t>(1024, 2 * static_cast<std::int64_t>(m.data.size()));
        m.data.reserve(static_cast<std::size_t>(std::min(full, next)));
    }
    m.data.push_back(v);
    ++stored_;
}

void SessionReader::read_cell(MatrixBuild& m, std::int64_t r, std::int64_t c, ProblemList& out) {
    auto cell_path = [&] {
        return path_index(path_index(m.path, static_cast<std::size_t>(r)), static_cast<std::size_t>(c));
    };
    if (in_.peek() == JsonReader::Kind::number) {
        JsonReader::Number num;
        if (!in_.read_number(num)) return;
        if (num.overflow) {
            out.add_lazy([&] { return Problem{cell_path(), overflow_message(num.text)}; });
            return fail(m);
        }
        if (!(std::abs(num.value) <= Limits::max_abs_value)) {
            out.add_lazy([&] { return Problem{cell_path(), *value_problem(num.value)}; });
            return fail(m);
        }
        if (m.storing) store(m, c, num.value);
        return;
    }
    if (!in_.ok()) return;
    const std::string d = in_.describe_next(out.keeps_next());
    if (!in_.ok()) return;
    out.add_lazy([&] { return Problem{cell_path(), "expected a number, got " + d}; });
    fail(m);
}

void SessionReader::read_matrix(MatrixBuild& m, ProblemList& out) {
    m.seen = true;
    if (in_.peek() != JsonReader::Kind::array) {
        if (!in_.ok()) return;
        const std::string d = in_.describe_next(out.keeps_next());
        out.add_lazy([&] { return Problem{m.path, "expected an array of rows, got " + d}; });
        return fail(m);
    }
    in_.begin_array();
    while (in_.next_element()) {
        const std::int64_t r = m.rows++;
        if (m.storing && ((m.want_rows >= 0 && r >= m.want_rows) || r >= tallest)) drop(m);  // a row too many
        const auto row_path = [&] { return path_index(m.path, static_cast<std::size_t>(r)); };
        if (in_.peek() != JsonReader::Kind::array) {
            if (!in_.ok()) return;
            const std::string d = in_.describe_next(out.keeps_next());
            out.add_lazy([&] { return Problem{row_path(), "expected a row (an array of numbers), got " + d}; });
            fail(m);
            continue;
        }
        in_.begin_array();
        std::int64_t c = 0;
        while (in_.next_element()) read_cell(m, r, c++, out);
        if (!in_.ok()) return;
        if (m.cols < 0) {
            m.cols = c;
            if (m.storing && m.want_cols >= 0 && c != m.want_cols) drop(m);
        } else if (c != m.cols) {
            out.add_lazy([&] {
                return Problem{row_path(), "ragged: this row has " + std::to_string(c) + " values, row 0 has " +
                                               std::to_string(m.cols)};
            });
            fail(m);
        }
    }
}

Matrix SessionReader::finish_matrix(MatrixBuild& m, std::int64_t rows, std::int64_t cols, ProblemList& out) {
    if (!m.seen) {
        out.add(m.path, "missing");
        return {};
    }
    if (m.failed) return {};
    const std::int64_t got_cols = std::max<std::int64_t>(m.cols, 0);
    if (m.rows != rows || got_cols != cols) {
        out.add(m.path, "expected " + shape_text(rows, cols) + ", got " + shape_text(m.rows, got_cols));
        return {};
    }
    if (!m.storing || static_cast<std::int64_t>(m.data.size()) != rows * cols) return {};  // over the budget
    Matrix out_m(rows, cols);
    std::copy(m.data.begin(), m.data.end(), out_m.data());
    drop(m);
    return out_m;
}

// -- tokens and heads

void SessionReader::read_labels(LabelsBuild& b, const char* path, std::int64_t keep) {
    b.seen = true;
    if (in_.peek() != JsonReader::Kind::array) {
        b.desc = in_.describe_next();
        return;
    }
    b.array = true;
    in_.begin_array();
    while (in_.next_element()) {
        const std::int64_t i = b.count++;
        if (in_.peek() == JsonReader::Kind::string) {
            if (i < keep) {
                std::string label;
                in_.read_string(label);
                b.labels.push_back(std::move(label));
            } else {
                in_.skip_value();
            }
            continue;
        }
        if (!in_.ok()) return;
        const std::string d = in_.describe_next(b.problems.keeps_next());
        b.problems.add_lazy([&] {
            return Problem{path_index(path, static_cast<std::size_t>(i)), "expected a text label, got " + d};
        });
    }
}

std::vector<std::string> SessionReader::finish_labels(LabelsBuild& b, const char* path, int want,
                                                      const char* config_field, std::vector<std::string> defaults,
                                                      ProblemList& out) {
    if (!b.seen) return defaults;
    if (!b.array) {
        out.add(path, "expected an array of " + std::to_string(want) + " labels, got " + b.desc);
    } else if (b.count != want) {
        out.add(path,
                "expected " + std::to_string(want) + " labels (" + config_field + "), got " + std::to_string(b.count));
    } else {
        out.append(std::move(b.problems));
        return std::move(b.labels);
    }
    return {};
}

void SessionReader::read_heads() {
    heads_seen_ = true;
    if (in_.peek() != JsonReader::Kind::array) {
        heads_desc_ = in_.describe_next();
        return;
    }
    heads_array_ = true;
    in_.begin_array();
    const std::int64_t keep = known_ ? known_->heads : Limits::max_heads;  // more cannot be valid
    std::string key;
    while (in_.next_element()) {
        const std::int64_t i = head_count_++;
        if (i >= keep) {
            in_.skip_value();
            continue;
        }
        heads_.emplace_back();
        HeadBuild& h = heads_.back();
        const std::string path = path_index("heads", static_cast<std::size_t>(i));
        if (in_.peek() != JsonReader::Kind::object) {
            if (!in_.ok()) return;
            const std::string d = in_.describe_next(heads_problems_.keeps_next());
            heads_problems_.add_lazy([&] {
                return Problem{path, "expected an object with W_Q, W_K and W_V, got " + d};
            });
            continue;
        }
        h.object = true;
        for (MatrixId id : all_matrix_ids) {
            if (!is_head_field(id)) continue;
            MatrixBuild& w = h.w[static_cast<std::size_t>(id)];
            w.path = path + "." + name(id);
            if (known_) want(w, rows_of(id, *known_), cols_of(id, *known_));
        }
        in_.begin_object();
        while (in_.next_key(key)) {
            const std::optional<MatrixId> id = head_field(key);
            const std::size_t k = id ? static_cast<std::size_t>(*id) : 0;
            if (!id) {
                in_.skip_value();
            } else if (h.w[k].seen) {
                structure_.add(path_key(path, key), duplicate_message);
                in_.skip_value();
            } else {
                read_matrix(h.w[k], heads_problems_);
            }
        }
    }
}

void SessionReader::read_layer_field(MatrixId id) {
    const std::size_t k = static_cast<std::size_t>(id);
    MatrixBuild& m = layer_[k];
    m.path = name(id);
    if (known_ && !exists(id, *known_)) {
        m.seen = true;
        in_.skip_value();
        return;
    }
    if (known_) want(m, rows_of(id, *known_), cols_of(id, *known_));
    read_matrix(m, layer_problems_[k]);
}

}  // namespace attnviz::core::detail
