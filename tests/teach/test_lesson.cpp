// core/teach/lesson.hpp: the lesson format, placeholders, and the seed's way of writing a cell.
#include <gtest/gtest.h>

#include <cmath>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "core/base/text.hpp"
#include "core/teach/lesson.hpp"
#include "tests/test_support.hpp"

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

// The template of a session and its trace.
std::string filled(const std::string& text, const Session& s, std::optional<MatrixRef> hidden = std::nullopt) {
    static Trace trace;
    trace = forward<double>(s.config, s.params);
    return fill_template(text, {&s, &trace, s == worked_example(), hidden});
}

TEST(LessonTemplate, SizesAndCellsComeFromTheSession) {
    const Session w = worked_example();
    EXPECT_EQ(filled("{n} tokens, d_model {d_model}, h {h}, d_k {d_k}, d_v {d_v}, s = {s}, {n}", w),
              "2 tokens, d_model 4, h 2, d_k 2, d_v 2, s = 1.41421, 2");
    // Hand-computed in seed 001: Q⁽¹⁾[1][1] = 4, weights⁽¹⁾[0][0] = 0.944 (94.4%), output[0][0] ≈ 1.89.
    EXPECT_EQ(filled("{Q:1:1:1} {weights:1:0:0|pct} {weights:1:0:1|2} {output:0:0} {token:1}", w),
              "4 94.4% 0.056 1.89 x2");
    // A cell the session lacks reads "–"; unknown words stay as written.
    EXPECT_EQ(filled("{weights:3:0:0} {X:5:0} {token:9} {braces} {weights:1:0:0|pct", w),
              "– – – {braces} {weights:1:0:0|pct");
    // Another session: other numbers, from its own trace.
    Session other = w;
    other.params.X(0, 0) = 3;
    const Trace t = forward<double>(other.config, other.params);
    EXPECT_EQ(filled("{Q:1:0:0}", other), format_number(t.heads[0].Q(0, 0), 3));
    EXPECT_NE(filled("{weights:1:0:0|pct}", other), "94.4%");
}

TEST(LessonTemplate, BlocksFollowTheSessionAndTheExerciseHidesItsCells) {
    const Session w = worked_example();
    Session other = w;
    other.params.X(0, 0) = 3;
    const std::string text = "{if worked}seed{else}yours{end}, {if heads>1}many{else}one{end}{if causal} masked{end}";
    EXPECT_EQ(filled(text, w), "seed, many");
    EXPECT_EQ(filled(text, other), "yours, many");
    Config single = w.config;
    single.heads = 1;
    single.d_k = single.d_v = 4;
    single.mask = Mask::causal;
    EXPECT_EQ(filled(text, resized(w, single)), "yours, one masked");
    // Nested blocks, and "!".
    EXPECT_EQ(filled("{if worked}a{if !projection}b{else}c{end}d{end}e", w), "acde");
    // An exercise on weights⁽¹⁾: its cells read "?", other matrices are shown, and
    // {if !exercise} text is left out.
    EXPECT_EQ(filled("{weights:1:0:0|pct} {Q:1:1:1}{if !exercise} (1+1){end}", w, MatrixRef{MatrixId::weights, 0}),
              "? 4");
}

TEST(LessonTemplate, ProblemsAreFoundWhenTheLessonIsRead) {
    EXPECT_TRUE(template_problems("{n} {weights:1:0:0|pct} {if worked}x{else}y{end} {token:0} {plain}", "t").empty());
    const auto one = [](const std::string& text) {
        const Problems p = template_problems(text, "steps[2].text");
        return p.empty() ? std::string("none") : p[0].str();
    };
    EXPECT_EQ(one("{weight:1:0:0}"), "steps[2].text: {weight:1:0:0}: \"weight\" is not a matrix");
    EXPECT_TRUE(contains(one("{weights:0:0:0}"), "heads are counted from 1"));
    EXPECT_TRUE(contains(one("{weights:1:0:0|percent}"), "not a format"));
    EXPECT_TRUE(contains(one("{if tall}x{end}"), "unknown condition"));
    EXPECT_TRUE(contains(one("{if worked}x"), "without {end}"));
    EXPECT_TRUE(contains(one("x{end}"), "without {if"));
    // parse_lesson reports them with the step's field.
    const Result<Lesson> bad = parse_lesson(
        R"({"format": "attnviz-lesson", "version": 1, "title": "t", "steps": [{"title": "a", "text": "{if x}"}]})");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.problems[0].path, "steps[0].text");
}

