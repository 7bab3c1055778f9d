// A lesson: the steps of the worked example as data (assets/lessons/*.json), so a teacher can
// edit or translate them without touching code.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "explain.hpp"
#include "problem.hpp"

namespace attnviz::core {

inline constexpr const char* lesson_format = "attnviz-lesson";
inline constexpr int lesson_version = 1;

struct LessonStep {
    std::string title;
    std::string formula;  // Unicode math, e.g. "Q⁽¹⁾ = X·W_Q⁽¹⁾"
    std::string text;     // for the learner; may hold {n}, {d_model}, {h}, {d_k}, {d_v}, {s}
    std::vector<MatrixRef>
        show;  // heads 0-based here, 1-based in the file  // the operands (and any context) drawn left to right
    bool has_result = false;
    MatrixRef result;        // the matrix whose cells are explained, played and exercised
    bool expansion = false;  // also show each result cell as the seed writes it: (1+1)
    bool exercise = false;   // the learner may type the result
};

struct Lesson {
    std::string title;
    std::vector<LessonStep> steps;
};

// Lessons larger than this are refused before parsing (the shipped one is under 8 KiB).
inline constexpr std::size_t max_lesson_bytes = std::size_t{4} << 20;  // 4 MiB

// Parses a lesson file; every problem with its field path ("steps[3].show[1].matrix: ..."), the
// first max_reported_problems of them, then "and N more problems".
Result<Lesson> parse_lesson(std::string_view text);

// The step's text with {n}, {d_model}, {h}, {d_k}, {d_v} and {s} replaced by the session's values.
std::string fill_placeholders(const std::string& text, const Config& config, double scale);

// A cell written the way seed 001 writes it: the terms whose second factor (the weight) is not
// zero, summed in parentheses — "(1+1)", "(0+0)"; "(0)" when every weight is zero. For cells
// that are not sums of products, the value.
std::string cell_expansion(const Explanation& e);

}  // namespace attnviz::core
