// Tests of core/io/session_file.hpp and core/attention/session.hpp: parse_session's error reporting, session round
// trips, write_trace, validate(Session), resized() and default_tokens().
#include "core/io/session_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using nlohmann::json;
using namespace attnviz::test;

// Seed 001's example, typed by hand in the documented format.
const char* const worked_text = R"({
  "format": "attnviz-session",
  "version": 1,
  "config": {"n": 2, "d_model": 4, "heads": 2, "d_k": 2, "d_v": 2,
             "output_projection": true, "mask": "none", "scale": "sqrt_dk"},
  "tokens": ["x1", "x2"],
  "X": [[1, 0, 1, 0], [0, 2, 0, 2]],
  "heads": [
    {"W_Q": [[1, 0], [0, 1], [1, 0], [0, 1]],
     "W_K": [[1, 0], [0, 1], [1, 0], [0, 1]],
     "W_V": [[1, 0], [0, 1], [1, 0], [0, 1]]},
    {"W_Q": [[0, 1], [1, 0], [0, 1], [1, 0]],
     "W_K": [[0, 1], [1, 0], [0, 1], [1, 0]],
     "W_V": [[0, 1], [1, 0], [0, 1], [1, 0]]}
  ],
  "W_O": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
})";

json worked_json() { return json::parse(worked_text); }

// Parses without letting an exception escape: an exception is a failure to report, not a crash.
Result<Session> parse_no_throw(const std::string& text) {
    try {
        return parse_session(text);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "parse_session threw instead of reporting a problem: " << e.what() << "\ninput: " << text;
    } catch (...) {
        ADD_FAILURE() << "parse_session threw a non-std exception";
    }
    return Result<Session>::fail({{"<exception>", "thrown"}});
}

// Asserts that `text` is rejected with a problem at exactly `path`.
void expect_rejected_at(const std::string& text, const std::string& path, const std::string& message_part = "") {
    SCOPED_TRACE("expected a problem at \"" + path + "\"");
    const Result<Session> r = parse_no_throw(text);
    EXPECT_FALSE(r);
    EXPECT_FALSE(r.value.has_value());
    ASSERT_FALSE(r.problems.empty());
    const Problem* p = find_path(r.problems, path);
    ASSERT_NE(p, nullptr) << "got:\n" << all_text(r.problems);
    EXPECT_FALSE(p->message.empty());
    if (!message_part.empty()) {
        EXPECT_TRUE(contains(p->message, message_part)) << p->str();
    }
}

void expect_rejected_at(const json& doc, const std::string& path, const std::string& message_part = "") {
    expect_rejected_at(doc.dump(), path, message_part);
}

// ---------------------------------------------------------------------------------------------
// Reading a valid session

TEST(ParseSession, HandWrittenWorkedExample) {
    const Result<Session> r = parse_session(worked_text);
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_TRUE(r.problems.empty());
    const Session& s = *r.value;
    EXPECT_EQ(s.config, Config{});
    EXPECT_EQ(s.tokens, (std::vector<std::string>{"x1", "x2"}));
    EXPECT_EQ(s.params.X, (Matrix{{1, 0, 1, 0}, {0, 2, 0, 2}}));
    ASSERT_EQ(s.params.heads.size(), 2u);
    EXPECT_EQ(s.params.heads[1].W_V, (Matrix{{0, 1}, {1, 0}, {0, 1}, {1, 0}}));
    EXPECT_EQ(s.params.W_O, Matrix::Identity(4, 4));
    EXPECT_EQ(s, worked_example());
}

TEST(ParseSession, TokensAreOptional) {
    json doc = worked_json();
    doc.erase("tokens");
    const Result<Session> r = parse_session(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->tokens, default_tokens(2));
}

TEST(ParseSession, DivisorScaleAndCausalMask) {
    json doc = worked_json();
    doc["config"]["scale"] = 0.5;
    doc["config"]["mask"] = "causal";
    const Result<Session> r = parse_session(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->config.scale.kind, Scale::Kind::divisor);
    EXPECT_EQ(r.value->config.scale.divisor, 0.5);
    EXPECT_EQ(r.value->config.mask, Mask::causal);
    // An integer divisor is a divisor too.
    doc["config"]["scale"] = 3;
    const Result<Session> r3 = parse_session(doc.dump());
    ASSERT_TRUE(r3) << all_text(r3.problems);
    EXPECT_EQ(r3.value->config.scale, (Scale{Scale::Kind::divisor, 3.0}));
    doc["config"]["scale"] = "none";
    const Result<Session> rn = parse_session(doc.dump());
    ASSERT_TRUE(rn);
    EXPECT_EQ(rn.value->config.scale.kind, Scale::Kind::none);
}

TEST(ParseSession, WithoutProjectionNoWO) {
    json doc = worked_json();
    doc["config"]["output_projection"] = false;
    doc.erase("W_O");
    const Result<Session> r = parse_session(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_FALSE(r.value->config.output_projection);
}

// ---------------------------------------------------------------------------------------------
// Rejecting bad input, each with its path

TEST(ParseSession, MalformedJson) {
    const std::string text = "{\n  \"format\": \"attnviz-session\",\n  \"version\": 1,,\n}";
    const Result<Session> r = parse_no_throw(text);
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].path, "");
    EXPECT_TRUE(contains(r.problems[0].message, "malformed")) << r.problems[0].message;
    EXPECT_TRUE(contains(r.problems[0].message, "line 3")) << r.problems[0].message;
}

TEST(ParseSession, TruncatedJson) {
    const std::string full = worked_text;
    for (size_t cut : {size_t{0}, size_t{1}, full.size() / 3, full.size() / 2, full.size() - 1}) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        const Result<Session> r = parse_no_throw(full.substr(0, cut));
        EXPECT_FALSE(r);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_EQ(r.problems[0].path, "");
        EXPECT_TRUE(contains(r.problems[0].message, "truncated")) << r.problems[0].message;
        EXPECT_TRUE(contains(r.problems[0].message, "line")) << r.problems[0].message;
    }
}

TEST(ParseSession, TopLevelNotAnObject) {
    for (const char* text : {"[1, 2, 3]", "42", "\"attnviz-session\"", "null", "true"}) {
        SCOPED_TRACE(text);
        const Result<Session> r = parse_no_throw(text);
        EXPECT_FALSE(r);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_EQ(r.problems[0].path, "");
        EXPECT_TRUE(contains(r.problems[0].message, "object")) << r.problems[0].message;
    }
}

TEST(ParseSession, MissingFields) {
    const std::pair<std::string, std::function<void(json&)>> cases[] = {
        {"config.d_k", [](json& d) { d["config"].erase("d_k"); }},
        {"config.n", [](json& d) { d["config"].erase("n"); }},
        {"config.mask", [](json& d) { d["config"].erase("mask"); }},
        {"config.scale", [](json& d) { d["config"].erase("scale"); }},
        {"config.output_projection", [](json& d) { d["config"].erase("output_projection"); }},
        {"config", [](json& d) { d.erase("config"); }},
        {"heads[0].W_V", [](json& d) { d["heads"][0].erase("W_V"); }},
        {"heads[1].W_Q", [](json& d) { d["heads"][1].erase("W_Q"); }},
        {"heads", [](json& d) { d.erase("heads"); }},
        {"X", [](json& d) { d.erase("X"); }},
        {"format", [](json& d) { d.erase("format"); }},
        {"version", [](json& d) { d.erase("version"); }},
        {"W_O", [](json& d) { d.erase("W_O"); }},  // output_projection is true
    };
    for (const auto& [path, edit] : cases) {
        json doc = worked_json();
        edit(doc);
        expect_rejected_at(doc, path, "missing");
    }
}

TEST(ParseSession, WrongShapeExactMessage) {
    json doc = worked_json();
    doc["heads"][1]["W_K"] = json::parse("[[1,0,0],[0,1,0],[1,0,0],[0,1,0]]");
    const Result<Session> r = parse_no_throw(doc.dump());
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u) << all_text(r.problems);
    EXPECT_EQ(r.problems[0].str(), "heads[1].W_K: expected 4×2, got 4×3");
}

TEST(ParseSession, WrongShapes) {
    const std::pair<std::string, std::function<void(json&)>> cases[] = {
        {"X",
         [](json& d) {
             d["X"].push_back({1, 2, 3, 4});
         }},
        {"X", [](json& d) { d["X"] = json::array(); }},
        {"heads[0].W_Q", [](json& d) { d["heads"][0]["W_Q"].erase(0); }},
        {"W_O", [](json& d) { d["W_O"] = json::parse("[[1,0,0],[0,1,0],[0,0,1],[0,0,0]]"); }},
        {"X", [](json& d) { d["X"] = "not a matrix"; }},
        {"X[0]", [](json& d) { d["X"][0] = 5; }},
    };
    for (const auto& [path, edit] : cases) {
        json doc = worked_json();
        edit(doc);
        expect_rejected_at(doc, path);
    }
}

TEST(ParseSession, RaggedRows) {
    json doc = worked_json();
    doc["X"][1] = {0, 2, 0};
    expect_rejected_at(doc, "X[1]", "ragged");
    doc = worked_json();
    doc["heads"][0]["W_K"][3] = {0, 1, 5};
    expect_rejected_at(doc, "heads[0].W_K[3]", "ragged");
}

