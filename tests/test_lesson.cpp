// core/lesson.hpp: the lesson format, placeholders, and the seed's way of writing a cell.
#include <gtest/gtest.h>

#include <cmath>

#include "core/lesson.hpp"
#include "core/presets.hpp"
#include "test_support.hpp"

using namespace attnviz::core;
using namespace attnviz::test;

TEST(Lesson, TheShippedLessonParsesAndNamesTheTenSteps) {
    const Result<Lesson> lesson = parse_lesson(slurp(ATTNVIZ_LESSON));
    ASSERT_TRUE(lesson) << (lesson.problems.empty() ? "" : lesson.problems[0].str());
    ASSERT_EQ(lesson.value->steps.size(), 10u);
    const Config worked = worked_example().config;
    for (const LessonStep& step : lesson.value->steps) {
        for (const MatrixRef& m : step.show) EXPECT_TRUE(exists(m, worked)) << step.title;
        if (step.has_result) {
            EXPECT_TRUE(exists(step.result, worked)) << step.title;
        }
    }
    // Step 2's result is Q⁽¹⁾ with the seed's expansions; step 5 is the softmax exercise.
    EXPECT_EQ(lesson.value->steps[1].result, (MatrixRef{MatrixId::Q, 0}));
    EXPECT_TRUE(lesson.value->steps[1].expansion);
    EXPECT_EQ(lesson.value->steps[4].result, (MatrixRef{MatrixId::weights, 0}));
    EXPECT_TRUE(lesson.value->steps[4].exercise);
}

TEST(Lesson, ProblemsNameTheirField) {
    const Result<Lesson> bad = parse_lesson(R"({"format": "attnviz-lesson", "version": 1, "title": "t",
        "steps": [{"title": "a", "text": "b", "show": [{"matrix": "QQ", "head": 1}, {"matrix": "Q"}]},
                  {"title": 3, "text": "b", "result": {"matrix": "Z", "head": 0}},
                  {"title": "c", "text": "d", "exercise": true}]})");
    ASSERT_FALSE(bad);
    EXPECT_TRUE(find_path(bad.problems, "steps[0].show[0].matrix") != nullptr);
    EXPECT_TRUE(find_path(bad.problems, "steps[0].show[1].head") != nullptr);  // Q needs a head
    EXPECT_TRUE(find_path(bad.problems, "steps[1].title") != nullptr);
    EXPECT_TRUE(find_path(bad.problems, "steps[1].result.head") != nullptr);  // heads count from 1
    EXPECT_TRUE(find_path(bad.problems, "steps[2]") != nullptr);              // an exercise needs a result
    EXPECT_FALSE(parse_lesson("{\"format\": \"attnviz-lesson\", \"steps\": [").value);
    EXPECT_TRUE(find_path(parse_lesson(R"({"format": "x", "version": 1, "title": "t", "steps": []})").problems,
                          "format") != nullptr);
}

TEST(Lesson, NumbersTooLargeOrTruncatedTextAreProblemsNotCrashes) {
    // nlohmann reports 1e999 as out_of_range, not parse_error: it must still come back as a problem.
    const Result<Lesson> big = parse_lesson(R"({"format": "attnviz-lesson", "version": 1e999})");
    ASSERT_FALSE(big);
    EXPECT_EQ(big.problems[0].path, "version");
    EXPECT_TRUE(contains(big.problems[0].message, "too large")) << big.problems[0].str();
    const Result<Lesson> cut = parse_lesson(R"({"format": "attnviz-lesson", "steps": [{"title": )");
    ASSERT_FALSE(cut);
    EXPECT_TRUE(contains(cut.problems[0].message, "ends too early")) << cut.problems[0].str();
}

TEST(Lesson, PlaceholdersTakeTheSessionsValues) {
    const Config c = make_config(7, 12, 3, 4, 5);
    EXPECT_EQ(fill_placeholders("{n} tokens, d_model {d_model}, h {h}, d_k {d_k}, d_v {d_v}, s = {s}, {n}", c, 2.0),
              "7 tokens, d_model 12, h 3, d_k 4, d_v 5, s = 2, 7");
    EXPECT_EQ(fill_placeholders("no {braces} here", c, 1.0), "no {braces} here");
}

TEST(Lesson, ExistsFollowsHeadsAndTheProjection) {
    Config c;  // h = 2, W_O on
    EXPECT_TRUE(exists({MatrixId::Z, 1}, c));
    EXPECT_FALSE(exists({MatrixId::Z, 2}, c));
    EXPECT_TRUE(exists({MatrixId::W_O, 0}, c));
    c.output_projection = false;
    EXPECT_FALSE(exists({MatrixId::W_O, 0}, c));
    EXPECT_TRUE(exists({MatrixId::output, 0}, c));
}

