#include "core/teach/lesson.hpp"

#include "core/attention/stiefel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/attention/registry.hpp"
#include "core/base/format.hpp"
#include "core/base/text.hpp"
#include "core/io/json_read.hpp"

namespace attnviz::core {

using nlohmann::json;

namespace {

struct LessonReader {
    ProblemList problems;  // the first max_reported_problems, then "and N more problems"

    std::string text(const json& obj, const std::string& path, const char* key, bool required) {
        auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) problems.push_back({path_key(path, key), "missing"});
            return "";
        }
        if (!it->is_string()) {
            problems.push_back({path_key(path, key), "expected text, got " + describe_json(*it)});
            return "";
        }
        return it->get<std::string>();
    }

    bool flag(const json& obj, const std::string& path, const char* key) {
        auto it = obj.find(key);
        if (it == obj.end()) return false;
        if (!it->is_boolean()) {
            problems.push_back({path_key(path, key), "expected true or false, got " + describe_json(*it)});
            return false;
        }
        return it->get<bool>();
    }

    MatrixRef matrix(const json& v, const std::string& path) {
        MatrixRef m{MatrixId::X, 0};
        if (!v.is_object()) {
            problems.push_back({path, "expected {\"matrix\": NAME, \"head\": H}, got " + describe_json(v)});
            return m;
        }
        const std::string name = text(v, path, "matrix", true);
        if (auto id = matrix_id_from_name(name)) {
            m.id = *id;
        } else if (!name.empty()) {
            problems.push_back({path + ".matrix", "unknown matrix \"" + name + "\" (" + matrix_names() + ")"});
        }
        auto head = v.find("head");
        if (head != v.end()) {
            if (!head->is_number_integer() || head->get<double>() < 1 || head->get<double>() > Limits::max_heads)
                problems.push_back({path + ".head", "expected a head number from 1, got " + describe_json(*head)});
            else
                m.head = head->get<int>() - 1;
        } else if (is_per_head(m.id)) {
            problems.push_back({path + ".head", "missing: " + name + " belongs to a head"});
        }
        return m;
    }
};

}  // namespace

Result<Lesson> parse_lesson(std::string_view text) {
    // A lesson is a few kilobytes of text; the cap keeps the document tree built below small.
    if (text.size() > max_lesson_bytes)
        return Result<Lesson>::fail(
            {{"", "the lesson is " + std::to_string(text.size()) + " bytes, over the limit of " +
                      std::to_string(max_lesson_bytes) + " for a lesson"}});
    Result<json> document = read_json(text);
    if (!document) return Result<Lesson>::fail(std::move(document.problems));
    const json& root = *document.value;
    if (!root.is_object()) return Result<Lesson>::fail({{"", "expected a JSON object"}});
    LessonReader r;
    if (root.value("format", json()) != lesson_format)
        r.problems.push_back({"format", std::string("expected \"") + lesson_format + "\""});
    if (root.value("version", json()) != lesson_version)
        r.problems.push_back({"version", "this attnviz reads version " + std::to_string(lesson_version)});
    Lesson lesson;
    lesson.title = r.text(root, "", "title", true);
    auto steps = root.find("steps");
    if (steps == root.end() || !steps->is_array() || steps->empty()) {
        r.problems.push_back({"steps", "expected a non-empty array of steps"});
    } else {
        for (size_t k = 0; k < steps->size(); ++k) {
            const json& s = (*steps)[k];
            const std::string path = "steps[" + std::to_string(k) + "]";
            if (!s.is_object()) {
                r.problems.push_back({path, "expected an object, got " + describe_json(s)});
                continue;
            }
            LessonStep step;
            step.title = r.text(s, path, "title", true);
            step.formula = r.text(s, path, "formula", false);
            step.text = r.text(s, path, "text", true);
            for (const char* field : {"text", "formula"})
                for (Problem& p : template_problems(field[0] == 't' ? step.text : step.formula, path + "." + field))
                    r.problems.push_back(std::move(p));
            if (auto show = s.find("show"); show != s.end()) {
                if (!show->is_array()) {
                    r.problems.push_back({path + ".show", "expected an array of matrices"});
                } else {
                    for (size_t i = 0; i < show->size(); ++i)
                        step.show.push_back(r.matrix((*show)[i], path + ".show[" + std::to_string(i) + "]"));
                }
            }
            if (auto result = s.find("result"); result != s.end()) {
                step.has_result = true;
                step.result = r.matrix(*result, path + ".result");
            }
            step.expansion = r.flag(s, path, "expansion");
            step.exercise = r.flag(s, path, "exercise");
            if ((step.expansion || step.exercise) && !step.has_result)
                r.problems.push_back({path, "expansion and exercise need a result matrix"});
            lesson.steps.push_back(std::move(step));
        }
    }
    if (!r.problems.empty()) return Result<Lesson>::fail(std::move(r.problems).take());
    return Result<Lesson>::ok(std::move(lesson));
}