TEST(ParseSession, NonNumberCells) {
    const std::pair<std::string, std::function<void(json&)>> cases[] = {
        {"X[0][1]", [](json& d) { d["X"][0][1] = "a"; }},
        {"heads[0].W_Q[2][1]", [](json& d) { d["heads"][0]["W_Q"][2][1] = nullptr; }},
        {"W_O[3][3]", [](json& d) { d["W_O"][3][3] = true; }},
        {"heads[1].W_V[0][0]", [](json& d) { d["heads"][1]["W_V"][0][0] = json::array({1}); }},
        {"X[1][3]", [](json& d) { d["X"][1][3] = json::object(); }},
    };
    for (const auto& [path, edit] : cases) {
        json doc = worked_json();
        edit(doc);
        expect_rejected_at(doc, path, "number");
    }
}

TEST(ParseSession, NumberTooLargeIsReported) {
    // nlohmann::json refuses 1e999 with an out_of_range exception (406, "number overflow"), not a
    // parse_error; the parser must still report it as a problem with the cell's path.
    json doc = worked_json();
    doc["X"][0][2] = 123456.5;
    std::string text = doc.dump();
    const size_t at = text.find("123456.5");
    ASSERT_NE(at, std::string::npos);
    for (const char* big : {"1e999", "-1e999", "1.8e308"}) {
        std::string t = text;
        t.replace(at, 8, big);
        SCOPED_TRACE(big);
        const Result<Session> r = parse_no_throw(t);
        EXPECT_FALSE(r) << "a number too large for a double was silently accepted";
        ASSERT_FALSE(r.problems.empty());
        // The cell's path, or at least a problem that says where in the text it is.
        const Problem& p = r.problems[0];
        EXPECT_TRUE(p.path == "X[0][2]" || contains(p.message, "line")) << p.str();
    }
    // The largest finite double is a number, but outside the ±1e15 that keeps every intermediate
    // finite: refused at its cell. 1e15 itself is fine.
    std::string big = text;
    big.replace(at, 8, "1.7976931348623157e308");
    const Result<Session> refused = parse_no_throw(big);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.problems[0].path, "X[0][2]");
    EXPECT_TRUE(contains(refused.problems[0].message, "1e+15")) << refused.problems[0].str();
    std::string ok = text;
    ok.replace(at, 8, "1e15");
    const Result<Session> r = parse_no_throw(ok);
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->params.X(0, 2), 1e15);
}

TEST(ParseSession, ScaleTooLargeIsReported) {
    json doc = worked_json();
    doc["config"]["scale"] = 123456.5;
    std::string text = doc.dump();
    text.replace(text.find("123456.5"), 8, "1e999");
    const Result<Session> r = parse_no_throw(text);
    EXPECT_FALSE(r);
    ASSERT_FALSE(r.problems.empty());
}

TEST(ParseSession, BadConfigValues) {
    const std::tuple<std::string, std::function<void(json&)>, std::string> cases[] = {
        {"config.mask", [](json& d) { d["config"]["mask"] = "future"; }, "causal"},
        {"config.mask", [](json& d) { d["config"]["mask"] = 1; }, ""},
        {"config.scale", [](json& d) { d["config"]["scale"] = "log"; }, "sqrt_dk"},
        {"config.scale", [](json& d) { d["config"]["scale"] = 0; }, "> 0"},
        {"config.scale", [](json& d) { d["config"]["scale"] = -2.5; }, "> 0"},
        {"config.scale", [](json& d) { d["config"]["scale"] = 1e-309; }, "at least 1e-06"},
        {"config.scale", [](json& d) { d["config"]["scale"] = 9.9e-7; }, "at least 1e-06"},
        {"config.scale", [](json& d) { d["config"]["scale"] = nullptr; }, ""},
        {"config.output_projection", [](json& d) { d["config"]["output_projection"] = "yes"; }, ""},
        {"config.n", [](json& d) { d["config"]["n"] = 100000; }, "limit"},
        {"config.d_model", [](json& d) { d["config"]["d_model"] = 8193; }, "8192"},
        {"config.heads", [](json& d) { d["config"]["heads"] = 257; }, "256"},
        {"config.d_k", [](json& d) { d["config"]["d_k"] = 0; }, "at least 1"},
        {"config.d_v", [](json& d) { d["config"]["d_v"] = -4; }, "at least 1"},
        {"config.d_k", [](json& d) { d["config"]["d_k"] = 2.5; }, "whole number"},
        {"config.n", [](json& d) { d["config"]["n"] = "2"; }, "whole number"},
        {"config.n", [](json& d) { d["config"]["n"] = 18446744073709551615u; }, "limit"},
        {"config", [](json& d) { d["config"] = json::array(); }, "object"},
        {"format", [](json& d) { d["format"] = "attnviz-trace"; }, "attnviz-session"},
        {"format", [](json& d) { d["format"] = 1; }, ""},
        {"version", [](json& d) { d["version"] = 6; }, "6"},
        {"version", [](json& d) { d["version"] = "1"; }, ""},
    };
    for (const auto& [path, edit, part] : cases) {
        json doc = worked_json();
        edit(doc);
        expect_rejected_at(doc, path, part);
    }
}

TEST(ParseSession, InputsOverTheirLimitAreReported) {
    json doc = worked_json();
    doc["config"]["d_model"] = 8192;
    doc["config"]["heads"] = 256;
    doc["config"]["d_k"] = 8192;
    const Result<Session> r = parse_no_throw(doc.dump());
    EXPECT_FALSE(r);
    ASSERT_FALSE(r.problems.empty());
    EXPECT_EQ(r.problems[0].path, "config");
}

TEST(ParseSession, HeadsAndTokens) {
    const std::pair<std::string, std::function<void(json&)>> cases[] = {
        {"heads", [](json& d) { d["heads"].push_back(d["heads"][0]); }},
        {"heads", [](json& d) { d["heads"].erase(1); }},
        {"heads", [](json& d) { d["heads"] = json::object(); }},
        {"heads[1]", [](json& d) { d["heads"][1] = 7; }},
        {"tokens",
         [](json& d) {
             d["tokens"] = {"a", "b", "c"};
         }},
        {"tokens", [](json& d) { d["tokens"] = {"a"}; }},
        {"tokens", [](json& d) { d["tokens"] = "ab"; }},
        {"tokens[1]",
         [](json& d) {
             d["tokens"] = {"a", 2};
         }},
        {"tokens[0]",
         [](json& d) {
             d["tokens"] = json::array({nullptr, "b"});
         }},
    };
    for (const auto& [path, edit] : cases) {
        json doc = worked_json();
        edit(doc);
        expect_rejected_at(doc, path);
    }
}

TEST(ParseSession, WOPresenceFollowsProjection) {
    json doc = worked_json();
    doc.erase("W_O");
    expect_rejected_at(doc, "W_O", "missing");
    doc = worked_json();
    doc["config"]["output_projection"] = false;
    expect_rejected_at(doc, "W_O", "output_projection");
}

TEST(ParseSession, ReportsEveryProblemAtOnce) {
    json doc = worked_json();
    doc["X"][0][1] = "a";
    doc["heads"][1]["W_K"] = json::parse("[[1,0,0],[0,1,0],[1,0,0],[0,1,0]]");
    doc["heads"][0].erase("W_V");
    doc["tokens"] = {"only one"};
    const Result<Session> r = parse_no_throw(doc.dump());
    EXPECT_FALSE(r);
    EXPECT_NE(find_path(r.problems, "X[0][1]"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "heads[1].W_K"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "heads[0].W_V"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "tokens"), nullptr) << all_text(r.problems);
}

// ---------------------------------------------------------------------------------------------
// Bounded, streaming reading

// A session whose X (n×d_model, output projection off, one 1-wide head) is `cell` everywhere;
// the config comes first or last.
std::string big_session(int n, int d_model, const std::string& cell, bool config_first) {
    const std::string config = "\"config\": {\"n\": " + std::to_string(n) +
                               ", \"d_model\": " + std::to_string(d_model) +
                               ", \"heads\": 1, \"d_k\": 1, \"d_v\": 1, \"output_projection\": false, "
                               "\"mask\": \"none\", \"scale\": \"sqrt_dk\"}";
    std::string row = "[";
    for (int c = 0; c < d_model; ++c) row += (c ? "," : "") + cell;
    row += "]";
    std::string w = "[";
    for (int r = 0; r < d_model; ++r) w += r ? ",[1]" : "[1]";
    w += "]";
    std::string text = "{\"format\": \"attnviz-session\", \"version\": 1, ";
    if (config_first) text += config + ", ";
    text += "\"X\": [";
    text.reserve(text.size() + static_cast<size_t>(n) * (row.size() + 1) + 3 * w.size() + 400);
    for (int r = 0; r < n; ++r) {
        if (r) text += ",";
        text += row;
    }
    text += "], \"heads\": [{\"W_Q\": " + w + ", \"W_K\": " + w + ", \"W_V\": " + w + "}]";
    if (!config_first) text += ", " + config;
    return text + "}";
}

TEST(ParseSessionBounded, MillionsOfBadCellsGiveTwentyProblemsAndACount) {
    for (bool config_first : {true, false}) {
        SCOPED_TRACE(config_first ? "config first" : "config last");
        const std::string text = big_session(2000, 2500, "\"a\"", config_first);  // 5 million bad cells
        const Result<Session> r = parse_no_throw(text);
        ASSERT_FALSE(r);
        ASSERT_EQ(r.problems.size(), max_reported_problems + 1) << all_text(r.problems);
        EXPECT_EQ(r.problems[0].str(), "X[0][0]: expected a number, got the text \"a\"");
        EXPECT_EQ(r.problems[19].path, "X[0][19]");
        EXPECT_EQ(r.problems.back(), (Problem{"", "and 4999980 more problems"}));
        EXPECT_EQ(problem_count(r.problems), 5000000u);
    }
}