TEST(LessonTemplate, TheShippedLessonReadsRightOnAThreeTokenThreeHeadSession) {
    const Result<Lesson> lesson = parse_lesson(slurp(ATTNVIZ_LESSON));
    ASSERT_TRUE(lesson) << all_text(lesson.problems);
    Session s = random_session(make_config(3, 6, 3, 2, 2), 7);
    s.tokens = {"the", "cat", "sat"};
    const Trace t = forward<double>(s.config, s.params);
    const LessonContext ctx{&s, &t, false, std::nullopt};
    std::string all;
    for (const LessonStep& step : lesson.value->steps) all += fill_template(step.text, ctx) + "\n";
    // Nothing of the worked example's own numbers or prose, and the session's values instead.
    for (const char* seed : {"94.4%", "[[1, 0, 1, 0]", "2\u221a2", "(1+1)", "the worked example X"})
        EXPECT_FALSE(contains(all, seed)) << seed;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", t.heads[0].weights(0, 0) * 100);
    EXPECT_TRUE(contains(all, "\u201cthe\u201d gives " + std::string(pct))) << all;
    EXPECT_TRUE(contains(all, "h = 3 heads")) << all;
    EXPECT_FALSE(contains(all, "{")) << all;  // every field filled
    // With the exercise of step 5 (weights⁽¹⁾) on, its percentages are hidden.
    const LessonContext exercising{&s, &t, false, MatrixRef{MatrixId::weights, 0}};
    EXPECT_TRUE(contains(fill_template(lesson.value->steps[4].text, exercising), "gives ? of its attention"));
    // On the worked example the seed's prose is there, numbers unchanged.
    const Session w = worked_example();
    const Trace tw = forward<double>(w.config, w.params);
    EXPECT_TRUE(contains(fill_template(lesson.value->steps[4].text, {&w, &tw, true, std::nullopt}),
                         "gives 94.4% of its attention to itself and 5.6% to"));
}

TEST(LessonTemplate, TheColumnVectorViewMentionsSeed004sStiefelConstraintWithTheSessionsNumber) {
    const Result<Lesson> lesson = parse_lesson(slurp(ATTNVIZ_LESSON));
    ASSERT_TRUE(lesson) << all_text(lesson.problems);
    Session w = worked_example();
    const Trace t = forward<double>(w.config, w.params);
    std::string rows, columns;
    for (const LessonStep& step : lesson.value->steps) {
        rows += fill_template(step.text, {&w, &t, true, std::nullopt, false});
        columns += fill_template(step.text, {&w, &t, true, std::nullopt, true});
    }
    EXPECT_FALSE(contains(rows, "Stiefel"));
    ASSERT_TRUE(contains(columns, "Stiefel")) << columns;
    // W_Q⁽¹⁾ = [[1, 0], [0, 1], [1, 0], [0, 1]]: WᵀW = 2·I, so ‖WᵀW − I‖ = √2.
    EXPECT_TRUE(contains(columns, "− I‖ = 1.41 ")) << columns;
    // Orthonormal columns read 0.
    w.params.heads[0].W_Q = Matrix{{1, 0}, {0, 1}, {0, 0}, {0, 0}};
    EXPECT_EQ(fill_template("{stiefel:W_Q:1}", {&w, &t, false, std::nullopt, true}), "0");
    EXPECT_EQ(fill_template("{stiefel:W_V:3}", {&w, &t, false, std::nullopt, true}), "–");  // no head 3
    EXPECT_FALSE(template_problems("{stiefel:W_O:1}", "t").empty());
    EXPECT_FALSE(template_problems("{stiefel:W_Q:0}", "t").empty());
    EXPECT_TRUE(template_problems("{if columns}{stiefel:W_K:2}{end}", "t").empty());
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

// Text from files is cut by characters, never inside a UTF-8 sequence, with "…" only when cut.
TEST(BoundedText, CutsWholeCharactersAndSaysSo) {
    using attnviz::core::bounded_text;
    using attnviz::core::characters_end;
    EXPECT_EQ(bounded_text("abc", 3), "abc");
    EXPECT_EQ(bounded_text("abcd", 3), "abc…");
    EXPECT_EQ(bounded_text("", 0), "");
    EXPECT_EQ(bounded_text("a", 0), "…");
    EXPECT_EQ(bounded_text("αβγδ", 2), "αβ…");  // two bytes a character
    EXPECT_EQ(characters_end("αβγδ", 2), 4u);
    EXPECT_EQ(characters_end("x⁽¹⁾y", 3), 1u + 3 + 2);  // ⁽ three bytes, ¹ two
    EXPECT_EQ(characters_end("\x80\x80"
                             "ab",
                             1),
              2u);  // a stray continuation byte joins the character before
    EXPECT_EQ(bounded_text(std::string(20000, 'a'), 4000).size(), 4000u + std::string("…").size());
}

// {token:k} writes a long label's first characters only: a 20,000-character token would make the
// sentence unreadable (and the text too long to draw).
TEST(LessonTemplate, ALongTokenIsCutInTheText) {
    Session s = worked_example();
    s.tokens[1] = "the";
    s.tokens[0] = std::string(20000, 'x');
    const Trace t = forward<double>(s.config, s.params);
    const LessonContext ctx{&s, &t, false, std::nullopt, false};
    EXPECT_EQ(fill_template("{token:1} {token:0}", ctx),
              "the " + std::string(attnviz::core::max_label_characters, 'x') + "…");
}
