// core/teach/lesson.hpp: the lesson format, placeholders, and the seed's way of writing a cell.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/format.hpp"
#include "core/base/text.hpp"
#include "core/io/session_file.hpp"
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

namespace {

// A lesson's session: its file, read from the lesson's folder, and its trace.
struct LessonSession {
    Session session;
    Trace trace;
};

LessonSession lesson_session(const LessonEntry& entry, const Lesson& lesson) {
    const std::filesystem::path file = std::filesystem::path(entry.path).parent_path() / lesson.session;
    const Result<Session> s = parse_session(slurp(file.string()));
    EXPECT_TRUE(s) << file << ": " << all_text(s.problems);
    if (!s) return {worked_example(), forward<double>(worked_example().config, worked_example().params)};
    return {*s.value, forward<double>(s.value->config, s.value->params)};
}

}  // namespace

// The library the picker lists: the worked example and the nine lessons of the course, in its
// order; each parses, starts from a session that meets what it requires, names only matrices its
// session has, and fills every number of its text from that session (no "–", no "{…}" left).
TEST(LessonLibrary, EveryShippedLessonRunsOnItsOwnSession) {
    const std::vector<LessonEntry> entries = list_lessons({ATTNVIZ_LESSONS_DIR});
    std::vector<std::string> names;
    for (const LessonEntry& e : entries) names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{"worked-example", "causal-mask", "multi-head", "scaling", "rope",
                                               "sliding-window", "qk-norms", "kv-cache", "flash-attention",
                                               "cross-attention"}));
    for (const LessonEntry& entry : entries) {
        SCOPED_TRACE(entry.name);
        ASSERT_TRUE(entry.problem.empty()) << entry.problem;
        EXPECT_FALSE(entry.summary.empty());
        EXPECT_GE(entry.steps, 6);
        EXPECT_LE(entry.steps, 12);
        const Result<Lesson> lesson = parse_lesson(slurp(entry.path));
        ASSERT_TRUE(lesson);
        ASSERT_FALSE(lesson.value->session.empty());
        const LessonSession ls = lesson_session(entry, *lesson.value);
        const Session worked = worked_example();
        const bool is_worked = ls.session.config == worked.config && ls.session == worked;
        const LessonContext ctx{&ls.session, &ls.trace, is_worked, std::nullopt};
        EXPECT_TRUE(unmet_requirements(*lesson.value, ctx).empty());
        for (const LessonStep& step : lesson.value->steps) {
            SCOPED_TRACE(step.title);
            for (const MatrixRef& m : step.show) EXPECT_TRUE(exists(m, ls.session.config));
            if (step.has_result) {
                EXPECT_TRUE(exists(step.result, ls.session.config));
            }
            const std::string text = fill_template(step.formula, ctx) + "\n" + fill_template(step.text, ctx);
            EXPECT_FALSE(contains(text, "\u2013")) << text;  // a cell the session lacks
            EXPECT_FALSE(contains(text, "{")) << text;       // a field left unfilled
            if (step.exercise && step.has_result) {
                // With the exercise on, no text depends on the hidden result: moving every one of
                // its cells changes nothing the learner reads.
                Trace moved = ls.trace;
                Matrix* hidden = const_cast<Matrix*>(find_matrix(ls.session.params, moved, step.result));
                ASSERT_NE(hidden, nullptr);
                hidden->array() += 1000;
                const LessonContext hiding{&ls.session, &ls.trace, ctx.worked_example, step.result};
                const LessonContext hiding_moved{&ls.session, &moved, ctx.worked_example, step.result};
                EXPECT_EQ(fill_template(step.text, hiding), fill_template(step.text, hiding_moved));
                EXPECT_NE(fill_template(step.text, ctx),
                          fill_template(step.text, {&ls.session, &moved, ctx.worked_example, std::nullopt}))
                    << "the step's text names no cell of its result";
            }
        }
    }
}