TEST(ParseSessionBounded, LargeValidSessionReadsInEitherOrder) {
    for (bool config_first : {true, false}) {
        SCOPED_TRACE(config_first ? "config first" : "config last");
        const Result<Session> r = parse_no_throw(big_session(300, 400, "0.25", config_first));
        ASSERT_TRUE(r) << all_text(r.problems);
        EXPECT_EQ(r.value->params.X.rows(), 300);
        EXPECT_EQ(r.value->params.X.cols(), 400);
        EXPECT_TRUE((r.value->params.X.array() == 0.25).all());
        EXPECT_EQ(r.value->params.heads[0].W_V.rows(), 400);
        EXPECT_TRUE(validate(*r.value).empty());
    }
}

TEST(ParseSessionBounded, ProblemCapCountsExactly) {
    ProblemList list;
    for (int k = 0; k < 25; ++k) list.add("p" + std::to_string(k), "bad");
    EXPECT_EQ(list.size(), 25u);
    int built = 0;
    list.add_lazy([&] {
        ++built;
        return Problem{"lazy", "x"};
    });
    EXPECT_EQ(built, 0) << "a problem past the cap must not be built";
    const Problems p = std::move(list).take();
    ASSERT_EQ(p.size(), 21u);
    EXPECT_EQ(p[19].path, "p19");
    EXPECT_EQ(p[20].message, "and 6 more problems");
    EXPECT_EQ(problem_count(p), 26u);
    ProblemList one;
    for (int k = 0; k < 21; ++k) one.add("", "bad");
    EXPECT_EQ(std::move(one).take().back().message, "and 1 more problem");
}

// The text of the worked example with its keys in the order given (config anywhere).
std::string ordered_text(const std::vector<std::string>& keys) {
    const json doc = worked_json();
    std::string text = "{";
    for (const std::string& k : keys) text += (text.size() > 1 ? ", \"" : "\"") + k + "\": " + doc.at(k).dump();
    return text + "}";
}

TEST(ParseSessionBounded, KeysInAnyOrder) {
    const std::vector<std::vector<std::string>> orders = {
        {"format", "version", "config", "tokens", "X", "heads", "W_O"},
        {"X", "heads", "W_O", "tokens", "config", "version", "format"},
        {"heads", "config", "W_O", "X", "format", "tokens", "version"},
    };
    for (const auto& order : orders) {
        const Result<Session> r = parse_no_throw(ordered_text(order));
        ASSERT_TRUE(r) << all_text(r.problems);
        EXPECT_EQ(*r.value, worked_example());
    }
    // Shapes are judged the same whether the config comes before the matrices or after them.
    for (const auto& order : orders) {
        json doc = worked_json();
        doc["heads"][1]["W_K"] = json::parse("[[1,0,0],[0,1,0],[1,0,0],[0,1,0]]");
        doc["X"].push_back({1, 2, 3, 4});
        std::string text = "{";
        for (const std::string& k : order) text += (text.size() > 1 ? ", \"" : "\"") + k + "\": " + doc.at(k).dump();
        const Result<Session> r = parse_no_throw(text + "}");
        ASSERT_FALSE(r);
        EXPECT_EQ(all_text(r.problems), "X: expected 2×4, got 3×4\nheads[1].W_K: expected 4×2, got 4×3\n");
    }
}

TEST(ParseSessionBounded, RowsLongerThanTheConfigAreNotKeptButReported) {
    // A 100,000-value row of a 2×4 X is counted, not stored: with the config first because it says
    // 4, with the config last because no config allows more than 8192 columns.
    std::string row = "[";
    for (int k = 0; k < 100000; ++k) row += k ? ",1" : "1";
    row += "]";
    for (bool config_first : {true, false}) {
        SCOPED_TRACE(config_first ? "config first" : "config last");
        std::string text = config_first ? ordered_text({"format", "version", "config", "tokens", "X", "heads", "W_O"})
                                        : ordered_text({"format", "version", "tokens", "X", "heads", "W_O", "config"});
        text.replace(text.find("[[1,0,1,0],[0,2,0,2]]"), 21, "[" + row + "," + row + "]");
        const Result<Session> r = parse_no_throw(text);
        ASSERT_FALSE(r);
        ASSERT_EQ(r.problems.size(), 1u) << all_text(r.problems);
        EXPECT_EQ(r.problems[0].str(), "X: expected 2×4, got 2×100000");
    }
}

TEST(ParseSessionBounded, UnknownKeysAreIgnoredAnywhere) {
    json doc = worked_json();
    doc["comment"] = json::parse(R"({"deep": [1, [2, "x", [[[]]]], {"a": null, "b": 1e300}], "t": "é"})");
    doc["config"]["note"] = json::array({1, 2});
    doc["heads"][0]["bias"] = "none";
    const Result<Session> r = parse_no_throw(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(*r.value, worked_example());
    // A number too large for a double inside an ignored field is ignored too.
    std::string text = worked_text;
    text.insert(1, "\"unknown\": [1e999, {\"x\": -1e400}],");
    EXPECT_TRUE(parse_no_throw(text)) << text;
}

TEST(ParseSessionBounded, KeyGivenTwiceIsRefused) {
    const std::string base = worked_text;
    const std::pair<std::string, std::string> cases[] = {
        {"\"version\": 1,", "version"},
        {"\"n\": 2,", "config.n"},
        {"\"W_K\": [[1, 0], [0, 1], [1, 0], [0, 1]],", "heads[0].W_K"},
    };
    for (const auto& [field, path] : cases) {
        SCOPED_TRACE(path);
        std::string text = base;
        const size_t at = text.find(field);
        ASSERT_NE(at, std::string::npos);
        text.insert(at, field + " ");
        const Result<Session> r = parse_no_throw(text);
        ASSERT_FALSE(r);
        const Problem* p = find_path(r.problems, path);
        ASSERT_NE(p, nullptr) << all_text(r.problems);
        EXPECT_TRUE(contains(p->message, "given twice")) << p->str();
    }
    // Twice the same matrix, even with the same values.
    std::string text = base;
    text.insert(text.find("\"X\""), "\"X\": [[1, 0, 1, 0], [0, 2, 0, 2]], ");
    const Result<Session> r = parse_no_throw(text);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.problems[0].str(), "X: given twice (each key may appear only once)");
}

TEST(ParseSessionBounded, NulByteIsRefusedAtItsPosition) {
    const std::string valid = worked_text;
    ASSERT_TRUE(parse_no_throw(valid));
    // After the document: nlohmann's lexer took a NUL for the end of the input and accepted this.
    const std::string trailing = valid + std::string("\0garbage", 8);
    Result<Session> r = parse_no_throw(trailing);
    ASSERT_FALSE(r) << "a NUL and garbage after the document were accepted";
    ASSERT_EQ(r.problems.size(), 1u);
    const size_t lines = static_cast<size_t>(std::count(valid.begin(), valid.end(), '\n')) + 1;
    const size_t column = valid.size() - valid.rfind('\n');
    EXPECT_EQ(r.problems[0].message, "a NUL byte at line " + std::to_string(lines) + ", column " +
                                         std::to_string(column) + " (JSON text cannot hold one)");
    EXPECT_EQ(parse_no_throw(valid + '\0').problems[0].message, r.problems[0].message);
    // Inside: between tokens and inside a string.
    std::string inside = valid;
    inside[inside.find("\"version\"") - 1] = '\0';
    r = parse_no_throw(inside);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.problems[0].message, "a NUL byte at line 3, column 2")) << r.problems[0].str();
    std::string in_string = valid;
    in_string[in_string.find("x1") + 1] = '\0';
    r = parse_no_throw(in_string);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.problems[0].message, "a NUL byte at line")) << r.problems[0].str();
}

TEST(ParseSessionBounded, BadLastByteIsMalformedNotTruncated) {
    std::string text = worked_text;
    text.back() = 'x';  // the closing brace replaced: the input is complete, its last token wrong
    Result<Session> r = parse_no_throw(text);
    ASSERT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(contains(r.problems[0].message, "malformed JSON at line 17")) << r.problems[0].str();
    EXPECT_FALSE(contains(r.problems[0].message, "truncated")) << r.problems[0].str();
    for (const char* bad :
         {"[1, 2]x", "{\"a\": x", "[01]", "[1,]", "{\"a\": 1,}", "[\"\\q\"]", "[1 2]", "\"\\ud800x\""}) {
        SCOPED_TRACE(bad);
        r = parse_no_throw(bad);
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.problems[0].message, "malformed JSON at line 1")) << r.problems[0].str();
    }
    // Input that really ends early still says so, wherever it stops.
    for (const char* cut : {"{\"format\": tru", "[1, 2", "[1.", "[-", "[1e+", "{\"a\"", "{\"a\":", "[\"ab", "[\"\\u12",
                            "[\"\xc3", "{", " "}) {
        SCOPED_TRACE(cut);
        r = parse_no_throw(cut);
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.problems[0].message, "ends too early (truncated?)")) << r.problems[0].str();
    }
}

