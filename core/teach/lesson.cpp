#include "core/teach/lesson.hpp"

#include "core/attention/stiefel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/attention/kv_cache.hpp"
#include "core/attention/registry.hpp"
#include "core/base/file_io.hpp"
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

bool is_condition(const std::string& name);
std::string condition_names();

// The lesson's optional fields besides its steps: summary, order, session, requires.
void read_metadata(LessonReader& r, const json& root, Lesson& lesson) {
    lesson.summary = r.text(root, "", "summary", false);
    lesson.session = r.text(root, "", "session", false);
    if (auto order = root.find("order"); order != root.end()) {
        if (!order->is_number_integer() || order->get<double>() < 0 || order->get<double>() > 1e6)
            r.problems.push_back({"order", "expected a whole number from 0 to 1000000, got " + describe_json(*order)});
        else
            lesson.order = order->get<int>();
    }
    auto needs = root.find("requires");
    if (needs == root.end()) return;
    if (!needs->is_array()) {
        r.problems.push_back({"requires", "expected an array of conditions, got " + describe_json(*needs)});
        return;
    }
    for (size_t k = 0; k < needs->size(); ++k) {
        const json& v = (*needs)[k];
        const std::string path = "requires[" + std::to_string(k) + "]";
        if (!v.is_string() || !is_condition(v.get<std::string>()))
            r.problems.push_back({path, "expected a condition (" + condition_names() + "), got " + describe_json(v)});
        else
            lesson.needs.push_back(v.get<std::string>());
    }
}

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
    read_metadata(r, root, lesson);
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

// The conditions of {if …} and of a lesson's "requires": each with what it means, for a learner.
struct Condition {
    const char* name;
    const char* meaning;  // "a causal mask"; a lesson whose session lacks it says so
    bool (*holds)(const LessonContext&);
};

constexpr Condition conditions[] = {
    {"worked", "seed 001's worked example", [](const LessonContext& c) { return c.worked_example; }},
    {"heads>1", "more than one head", [](const LessonContext& c) { return c.session->config.heads > 1; }},
    {"projection", "an output projection W_O",
     [](const LessonContext& c) { return c.session->config.output_projection; }},
    {"causal", "a causal mask", [](const LessonContext& c) { return c.session->config.mask == Mask::causal; }},
    {"masked", "a custom mask", [](const LessonContext& c) { return c.session->config.mask == Mask::custom; }},
    {"cross", "cross-attention (K and V from Y)", [](const LessonContext& c) { return c.session->config.cross(); }},
    {"rope", "rotary position embeddings (RoPE)", [](const LessonContext& c) { return c.session->config.rope.on; }},
    {"grouped", "K/V groups (fewer K/V heads than heads)",
     [](const LessonContext& c) { return c.session->config.grouped(); }},
    {"window", "a sliding window", [](const LessonContext& c) { return c.session->config.window > 0; }},
    {"softcap", "soft-capped scores", [](const LessonContext& c) { return c.session->config.softcap > 0; }},
    {"qk_norm", "q/k norms over all heads", [](const LessonContext& c) { return c.session->config.qk_norm.on; }},
    {"exercise", "an exercise in progress", [](const LessonContext& c) { return c.hidden.has_value(); }},
    {"columns", "the column-vector view", [](const LessonContext& c) { return c.column_vectors; }},
};

const Condition* find_condition(const std::string& name) {
    const std::string bare = !name.empty() && name[0] == '!' ? name.substr(1) : name;
    for (const Condition& c : conditions)
        if (bare == c.name) return &c;
    return nullptr;
}

bool is_condition(const std::string& name) { return find_condition(name) != nullptr; }

std::string condition_names() {
    std::string names;
    for (const Condition& c : conditions) names += (names.empty() ? "" : ", ") + std::string(c.name);
    return names + ", or ! before one";
}

bool holds(const std::string& name, const LessonContext& ctx) {
    const Condition* c = find_condition(name);
    const bool v = c && c->holds(ctx);
    return !name.empty() && name[0] == '!' ? !v : v;
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

// The session's sizes by name ({n}, {kv_heads}, …); nullopt for any other field.
std::optional<std::string> size_value(const std::string& name, const LessonContext& ctx) {
    const Config& c = ctx.session->config;
    const std::pair<const char*, long long> sizes[] = {
        {"n", c.n},
        {"d_model", c.d_model},
        {"h", c.heads},
        {"d_k", c.d_k},
        {"d_v", c.d_v},
        {"n_kv", c.kv_len()},
        {"kv_heads", c.kv_count()},
        {"group", c.group_size()},
        {"rope_dims", c.rope.on ? c.rope.rotated(c.d_k) : 0},
        {"window", c.window},
        {"kv_bytes", kv_cache_bytes(c, 1, 1, sizeof(double))},
        {"kv_bytes_ungrouped", kv_cache_bytes(c, 1, 1, sizeof(double), false)},
    };
    for (const auto& [key, v] : sizes)
        if (name == key) return std::to_string(v);
    if (name == "s") return format_number(ctx.trace->scale);
    if (name == "rope_base") return format_number(c.rope.base);
    if (name == "softcap") return format_number(c.softcap);
    if (name == "qk_norm_eps") return format_number(c.qk_norm.on ? c.qk_norm.eps : 0);
    return std::nullopt;
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
        if (std::optional<std::string> size = size_value(b, ctx))
            value = *size;
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
            if (!is_condition(b.substr(3))) problem = "{" + b + "}: unknown condition (" + condition_names() + ")";
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

std::vector<std::string> unmet_requirements(const Lesson& lesson, const LessonContext& ctx) {
    std::vector<std::string> unmet;
    for (const std::string& name : lesson.needs) {
        if (holds(name, ctx)) continue;
        const Condition* c = find_condition(name);
        unmet.push_back((name[0] == '!' ? "without " : "with ") + std::string(c ? c->meaning : name.c_str()));
    }
    return unmet;
}

namespace {

// A lesson file as the picker lists it: its title, summary and steps, or why it cannot be opened.
LessonEntry lesson_entry(const std::filesystem::path& file) {
    LessonEntry e;
    e.name = file.stem().string();
    e.path = file.string();
    const Result<std::string> text = read_file(e.path, max_lesson_bytes, "a lesson");
    const Result<Lesson> lesson = text ? parse_lesson(*text.value) : Result<Lesson>::fail(text.problems);
    if (lesson) {
        e.title = lesson.value->title;
        e.summary = lesson.value->summary;
        e.order = lesson.value->order;
        e.steps = static_cast<int>(lesson.value->steps.size());
    } else {
        e.title = e.name;
        e.problem = lesson.problems.front().str();
    }
    return e;
}

}  // namespace

std::vector<LessonEntry> list_lessons(const std::vector<std::string>& folders) {
    std::vector<LessonEntry> entries;
    for (const std::string& folder : folders) {
        std::error_code error;
        for (std::filesystem::directory_iterator file(folder, error), end; !error && file != end;
             file.increment(error)) {
            std::error_code kind;
            if (file->path().extension() != ".json" || !file->is_regular_file(kind)) continue;
            LessonEntry e = lesson_entry(file->path());
            std::erase_if(entries, [&](const LessonEntry& earlier) { return earlier.name == e.name; });
            entries.push_back(std::move(e));
        }
    }
    std::sort(entries.begin(), entries.end(), [](const LessonEntry& a, const LessonEntry& b) {
        return a.order != b.order ? a.order < b.order : a.name < b.name;
    });
    return entries;
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
