#include "lesson.hpp"

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "json_read.hpp"

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

std::string fill_placeholders(const std::string& text, const Config& c, double scale) {
    const std::pair<const char*, std::string> values[] = {
        {"{n}", std::to_string(c.n)},     {"{d_model}", std::to_string(c.d_model)}, {"{h}", std::to_string(c.heads)},
        {"{d_k}", std::to_string(c.d_k)}, {"{d_v}", std::to_string(c.d_v)},         {"{s}", format_number(scale)},
    };
    std::string out = text;
    for (const auto& [key, value] : values)
        for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
            out.replace(at, std::string_view(key).size(), value);
    return out;
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