TEST(ParseSessionBounded, StringsAreStrictUtf8AndEscapesDecode) {
    json doc = worked_json();
    doc["tokens"] = {"placeholder1", "placeholder2"};
    std::string text = doc.dump();
    text.replace(text.find("placeholder1"), 12, "caf\\u00e9 \\ud83d\\ude42 \\\"q\\\" \\/");
    text.replace(text.find("placeholder2"), 12, "日本\\t");
    const Result<Session> r = parse_no_throw(text);
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->tokens[0], "café 🙂 \"q\" /");
    EXPECT_EQ(r.value->tokens[1], "日本\t");
    for (const char* bad : {"\xff", "\xc3(", "\xed\xa0\x80", "\\udc00", "\x01"}) {
        std::string t = doc.dump();
        t.replace(t.find("placeholder1"), 12, bad);
        const Result<Session> rb = parse_no_throw(t);
        ASSERT_FALSE(rb) << bad;
        EXPECT_TRUE(contains(rb.problems[0].message, "malformed JSON")) << rb.problems[0].str();
    }
    // A UTF-8 byte order mark before the document is allowed.
    EXPECT_TRUE(parse_no_throw("\xEF\xBB\xBF" + std::string(worked_text)));
}

TEST(ParseSessionBounded, DeepNestingIsRefusedWithoutCrashing) {
    std::string text = worked_text;
    text.insert(1, "\"unknown\": " + std::string(100000, '[') + std::string(100000, ']') + ",");
    const Result<Session> r = parse_no_throw(text);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.problems[0].message, "nested more than 512 levels")) << r.problems[0].str();
    std::string fine = worked_text;
    fine.insert(1, "\"unknown\": " + std::string(500, '[') + std::string(500, ']') + ",");
    EXPECT_TRUE(parse_no_throw(fine));
}

TEST(ParseSessionBounded, PathsAreCleanInNestedPlaces) {
    json doc = worked_json();
    doc["heads"][1]["W_V"][2][1] = json::array({json::object()});
    doc["heads"][0]["W_Q"][3] = json::object();
    doc["tokens"][1] = json::array();
    doc["X"][1][0] = 1e300;
    const Result<Session> r = parse_no_throw(doc.dump());
    ASSERT_FALSE(r);
    for (const Problem& p : r.problems) {
        EXPECT_FALSE(contains(p.path, ".[")) << p.str();
        EXPECT_FALSE(!p.path.empty() && p.path[0] == '.') << p.str();
    }
    EXPECT_NE(find_path(r.problems, "heads[1].W_V[2][1]"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "heads[0].W_Q[3]"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "tokens[1]"), nullptr) << all_text(r.problems);
    EXPECT_NE(find_path(r.problems, "X[1][0]"), nullptr) << all_text(r.problems);
}

TEST(ParseSessionBounded, NumberTooLargeIsOneProblemAmongOthers) {
    // 1e999 no longer stops the reading: it is reported at its cell with the session's other problems.
    json doc = worked_json();
    doc["X"][0][2] = 123456.5;
    doc["heads"][0]["W_K"][0][0] = "a";
    std::string text = doc.dump();
    text.replace(text.find("123456.5"), 8, "-1e999");
    const Result<Session> r = parse_no_throw(text);
    ASSERT_FALSE(r);
    EXPECT_EQ(all_text(r.problems),
              "X[0][2]: the number -1e999 is too large to represent (values must be finite)\n"
              "heads[0].W_K[0][0]: expected a number, got the text \"a\"\n");
    // Tiny numbers read as 0 (or the nearest subnormal), as JSON readers do.
    text = doc.dump();
    text.replace(text.find("123456.5"), 8, "-1e-400");
    text.replace(text.find("\"a\""), 3, "2.4e-324");
    const Result<Session> tiny = parse_no_throw(text);
    ASSERT_TRUE(tiny) << all_text(tiny.problems);
    EXPECT_EQ(tiny.value->params.X(0, 2), 0.0);
}

TEST(ParseSessionBounded, LongTextIsShortenedInMessages) {
    json doc = worked_json();
    doc["X"][0][0] = std::string(5000, 'z');
    const Result<Session> r = parse_no_throw(doc.dump());
    ASSERT_FALSE(r);
    EXPECT_LT(r.problems[0].message.size(), 200u) << r.problems[0].str();
    EXPECT_TRUE(contains(r.problems[0].message, "(5000 bytes)")) << r.problems[0].str();
}

// ---------------------------------------------------------------------------------------------
// Writing and round trips

std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }

// Every number equal; non-zero ones bit for bit (the writer may print −0 as 0).
void expect_bit_equal(const Matrix& a, const Matrix& b, const std::string& what) {
    ASSERT_EQ(a.rows(), b.rows()) << what;
    ASSERT_EQ(a.cols(), b.cols()) << what;
    for (Eigen::Index r = 0; r < a.rows(); ++r)
        for (Eigen::Index c = 0; c < a.cols(); ++c) {
            if (a(r, c) == 0 && b(r, c) == 0) continue;
            EXPECT_EQ(bits(a(r, c)), bits(b(r, c)))
                << what << "[" << r << "][" << c << "] " << a(r, c) << " vs " << b(r, c);
        }
}

bool same_shape(const Matrix& a, const Matrix& b) { return a.rows() == b.rows() && a.cols() == b.cols(); }

// Session == without the undefined behaviour of comparing Eigen matrices of different shapes.
bool same_session(const Session& a, const Session& b, bool compare_W_O = true) {
    if (a.config != b.config || a.tokens != b.tokens) return false;
    if (!same_shape(a.params.X, b.params.X) || a.params.X != b.params.X) return false;
    if (a.params.heads.size() != b.params.heads.size()) return false;
    for (size_t h = 0; h < a.params.heads.size(); ++h) {
        const HeadParams &x = a.params.heads[h], &y = b.params.heads[h];
        if (!same_shape(x.W_Q, y.W_Q) || !same_shape(x.W_K, y.W_K) || !same_shape(x.W_V, y.W_V)) return false;
        if (x.W_Q != y.W_Q || x.W_K != y.W_K || x.W_V != y.W_V) return false;
    }
    if (compare_W_O && (!same_shape(a.params.W_O, b.params.W_O) || a.params.W_O != b.params.W_O)) return false;
    return true;
}

// write → parse gives the same session (W_O only while the projection is on; see
// ProjectionOffKeepsWO), numbers bit for bit, and writing again gives the same bytes.
void expect_round_trip(const Session& s) {
    ASSERT_TRUE(validate(s).empty()) << all_text(validate(s));
    const std::string first = write_session(s);
    const Result<Session> back = parse_no_throw(first);
    ASSERT_TRUE(back) << all_text(back.problems) << "\n" << first;
    EXPECT_TRUE(same_session(*back.value, s, s.config.output_projection)) << first;
    expect_bit_equal(back.value->params.X, s.params.X, "X");
    ASSERT_EQ(back.value->params.heads.size(), s.params.heads.size());
    for (size_t h = 0; h < s.params.heads.size(); ++h) {
        expect_bit_equal(back.value->params.heads[h].W_Q, s.params.heads[h].W_Q, "W_Q");
        expect_bit_equal(back.value->params.heads[h].W_K, s.params.heads[h].W_K, "W_K");
        expect_bit_equal(back.value->params.heads[h].W_V, s.params.heads[h].W_V, "W_V");
    }
    if (s.config.output_projection) expect_bit_equal(back.value->params.W_O, s.params.W_O, "W_O");
    if (s.config.biases) {
        for (size_t h = 0; h < s.params.heads.size(); ++h) {
            expect_bit_equal(back.value->params.heads[h].b_Q, s.params.heads[h].b_Q, "b_Q");
            expect_bit_equal(back.value->params.heads[h].b_K, s.params.heads[h].b_K, "b_K");
            expect_bit_equal(back.value->params.heads[h].b_V, s.params.heads[h].b_V, "b_V");
        }
        if (s.config.output_projection) expect_bit_equal(back.value->params.b_O, s.params.b_O, "b_O");
    }
    EXPECT_EQ(back.value->params.kv_group_size, s.params.kv_group_size);
    EXPECT_EQ(bits(back.value->config.scale.divisor), bits(s.config.scale.divisor));
    EXPECT_EQ(bits(back.value->config.rope.base), bits(s.config.rope.base));
    const std::string second = write_session(*back.value);
    EXPECT_EQ(first, second);
    // The text is JSON that nlohmann reads back with the same tokens.
    const json doc = json::parse(first);
    EXPECT_EQ(doc.at("tokens").get<std::vector<std::string>>(), s.tokens);
    EXPECT_EQ(doc.at("format"), "attnviz-session");
    // Version 1 unless biases, groups or RoPE are used, 3 for cross-attention and a custom mask.
    EXPECT_EQ(doc.at("version"), std::max(file_version(s.config), s.pin ? file_version(s.pin->config) : 1));
    if (s.config.cross()) {
        expect_bit_equal(back.value->params.Y, s.params.Y, "Y");
        EXPECT_EQ(back.value->kv_tokens, s.kv_tokens);
    }
    if (s.config.mask == Mask::custom) expect_bit_equal(back.value->params.mask, s.params.mask, "mask");
    EXPECT_EQ(back.value->pin == nullptr, s.pin == nullptr);
    if (s.pin && back.value->pin) {
        EXPECT_EQ(*back.value->pin, *s.pin);
    }
}

TEST(SessionRoundTrip, WorkedExample) { expect_round_trip(worked_example()); }

TEST(SessionRoundTrip, RandomSessions) {
    const Config a = make_config(5, 6, 3, 2, 4, true, Mask::causal, {Scale::Kind::divisor, 0.3});
    Config b = a;
    b.output_projection = false;
    b.scale = {Scale::Kind::none, 1.0};
    b.mask = Mask::none;
    for (const Config& c : {a, b, Config{}})
        for (std::uint64_t seed : {1u, 77u}) {
            SCOPED_TRACE(seed);
            expect_round_trip(random_session(c, seed));
        }
}