namespace {

// A {…} field of a template: what is between the braces.
struct Field {
    size_t begin = 0, end = 0;  // the braces' positions (end: the closing one)
    std::string body;
};

// The next field at or after `from`; body empty and begin == npos when there is none.
Field next_field(const std::string& text, size_t from) {
    Field f;
    f.begin = text.find('{', from);
    if (f.begin == std::string::npos) return f;
    f.end = text.find('}', f.begin + 1);
    if (f.end == std::string::npos) {
        f.begin = std::string::npos;
        return f;
    }
    f.body = text.substr(f.begin + 1, f.end - f.begin - 1);
    return f;
}

bool is_condition(const std::string& name) {
    const std::string bare = !name.empty() && name[0] == '!' ? name.substr(1) : name;
    return bare == "worked" || bare == "heads>1" || bare == "projection" || bare == "causal" || bare == "exercise" ||
           bare == "columns";
}

bool holds(const std::string& name, const LessonContext& ctx) {
    const bool negated = !name.empty() && name[0] == '!';
    const std::string bare = negated ? name.substr(1) : name;
    const Config& c = ctx.session->config;
    bool v = false;
    if (bare == "worked") v = ctx.worked_example;
    if (bare == "heads>1") v = c.heads > 1;
    if (bare == "projection") v = c.output_projection;
    if (bare == "causal") v = c.mask == Mask::causal;
    if (bare == "exercise") v = ctx.hidden.has_value();
    if (bare == "columns") v = ctx.column_vectors;
    return negated ? !v : v;
}

// A cell reference "NAME:HEAD:ROW:COL" with an optional "|pct" or "|N"; nullopt when the body is
// not one (then it is left as written).
struct CellField {
    CellRef cell;
    bool percent = false;
    int digits = 3;
};

std::optional<CellField> cell_field(const std::string& body, std::string* problem) {
    const size_t bar = body.find('|');
    const std::string ref = body.substr(0, bar);
    if (ref.find(':') == std::string::npos) return std::nullopt;
    if (!matrix_id_from_name(ref.substr(0, ref.find(':')))) {
        if (problem)
            *problem = "{" + printable(body) + "}: \"" + printable(ref.substr(0, ref.find(':'))) + "\" is not a matrix";
        return std::nullopt;
    }
    const Result<CellRef> cell = parse_cell_ref(ref);
    if (!cell) {
        if (problem) *problem = "{" + printable(body) + "}: " + cell.problems.front().message;
        return std::nullopt;
    }
    CellField f{*cell.value};
    if (bar != std::string::npos) {
        const std::string format = body.substr(bar + 1);
        if (format == "pct") {
            f.percent = true;
        } else if (format.size() <= 2 && !format.empty() &&
                   std::all_of(format.begin(), format.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
                   std::stoi(format) >= 1 && std::stoi(format) <= 17) {
            f.digits = std::stoi(format);
        } else {
            if (problem)
                *problem = "{" + printable(body) + "}: \"" + printable(format) +
                           "\" is not a format (pct, or 1 to 17 digits)";
            return std::nullopt;
        }
    }
    return f;
}

// "stiefel:W_Q:1" → the weight and its head (0-based); nullopt when the body is not one.
std::optional<MatrixRef> stiefel_field(const std::string& body, std::string* problem) {
    if (body.rfind("stiefel:", 0) != 0) return std::nullopt;
    const std::string rest = body.substr(8);
    const size_t colon = rest.find(':');
    const std::string name = rest.substr(0, colon);
    const int head = colon == std::string::npos ? 0 : std::atoi(rest.c_str() + colon + 1);
    if ((name != "W_Q" && name != "W_K" && name != "W_V") || head < 1) {
        if (problem) *problem = "{" + printable(body) + "}: expected stiefel:W_Q:HEAD (or W_K, W_V; heads from 1)";
        return std::nullopt;
    }
    return MatrixRef{*matrix_id_from_name(name), head - 1};
}

std::string cell_value_text(const CellField& f, const LessonContext& ctx) {
    if (ctx.hidden && f.cell.matrix == *ctx.hidden) return "?";
    const Matrix* m = exists(f.cell.matrix, ctx.session->config)
                          ? find_matrix(ctx.session->params, *ctx.trace, f.cell.matrix)
                          : nullptr;
    if (!m || f.cell.row >= m->rows() || f.cell.col >= m->cols()) return "–";
    const double v = (*m)(f.cell.row, f.cell.col);
    if (std::isinf(v)) return v < 0 ? "−∞" : "∞";
    if (!f.percent) return format_number(v, f.digits);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", v * 100);
    return buf;
}

}  // namespace

std::string fill_template(const std::string& text, const LessonContext& ctx) {
    const Config& c = ctx.session->config;
    std::string out;
    // Whether text is kept at each open {if}: the enclosing blocks' and this one's.
    std::vector<bool> keep{true};
    size_t at = 0;
    for (Field f = next_field(text, 0); f.begin != std::string::npos; f = next_field(text, at)) {
        if (keep.back()) out.append(text, at, f.begin - at);
        at = f.end + 1;
        const std::string& b = f.body;
        if (b.rfind("if ", 0) == 0 && is_condition(b.substr(3))) {
            keep.push_back(keep.back() && holds(b.substr(3), ctx));
            continue;
        }
        if (b == "else" && keep.size() > 1) {
            const bool outer = keep[keep.size() - 2];
            keep.back() = outer && !keep.back();
            continue;
        }
        if (b == "end" && keep.size() > 1) {
            keep.pop_back();
            continue;
        }
        if (!keep.back()) continue;
        std::string value;
        if (b == "n")
            value = std::to_string(c.n);
        else if (b == "d_model")
            value = std::to_string(c.d_model);
        else if (b == "h")
            value = std::to_string(c.heads);
        else if (b == "d_k")
            value = std::to_string(c.d_k);
        else if (b == "d_v")
            value = std::to_string(c.d_v);
        else if (b == "s")
            value = format_number(ctx.trace->scale);
        else if (b.rfind("token:", 0) == 0) {
            const int i = std::atoi(b.c_str() + 6);
            value = i >= 0 && i < static_cast<int>(ctx.session->tokens.size())
                        ? bounded_text(ctx.session->tokens[i], max_label_characters)
                        : "–";
        } else if (const std::optional<MatrixRef> w = stiefel_field(b, nullptr)) {
            const Matrix* m = find_input(ctx.session->params, *w);
            value = m && m->size() > 0 ? format_number(stiefel_distance(*m), 3) : "–";
        } else if (const std::optional<CellField> cell = cell_field(b, nullptr)) {
            value = cell_value_text(*cell, ctx);
        } else {
            value = "{" + b + "}";  // not a field: as written
        }
        out += value;
    }
    if (keep.back()) out.append(text, at, std::string::npos);
    return out;
}

Problems template_problems(const std::string& text, const std::string& path) {
    Problems problems;
    int depth = 0;
    for (Field f = next_field(text, 0); f.begin != std::string::npos; f = next_field(text, f.end + 1)) {
        const std::string& b = f.body;
        std::string problem;
        if (b.rfind("if ", 0) == 0) {
            if (!is_condition(b.substr(3)))
                problem = "{" + b +
                          "}: unknown condition (worked, heads>1, projection, causal, exercise, columns, or ! "
                          "before one)";
            ++depth;
        } else if (b == "else" || b == "end") {
            if (depth == 0) problem = "{" + b + "} without {if …}";
            if (b == "end" && depth > 0) --depth;
        } else if (b.rfind("stiefel:", 0) == 0) {
            stiefel_field(b, &problem);
        } else if (b.find(':') != std::string::npos && b.rfind("token:", 0) != 0) {
            cell_field(b, &problem);
        }
        if (!problem.empty()) problems.push_back({path, problem});
    }
    if (depth > 0) problems.push_back({path, std::to_string(depth) + " {if …} without {end}"});
    return problems;
}

std::string cell_expansion(const Explanation& e) {
    const SumTerms* sum = e.as<SumTerms>();
    if (!sum) return format_number(e.value);
    std::string out;
    for (const Product& p : sum->products) {
        if (p.b == 0) continue;
        const double v = p.a * p.b;
        const std::string term = v < 0 ? "(" + format_number(v) + ")" : format_number(v);
        out += (out.empty() ? "" : "+") + term;
    }
    return "(" + (out.empty() ? std::string("0") : out) + ")";
}

}  // namespace attnviz::core