// The rope lesson's step 3 writes Q_rot[1][0] as Q[1][0]·cos 1 − Q[1][2]·sin 1 (pair 0 of a
// four-column head in Llama's layout, turned by 1 radian at position 1): the trace agrees.
TEST(LessonLibrary, TheRopeLessonsRotationIsTheTracesOwn) {
    LessonEntry entry;
    entry.name = "rope";
    entry.path = std::string(ATTNVIZ_LESSONS_DIR) + "/rope.json";
    const Result<Lesson> lesson = parse_lesson(slurp(entry.path));
    ASSERT_TRUE(lesson);
    const LessonSession ls = lesson_session(entry, *lesson.value);
    ASSERT_EQ(ls.session.config.d_k, 4);
    ASSERT_EQ(ls.session.config.rope.rotated(4), 4);
    const Matrix& q = ls.trace.heads[0].Q;
    const Matrix& q_rot = ls.trace.heads[0].Q_rot;
    EXPECT_NEAR(q_rot(1, 0), q(1, 0) * std::cos(1.0) - q(1, 2) * std::sin(1.0), 1e-12);
    EXPECT_NEAR(q_rot(1, 2), q(1, 0) * std::sin(1.0) + q(1, 2) * std::cos(1.0), 1e-12);
    EXPECT_EQ(q_rot(0, 0), q(0, 0));
    EXPECT_TRUE(contains(lesson.value->steps[2].text,
                         "Q\u207d\u00b9\u207e[1][0]\u00b7cos 1 \u2212 Q\u207d\u00b9\u207e[1][2]\u00b7sin 1"));
}

// The KV-cache lesson's numbers: bytes per token 2 · kv_heads · d_k · 8 in double, against one K and
// V per head, and the heads of a group sharing K.
TEST(LessonTemplate, KvCacheSizesComeFromTheSession) {
    Config c = make_config(4, 8, 4, 2, 2);
    c.kv_heads = 2;
    c.mask = Mask::causal;
    const Session s = random_session(c, 3);
    const Trace t = forward<double>(s.config, s.params);
    const LessonContext ctx{&s, &t, false, std::nullopt};
    EXPECT_EQ(fill_template("{kv_heads} {group} {n_kv} {kv_bytes} {kv_bytes_ungrouped}", ctx),
              "2 2 4 " + std::to_string(2 * 2 * 2 * 8) + " " + std::to_string(2 * 4 * 2 * 8));
    EXPECT_EQ(fill_template("{if grouped}g{else}-{end}{if causal}c{end}{if rope}r{end}{if !cross}s{end}", ctx), "gcs");
    EXPECT_EQ(t.heads[1].K, t.heads[0].K);
    EXPECT_NE(t.heads[2].K, t.heads[0].K);
}

TEST(LessonLibrary, RequirementsSayWhatTheSessionLacks) {
    const Result<Lesson> lesson =
        parse_lesson(R"({"format": "attnviz-lesson", "version": 1, "title": "t", "requires": ["causal", "!heads>1",
                        "projection"], "steps": [{"title": "a", "text": "b"}]})");
    ASSERT_TRUE(lesson) << all_text(lesson.problems);
    const Session w = worked_example();
    const Trace t = forward<double>(w.config, w.params);
    EXPECT_EQ(unmet_requirements(*lesson.value, {&w, &t, true, std::nullopt}),
              (std::vector<std::string>{"with a causal mask", "without more than one head"}));
    const Result<Lesson> bad = parse_lesson(
        R"({"format": "attnviz-lesson", "version": 1, "title": "t", "order": -1, "requires": ["causal", "sideways"],
            "session": 3, "steps": [{"title": "a", "text": "b"}]})");
    ASSERT_FALSE(bad);
    ASSERT_EQ(bad.problems.size(), 3u) << all_text(bad.problems);
    EXPECT_EQ(bad.problems[0].path, "session");
    EXPECT_EQ(bad.problems[1].path, "order");
    EXPECT_EQ(bad.problems[2].path, "requires[1]");
    EXPECT_TRUE(contains(bad.problems[2].message, "rope")) << bad.problems[2].message;
}