// ---------------------------------------------------------------------------------------------
// Version 2: biases, K/V groups, RoPE

Matrix matrix_from_json(const json& rows, bool allow_null);  // below, with the trace tests

Config llama_like() {
    Config c = make_config(5, 8, 4, 4, 2, true, Mask::causal);
    c.biases = true;
    c.kv_heads = 2;
    c.rope = {true, 500000, Rope::Style::interleaved, 2, {}};
    return c;
}

TEST(SessionVersion2, RoundTripsEachFeatureAloneAndTogether) {
    Config biases = make_config(3, 4, 2, 2, 3);
    biases.biases = true;
    Config groups = make_config(3, 4, 4, 2, 2, false, Mask::none);
    groups.kv_heads = 1;
    Config rope = make_config(4, 4, 1, 4, 4);
    rope.rope.on = true;
    for (const Config& c : {biases, groups, rope, llama_like()}) expect_round_trip(random_session(c, 6));
}

TEST(SessionVersion2, TheFileShowsEachFieldOnlyWhereItBelongs) {
    const Session s = random_session(llama_like(), 2);
    const json doc = json::parse(write_session(s));
    EXPECT_EQ(doc["config"]["biases"], true);
    EXPECT_EQ(doc["config"]["kv_heads"], 2);
    EXPECT_EQ(doc["config"]["rope"], json::parse(R"({"base": 500000, "style": "interleaved", "dims": 2})"));
    // W_K, W_V, b_K, b_V once per group, in its first head.
    EXPECT_TRUE(doc["heads"][0].contains("W_K"));
    EXPECT_FALSE(doc["heads"][1].contains("W_K"));
    EXPECT_FALSE(doc["heads"][1].contains("b_V"));
    EXPECT_TRUE(doc["heads"][1].contains("b_Q"));
    EXPECT_TRUE(doc["heads"][2].contains("W_V"));
    EXPECT_EQ(doc["b_O"].size(), 1u);
    EXPECT_EQ(doc["b_O"][0].size(), 8u);
    // A plain session has none of them and says version 1.
    const json plain = json::parse(write_session(worked_example()));
    EXPECT_EQ(plain["version"], 1);
    for (const char* key : {"biases", "kv_heads", "rope"}) EXPECT_FALSE(plain["config"].contains(key)) << key;
    EXPECT_FALSE(plain["heads"][0].contains("b_Q"));
    EXPECT_FALSE(plain.contains("b_O"));
}

TEST(SessionVersion2, Version1FilesLoadUnchangedAndMayNotUseVersion2Fields) {
    const Result<Session> r = parse_no_throw(worked_text);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r.value->config.extended());
    EXPECT_EQ(r.value->params.heads[0].b_Q, Matrix::Zero(1, 2));  // kept at their shapes, zero
    json doc = worked_json();
    doc["config"]["biases"] = true;
    expect_rejected_at(doc, "version", "version 2");
    doc["version"] = 2;
    expect_rejected_at(doc, "heads[0].b_Q", "missing");
}

TEST(SessionVersion2, EveryNewFieldIsCheckedAtItsPath) {
    const json good = json::parse(write_session(random_session(llama_like(), 3)));
    ASSERT_TRUE(parse_no_throw(good.dump()));
    const std::vector<std::tuple<std::string, std::function<void(json&)>, std::string>> cases = {
        {"config.biases", [](json& d) { d["config"]["biases"] = "yes"; }, "true or false"},
        {"config.kv_heads", [](json& d) { d["config"]["kv_heads"] = 3; }, "must divide heads = 4"},
        {"config.kv_heads", [](json& d) { d["config"]["kv_heads"] = 0; }, "at least 1"},
        {"config.kv_heads", [](json& d) { d["config"]["kv_heads"] = 1.5; }, "whole number"},
        {"config.rope", [](json& d) { d["config"]["rope"] = true; }, "expected an object"},
        {"config.rope.base", [](json& d) { d["config"]["rope"]["base"] = 1; }, "above 1"},
        {"config.rope.base", [](json& d) { d["config"]["rope"]["base"] = "10000"; }, "a number"},
        {"config.rope.style", [](json& d) { d["config"]["rope"]["style"] = "neox"; }, "\"half\" or"},
        {"config.rope.dims", [](json& d) { d["config"]["rope"]["dims"] = 3; }, "even"},
        {"config.rope.dims", [](json& d) { d["config"]["rope"]["dims"] = 6; }, "d_k = 4"},
        {"heads[1].W_K", [](json& d) { d["heads"][1]["W_K"] = d["heads"][0]["W_K"]; }, "heads[0]"},
        {"heads[2].b_K", [](json& d) { d["heads"][2].erase("b_K"); }, "missing"},
        {"heads[0].b_V", [](json& d) { d["heads"][0]["b_V"] = json::parse("[[1, 2, 3]]"); }, "expected 1×2"},
        {"b_O", [](json& d) { d.erase("b_O"); }, "missing"},
        {"heads[3].b_Q", [](json& d) { d["config"].erase("biases"); }, "config.biases is false"},
        {"b_O", [](json& d) { d["config"].erase("biases"); }, "config.biases is false"},
        {"W_O", [](json& d) { d["config"]["output_projection"] = false; }, "config.output_projection is false"},
        {"b_O", [](json& d) { d["config"]["output_projection"] = false; }, "config.output_projection is false"},
    };
    for (const auto& [path, mutate, part] : cases) {
        SCOPED_TRACE(path + " " + part);
        json doc = good;
        mutate(doc);
        expect_rejected_at(doc, path, part);
    }
    // RoPE's keys are each optional: {} is RoPE with base 10000, half style, every column.
    json doc = good;
    doc["config"]["rope"] = json::object();
    const Result<Session> r = parse_no_throw(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->config.rope, (Rope{true, 10000, Rope::Style::half, 0, {}}));
}

// ---------------------------------------------------------------------------------------------
// Version 3: cross-attention, custom masks, the pin

Config cross_config() {
    Config c = make_config(3, 4, 2, 2, 2, true, Mask::custom);
    c.n_kv = 5;
    return c;
}

TEST(SessionVersion3, CrossAttentionCustomMasksAndPinsRoundTrip) {
    Config cross = cross_config();
    cross.mask = Mask::none;
    Config masked = make_config(4, 4, 2, 2, 2, false, Mask::custom);
    Session both = random_session(cross_config(), 7);
    both.kv_tokens = {"le", "chat", "", "sur", "tapis ✓"};
    for (const Session& s : {random_session(cross, 5), random_session(masked, 6), both}) expect_round_trip(s);
    // A pin: the session as it was, kept inside the file; it may have other dimensions.
    Session pinned = worked_example();
    pinned.pin = std::make_shared<const Session>(both);
    expect_round_trip(pinned);
    const json doc = json::parse(write_session(pinned));
    EXPECT_EQ(doc["version"], 3);  // the pin needs version 3
    EXPECT_EQ(doc["pin"]["version"], 3);
    EXPECT_EQ(doc["pin"]["config"]["n_kv"], 5);
    EXPECT_EQ(doc["pin"]["kv_tokens"][1], "chat");
    EXPECT_FALSE(doc["pin"].contains("pin"));
}

TEST(SessionVersion3, TheFileShowsYAndTheMaskOnlyWhenUsed) {
    const json doc = json::parse(write_session(random_session(cross_config(), 8)));
    EXPECT_EQ(doc["version"], 3);
    EXPECT_EQ(doc["config"]["n_kv"], 5);
    EXPECT_EQ(doc["config"]["mask"], "custom");
    EXPECT_EQ(doc["Y"].size(), 5u);
    EXPECT_EQ(doc["Y"][0].size(), 4u);
    EXPECT_EQ(doc["mask"].size(), 3u);
    EXPECT_EQ(doc["mask"][0].size(), 5u);
    EXPECT_EQ(doc["kv_tokens"], json::parse(R"(["y1", "y2", "y3", "y4", "y5"])"));
    const json plain = json::parse(write_session(worked_example()));
    for (const char* key : {"Y", "mask", "kv_tokens", "pin"}) EXPECT_FALSE(plain.contains(key)) << key;
    EXPECT_FALSE(plain["config"].contains("n_kv"));
}