TEST(Lesson, CellExpansionWritesTheSeedsTerms) {
    const Session s = worked_example();
    const Trace t = forward<double>(s.config, s.params);
    auto expansion = [&](MatrixId id, int head, int i, int j) {
        return cell_expansion(*explain(s.params, t, {{id, head}, i, j}).value);
    };
    // Seed 001: Q₁ = [[(1+1), (0+0)], [(0+0), (2+2)]].
    EXPECT_EQ(expansion(MatrixId::Q, 0, 0, 0), "(1+1)");
    EXPECT_EQ(expansion(MatrixId::Q, 0, 0, 1), "(0+0)");
    EXPECT_EQ(expansion(MatrixId::Q, 0, 1, 0), "(0+0)");
    EXPECT_EQ(expansion(MatrixId::Q, 0, 1, 1), "(2+2)");
    // Head 2's matrices swap the columns: Q₂[0][1] = (1+1).
    EXPECT_EQ(expansion(MatrixId::Q, 1, 0, 1), "(1+1)");
    // A negative term is parenthesised; a cell that is not a sum shows its value.
    Session neg = s;
    neg.params.X(0, 2) = -3;
    const Trace tn = forward<double>(neg.config, neg.params);
    EXPECT_EQ(cell_expansion(*explain(neg.params, tn, {{MatrixId::Q, 0}, 0, 0}).value), "(1+(-3))");
    EXPECT_EQ(cell_expansion(*explain(s.params, t, {{MatrixId::X, 0}, 1, 1}).value), "2");
}

TEST(Lesson, ProblemsAreCappedAndPathsClean) {
    std::string text = R"({"format": "attnviz-lesson", "version": 1, "steps": [)";
    for (int k = 0; k < 100; ++k) text += std::string(k ? "," : "") + R"({"title": "t"})";  // each lacks text
    text += "]}";
    const Result<Lesson> r = parse_lesson(text);
    ASSERT_FALSE(r);
    ASSERT_EQ(r.problems.size(), max_reported_problems + 1);
    EXPECT_EQ(r.problems[0].str(), "title: missing") << "a top-level field's path has no leading dot";
    EXPECT_EQ(r.problems[1].str(), "steps[0].text: missing");
    EXPECT_EQ(r.problems.back(), (Problem{"", "and 81 more problems"}));
    EXPECT_EQ(problem_count(r.problems), 101u);
}

TEST(Lesson, TooLargeDuplicateNulAndNestedPathsAreRefused) {
    const std::string small =
        R"({"format": "attnviz-lesson", "version": 1, "title": "t", "steps": [{"title": "a", "text": "b"}]})";
    ASSERT_TRUE(parse_lesson(small));
    // Over the size cap: refused before parsing.
    std::string big = small;
    big.insert(big.size() - 1, ", \"padding\": \"" + std::string(max_lesson_bytes, 'x') + "\"");
    const Result<Lesson> r_big = parse_lesson(big);
    ASSERT_FALSE(r_big);
    ASSERT_EQ(r_big.problems.size(), 1u);
    EXPECT_TRUE(contains(r_big.problems[0].message, "over the limit of 4194304")) << r_big.problems[0].str();
    // A key given twice.
    std::string dup = small;
    dup.insert(1, R"("title": "first", )");
    const Result<Lesson> r_dup = parse_lesson(dup);
    ASSERT_FALSE(r_dup);
    EXPECT_EQ(r_dup.problems[0].str(), "title: given twice (each key may appear only once)");
    // A NUL after the document.
    const Result<Lesson> r_nul = parse_lesson(small + std::string("\0x", 2));
    ASSERT_FALSE(r_nul);
    EXPECT_TRUE(contains(r_nul.problems[0].message, "a NUL byte at line 1")) << r_nul.problems[0].str();
    // A number too large deep inside, under an empty key: a clean path, never "a.[0]".
    const Result<Lesson> r_deep = parse_lesson(R"({"format": "attnviz-lesson", "steps": [{"": {"x y": [0, 1e999]}}]})");
    ASSERT_FALSE(r_deep);
    EXPECT_EQ(r_deep.problems[0].path, R"(steps[0][""]["x y"][1])");
    EXPECT_FALSE(contains(r_deep.problems[0].path, ".[")) << r_deep.problems[0].str();
}