// The picker's list: in the lessons' order, then by name; a broken file listed with its problem.
TEST(LessonLibrary, TheListFollowsTheOrderAndKeepsBrokenFilesWithTheirProblem) {
    const auto dir = std::filesystem::temp_directory_path() / "attnviz_lesson_list";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string step = R"("steps": [{"title": "a", "text": "b"}]})";
    std::ofstream(dir / "b.json") << R"({"format": "attnviz-lesson", "version": 1, "title": "B", "order": 5, )" << step;
    std::ofstream(dir / "a.json") << R"({"format": "attnviz-lesson", "version": 1, "title": "A", )" << step;
    std::ofstream(dir / "c.json") << R"({"format": "attnviz-lesson", "version": 1, "title": "C", "order": 1, )" << step;
    std::ofstream(dir / "broken.json") << R"({"format": "attnviz-lesson", "version": 1, "steps": [)";
    std::ofstream(dir / "notes.txt") << "not a lesson";
    // A teacher's folder: its "a" replaces the first folder's.
    std::filesystem::create_directories(dir / "own");
    std::ofstream(dir / "own" / "a.json")
        << R"({"format": "attnviz-lesson", "version": 1, "title": "A2", "order": 3, )" << step;
    const std::vector<LessonEntry> entries =
        list_lessons({dir.string(), (dir / "missing").string(), (dir / "own").string()});
    ASSERT_EQ(entries.size(), 4u);
    EXPECT_EQ(entries[0].title, "C");
    EXPECT_EQ(entries[1].title, "A2");
    EXPECT_EQ(entries[1].path, (dir / "own" / "a.json").string());
    EXPECT_EQ(entries[2].title, "B");
    EXPECT_EQ(entries[3].name, "broken");
    EXPECT_FALSE(entries[3].problem.empty());
    EXPECT_EQ(entries[0].steps, 1);
    EXPECT_TRUE(list_lessons({(dir / "missing").string()}).empty());
    std::filesystem::remove_all(dir);
}

// A lesson file far over the limit is listed with the limit's problem, refused by its size: a
// sparse 900 MB file would otherwise be read whole before being refused.
TEST(LessonLibrary, AHugeLessonFileIsRefusedByItsSize) {
    const auto dir = std::filesystem::temp_directory_path() / "attnviz_lesson_huge";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "huge.json") << R"({"format": "attnviz-lesson", "version": 1, "title": "H", )";
    std::filesystem::resize_file(dir / "huge.json", 900'000'000);
    const std::vector<LessonEntry> entries = list_lessons({dir.string()});
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_TRUE(contains(entries[0].problem, "is 900000000 bytes, over the limit of 4194304 for a lesson"))
        << entries[0].problem;
    std::filesystem::remove_all(dir);
}

// Every lesson on sessions other than its own (one head, several heads with a causal mask and K/V
// groups, cross-attention, RoPE): every field is filled (a cell the session lacks reads "–"), and no
// exercise's text depends on the result it hides.
TEST(LessonLibrary, EveryLessonReadsOnOtherSessionsWithoutGivingAnExerciseAway) {
    std::vector<Session> sessions;
    sessions.push_back(random_session(make_config(3, 4, 1, 4, 4), 1));
    Config grouped = make_config(8, 16, 4, 4, 4);
    grouped.mask = Mask::causal;
    grouped.kv_heads = 2;
    sessions.push_back(random_session(grouped, 2));
    Config cross = make_config(2, 8, 2, 4, 4);
    cross.n_kv = 7;
    sessions.push_back(random_session(cross, 3));
    Config rope = make_config(5, 8, 3, 4, 2);
    rope.rope.on = true;
    sessions.push_back(random_session(rope, 4));
    for (const LessonEntry& entry : list_lessons({ATTNVIZ_LESSONS_DIR})) {
        const Result<Lesson> lesson = parse_lesson(slurp(entry.path));
        ASSERT_TRUE(lesson) << entry.name;
        for (const Session& s : sessions) {
            const Trace t = forward<double>(s.config, s.params);
            const LessonContext ctx{&s, &t, false, std::nullopt};
            for (const LessonStep& step : lesson.value->steps) {
                SCOPED_TRACE(entry.name + ": " + step.title);
                const std::string text = fill_template(step.formula, ctx) + fill_template(step.text, ctx);
                EXPECT_FALSE(contains(text, "{")) << text;
                if (!step.exercise || !step.has_result || !exists(step.result, s.config)) continue;
                Trace moved = t;
                Matrix* hidden = const_cast<Matrix*>(find_matrix(s.params, moved, step.result));
                ASSERT_NE(hidden, nullptr);
                hidden->array() += 1000;
                EXPECT_EQ(fill_template(step.text, {&s, &t, false, step.result}),
                          fill_template(step.text, {&s, &moved, false, step.result}));
            }
        }
    }
}