TEST(SessionVersion3, EveryNewFieldIsCheckedAtItsPath) {
    const json good = json::parse(write_session(random_session(cross_config(), 9)));
    ASSERT_TRUE(parse_no_throw(good.dump()));
    const std::vector<std::tuple<std::string, std::function<void(json&)>, std::string>> cases = {
        {"version", [](json& d) { d["version"] = 2; }, "version 3"},
        {"config.n_kv", [](json& d) { d["config"]["n_kv"] = 0; }, "at least 1"},
        {"config.n_kv", [](json& d) { d["config"]["n_kv"] = 9000; }, "limit"},
        {"config.mask", [](json& d) { d["config"]["mask"] = "causal"; }, "n_kv = n"},
        {"config.mask", [](json& d) { d["config"]["mask"] = "banded"; }, "\"custom\""},
        {"Y", [](json& d) { d.erase("Y"); }, "missing"},
        {"Y", [](json& d) { d["Y"].erase(d["Y"].begin()); }, "expected 5×4, got 4×4"},
        {"Y", [](json& d) { d["config"].erase("n_kv"); }, "config.n_kv is not set"},
        {"Y[1][2]", [](json& d) { d["Y"][1][2] = "x"; }, "a number"},
        {"kv_tokens", [](json& d) { d["kv_tokens"] = json::array({"a"}); }, "expected 5 labels (config.n_kv)"},
        {"kv_tokens[2]", [](json& d) { d["kv_tokens"][2] = 3; }, "text label"},
        {"mask", [](json& d) { d.erase("mask"); }, "missing"},
        {"mask", [](json& d) { d["config"]["mask"] = "none"; }, "only with \"custom\""},
        {"mask[1][3]", [](json& d) { d["mask"][1][3] = 0.5; }, "0 or 1"},
        {"mask[2]", [](json& d) { d["mask"][2] = json::parse("[0, 0, 0, 0, 0]"); }, "query 2 may attend to no key"},
        {"mask", [](json& d) { d["mask"].erase(d["mask"].begin()); }, "expected 3×5, got 2×5"},
        {"pin.config.n",
         [](json& d) {
             d["pin"] = d;
             d["pin"]["config"]["n"] = 0;
         },
         "at least 1"},
        {"pin.X",
         [](json& d) {
             d["pin"] = d;
             d["pin"].erase("X");
         },
         "missing"},
        {"pin.pin",
         [](json& d) {
             d["pin"] = d;
             d["pin"]["pin"] = d;
         },
         "cannot hold a pin"},
        {"pin", [](json& d) { d["pin"] = 3; }, "JSON object"},
    };
    for (const auto& [path, mutate, part] : cases) {
        SCOPED_TRACE(path + " " + part);
        json doc = good;
        mutate(doc);
        expect_rejected_at(doc, path, part);
    }
    // kv_tokens are optional: y1 … y5.
    json doc = good;
    doc.erase("kv_tokens");
    const Result<Session> r = parse_no_throw(doc.dump());
    ASSERT_TRUE(r) << all_text(r.problems);
    EXPECT_EQ(r.value->kv_tokens, default_kv_tokens(5));
}

// ---------------------------------------------------------------------------------------------
// Version 4: the softmax (config.softmax)

TEST(SessionVersion4, TheSoftmaxPlusOneRoundTripsAndShowsOnlyWhenUsed) {
    Config c = make_config(4, 6, 2, 3, 3, true, Mask::causal);
    c.softmax = Softmax::plus_one;
    const Session s = random_session(c, 41);
    expect_round_trip(s);
    const json doc = json::parse(write_session(s));
    EXPECT_EQ(doc["version"], 4);
    EXPECT_EQ(doc["config"]["softmax"], "plus_one");
    EXPECT_EQ(parse_no_throw(doc.dump()).value->config.softmax, Softmax::plus_one);
    // With cross-attention too (version 3's), still version 4.
    Config cross = cross_config();
    cross.softmax = Softmax::plus_one;
    expect_round_trip(random_session(cross, 42));
    // The standard softmax is not written: such a file stays at the version it was.
    const json plain = json::parse(write_session(worked_example()));
    EXPECT_FALSE(plain["config"].contains("softmax"));
    EXPECT_EQ(plain["version"], 1);
    // A trace says which softmax made its weights.
    const json trace = json::parse(write_trace(forward<double>(c, s.params)));
    EXPECT_EQ(trace["version"], 4);
    EXPECT_EQ(trace["config"]["softmax"], "plus_one");
}

TEST(SessionVersion4, OlderFilesLoadWithTheStandardSoftmax) {
    const Result<Session> r = parse_no_throw(worked_text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value->config.softmax, Softmax::standard);
    json doc = worked_json();
    doc["config"]["softmax"] = "standard";  // said explicitly: the same, in any version
    ASSERT_TRUE(parse_no_throw(doc.dump()));
    EXPECT_EQ(parse_no_throw(doc.dump()).value->config, r.value->config);
}

TEST(SessionVersion4, AnUnknownSoftmaxOrAnOlderVersionIsRefused) {
    json doc = worked_json();
    doc["version"] = 4;
    for (const json& bad : {json("plus_two"), json("Plus_One"), json(1), json(true), json(nullptr)}) {
        doc["config"]["softmax"] = bad;
        SCOPED_TRACE(bad.dump());
        expect_rejected_at(doc, "config.softmax", "expected \"standard\" or \"plus_one\", got");
    }
    doc["config"]["softmax"] = "plus_one";
    ASSERT_TRUE(parse_no_throw(doc.dump()));
    for (const int version : {1, 2, 3}) {
        doc["version"] = version;
        expect_rejected_at(doc, "version", "needs version 4");
    }
    doc["version"] = 6;
    expect_rejected_at(doc, "version", "reads versions 1 to 5");
}

// Version 5: a sliding window, soft-capping and RoPE's scaling are carried, refused in an older
// version and refused when impossible.
TEST(SessionVersion5, WindowSoftcapAndRopeScalingReadBackAndAreChecked) {
    Config c = make_config(4, 4, 2, 2, 2, true, Mask::causal);
    c.window = 3;
    c.softcap = 50;
    c.rope.on = true;
    c.rope.dims = 2;
    c.rope.scaling = {RopeScaling::Kind::llama3, 8, 1, 4, 8192};
    const Session s = random_session(c, 31);
    const std::string text = write_session(s);
    const Result<Session> r = parse_no_throw(text);
    ASSERT_TRUE(r.value) << r.problems[0].message;
    EXPECT_EQ(r.value->config, c);
    EXPECT_EQ(write_session(*r.value), text);
    json doc = json::parse(text);
    EXPECT_EQ(doc["version"], 5);
    EXPECT_EQ(doc["config"]["rope"]["scaling"], "llama3");
    for (const int version : {2, 3, 4}) {
        json older = doc;
        older["version"] = version;
        expect_rejected_at(older, "version", "need version 5");
    }
    const std::vector<std::tuple<std::string, std::function<void(json&)>, std::string>> cases = {
        {"config.window", [](json& d) { d["config"]["window"] = 0; }, "at least 1"},
        {"config.window", [](json& d) { d["config"]["window"] = 1.5; }, "whole number"},
        {"config.softcap", [](json& d) { d["config"]["softcap"] = -1; }, "soft-cap"},
        {"config.softcap", [](json& d) { d["config"]["softcap"] = "50"; }, "expected a number"},
        {"config.rope.scaling", [](json& d) { d["config"]["rope"]["scaling"] = "yarn"; }, "\"llama3\""},
        {"config.rope.scaling.factor", [](json& d) { d["config"]["rope"]["factor"] = 0.5; }, "from 1"},
        {"config.rope.original_max_positions", [](json& d) { d["config"]["rope"].erase("original_max_positions"); },
         "missing"},
        {"config.rope.scaling.high_freq_factor", [](json& d) { d["config"]["rope"]["high_freq_factor"] = 1; },
         "above low_freq_factor"},
    };
    for (const auto& [path, edit, part] : cases) {
        json bad = doc;
        edit(bad);
        SCOPED_TRACE(path);
        expect_rejected_at(bad, path, part);
    }
    // A window with a custom mask is refused: the window belongs in the mask then.
    Config custom = make_config(3, 4, 2, 2, 2, true, Mask::custom);
    custom.window = 2;
    EXPECT_FALSE(validate(custom).empty());
}

// Version 5's q/k norms: the eps and both weights read back; refused in an older version, without
// the eps, at a wrong shape, with an impossible eps, under cross-attention.
TEST(SessionVersion5, QkNormsReadBackAndAreChecked) {
    Config c = make_config(3, 4, 4, 2, 2, true, Mask::causal);
    c.kv_heads = 2;
    c.qk_norm = {true, 1e-6};
    const Session s = random_session(c, 32);
    const std::string text = write_session(s);
    const Result<Session> r = parse_no_throw(text);
    ASSERT_TRUE(r.value) << r.problems[0].message;
    EXPECT_EQ(r.value->config, c);
    EXPECT_EQ(r.value->params.q_norm, s.params.q_norm);
    EXPECT_EQ(r.value->params.k_norm.cols(), 4);  // 2 groups × d_k 2
    EXPECT_EQ(write_session(*r.value), text);
    json doc = json::parse(text);
    EXPECT_EQ(doc["version"], 5);
    EXPECT_EQ(doc["config"]["qk_norm_eps"], 1e-6);
    EXPECT_EQ(doc["q_norm"][0].size(), 8u);
    json older = doc;
    older["version"] = 4;
    expect_rejected_at(older, "version", "q/k norms");
    const std::vector<std::tuple<std::string, std::function<void(json&)>, std::string>> cases = {
        {"config.qk_norm.eps", [](json& d) { d["config"]["qk_norm_eps"] = 0; }, "above 0"},
        {"config.qk_norm_eps", [](json& d) { d["config"]["qk_norm_eps"] = "1e-6"; }, "expected a number"},
        {"q_norm",
         [](json& d) {
             d["q_norm"] = json::array({json::array({1, 1})});
         },
         "1×8"},
        {"k_norm", [](json& d) { d.erase("k_norm"); }, "missing"},
        {"q_norm", [](json& d) { d["config"].erase("qk_norm_eps"); }, "qk_norm_eps is not set"},
    };
    for (const auto& [path, edit, part] : cases) {
        json bad = doc;
        edit(bad);
        SCOPED_TRACE(path);
        expect_rejected_at(bad, path, part);
    }
    Config cross = make_config(3, 4, 2, 2, 2, true, Mask::none);
    cross.n_kv = 2;
    cross.qk_norm.on = true;
    EXPECT_FALSE(validate(cross).empty());
}

TEST(SessionVersion3, TracesOfCrossAttentionHaveTheirShapes) {
    const Session s = random_session(cross_config(), 10);
    const Trace t = forward<double>(s.config, s.params);
    const json doc = json::parse(write_trace(t));
    EXPECT_EQ(doc["version"], 3);
    EXPECT_EQ(doc["heads"][1]["K"].size(), 5u);           // n_kv rows
    EXPECT_EQ(doc["heads"][1]["weights"].size(), 3u);     // n rows
    EXPECT_EQ(doc["heads"][1]["weights"][0].size(), 5u);  // n_kv columns
    expect_bit_equal(matrix_from_json(doc["heads"][1]["weights"], false), t.heads[1].weights, "weights");
}

TEST(SessionVersion3, ResizingKeepsKeyLabelsAndThePin) {
    Session s = random_session(cross_config(), 11);
    s.kv_tokens[4] = "last";
    s.pin = std::make_shared<const Session>(worked_example());
    Config fewer = s.config;
    fewer.n_kv = 3;
    const Session small = resized(s, fewer);
    EXPECT_EQ(small.kv_tokens, (std::vector<std::string>{"y1", "y2", "y3"}));
    EXPECT_EQ(small.params.Y.rows(), 3);
    EXPECT_EQ(small.params.mask.cols(), 3);
    ASSERT_TRUE(small.pin);
    EXPECT_EQ(*small.pin, worked_example());
    // Growing back restores what the shrink dropped, from memory.
    const Session back = resized(small, s.config, remembered(s, small));
    EXPECT_EQ(back.kv_tokens[4], "last");
    EXPECT_TRUE(same(back.params.Y, s.params.Y));
    EXPECT_TRUE(same(back.params.mask, s.params.mask));
    // Self-attention again: no Y, no key labels; cross again: they come back.
    Config self = s.config;
    self.n_kv = 0;
    const Session plain = resized(s, self);
    EXPECT_EQ(plain.params.Y.size(), 0);
    EXPECT_TRUE(plain.kv_tokens.empty());
    const Session again = resized(plain, s.config, remembered(s, plain));
    EXPECT_TRUE(same(again.params.Y, s.params.Y));
    EXPECT_EQ(again.kv_tokens, s.kv_tokens);
    EXPECT_TRUE(validate(again).empty());
}

TEST(SessionVersion2, TraceCarriesTheRotatedMatrices) {
    const Session s = random_session(llama_like(), 4);
    const Trace t = forward<double>(s.config, s.params);
    const json doc = json::parse(write_trace(t));
    EXPECT_EQ(doc["version"], 2);
    ASSERT_TRUE(doc["heads"][0].contains("Q_rot"));
    expect_bit_equal(matrix_from_json(doc["heads"][3]["K_rot"], false), t.heads[3].K_rot, "K_rot");
    const json plain = json::parse(write_trace(forward<double>(worked_example().config, worked_example().params)));
    EXPECT_FALSE(plain["heads"][0].contains("Q_rot"));
    EXPECT_EQ(plain["version"], 1);
}

TEST(SessionRoundTrip, AwkwardDoublesAndTokens) {
    const Config c = make_config(4, 4, 2, 3, 2, true, Mask::causal, {Scale::Kind::divisor, 1.0 / 3.0});
    Session s = random_session(c, 5);
    const double awkward[] = {0.1,
                              1e-300,
                              -0.0,
                              0.0,
                              5e-324,
                              Limits::max_abs_value,  // the largest magnitude allowed
                              -Limits::max_abs_value,
                              std::numeric_limits<double>::min(),
                              1.0 / 3.0,
                              -2.5,
                              123456789012345.67,
                              0.30000000000000004,
                              9.999999999999998e14,
                              1e-7,
                              900719925474099.3,
                              -1e-310};
    int k = 0;
    for (int r = 0; r < 4; ++r)
        for (int col = 0; col < 4; ++col) s.params.X(r, col) = awkward[k++ % std::size(awkward)];
    s.params.heads[1].W_K(0, 0) = 0.1;
    s.params.heads[1].W_K(1, 2) = -0.0;
    s.params.W_O(3, 3) = 1e-300;
    s.tokens = {"say \"hi\"", "héllo ⁽¹⁾ 日本 🙂", "back\\slash\ttab\nnewline",
                std::string("ctl\x01\x1f", 5)};
    expect_round_trip(s);
}

TEST(SessionRoundTrip, ProjectionOffFileHasNoWO) {
    // The file carries W_O exactly when the projection is on (docs/session-format.md). A session
    // saved with the projection off reads back without W_O; turning the projection on then gives
    // the fill rule's W_O (the identity), as resize() documents.
    Config c;
    c.output_projection = false;
    const Session s = random_session(c, 3);
    ASSERT_EQ(s.params.W_O.rows(), 4);
    const std::string text = write_session(s);
    EXPECT_FALSE(json::parse(text).contains("W_O"));
    const Result<Session> back = parse_no_throw(text);
    ASSERT_TRUE(back) << all_text(back.problems);
    EXPECT_EQ(back.value->params.W_O.size(), 0);
    EXPECT_TRUE(same_session(*back.value, s, false));  // everything else is kept
    Config on = c;
    on.output_projection = true;
    EXPECT_TRUE(same(resized(*back.value, on).params.W_O, Matrix(Matrix::Identity(4, 4))));
}

TEST(SessionRoundTrip, InactiveDivisorRoundTrips) {
    // The dimensions panel switches scale.kind and keeps scale.divisor, so {sqrt_dk, 2.5} is a
    // session the GUI makes (temperature 2.5, then back to √d_k). Scale::operator== compares the
    // divisor, and session_file.hpp promises parse_session(write_session(s)) == s.
    Session s = worked_example();
    s.config.scale = {Scale::Kind::sqrt_dk, 2.5};
    ASSERT_TRUE(validate(s).empty());
    const Result<Session> back = parse_no_throw(write_session(s));
    ASSERT_TRUE(back) << all_text(back.problems);
    EXPECT_EQ(back.value->config.scale, s.config.scale) << "the temperature the user set was lost";
    EXPECT_TRUE(same_session(*back.value, s));
}

TEST(SessionWrite, EveryValidSessionCanBeWritten) {
    // validate(Session) accepts any token bytes; write_session must then not throw
    // (nlohmann's dump throws type_error 316 on invalid UTF-8).
    Session s = worked_example();
    s.tokens[0] = "caf\xE9";  // Latin-1 é, not UTF-8
    s.tokens[1] = "\xff";
    if (validate(s).empty()) {
        std::string text;
        EXPECT_NO_THROW(text = write_session(s));
        EXPECT_TRUE(parse_no_throw(text)) << text;
    } else {
        EXPECT_EQ(validate(s)[0].path.rfind("tokens", 0), 0u) << all_text(validate(s));
    }
}

TEST(SessionEquality, DifferentShapesCompareUnequalWithoutCrashing) {
    // Session/Params/HeadParams have defaulted operator==, which compares Eigen matrices with ==;
    // Eigen requires equal shapes there. Run in a child process: a crash must not take the suite.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Config c;
    const Session a = random_session(c, 1);
    Session b = a;
    b.params.W_O = Matrix();  // what a session loaded with the projection off holds
    EXPECT_EXIT(std::exit(a == b ? 3 : 0), ::testing::ExitedWithCode(0), "") << "full == empty W_O";
    EXPECT_EXIT(std::exit(b == a ? 3 : 0), ::testing::ExitedWithCode(0), "") << "empty == full W_O";
    Session wide = a;
    wide.params.X = Matrix::Zero(2, 9);
    Session narrow = a;
    narrow.params.X = Matrix::Zero(2, 1);
    EXPECT_EXIT(std::exit(wide == narrow ? 3 : 0), ::testing::ExitedWithCode(0), "") << "2×9 X == 2×1 X";
}

TEST(SessionRoundTrip, EmptyTokenAndSingleCell) {
    const Config c = make_config(1, 1, 1, 1, 1);
    Session s = random_session(c, 9);
    s.tokens = {""};
    expect_round_trip(s);
}

TEST(SessionWrite, OneMatrixRowPerLine) {
    const std::string text = write_session(worked_example());
    // Each row of X is alone on its line.
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = text.substr(start, nl - start);
        line.erase(0, line.find_first_not_of(' '));
        lines.push_back(line);
    }
    EXPECT_NE(std::find(lines.begin(), lines.end(), "[1, 0, 1, 0],"), lines.end()) << text;
    EXPECT_NE(std::find(lines.begin(), lines.end(), "[0, 2, 0, 2]"), lines.end()) << text;
    EXPECT_EQ(text.back(), '\n');
    // No W_O without the projection.
    Session s = worked_example();
    s.config.output_projection = false;
    EXPECT_FALSE(json::parse(write_session(s)).contains("W_O"));
}

// ---------------------------------------------------------------------------------------------
// write_trace

Matrix matrix_from_json(const json& rows, bool allow_null) {
    Matrix m(static_cast<Eigen::Index>(rows.size()), rows.empty() ? 0 : static_cast<Eigen::Index>(rows[0].size()));
    for (size_t r = 0; r < rows.size(); ++r) {
        EXPECT_EQ(rows[r].size(), static_cast<size_t>(m.cols()));
        for (size_t c = 0; c < rows[r].size(); ++c) {
            const json& v = rows[r][c];
            if (v.is_null()) {
                EXPECT_TRUE(allow_null) << "null at [" << r << "][" << c << "]";
                m(r, c) = -std::numeric_limits<double>::infinity();
            } else {
                m(r, c) = v.get<double>();
            }
        }
    }
    return m;
}

TEST(WriteTrace, InPiecesIsTheSameTextWithoutHoldingItWhole) {
    const Session s = random_session({300, 16, 2, 8, 8, true, Mask::causal, {}, false, 0, {}}, 5);
    const Trace t = forward<double>(s.config, s.params);
    const std::string whole = write_trace(t);
    std::string joined;
    std::size_t pieces = 0, largest = 0;
    write_trace(t, [&](std::string_view piece) {
        joined += piece;
        ++pieces;
        largest = std::max(largest, piece.size());
        return true;
    });
    EXPECT_EQ(joined, whole);
    EXPECT_GT(whole.size(), std::size_t{3} << 20);  // a few megabytes of JSON …
    EXPECT_GE(pieces, 3u);                          // … handed on in pieces of about one
    EXPECT_LT(largest, std::size_t{3} << 19);

    // A sink that refuses stops the writer: it is not called again.
    std::size_t calls = 0;
    write_trace(t, [&](std::string_view) {
        ++calls;
        return false;
    });
    EXPECT_EQ(calls, 1u);
}

void check_trace_json(const Session& s) {
    const Trace t = forward<double>(s.config, s.params);
    const std::string text = write_trace(t);
    json doc;
    ASSERT_NO_THROW(doc = json::parse(text)) << text;
    EXPECT_EQ(doc.at("format"), "attnviz-trace");
    EXPECT_EQ(doc.at("version"), 1);
    const json& cfg = doc.at("config");
    EXPECT_EQ(cfg.at("n"), s.config.n);
    EXPECT_EQ(cfg.at("d_model"), s.config.d_model);
    EXPECT_EQ(cfg.at("heads"), s.config.heads);
    EXPECT_EQ(cfg.at("d_k"), s.config.d_k);
    EXPECT_EQ(cfg.at("d_v"), s.config.d_v);
    EXPECT_EQ(cfg.at("output_projection"), s.config.output_projection);
    EXPECT_EQ(cfg.at("mask"), s.config.mask == Mask::causal ? "causal" : "none");
    EXPECT_EQ(bits(doc.at("scale_divisor").get<double>()), bits(s.config.scale.value(s.config.d_k)));
    ASSERT_EQ(doc.at("heads").size(), static_cast<size_t>(s.config.heads));
    for (int h = 0; h < s.config.heads; ++h) {
        const json& jh = doc["heads"][h];
        const HeadTrace& th = t.heads[h];
        const std::pair<const char*, const Matrix*> parts[] = {{"Q", &th.Q},
                                                               {"K", &th.K},
                                                               {"V", &th.V},
                                                               {"scores_raw", &th.scores_raw},
                                                               {"scores", &th.scores},
                                                               {"weights", &th.weights},
                                                               {"Z", &th.Z}};
        for (const auto& [key, m] : parts) {
            SCOPED_TRACE(std::string(key) + " head " + std::to_string(h));
            const bool is_scores = std::string(key) == "scores";
            const Matrix got = matrix_from_json(jh.at(key), is_scores);
            expect_bit_equal(got, *m, key);
            if (is_scores) {
                for (int i = 0; i < s.config.n; ++i)
                    for (int j = 0; j < s.config.n; ++j)
                        EXPECT_EQ(jh["scores"][i][j].is_null(), s.config.mask == Mask::causal && j > i);
            }
        }
        const json& rows = jh.at("weights_rows");
        ASSERT_EQ(rows.size(), static_cast<size_t>(s.config.n));
        for (int i = 0; i < s.config.n; ++i) {
            EXPECT_EQ(bits(rows[i].at("sum").get<double>()), bits(t.rows[h][i].sum));
            EXPECT_EQ(bits(rows[i].at("max").get<double>()), bits(t.rows[h][i].max));
            EXPECT_EQ(rows[i].at("entropy").get<double>(), t.rows[h][i].entropy);
        }
    }
    expect_bit_equal(matrix_from_json(doc.at("concat"), false), t.concat, "concat");
    expect_bit_equal(matrix_from_json(doc.at("output"), false), t.output, "output");
}

TEST(WriteTrace, WorkedExample) {
    check_trace_json(worked_example());
    // And by hand: scores⁽¹⁾[0][0] = 2√2 in the JSON.
    const Session w = worked_example();
    const json doc = json::parse(write_trace(forward<double>(w.config, w.params)));
    EXPECT_NEAR(doc["heads"][0]["scores"][0][0].get<double>(), 2 * std::sqrt(2.0), 1e-12);
    EXPECT_EQ(doc["heads"][1]["Q"], json::parse("[[0, 2], [4, 0]]"));
}

TEST(WriteTrace, RandomCausalAndNoProjection) {
    Config c = make_config(6, 5, 3, 2, 3, true, Mask::causal);
    check_trace_json(random_session(c, 41));
    c.output_projection = false;
    c.scale = {Scale::Kind::divisor, 0.1};
    check_trace_json(random_session(c, 42));
}

// ---------------------------------------------------------------------------------------------
// validate(Session), resized(), default_tokens()

TEST(SessionValidate, TokensAndParams) {
    Session s = worked_example();
    EXPECT_TRUE(validate(s).empty());
    s.tokens.push_back("extra");
    Problems p = validate(s);
    ASSERT_EQ(p.size(), 1u) << all_text(p);
    EXPECT_EQ(p[0].path, "tokens");
    s = worked_example();
    s.params.X(1, 1) = std::numeric_limits<double>::quiet_NaN();
    p = validate(s);
    ASSERT_EQ(p.size(), 1u) << all_text(p);
    EXPECT_EQ(p[0].path, "X[1][1]");
    s = worked_example();
    s.config.d_k = 0;
    p = validate(s);
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(p[0].path, "config.d_k");
}

TEST(SessionResized, KeepsAndExtendsTokens) {
    Session s = worked_example();
    s.tokens = {"the", "cat"};
    Config bigger = s.config;
    bigger.n = 4;
    const Session grown = resized(s, bigger);
    EXPECT_EQ(grown.tokens, (std::vector<std::string>{"the", "cat", "x3", "x4"}));
    EXPECT_EQ(grown.config, bigger);
    EXPECT_EQ(grown.params.X.rows(), 4);
    EXPECT_EQ(grown.params.X.row(0), s.params.X.row(0));
    EXPECT_EQ(grown.params.X(3, 1), fill_input(3, 1));  // the fill rule, not a zero row
    EXPECT_TRUE(validate(grown).empty()) << all_text(validate(grown));

    Config smaller = s.config;
    smaller.n = 1;
    const Session shrunk = resized(s, smaller);
    EXPECT_EQ(shrunk.tokens, (std::vector<std::string>{"the"}));
    EXPECT_TRUE(validate(shrunk).empty());
    // Back again: the kept token stays, the dropped one is a default again.
    EXPECT_EQ(resized(shrunk, s.config).tokens, (std::vector<std::string>{"the", "x2"}));

    // Other dimensions do not touch the tokens.
    Config wider = s.config;
    wider.d_model = 6;
    wider.heads = 3;
    EXPECT_EQ(resized(s, wider).tokens, s.tokens);
    EXPECT_EQ(resized(s, wider).params, resize(s.params, wider));
}

TEST(SessionResized, MissingTokensFilled) {
    Session s = worked_example();
    s.tokens.clear();
    Config c = s.config;
    c.n = 3;
    EXPECT_EQ(resized(s, c).tokens, (std::vector<std::string>{"x1", "x2", "x3"}));
}

TEST(DefaultTokens, Names) {
    EXPECT_EQ(default_tokens(3), (std::vector<std::string>{"x1", "x2", "x3"}));
    EXPECT_TRUE(default_tokens(0).empty());
    EXPECT_EQ(default_tokens(12)[11], "x12");
}

// ---------------------------------------------------------------------------------------------
// PyTorch as the outside reference: tests/reference/generate.py ran tiny layers in the conventions
// of nn.MultiheadAttention, BERT, GPT-2, Llama (RoPE half, grouped-query) and GPT-J (RoPE
// interleaved, partial) in float64 and stored their weights and outputs with the session they make.

TEST(TorchReference, EveryConventionMatchesPyTorch) {
    const Result<std::string> text = read_file(ATTNVIZ_GOLDEN_DIR "/../reference/torch-layers.json");
    ASSERT_TRUE(text) << all_text(text.problems);
    const json doc = json::parse(*text.value);
    std::vector<std::string> names;
    for (const json& c : doc.at("cases")) {
        const std::string name = c.at("name");
        names.push_back(name);
        SCOPED_TRACE(name);
        const Result<Session> s = parse_no_throw(c.at("session").dump());
        ASSERT_TRUE(s) << all_text(s.problems);
        const Trace t = forward<double>(s.value->config, s.value->params);
        const json& weights = c.at("weights");
        ASSERT_EQ(weights.size(), t.heads.size());
        double worst = 0;
        for (size_t h = 0; h < t.heads.size(); ++h) {
            const Matrix expected = matrix_from_json(weights[h], false);
            ASSERT_EQ(expected.rows(), t.heads[h].weights.rows());
            worst = std::max(worst, (expected - t.heads[h].weights).cwiseAbs().maxCoeff());
        }
        const Matrix output = matrix_from_json(c.at("output"), false);
        ASSERT_EQ(output.cols(), t.output.cols());
        worst = std::max(worst, (output - t.output).cwiseAbs().maxCoeff());
        EXPECT_LT(worst, 1e-12);
        // And the session written back is the same layer.
        EXPECT_EQ(json::parse(write_session(*s.value)), c.at("session"));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"torch", "bert", "gpt2", "llama", "gptj", "plus_one"}));
}

}  // namespace
}  // namespace attnviz::core
