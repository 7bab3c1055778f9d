// Tests of the attnviz command line, run as a real process: exit codes, stdout, stderr and files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/attention/presets.hpp"
#include "core/io/autosave_store.hpp"
#include "core/io/session_file.hpp"
#include "core/render/export.hpp"
#include "core/teach/sentence.hpp"
#include "test_support.hpp"

#ifndef ATTNVIZ_BIN
#error "ATTNVIZ_BIN must be the path of the attnviz executable"
#endif

// AddressSanitizer reserves terabytes of address space, so tests under an address-space limit
// (ulimit -v) cannot run with it.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNVIZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNVIZ_ASAN 1
#endif
#endif
#ifndef ATTNVIZ_ASAN
#define ATTNVIZ_ASAN 0
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace attnviz::test;

struct Outcome {
    int code = -1;  // the exit status, or 128 + signal when killed by a signal
    bool signaled = false;
    std::string out, err;
};

void spit(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(tmp.created()) << "mkdtemp failed";
        io = tmp.path() / "io";  // stdout/stderr captures live apart from the files under test
        fs::create_directory(io);
        work = tmp.path() / "work";
        fs::create_directory(work);
    }

    // Runs attnviz with `args`, stdin from /dev/null, stdout and stderr captured.
    Outcome run(const std::vector<std::string>& args) {
        std::vector<std::string> all{ATTNVIZ_BIN};
        all.insert(all.end(), args.begin(), args.end());
        return run_argv(all);
    }

    // Runs `attnviz compute FILE` under an address-space limit of `kib` KiB (sh's ulimit -v).
    Outcome run_limited(long kib, const fs::path& file) {
        return run_argv({"/bin/sh", "-c", "ulimit -v " + std::to_string(kib) + " && exec \"$0\" compute \"$1\"",
                         ATTNVIZ_BIN, file.string()});
    }

    Outcome run_argv(std::vector<std::string> all) {
        const fs::path out_path = io / "stdout", err_path = io / "stderr";
        std::vector<char*> argv;
        for (std::string& a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        const pid_t pid = fork();
        if (pid == 0) {
            const int in = open("/dev/null", O_RDONLY);
            const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (in < 0 || out < 0 || err < 0) _exit(127);
            dup2(in, 0);
            dup2(out, 1);
            dup2(err, 2);
            unsetenv("DISPLAY");  // never open a window by accident
            unsetenv("WAYLAND_DISPLAY");
            execv(argv[0], argv.data());
            _exit(127);
        }
        Outcome r;
        if (pid < 0) {
            ADD_FAILURE() << "fork failed";
            return r;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status)) {
            r.code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            r.signaled = true;
            r.code = 128 + WTERMSIG(status);
        }
        r.out = slurp(out_path);
        r.err = slurp(err_path);
        return r;
    }

    // The worked example written by the binary itself.
    fs::path worked_file() {
        const fs::path p = work / "worked.json";
        const Outcome r = run({"example", "worked-example", "-o", p.string()});
        EXPECT_EQ(r.code, 0) << r.err;
        return p;
    }

    // The worked example as JSON, to edit into invalid sessions.
    json worked_json() { return json::parse(slurp(worked_file())); }

    TempDir tmp{"attnviz_cli"};  // removed with its contents after each test
    fs::path io, work;
};

std::string describe(const Outcome& r) {
    return "exit " + std::to_string(r.code) + (r.signaled ? " (killed by a signal)" : "") + "\nstdout:\n" +
           r.out.substr(0, 2000) + "\nstderr:\n" + r.err;
}

// ---------------------------------------------------------------------------------------------

TEST_F(Cli, ExampleWorkedExampleFile) {
    const fs::path p = work / "w.json";
    const Outcome r = run({"example", "worked-example", "-o", p.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
    ASSERT_TRUE(fs::exists(p));
    const json doc = json::parse(slurp(p));
    EXPECT_EQ(doc["format"], "attnviz-session");
    EXPECT_EQ(doc["X"], json::parse("[[1, 0, 1, 0], [0, 2, 0, 2]]"));
    EXPECT_EQ(doc["heads"][0]["W_Q"], json::parse("[[1, 0], [0, 1], [1, 0], [0, 1]]"));
    EXPECT_EQ(doc["heads"][1]["W_V"], json::parse("[[0, 1], [1, 0], [0, 1], [1, 0]]"));
    EXPECT_EQ(entries(work), (std::vector<std::string>{"w.json"}));
}

TEST_F(Cli, ComputeWorkedExampleToStdout) {
    const fs::path p = worked_file();
    const Outcome r = run({"compute", p.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    json doc;
    ASSERT_NO_THROW(doc = json::parse(r.out)) << r.out;
    EXPECT_EQ(doc["format"], "attnviz-trace");
    const double r2 = std::sqrt(2.0);
    EXPECT_NEAR(doc["heads"][0]["scores"][0][0].get<double>(), 2 * r2, 1e-12);
    EXPECT_NEAR(doc["heads"][0]["scores"][1][1].get<double>(), 8 * r2, 1e-12);
    EXPECT_EQ(doc["heads"][0]["scores_raw"], json::parse("[[4, 0], [0, 16]]"));
    EXPECT_EQ(doc["heads"][1]["Q"], json::parse("[[0, 2], [4, 0]]"));
    const double e2 = std::exp(2 * r2);
    EXPECT_NEAR(doc["heads"][0]["weights"][0][0].get<double>(), e2 / (e2 + 1), 1e-12);
    // output = concat (W_O = I): output[0][0] = Z⁽¹⁾[0][0] = 2·e^{2√2}/(e^{2√2}+1).
    EXPECT_NEAR(doc["output"][0][0].get<double>(), 2 * e2 / (e2 + 1), 1e-12);
    EXPECT_NEAR(doc["output"][0][2].get<double>(), 4 / (e2 + 1), 1e-12);
}

TEST_F(Cli, ComputeWritesFileWithO) {
    const fs::path p = worked_file();
    const fs::path trace = work / "trace.json";
    const Outcome r = run({"compute", p.string(), "-o", trace.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
    ASSERT_TRUE(fs::exists(trace));
    const std::string text = slurp(trace);
    const json doc = json::parse(text);
    EXPECT_NEAR(doc["heads"][0]["scores"][0][0].get<double>(), 2 * std::sqrt(2.0), 1e-12);
    // The same bytes as the stdout form, and nothing else left in the directory.
    const Outcome to_stdout = run({"compute", p.string()});
    EXPECT_EQ(to_stdout.out, text);
    EXPECT_EQ(entries(work), (std::vector<std::string>{"trace.json", "worked.json"}));
    // --output replaces an existing file.
    spit(trace, "old");
    const Outcome again = run({"compute", p.string(), "--output", trace.string()});
    ASSERT_EQ(again.code, 0) << describe(again);
    EXPECT_EQ(slurp(trace), text);
}

TEST_F(Cli, ComputeCausalRandom) {
    const fs::path p = work / "r.json";
    ASSERT_EQ(run({"example", "random", "--seed", "2", "-n", "4", "-o", p.string()}).code, 0);
    json doc = json::parse(slurp(p));
    doc["config"]["mask"] = "causal";
    spit(p, doc.dump());
    const Outcome r = run({"compute", p.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json t = json::parse(r.out);
    for (const json& head : t["heads"])
        for (int i = 0; i < 4; ++i) {
            double sum = 0;
            for (int j = 0; j < 4; ++j) {
                EXPECT_EQ(head["scores"][i][j].is_null(), j > i);
                sum += head["weights"][i][j].get<double>();
                if (j > i) {
                    EXPECT_EQ(head["weights"][i][j].get<double>(), 0.0);
                }
            }
            EXPECT_NEAR(sum, 1.0, 1e-12);
        }
}

TEST_F(Cli, InvalidSessionsExit2WithFieldPath) {
    const json base = worked_json();
    struct Case {
        const char* name;
        std::string text;
        std::string expected;  // a line stderr must contain
    };
    std::vector<Case> cases;
    {
        json d = base;
        d["heads"][1]["W_K"] = json::parse("[[1,0,0],[0,1,0],[1,0,0],[0,1,0]]");
        cases.push_back({"shape", d.dump(), "error: heads[1].W_K: expected 4×2, got 4×3"});
    }
    {
        json d = base;
        d["X"][0][1] = "a";
        cases.push_back({"cell", d.dump(), "error: X[0][1]: "});
    }
    {
        json d = base;
        d["config"].erase("d_k");
        cases.push_back({"missing", d.dump(), "error: config.d_k: missing"});
    }
    {
        json d = base;
        d["config"]["mask"] = "future";
        cases.push_back({"mask", d.dump(), "error: config.mask: "});
    }
    {
        json d = base;
        d["config"]["n"] = 100000;
        cases.push_back({"limit", d.dump(), "error: config.n: "});
    }
    {
        json d = base;
        d["X"][1] = {0, 2, 0};
        cases.push_back({"ragged", d.dump(), "error: X[1]: "});
    }
    {
        json d = base;
        d["config"]["output_projection"] = false;
        cases.push_back({"W_O given", d.dump(), "error: W_O: "});
    }
    cases.push_back({"top level", "[1, 2]", "expected a JSON object"});
    for (const Case& k : cases) {
        SCOPED_TRACE(k.name);
        const fs::path p = work / (std::string("bad_") + std::to_string(&k - cases.data()) + ".json");
        spit(p, k.text);
        const Outcome r = run({"compute", p.string()});
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_TRUE(contains(r.err, k.expected)) << describe(r);
        EXPECT_TRUE(r.out.empty()) << describe(r);
    }
}

TEST_F(Cli, MalformedJsonNamesFileAndLine) {
    const fs::path p = work / "malformed.json";
    spit(p, "{\n  \"format\": \"attnviz-session\",\n  \"version\": 1,,\n}\n");
    const Outcome r = run({"compute", p.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + p.string() + ": malformed JSON at line 3")) << describe(r);
    const fs::path t = work / "truncated.json";
    const std::string full = slurp(worked_file());
    spit(t, full.substr(0, full.size() / 2));
    const Outcome rt = run({"compute", t.string()});
    EXPECT_EQ(rt.code, 2) << describe(rt);
    EXPECT_TRUE(contains(rt.err, "error: " + t.string() + ": ")) << describe(rt);
    EXPECT_TRUE(contains(rt.err, "truncated")) << describe(rt);
}

TEST_F(Cli, NumberTooLargeExit2) {
    json d = worked_json();
    d["X"][0][0] = 123456.5;
    std::string text = d.dump();
    text.replace(text.find("123456.5"), 8, "1e999");
    const fs::path p = work / "huge.json";
    spit(p, text);
    const Outcome r = run({"compute", p.string()});
    EXPECT_FALSE(r.signaled) << describe(r);
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: ")) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
}

TEST_F(Cli, MissingInputExit1) {
    const fs::path p = work / "absent.json";
    const Outcome r = run({"compute", p.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + p.string() + ": ")) << describe(r);
    EXPECT_TRUE(r.out.empty());
    // A directory is not a session file either.
    const Outcome rd = run({"compute", work.string()});
    EXPECT_EQ(rd.code, 1) << describe(rd);
    EXPECT_TRUE(contains(rd.err, "error: " + work.string())) << describe(rd);
}

TEST_F(Cli, UnwritableOutputExit1) {
    const fs::path p = worked_file();
    const fs::path out = work / "no_such_dir" / "trace.json";
    const Outcome r = run({"compute", p.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + out.string() + ": ")) << describe(r);
    EXPECT_FALSE(fs::exists(out.parent_path()));
    EXPECT_EQ(entries(work), (std::vector<std::string>{"worked.json"}));
    // example -o into a missing directory too.
    const Outcome re = run({"example", "worked-example", "-o", out.string()});
    EXPECT_EQ(re.code, 1) << describe(re);
    // An existing directory as the output path.
    fs::create_directory(work / "adir");
    const Outcome rdir = run({"compute", p.string(), "-o", (work / "adir").string()});
    EXPECT_EQ(rdir.code, 1) << describe(rdir);
    EXPECT_TRUE(fs::is_directory(work / "adir"));
    EXPECT_EQ(entries(work), (std::vector<std::string>{"adir", "worked.json"}));
}

TEST_F(Cli, InvalidSessionLeavesOutputUntouched) {
    json d = worked_json();
    d["heads"][0]["W_Q"][0][0] = nullptr;
    const fs::path in = work / "bad.json";
    spit(in, d.dump());
    const fs::path out = work / "trace.json";
    spit(out, "previous trace");
    const auto before = entries(work);
    const Outcome r = run({"compute", in.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: heads[0].W_Q[0][0]: ")) << describe(r);
    EXPECT_EQ(slurp(out), "previous trace");
    EXPECT_EQ(entries(work), before);
    // Without an existing output file, none is created.
    const fs::path fresh = work / "fresh.json";
    const Outcome r2 = run({"compute", in.string(), "-o", fresh.string()});
    EXPECT_EQ(r2.code, 2) << describe(r2);
    EXPECT_FALSE(fs::exists(fresh));
    EXPECT_EQ(entries(work), before);
}

TEST_F(Cli, RandomExampleIsReproducibleWithRequestedShapes) {
    const fs::path a = work / "a.json", b = work / "b.json", c = work / "c.json";
    const std::vector<std::string> args{"example", "random",  "--seed", "3",         "-n",
                                        "5",       "--heads", "2",      "--d-model", "6"};
    auto with_out = [&](const fs::path& p) {
        std::vector<std::string> v = args;
        v.push_back("-o");
        v.push_back(p.string());
        return v;
    };
    const Outcome ra = run(with_out(a));
    ASSERT_EQ(ra.code, 0) << describe(ra);
    const Outcome rb = run(with_out(b));
    ASSERT_EQ(rb.code, 0) << describe(rb);
    const std::string text = slurp(a);
    EXPECT_EQ(text, slurp(b));
    const json doc = json::parse(text);
    EXPECT_EQ(doc["config"]["n"], 5);
    EXPECT_EQ(doc["config"]["d_model"], 6);
    EXPECT_EQ(doc["config"]["heads"], 2);
    EXPECT_EQ(doc["config"]["d_k"], 3);  // d_model / heads
    EXPECT_EQ(doc["config"]["d_v"], 3);
    EXPECT_EQ(doc["tokens"].size(), 5u);
    ASSERT_EQ(doc["X"].size(), 5u);
    for (const json& row : doc["X"]) {
        ASSERT_EQ(row.size(), 6u);
        for (const json& v : row) {
            EXPECT_GE(v.get<double>(), -1.0);
            EXPECT_LT(v.get<double>(), 1.0);
        }
    }
    ASSERT_EQ(doc["heads"].size(), 2u);
    for (const json& h : doc["heads"])
        for (const char* w : {"W_Q", "W_K", "W_V"}) {
            ASSERT_EQ(h[w].size(), 6u) << w;
            for (const json& row : h[w]) EXPECT_EQ(row.size(), 3u) << w;
        }
    ASSERT_EQ(doc["W_O"].size(), 6u);
    EXPECT_EQ(doc["W_O"][0].size(), 6u);
    // Another seed gives other numbers; the session computes.
    std::vector<std::string> other = with_out(c);
    other[3] = "4";
    ASSERT_EQ(run(other).code, 0);
    EXPECT_NE(slurp(c), text);
    const Outcome rc = run({"compute", a.string()});
    EXPECT_EQ(rc.code, 0) << describe(rc);
    EXPECT_EQ(json::parse(rc.out)["output"].size(), 5u);
}

TEST_F(Cli, SentenceExampleHasTheWordsAsTokensAndRowsOfX) {
    const fs::path a = work / "a.json", r = work / "r.json", o = work / "o.json";
    const Outcome ra = run({"example", "sentence", "--text", "The cat sat on the mat.", "--seed", "3", "--d-model", "6",
                            "--heads", "2", "-o", a.string()});
    ASSERT_EQ(ra.code, 0) << describe(ra);
    const json doc = json::parse(slurp(a));
    EXPECT_EQ(doc["tokens"], json({"The", "cat", "sat", "on", "the", "mat", "."}));
    EXPECT_EQ(doc["config"]["n"], 7);
    ASSERT_EQ(doc["X"].size(), 7u);
    EXPECT_EQ(doc["X"][0], doc["X"][4]);  // "The" and "the": one row
    EXPECT_NE(doc["X"][1], doc["X"][5]);  // "cat" and "mat"
    const attnviz::core::Matrix the = attnviz::core::word_embedding("the", 6);
    for (int c = 0; c < 6; ++c) EXPECT_EQ(doc["X"][4][c].get<double>(), the(0, c));
    // The weights are those of the random example with the same seed and n.
    ASSERT_EQ(
        run({"example", "random", "--seed", "3", "-n", "7", "--d-model", "6", "--heads", "2", "-o", r.string()}).code,
        0);
    const json random = json::parse(slurp(r));
    EXPECT_EQ(doc["heads"], random["heads"]);
    EXPECT_EQ(doc["W_O"], random["W_O"]);
    // One-hot rows: a column per distinct word.
    const Outcome ro = run({"example", "sentence", "--text", "the cat and the hat", "--one-hot", "-o", o.string()});
    ASSERT_EQ(ro.code, 0) << describe(ro);
    const json hot = json::parse(slurp(o));
    EXPECT_EQ(hot["X"][0], json({1, 0, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(hot["X"][3], hot["X"][0]);
    EXPECT_EQ(hot["X"][4], json({0, 0, 0, 1, 0, 0, 0, 0}));
    // The session computes.
    const Outcome rc = run({"compute", a.string()});
    EXPECT_EQ(rc.code, 0) << describe(rc);
    EXPECT_EQ(json::parse(rc.out)["output"].size(), 7u);
    // A sentence the session cannot take says why, naming it.
    const Outcome bad = run({"example", "sentence", "--text", "a b c d e", "--one-hot", "--d-model", "4", "--heads",
                             "2", "-o", o.string()});
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.err, "error: d_model: one-hot rows need a column per distinct word: d_model ≥ 5"))
        << describe(bad);
}

TEST_F(Cli, RandomNotDivisibleNeedsDk) {
    const fs::path p = work / "r.json";
    const Outcome r = run({"example", "random", "--d-model", "7", "--heads", "2", "-o", p.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: ")) << describe(r);
    EXPECT_FALSE(fs::exists(p));
    // With both sizes given it works.
    const Outcome ok =
        run({"example", "random", "--d-model", "7", "--heads", "2", "--d-k", "3", "--d-v", "4", "-o", p.string()});
    EXPECT_EQ(ok.code, 0) << describe(ok);
    const json doc = json::parse(slurp(p));
    EXPECT_EQ(doc["config"]["d_k"], 3);
    EXPECT_EQ(doc["config"]["d_v"], 4);
    EXPECT_EQ(doc["W_O"].size(), 8u);  // h·d_v
}

TEST_F(Cli, ExampleRandomTakesTheSoftmaxAndComputeFollowsIt) {
    const fs::path p = work / "plus-one.json";
    const Outcome r =
        run({"example", "random", "--seed", "4", "--mask", "causal", "--softmax", "plus_one", "-o", p.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json doc = json::parse(slurp(p));
    EXPECT_EQ(doc["version"], 4);
    EXPECT_EQ(doc["config"]["softmax"], "plus_one");
    // The trace's rows of weights sum to below 1: Σ e^s / (1 + Σ e^s) of their scores.
    const Outcome c = run({"compute", p.string()});
    ASSERT_EQ(c.code, 0) << describe(c);
    const json trace = json::parse(c.out);
    EXPECT_EQ(trace["config"]["softmax"], "plus_one");
    const json& head = trace["heads"][0];
    for (std::size_t i = 0; i < head["weights"].size(); ++i) {
        double exps = 0;
        for (const json& s : head["scores"][i])
            if (!s.is_null()) exps += std::exp(s.get<double>());
        EXPECT_NEAR(head["weights_rows"][i]["sum"].get<double>(), exps / (1 + exps), 1e-12) << i;
        EXPECT_LT(head["weights_rows"][i]["sum"].get<double>(), 1.0);
    }
    const fs::path bad = work / "bad.json";
    const Outcome refused = run({"example", "random", "--softmax", "plus_two", "-o", bad.string()});
    EXPECT_EQ(refused.code, 2) << describe(refused);
    EXPECT_TRUE(contains(refused.err, "error: --softmax: expected standard or plus_one, got \"plus_two\""))
        << describe(refused);
    EXPECT_FALSE(fs::exists(bad));
    const Outcome fixed = run({"example", "worked-example", "--softmax", "plus_one", "-o", bad.string()});
    EXPECT_EQ(fixed.code, 2) << describe(fixed);
}

TEST_F(Cli, ExampleInvalidOptionsExit2) {
    const fs::path p = work / "x.json";
    const std::vector<std::vector<std::string>> cases = {
        {"example", "random", "-n", "0", "-o", p.string()},
        {"example", "random", "--heads", "300", "--d-k", "1", "--d-v", "1", "-o", p.string()},
        {"example", "worked-example", "-n", "3", "-o", p.string()},
        {"example", "no-such-preset", "-o", p.string()},
        {"example", "sentence", "-o", p.string()},  // no --text
        {"example", "sentence", "--text", " ", "-o", p.string()},
        {"example", "sentence", "--text", "x", "-n", "3", "-o", p.string()},
        {"example", "sentence", "--text", "a b c d e f g", "--one-hot", "--d-model", "4", "-o", p.string()},
        {"example", "random", "--text", "x", "-o", p.string()},
        {"example", "random"},  // -o is required
        {"compute"},            // the session is required
        {"compute", "a.json", "--bogus"},
    };
    for (const auto& args : cases) {
        std::string joined;
        for (const std::string& a : args) joined += a + " ";
        SCOPED_TRACE(joined);
        const Outcome r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_FALSE(r.err.empty());
        EXPECT_FALSE(fs::exists(p));
    }
}

TEST_F(Cli, RandomConfigErrorNamesTheOptionGiven) {
    const fs::path out = work / "x.json";
    Outcome r = run({"example", "random", "-n", "0", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: -n must be at least 1, got 0\n");
    // d_k and d_v follow from d_model / heads: a d_model of 0 is the option's fault, not theirs.
    r = run({"example", "random", "--d-model", "0", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: --d-model must be at least 1, got 0\n");
    r = run({"example", "random", "--heads", "-3", "-o", out.string()});
    EXPECT_EQ(r.err, "error: --heads must be at least 1, got -3\n");
    r = run({"example", "random", "--d-model", "9000", "--heads", "1", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: --d-model: 9000 is over the limit of 8192")) << describe(r);
    EXPECT_FALSE(contains(r.err, "d_k")) << describe(r);
    r = run({"example", "random", "--d-k", "9000", "-o", out.string()});
    EXPECT_EQ(r.err, "error: --d-k: 9000 is over the limit of 8192\n");
    r = run({"example", "random", "--heads", "2", "--kv-heads", "3", "-o", out.string()});
    EXPECT_TRUE(contains(r.err, "error: --kv-heads: must divide heads = 2")) << describe(r);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, ShapeNoteOnStderr) {
    json d = worked_json();
    d["config"]["output_projection"] = false;
    d["config"]["d_v"] = 3;
    d.erase("W_O");
    for (json& h : d["heads"]) h["W_V"] = json::parse("[[1,0,0],[0,1,0],[0,0,1],[1,1,1]]");
    const fs::path p = work / "note.json";
    spit(p, d.dump());
    const Outcome r = run({"compute", p.string()});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "note: ")) << describe(r);
    EXPECT_EQ(json::parse(r.out)["output"][0].size(), 6u);  // h·d_v
}

// Lines of stderr that start with "error: ".
std::vector<std::string> error_lines(const std::string& err) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t nl; (nl = err.find('\n', start)) != std::string::npos; start = nl + 1)
        if (err.compare(start, 7, "error: ") == 0) out.push_back(err.substr(start, nl - start));
    return out;
}

// A session whose X is n×d_model cells of "a" (5 million for 2000×2500): valid config, every cell bad.
std::string bad_cells_session(int n, int d_model) {
    std::string text = "{\"format\": \"attnviz-session\", \"version\": 1, \"config\": {\"n\": " + std::to_string(n) +
                       ", \"d_model\": " + std::to_string(d_model) +
                       ", \"heads\": 1, \"d_k\": 1, \"d_v\": 1, \"output_projection\": false, \"mask\": \"none\", "
                       "\"scale\": \"sqrt_dk\"}, \"X\": [";
    std::string row = "[";
    for (int c = 0; c < d_model; ++c) row += c ? ",\"a\"" : "\"a\"";
    row += "]";
    text.reserve(text.size() + static_cast<size_t>(n) * (row.size() + 1) + 100);
    for (int r = 0; r < n; ++r) text += (r ? "," : "") + row;
    return text + "], \"heads\": [{\"W_Q\": [], \"W_K\": [], \"W_V\": []}]}";
}

TEST_F(Cli, MillionsOfBadCellsPrintAtMost21Lines) {
    const fs::path p = work / "bad_cells.json";
    spit(p, bad_cells_session(2000, 2500));
    const Outcome r = run({"compute", p.string()});
    EXPECT_FALSE(r.signaled) << describe(r);
    EXPECT_EQ(r.code, 2) << describe(r);
    const std::vector<std::string> lines = error_lines(r.err);
    ASSERT_EQ(lines.size(), 21u) << describe(r);
    EXPECT_EQ(lines[0], "error: X[0][0]: expected a number, got the text \"a\"");
    // 5,000,000 cells and W_Q, W_K, W_V of the wrong shape, less the 20 shown.
    EXPECT_EQ(lines[20], "error: " + p.string() + ": and 4999983 more problems");
    EXPECT_LT(r.err.size(), 4000u);
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, BadSessionUnderMemoryLimitIsAnErrorNotACrash) {
    if (ATTNVIZ_ASAN) GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
    // 5 million bad cells in 20 MB: a document tree and one message per cell took gigabytes.
    const fs::path p = work / "bad_cells.json";
    spit(p, bad_cells_session(2000, 2500));
    const Outcome r = run_limited(600000, p);
    EXPECT_FALSE(r.signaled) << describe(r);
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(error_lines(r.err).size(), 21u) << describe(r);
    EXPECT_TRUE(contains(r.err, "more problems")) << describe(r);
}

TEST_F(Cli, OutOfMemoryInTheForwardPassIsAnErrorNotAnAbort) {
    if (ATTNVIZ_ASAN) GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
    // A small, valid session whose trace needs ~800 MB: n = 4096 with two heads (3·n² per head).
    json d = worked_json();
    d["config"] = {{"n", 4096},      {"d_model", 1},      {"heads", 2},
                   {"d_k", 1},       {"d_v", 1},          {"output_projection", false},
                   {"mask", "none"}, {"scale", "sqrt_dk"}};
    d.erase("W_O");
    d.erase("tokens");
    d["X"] = json::array();
    for (int i = 0; i < 4096; ++i) d["X"].push_back({0.5});
    const json w = json::parse("[[1]]");
    d["heads"] = json::array({{{"W_Q", w}, {"W_K", w}, {"W_V", w}}, {{"W_Q", w}, {"W_K", w}, {"W_V", w}}});
    const fs::path p = work / "big_trace.json";
    spit(p, d.dump());
    const Outcome r = run_limited(600000, p);
    EXPECT_FALSE(r.signaled) << describe(r);
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: out of memory while computing the trace of " + p.string())) << describe(r);
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, ComputeWritesATraceLargerThanItsMemoryLimitInPieces) {
    if (ATTNVIZ_ASAN) GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
    // The trace holds 2 heads × 3·2048² doubles (192 MiB); its JSON is over 300 MB. Under an
    // address-space limit of about twice the trace, compute must still write all of it.
    json d = worked_json();
    d["config"] = {{"n", 2048},      {"d_model", 1},      {"heads", 2},
                   {"d_k", 1},       {"d_v", 1},          {"output_projection", false},
                   {"mask", "none"}, {"scale", "sqrt_dk"}};
    d.erase("W_O");
    d.erase("tokens");
    d["X"] = json::array();
    for (int i = 0; i < 2048; ++i) d["X"].push_back({0.5 + 0.1 * (i % 7)});
    const json w = json::parse("[[1]]");
    d["heads"] =
        json::array({{{"W_Q", w}, {"W_K", w}, {"W_V", w}}, {{"W_Q", json::parse("[[0.3]]")}, {"W_K", w}, {"W_V", w}}});
    const fs::path p = work / "long.json";
    spit(p, d.dump());
    const fs::path out = work / "trace.json";
    const Outcome r = run_argv({"/bin/sh", "-c", "ulimit -v 400000 && exec \"$0\" compute \"$1\" -o \"$2\"",
                                ATTNVIZ_BIN, p.string(), out.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_GT(fs::file_size(out), 300u << 20);
    // The last bytes close the document: the output ends with the last row of `output`.
    std::ifstream in(out, std::ios::binary);
    in.seekg(-64, std::ios::end);
    std::string tail(64, '\0');
    in.read(tail.data(), 64);
    EXPECT_NE(tail.find("]\n  ]\n}\n"), std::string::npos) << tail;
}

TEST_F(Cli, TrailingNulIsRefused) {
    const fs::path worked = worked_file();
    const fs::path p = work / "nul.json";
    spit(p, slurp(worked) + std::string("\0garbage", 8));
    const Outcome r = run({"compute", p.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + p.string() + ": a NUL byte at line ")) << describe(r);
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, EmptySessionPathIsNamed) {
    const Outcome r = run({"compute", ""});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: no session file given (the path is empty)\n") << describe(r);
    EXPECT_FALSE(contains(r.err, ": : ")) << describe(r);
}

TEST_F(Cli, BenchPrintsOneJsonObject) {
    const Outcome r = run({"bench", "--n", "16", "--d-model", "8", "--heads", "2", "--dtype", "double", "--reps", "3",
                           "--threads", "1", "--json"});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["n"], 16);
    EXPECT_EQ(j["d_model"], 8);
    EXPECT_EQ(j["heads"], 2);
    EXPECT_EQ(j["d_k"], 4);
    EXPECT_EQ(j["dtype"], "double");
    EXPECT_EQ(j["threads"], 1);
    EXPECT_EQ(j["reps"], 3);
    EXPECT_GT(j["median_ms"].get<double>(), 0);
    EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
    EXPECT_GT(j["gflops"].get<double>(), 0);
    EXPECT_GT(j["gemm_gflops"].get<double>(), 0);
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1);  // one line, one object
    const Outcome table = run({"bench", "--n", "8", "--d-model", "4", "--heads", "2", "--reps", "1"});
    EXPECT_EQ(table.code, 0) << describe(table);
    EXPECT_TRUE(contains(table.out, "GFLOP/s")) << table.out;
}

TEST_F(Cli, BenchRefusesBadDimensions) {
    const Outcome r = run({"bench", "--n", "8", "--d-model", "10", "--heads", "3"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "not divisible")) << describe(r);
    const Outcome t = run({"bench", "--dtype", "half"});
    EXPECT_EQ(t.code, 2) << describe(t);
    EXPECT_TRUE(contains(t.err, "--dtype")) << describe(t);
    const Outcome z = run({"bench", "--n", "0"});
    EXPECT_EQ(z.code, 2) << describe(z);
    EXPECT_TRUE(contains(z.err, "config.n")) << describe(z);
}

TEST_F(Cli, ComputeOverTheMemoryBudgetSaysHowMuchItNeeds) {
    const fs::path p = work / "random.json";
    ASSERT_EQ(run({"example", "random", "-n", "512", "--d-model", "64", "--heads", "4", "-o", p.string()}).code, 0);
    // 4 heads × 3·512² numbers and a little more: about 25 MiB; refused under 10 MiB, computed under 100M.
    const Outcome r = run({"compute", p.string(), "--memory-budget", "10M", "-o", (work / "t.json").string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: config: these dimensions need 25.")) << describe(r);
    EXPECT_TRUE(contains(r.err, "over the memory budget of 10 MiB")) << describe(r);
    EXPECT_FALSE(fs::exists(work / "t.json"));
    const Outcome ok = run({"compute", p.string(), "--memory-budget", "100M", "-o", (work / "t.json").string()});
    EXPECT_EQ(ok.code, 0) << describe(ok);
    EXPECT_TRUE(fs::exists(work / "t.json"));
    // A budget that is not a size is a usage error naming the flag.
    const Outcome bad = run({"compute", p.string(), "--memory-budget", "lots"});
    EXPECT_EQ(bad.code, 2) << describe(bad);
    EXPECT_TRUE(contains(bad.err, "error: --memory-budget: 'lots' is not a size")) << describe(bad);
    const Outcome bench = run({"bench", "--n", "512", "--d-model", "64", "--heads", "4", "--memory-budget", "1M"});
    EXPECT_EQ(bench.code, 2) << describe(bench);
    EXPECT_TRUE(contains(bench.err, "over the memory budget of 1 MiB")) << describe(bench);
}

TEST_F(Cli, Help) {
    const Outcome r = run({"--help"});
    EXPECT_EQ(r.code, 0) << describe(r);
    const std::string all = r.out + r.err;
    EXPECT_TRUE(contains(all, "compute")) << describe(r);
    EXPECT_TRUE(contains(all, "example")) << describe(r);
    const Outcome rc = run({"compute", "--help"});
    EXPECT_EQ(rc.code, 0) << describe(rc);
    EXPECT_TRUE(contains(rc.out + rc.err, "--output")) << describe(rc);
}

TEST_F(Cli, ImportWritesASessionComputeReads) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path out = work / "layer.json";
    const Outcome r = run({"import", ref + "llama/model.safetensors", "--x", ref + "llama-x.npy", "--tokens",
                           "a b c d e f", "-o", out.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "note: convention: llama")) << describe(r);
    const Outcome c = run({"compute", out.string()});
    ASSERT_EQ(c.code, 0) << describe(c);
    const json trace = json::parse(c.out);
    EXPECT_EQ(trace["config"]["kv_heads"], 2);  // from config.json beside the checkpoint
    EXPECT_TRUE(trace["heads"][0].contains("Q_rot"));
}

TEST_F(Cli, ImportRefusesBadCheckpointsAndWritesNothing) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path out = work / "layer.json";
    Outcome r = run({"import", (work / "missing.safetensors").string(), "-o", out.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    // A truncated checkpoint, a header that lies, a file of another kind: exit 2 naming the file.
    std::ifstream in(ref + "gpt2.safetensors", std::ios::binary);
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(good.size(), 100u);
    std::string lying = good;
    lying[0] = static_cast<char>(0xff);
    const std::vector<std::pair<std::string, std::string>> bad = {{"truncated", good.substr(0, good.size() - 10)},
                                                                  {"lying", lying},
                                                                  {"text", "hello, not tensors"}};
    for (const auto& [name, bytes] : bad) {
        SCOPED_TRACE(name);
        const fs::path p = work / (name + ".safetensors");
        spit(p, bytes);
        r = run({"import", p.string(), "--heads", "2", "-o", out.string()});
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_TRUE(contains(r.err, "error: " + p.string())) << describe(r);
        EXPECT_FALSE(fs::exists(out));
    }
    r = run({"import", ref + "gpt2.safetensors", "-o", out.string()});  // no head count
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: --heads")) << describe(r);
    EXPECT_FALSE(fs::exists(out));
    r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--convention", "t5", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
}

TEST_F(Cli, ImportEveryLayerWritesOneSessionEachAsASingleImportWould) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path ckpt = work / "three.safetensors";
    spit(ckpt, stacked_gpt2(ref + "gpt2.safetensors", 3));
    const fs::path dir = work / "layers";
    Outcome r =
        run({"import", ckpt.string(), "--layer", "all", "--heads", "2", "--tokens", "a b c", "-o", dir.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"layer-00.json", "layer-01.json", "layer-02.json"}));
    EXPECT_TRUE(contains(r.err, "note: convention: gpt2")) << describe(r);
    EXPECT_TRUE(contains(r.err, "X of layer 1 is not the hidden states entering it")) << describe(r);
    for (int l = 0; l < 3; ++l) {
        SCOPED_TRACE(l);
        const fs::path alone = work / ("alone-" + std::to_string(l) + ".json");
        const Outcome one = run({"import", ckpt.string(), "--layer", std::to_string(l), "--heads", "2", "--tokens",
                                 "a b c", "-o", alone.string()});
        ASSERT_EQ(one.code, 0) << describe(one);
        EXPECT_EQ(slurp(dir / ("layer-0" + std::to_string(l) + ".json")), slurp(alone));
    }
    // A range into a folder that exists: only those layers, the other files left alone.
    const fs::path some = work / "some";
    fs::create_directory(some);
    spit(some / "notes.txt", "mine");
    r = run({"import", ckpt.string(), "--layer", "1-2", "--heads", "2", "-o", some.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_EQ(entries(some), (std::vector<std::string>{"layer-01.json", "layer-02.json", "notes.txt"}));
}

TEST_F(Cli, ImportOfSeveralLayersRefusesBadRangesAndWritesNothing) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path ckpt = work / "three.safetensors";
    spit(ckpt, stacked_gpt2(ref + "gpt2.safetensors", 3));
    const fs::path dir = work / "layers";
    const std::pair<const char*, const char*> bad[] = {{"0-5", "error: --layer: layer 3 is not in the checkpoint"},
                                                       {"2-0", "error: --layer: the range 2-0 runs backwards"},
                                                       {"first", "error: --layer: \"first\" is not a layer"}};
    for (const auto& [spec, message] : bad) {
        SCOPED_TRACE(spec);
        const Outcome r = run({"import", ckpt.string(), "--layer", spec, "--heads", "2", "-o", dir.string()});
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_TRUE(contains(r.err, message)) << describe(r);
        EXPECT_FALSE(fs::exists(dir));
    }
    // A layer that does not import (3 heads do not divide 8 columns): no layer's file, no folder.
    Outcome r = run({"import", ckpt.string(), "--layer", "all", "--heads", "3", "-o", dir.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "3 heads do not divide")) << describe(r);
    EXPECT_FALSE(fs::exists(dir));
    // In a folder that exists, a failure leaves it as it was.
    fs::create_directory(dir);
    spit(dir / "layer-00.json", "old");
    r = run({"import", ckpt.string(), "--layer", "all", "-o", dir.string()});  // no head count
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"layer-00.json"}));
    EXPECT_EQ(slurp(dir / "layer-00.json"), "old");
    // -o naming a file.
    r = run({"import", ckpt.string(), "--layer", "all", "--heads", "2", "-o", (dir / "layer-00.json").string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "not a folder")) << describe(r);
    // A checkpoint with no layer of the convention asked for.
    r = run({"import", ckpt.string(), "--layer", "all", "--convention", "bert", "-o", dir.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "no attention layer of the bert convention")) << describe(r);
}

// ---------------------------------------------------------------------------------------------
// What a new user's review of the command line found: each refusal names the problem, exit 2 for
// bad input and 1 for I/O, and nothing is written.

// The session file given to the explorer cannot be opened: every run that only renders or measures
// ends with the window's message (no window is needed to find that out), instead of showing the
// worked example.
TEST_F(Cli, ExplorerRunsOnASessionThatCannotBeOpenedFail) {
    const fs::path bad = work / "bad.json", missing = work / "missing.json", png = work / "out.png";
    spit(bad, "{\"format\": ");
    const std::vector<std::vector<std::string>> modes = {
        {"--screenshot", png.string()}, {"--frames", "2"}, {"--bench-frames", "2"}, {"--bench-edits", "2"}};
    for (const auto& mode : modes) {
        SCOPED_TRACE(mode.front());
        std::vector<std::string> args{bad.string()};
        args.insert(args.end(), mode.begin(), mode.end());
        Outcome r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind("error: Could not open " + bad.string(), 0), 0u) << describe(r);
        EXPECT_TRUE(contains(r.err, "the JSON ends too early")) << describe(r);
        args.front() = missing.string();
        r = run(args);
        EXPECT_EQ(r.code, 1) << describe(r);
        EXPECT_EQ(r.err.rfind("error: Could not open " + missing.string(), 0), 0u) << describe(r);
        EXPECT_FALSE(fs::exists(png));
    }
}

TEST_F(Cli, ImportRefusesAMissingXFileAsIoAndTwoSourcesOfOneThing) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path out = work / "o.json", missing = work / "missing.npy", labels = work / "t.txt";
    Outcome r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--x", missing.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_EQ(r.err, "error: --x " + missing.string() + ": cannot open (no such file, or not a regular file)\n");
    r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--x", ref + "gpt2-x.npy", "--token-ids", "1,2", "-o",
             out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --x and --token-ids cannot be used together", 0), 0u) << describe(r);
    spit(labels, "a\nb\nc\nd\ne\n");
    r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--tokens", "a b", "--tokens-file", labels.string(),
             "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --tokens and --tokens-file cannot be used together", 0), 0u) << describe(r);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, ExportRefusesOptionsItWouldIgnore) {
    const std::string s = worked_file().string();
    const fs::path out = work / "never.png";
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--matrix", "X", "--format", "png", "--colors", "log"},
         "error: --colors log: fixed and log are for weights only"},
        {{"--matrix", "scores:1", "--format", "svg", "--colors", "fixed"}, "error: --colors fixed: fixed and log"},
        {{"--matrix", "weights:1", "--format", "csv", "--colors", "auto"}, "error: --colors applies to figures"},
        {{"--matrix", "X", "--format", "latex", "--no-numbers"}, "error: --no-numbers applies to figures (png, svg)"},
        {{"--matrix", "X", "--format", "npy", "--no-labels"}, "error: --no-labels applies to figures (png, svg)"},
        {{"--format", "json", "--no-legend"}, "error: --no-legend applies to figures (png, svg)"},
        {{"--matrix", "X", "--format", "png", "--size", "600x400"}, "error: --size applies to --view"},
        {{"--matrix", "X", "--format", "csv", "--scale", "2"}, "error: --scale applies to png only"},
        {{"--matrix", "X", "--format", "svg", "--scale", "2"}, "error: --scale applies to png only"},
        {{"--format", "json", "--scale", "2"}, "error: --scale applies to png only"},
        {{"--matrix", "X", "--format", "png", "--scale", "0"},
         "error: --scale: expected a number greater than 0 and at most 16, got 0"},
        {{"--matrix", "X", "--format", "csv", "--precision", "30"},
         "error: --precision: expected 1 to 17 significant digits, or 0 for the format's default (exact for csv"},
    };
    for (const auto& [args, says] : cases) {
        SCOPED_TRACE(says);
        std::vector<std::string> all{"export", s};
        all.insert(all.end(), args.begin(), args.end());
        all.insert(all.end(), {"-o", out.string()});
        const Outcome r = run(all);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind(says, 0), 0u) << describe(r);
        EXPECT_FALSE(fs::exists(out));
    }
    // What they apply to still works: log on the weights, precision 0 is csv's exact default.
    EXPECT_EQ(
        run({"export", s, "--matrix", "weights:1", "--format", "png", "--colors", "log", "-o", out.string()}).code, 0);
    const fs::path exact = work / "exact.csv", zero = work / "zero.csv";
    ASSERT_EQ(run({"export", s, "--matrix", "weights:1", "--format", "csv", "-o", exact.string()}).code, 0);
    ASSERT_EQ(
        run({"export", s, "--matrix", "weights:1", "--format", "csv", "--precision", "0", "-o", zero.string()}).code,
        0);
    EXPECT_EQ(slurp(exact), slurp(zero));
}

TEST_F(Cli, EmptyValuesAreRefusedNotTakenAsAbsent) {
    const std::string s = worked_file().string();
    Outcome r = run({"compute", s, "--grad", ""});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --grad: the value is empty", 0), 0u) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    r = run({"export", s, "--matrix", "X", "--format", "csv", "-o", ""});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --output: the value is empty", 0), 0u) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    r = run({"example", "worked-example", "-o", ""});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --output: the value is empty", 0), 0u) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
}

TEST_F(Cli, NanAndInfinityInASessionAreNamedAsSuch) {
    const std::string text = worked_json().dump(1);
    const size_t x = text.find("\"X\"");
    ASSERT_NE(x, std::string::npos);
    const size_t first = text.find_first_of("-0123456789", x);  // X[0][0]
    const size_t end = text.find_first_of(",\n]", first);
    const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(first), '\n')) + 1;
    const int column = static_cast<int>(first - text.rfind('\n', first));
    for (const std::string word : {"NaN", "-Infinity", "Infinity", "nan"}) {
        SCOPED_TRACE(word);
        const fs::path p = work / "nan.json";
        spit(p, text.substr(0, first) + word + text.substr(end));
        const Outcome r = run({"compute", p.string()});
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_EQ(r.err, "error: " + p.string() + ": " + word + " at line " + std::to_string(line) + ", column " +
                             std::to_string(column) +
                             ": NaN and Infinity are not JSON numbers (every value must be a finite number)\n");
    }
}

TEST_F(Cli, ImportProblemsNameTheXFileAndTheLayersThatExist) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path out = work / "o.json", wide = work / "wide.npy", huge = work / "huge.npy";
    spit(wide, attnviz::core::npy_matrix(attnviz::core::Matrix::Zero(5, 12)));
    Outcome r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--x", wide.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: --x " + wide.string() + ": expected n × 8 (d_model of the layer), got 5×12\n");
    attnviz::core::Matrix X = attnviz::core::Matrix::Constant(5, 8, 0.5);
    X(2, 1) = 1e300;
    spit(huge, attnviz::core::npy_matrix(X));
    r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--x", huge.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: --x " + huge.string() + ": X[2][1]: ", 0), 0u) << describe(r);
    // A layer the checkpoint does not hold, asked for or by default.
    const fs::path three = work / "three.safetensors";
    spit(three, stacked_gpt2(ref + "gpt2.safetensors", 3));
    r = run({"import", three.string(), "--layer", "3", "--heads", "2", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: " + three.string() + ": no attention layer 3 in the file (its layers: 0-2)\n");
    r = run({"import", three.string(), "--layer", "3", "--convention", "gpt2", "--heads", "2", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: " + three.string() +
                         ": no attention layer 3 of the gpt2 convention in the file (its layers: 0-2)\n");
    std::vector<attnviz::core::Tensor> layer1;
    const attnviz::core::Result<attnviz::core::TensorFile> gpt2 =
        attnviz::core::TensorFile::open(ref + "gpt2.safetensors");
    ASSERT_TRUE(gpt2);
    for (const attnviz::core::TensorInfo& info : gpt2.value->tensors()) {
        attnviz::core::Result<attnviz::core::Tensor> t = gpt2.value->read(info.name);
        ASSERT_TRUE(t);
        t.value->name = "h.1" + info.name.substr(info.name.find('.', 2));
        layer1.push_back(std::move(*t.value));
    }
    const fs::path only1 = work / "only1.safetensors";
    spit(only1, safetensors_bytes(layer1));
    r = run({"import", only1.string(), "--heads", "2", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: " + only1.string() +
                         ": no attention layer 0 (the default; choose one with --layer) in the file (its layers: 1)\n");
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(run({"import", only1.string(), "--layer", "1", "--heads", "2", "-o", out.string()}).code, 0);
}

TEST_F(Cli, GradOfAnotherMatrixSuggestsAnOutputCell) {
    const std::string s = worked_file().string();
    const Outcome r = run({"compute", s, "--grad", "weights:0:0"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: --grad: expected output:ROW:COL, e.g. output:0:1, got \"weights:0:0\"\n");
    EXPECT_EQ(run({"compute", s, "--grad", "output:0:1"}).code, 0);  // the example given works
}

// The look of the window: a text size outside 0.75 to 3 (or not a number), an unknown theme or
// colormap are refused before any window opens, naming the option.
TEST_F(Cli, PresentationOptionsOutOfRangeAreRefused) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--ui-scale", "5"}, "error: --ui-scale: expected a text size from 0.75 to 3, got 5"},
        {{"--ui-scale", "0.5"}, "error: --ui-scale: expected a text size from 0.75 to 3, got 0.5"},
        {{"--ui-scale", "nan"}, "error: --ui-scale: expected a text size from 0.75 to 3, got nan"},
        {{"--ui-scale", "big"}, "error: "},
        {{"--theme", "pink"}, "error: --theme: pink not in {dark,light,high-contrast}"},
        {{"--colormap", "jet"}, "error: --colormap: jet not in {viridis,cividis}"},
    };
    for (const auto& [args, says] : cases) {
        SCOPED_TRACE(says);
        const Outcome r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind(says, 0), 0u) << describe(r);
        EXPECT_NE(r.err.find(args[0]), std::string::npos) << describe(r);
    }
}

TEST_F(Cli, UsageErrorsSayErrorAndSeedsOutOfRangeAreRefused) {
    const std::string s = worked_file().string();
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"import", "ckpt.safetensors"}, "error: --output is required"},
        {{"example", "random", "-n", "abc", "-o", (work / "r.json").string()}, "error: Could not convert: -n = abc"},
        {{"compute", s, "extra.json"}, "error: The following argument was not expected: extra.json"},
        {{"example", "random", "--seed", "-1", "-o", (work / "r.json").string()},
         "error: --seed: expected a whole number from 0 to 18446744073709551615, got \"-1\""},
        {{"example", "random", "--seed", "18446744073709551616", "-o", (work / "r.json").string()},
         "error: --seed: expected a whole number from 0 to 18446744073709551615, got \"18446744073709551616\""},
    };
    for (const auto& [args, says] : cases) {
        SCOPED_TRACE(says);
        const Outcome r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind(says, 0), 0u) << describe(r);
    }
    EXPECT_FALSE(fs::exists(work / "r.json"));
    const Outcome largest =
        run({"example", "random", "--seed", "18446744073709551615", "-o", (work / "r.json").string()});
    EXPECT_EQ(largest.code, 0) << describe(largest);
}

TEST_F(Cli, BenchWarnsOfMoreThreadsThanCoresAndNamesItsDtype) {
    const unsigned cores = std::thread::hardware_concurrency();
    ASSERT_GT(cores, 0u);
    const std::string more = std::to_string(cores + 1);
    Outcome r = run({"bench", "--n", "8", "--d-model", "4", "--heads", "2", "--reps", "1", "--threads", more});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "warning: --threads " + more + " is more than this machine's " + std::to_string(cores)))
        << describe(r);
    r = run({"bench", "--n", "8", "--d-model", "4", "--heads", "2", "--reps", "1", "--threads", std::to_string(cores)});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_FALSE(contains(r.err, "warning")) << describe(r);
    // n = 512, d_model 64, 4 heads: about 12 MiB of intermediates in float beside the inputs in double.
    r = run({"bench", "--n", "512", "--d-model", "64", "--heads", "4", "--memory-budget", "1M"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "(the inputs in double, every intermediate in float)")) << describe(r);
    r = run({"bench", "--n", "512", "--d-model", "64", "--heads", "4", "--dtype", "double", "--memory-budget", "1M"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "(the inputs and every intermediate in double)")) << describe(r);
}

// The kernels this CPU runs, from /proc/cpuinfo's flags (read here, not by attnviz's own test), best last.
std::vector<std::string> kernels_of_this_cpu() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line) && line.rfind("flags", 0) != 0) {
    }
    std::istringstream words(line);
    std::vector<std::string> flags{std::istream_iterator<std::string>(words), {}};
    const auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
    std::vector<std::string> kernels{"generic"};
    if (has("avx2") && has("fma") && has("f16c")) kernels.push_back("avx2");
    if (has("avx512f")) kernels.push_back("avx512");
    return kernels;
}

TEST_F(Cli, VersionNamesTheKernelOfThisCpuOrTheOneForced) {
    const std::vector<std::string> kernels = kernels_of_this_cpu();
    Outcome r = run({"--version"});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "attnviz ")) << r.out;
    EXPECT_TRUE(contains(r.out, "kernel: " + kernels.back() + " (")) << r.out;
    for (const std::string& kernel : kernels) {
        r = run_argv({"/bin/sh", "-c", "ATTNVIZ_KERNEL=\"$1\" exec \"$0\" --version", ATTNVIZ_BIN, kernel});
        ASSERT_EQ(r.code, 0) << describe(r);
        EXPECT_TRUE(contains(r.out, "kernel: " + kernel + " (")) << r.out;
    }
}

TEST_F(Cli, AKernelThisCpuLacksOrNoKernelIsRefused) {
    const std::vector<std::string> kernels = kernels_of_this_cpu();
    for (const std::string kernel : {"avx2", "avx512"}) {
        if (std::find(kernels.begin(), kernels.end(), kernel) != kernels.end()) continue;
        const Outcome r =
            run_argv({"/bin/sh", "-c", "ATTNVIZ_KERNEL=\"$1\" exec \"$0\" --version", ATTNVIZ_BIN, kernel});
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_TRUE(contains(r.err, std::string("error: ATTNVIZ_KERNEL=") + kernel + ": this CPU has no "))
            << describe(r);
        EXPECT_TRUE(contains(r.err, "(its best kernel is " + kernels.back() + ")")) << describe(r);
    }
    const Outcome r =
        run_argv({"/bin/sh", "-c", "ATTNVIZ_KERNEL=sse9 exec \"$0\" bench --n 8 --d-model 4 --heads 2", ATTNVIZ_BIN});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "ATTNVIZ_KERNEL=sse9: not a kernel; one of generic, avx2, avx512")) << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(Cli, BenchGemmTimesEveryShapeInBothDtypesWithItsKernel) {
    const Outcome r = run({"bench", "--gemm", "--reps", "1", "--threads", "1", "--json"});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["kernel"], kernels_of_this_cpu().back());
    EXPECT_EQ(j["threads"], 1);
    ASSERT_TRUE(j["rows"].is_array());
    int floats = 0, doubles = 0, bf16 = 0;
    for (const json& row : j["rows"]) {
        (row["dtype"] == "float" ? floats : doubles) += 1;
        bf16 += row["weights"] == "bf16";
        const double flops = 2.0 * row["m"].get<double>() * row["d_in"].get<double>() * row["d_out"].get<double>();
        EXPECT_NEAR(row["gflops"].get<double>(), flops / (row["min_ms"].get<double>() * 1e6), 1e-6 * flops);
    }
    EXPECT_EQ(floats, 7);
    EXPECT_EQ(doubles, 5);
    EXPECT_EQ(bf16, 1);
    const Outcome table = run({"bench", "--gemm", "--reps", "1"});
    EXPECT_EQ(table.code, 0) << describe(table);
    EXPECT_TRUE(contains(table.out, "kernel " + kernels_of_this_cpu().back() + " (")) << table.out;
    EXPECT_TRUE(contains(table.out, "GFLOP/s")) << table.out;
}

TEST_F(Cli, RecoverDiscardSaysWhatItDid) {
    const fs::path dir = work / "state";
    {
        attnviz::core::AutosaveStore store(dir.string());  // an instance that ends without saving
        ASSERT_TRUE(store.enabled()) << store.problem();
        ASSERT_TRUE(store.save(attnviz::core::worked_example(), "").empty());
    }
    Outcome r = run({"recover", "--dir", dir.string(), "--discard"});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "(new session)")) << describe(r);
    EXPECT_EQ(r.err, "Discarded the autosave listed above: it can no longer be recovered\n");
    r = run({"recover", "--dir", dir.string()});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
}

TEST_F(Cli, ImportRefusesAZeroExtentInsteadOfDividingByZero) {
    // A query projection of 0 rows once made d_k = 0 and killed the import with SIGFPE.
    std::vector<attnviz::core::Tensor> t = {
        {"model.layers.0.self_attn.q_proj.weight", {0, 8}, {}},
        {"model.layers.0.self_attn.k_proj.weight", {4, 8}, std::vector<double>(32, 0.1)},
        {"model.layers.0.self_attn.v_proj.weight", {4, 8}, std::vector<double>(32, 0.1)},
        {"model.layers.0.self_attn.o_proj.weight", {8, 0}, {}}};
    const fs::path ckpt = work / "zero.safetensors", out = work / "o.json";
    spit(ckpt, safetensors_bytes(t));
    for (const char* layer : {"0", "all"}) {
        const Outcome r = run({"import", ckpt.string(), "--heads", "2", "--layer", layer, "-o", out.string()});
        EXPECT_FALSE(r.signaled) << describe(r);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_TRUE(
            contains(r.err, "error: " + ckpt.string() +
                                ": model.layers.0.self_attn.q_proj.weight: its shape [0, 8] has an extent of 0"))
            << describe(r);
        EXPECT_FALSE(fs::exists(out));
    }
    // --heads 0 is the option's fault.
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const Outcome r = run({"import", ref + "gpt2.safetensors", "--heads", "0", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: --heads: must be at least 1, got 0\n");
}

TEST_F(Cli, ImportOfASessionSaysItIsASession) {
    const fs::path session = worked_file(), out = work / "o.json";
    Outcome r = run({"import", session.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: " + session.string() +
                         ": is an attnviz session, not a checkpoint (a .safetensors, .npz or .npy file of tensors); "
                         "open it as a session: attnviz FILE, or File > Open\n");
    spit(work / "config.json", "  {\"num_attention_heads\": 12}");
    r = run({"import", (work / "config.json").string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, ": is JSON text, not a checkpoint")) << describe(r);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, ImportRefusesAShiftedDataSection) {
    // With the header length 4 bytes short (its padding spaces fall into the data section), every
    // offset pointed 4 bytes early and every weight was read one element off.
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const std::string plain = slurp(ref + "gpt2.safetensors");
    ASSERT_GT(plain.size(), 16u);
    std::uint64_t header_len = 0;
    for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | static_cast<unsigned char>(plain[k]);
    // The header padded with 8 spaces (the safetensors library pads headers to a multiple of 8).
    std::string shifted = plain.substr(0, 8 + header_len) + std::string(8, ' ') + plain.substr(8 + header_len);
    for (int k = 0; k < 8; ++k) shifted[k] = static_cast<char>(((header_len + 8) >> (8 * k)) & 0xff);
    const fs::path padded = work / "padded.safetensors";
    spit(padded, shifted);
    EXPECT_EQ(run({"import", padded.string(), "--heads", "2", "-o", (work / "p.json").string()}).code, 0);
    for (int k = 0; k < 8; ++k) shifted[k] = static_cast<char>(((header_len + 4) >> (8 * k)) & 0xff);
    const fs::path ckpt = work / "shifted.safetensors", out = work / "o.json";
    spit(ckpt, shifted);
    const Outcome r = run({"import", ckpt.string(), "--heads", "2", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + ckpt.string() + ": ")) << describe(r);
    EXPECT_TRUE(contains(r.err, "4 bytes of the data section's")) << describe(r);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, ImportWithManyBadValuesInXPrintsTwentyAndACount) {
    const std::string ref = ATTNVIZ_REFERENCE_DIR "/checkpoints/";
    const fs::path x = work / "x.npy", out = work / "o.json";
    spit(x, attnviz::core::npy_matrix(attnviz::core::Matrix::Constant(8192, 8, 1e300)));  // 65,536 values
    const Outcome r = run({"import", ref + "gpt2.safetensors", "--heads", "2", "--x", x.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    const std::vector<std::string> lines = error_lines(r.err);
    ASSERT_EQ(lines.size(), 21u) << r.err.substr(0, 3000);
    EXPECT_EQ(lines[0].rfind("error: --x " + x.string() + ": X[0][0]: 1e+300 is outside ±1e+15", 0), 0u) << lines[0];
    EXPECT_EQ(lines[20], "error: " + ref + "gpt2.safetensors: and 65516 more problems");
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, NamesFromFilesAreEscapedInMessages) {
    // A tensor named with an escape sequence and a carriage return (JSON escapes in the header).
    const std::string header = "{\"" + std::string("h.0.attn.c_attn.weight\\u001b[2J\\r") +
                               "\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}";
    std::string bytes(8, '\0');
    for (int k = 0; k < 8; ++k) bytes[k] = static_cast<char>((header.size() >> (8 * k)) & 0xff);
    const fs::path ckpt = work / "names.safetensors";
    spit(ckpt, bytes + header + std::string(4, '\0'));
    const Outcome r = run({"import", ckpt.string(), "--heads", "1", "-o", (work / "o.json").string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "h.0.attn.c_attn.weight\\x1b[2J\\r: shape [2] of F32 needs 8 bytes")) << describe(r);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << describe(r);
    // A file name with a byte that is no UTF-8 and a control character.
    const fs::path odd = work / "odd\xff\x07.safetensors";
    const Outcome missing = run({"import", odd.string(), "-o", (work / "o.json").string()});
    EXPECT_EQ(missing.code, 1) << describe(missing);
    EXPECT_TRUE(contains(missing.err, "odd\\xff\\x07.safetensors: cannot open")) << describe(missing);
}

TEST_F(Cli, AValueJustOutsideTheRangeShowsTheDigitsThatDiffer) {
    json d = worked_json();
    d["X"][0][1] = 1.0000000000000002e15;
    const fs::path p = work / "edge.json";
    spit(p, d.dump());
    const Outcome r = run({"compute", p.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "X[0][1]: 1000000000000000.2 is outside ±1e+15")) << describe(r);
}

TEST_F(Cli, GradTakesSpacesAroundEachPartAlike) {
    const std::string s = worked_file().string();
    for (const char* cell : {"output:1:2", "output: 1:2", "output:1:2 ", " output : 1 : 2 "}) {
        SCOPED_TRACE(cell);
        const Outcome r = run({"compute", s, "--grad", cell});
        EXPECT_EQ(r.code, 0) << describe(r);
        EXPECT_EQ(json::parse(r.out)["grad"]["of"], "output:1:2");
    }
    EXPECT_EQ(run({"compute", s, "--grad", "output:1 2:3"}).code, 2);  // inside a part, a space is no number
}

TEST_F(Cli, ExportRefusesAScaleThatLeavesNoPixel) {
    const std::string s = worked_file().string();
    const fs::path out = work / "w.png";
    const Outcome r =
        run({"export", s, "--matrix", "weights:1", "--format", "png", "--scale", "1e-300", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: scale: 1e-300 leaves no pixel: the figure is ")) << describe(r);
    EXPECT_TRUE(contains(r.err, "the scale must be at least ")) << describe(r);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, RecoverListsAbsolutePathsEscapedAndDiscardLeavesNoLock) {
    const fs::path dir = work / "state", folder = work / "a";
    fs::create_directory(folder);
    const fs::path before = fs::current_path();
    std::string id;
    {
        attnviz::core::AutosaveStore store(dir.string());  // ended without saving, in folder a
        ASSERT_TRUE(store.enabled()) << store.problem();
        fs::current_path(folder);
        const attnviz::core::Problems p = store.save(attnviz::core::worked_example(), "notes.json");
        fs::current_path(before);
        ASSERT_TRUE(p.empty());
        id = store.id();
    }
    // Another instance killed before it autosaved anything left only its lock.
    spit(dir / "99-dead.lock", "");
    const timespec old[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "99-dead.lock").c_str(), old, 0), 0);
    Outcome r = run({"recover", "--dir", dir.string()});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "\t" + (fs::canonical(folder) / "notes.json").string() + "\t")) << describe(r);
    // A record whose file and description hold control characters: one line, escaped.
    json meta = json::parse(slurp(dir / (id + ".meta.json")));
    meta["file"] = "/x/\x1b]0;owned\x07\nnext.json";
    meta["what"] = "line\rover";
    spit(dir / (id + ".meta.json"), meta.dump());
    r = run({"recover", "--dir", dir.string()});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "\t/x/\\x1b]0;owned\\x07\\nnext.json\tline\\rover\n")) << describe(r);
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << describe(r);
    r = run({"recover", "--dir", dir.string(), "--discard"});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(entries(dir).empty()) << "left: " << entries(dir).size() << " files, the first "
                                      << (entries(dir).empty() ? "" : entries(dir).front());
}

TEST_F(Cli, RecoverWritesTheNewestReadableAutosaveAndSaysSo) {
    const fs::path dir = work / "state", out = work / "out.json";
    std::string older, newer;
    for (std::string* id : {&older, &newer}) {
        attnviz::core::AutosaveStore store(dir.string());
        ASSERT_TRUE(store.save(attnviz::core::worked_example(), "").empty());
        *id = store.id();
    }
    // Make the order certain, then break the newest one's session.
    for (const auto& [id, when] : {std::pair{older, 1700000000}, std::pair{newer, 1700000100}}) {
        json meta = json::parse(slurp(dir / (id + ".meta.json")));
        meta["saved_at"] = when;
        spit(dir / (id + ".meta.json"), meta.dump());
    }
    spit(dir / (newer + ".json"), "{ truncated");
    Outcome r = run({"recover", "--dir", dir.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "note: the autosave " + newer)) << describe(r);
    EXPECT_TRUE(contains(r.err, "note: writing the newest autosave that can be read: " + older)) << describe(r);
    EXPECT_EQ(json::parse(slurp(out))["format"], "attnviz-session");
    // Asked for by its id, the broken one is an error, not another autosave.
    fs::remove(out);
    r = run({"recover", "--dir", dir.string(), "-o", out.string(), "--id", newer});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_FALSE(fs::exists(out));
    spit(dir / (older + ".json"), "{ also broken");
    r = run({"recover", "--dir", dir.string(), "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: none of the autosaves in " + dir.string() + " can be read")) << describe(r);
}

TEST_F(Cli, RecoverRefusesAStateFolderThatIsALink) {
    const fs::path elsewhere = work / "elsewhere", link = work / "state";
    fs::create_directory(elsewhere);
    fs::permissions(elsewhere, fs::perms(0755));
    fs::create_directory_symlink(elsewhere, link);
    const Outcome r = run({"recover", "--dir", link.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + link.string() + ": is a symbolic link")) << describe(r);
    EXPECT_EQ(fs::status(elsewhere).permissions(), fs::perms(0755));
    EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(Cli, OutputThroughALinkAnotherUserPlantedInTmpIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link to another user";
    const fs::path shared = work / "tmp", target = work / "precious.json", link = shared / "x.json";
    fs::create_directory(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    spit(target, "precious");
    fs::create_symlink(target, link);
    ASSERT_EQ(::lchown(link.c_str(), 4321, 4321), 0);
    const Outcome r = run({"compute", worked_file().string(), "-o", link.string()});
    EXPECT_EQ(r.code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "error: " + link.string() + ": is a symbolic link in a sticky, world-writable folder"))
        << describe(r);
    EXPECT_EQ(slurp(target), "precious");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// attnviz export

TEST_F(Cli, ExportMatrixFormatsReadBackAsTheTrace) {
    const fs::path session = worked_file();
    const Outcome computed = run({"compute", session.string()});
    ASSERT_EQ(computed.code, 0) << describe(computed);
    const json trace = json::parse(computed.out);
    const json& weights = trace["heads"][0]["weights"];
    // CSV and TSV: the exact numbers, as compute writes them.
    for (const char* format : {"csv", "tsv"}) {
        const fs::path out = work / (std::string("w.") + format);
        const Outcome r =
            run({"export", session.string(), "--matrix", "weights:1", "--format", format, "-o", out.string()});
        ASSERT_EQ(r.code, 0) << describe(r);
        const char sep = format[0] == 'c' ? ',' : '\t';
        std::istringstream lines(slurp(out));
        std::string line;
        for (size_t row = 0; row < weights.size(); ++row) {
            ASSERT_TRUE(std::getline(lines, line));
            std::istringstream cells(line);
            std::string cell;
            for (size_t col = 0; col < weights[row].size(); ++col) {
                ASSERT_TRUE(std::getline(cells, cell, sep));
                EXPECT_EQ(std::stod(cell), weights[row][col].get<double>()) << format << " " << row << "," << col;
            }
        }
        EXPECT_FALSE(std::getline(lines, line));
    }
    // .npy: 128-byte header for this shape, then 16 little-endian doubles of the output (2×4).
    const fs::path npy = work / "out.npy";
    ASSERT_EQ(run({"export", session.string(), "--matrix", "output", "--format", "npy", "-o", npy.string()}).code, 0);
    const std::string bytes = slurp(npy);
    ASSERT_EQ(bytes.size(), 128u + 8 * 8);
    EXPECT_NE(bytes.find("'shape': (2, 4)"), std::string::npos);
    double v = 0;
    std::memcpy(&v, bytes.data() + 128 + 5 * 8, 8);  // row 1, column 1
    EXPECT_EQ(v, trace["output"][1][1].get<double>());
    // The whole trace as JSON equals compute's, byte for byte.
    const fs::path all = work / "trace.json";
    ASSERT_EQ(run({"export", session.string(), "--format", "json", "-o", all.string()}).code, 0);
    EXPECT_EQ(slurp(all), computed.out);
    // LaTeX: a bmatrix with 4 significant digits.
    const Outcome tex = run({"export", session.string(), "--matrix", "weights:1", "--format", "latex", "-o", "-"});
    ASSERT_EQ(tex.code, 0) << describe(tex);
    EXPECT_EQ(tex.out, "\\begin{bmatrix}\n0.9442 & 0.05581 \\\\\n1.22\\times10^{-5} & 1\n\\end{bmatrix}\n");
}

TEST_F(Cli, ExportFiguresAreSvgAndPngOfTheRequestedSize) {
    const fs::path session = worked_file();
    const fs::path svg = work / "w.svg", png = work / "w.png", heads = work / "heads.png", pipeline = work / "p.svg";
    ASSERT_EQ(run({"export", session.string(), "--matrix", "weights:2", "--format", "svg", "-o", svg.string()}).code,
              0);
    const std::string text = slurp(svg);
    EXPECT_EQ(text.rfind("<svg", 0) == 0 || text.rfind("<?xml", 0) == 0, true) << text.substr(0, 80);
    size_t cells = 0;
    for (size_t p = 0; (p = text.find("class=\"cell\"", p)) != std::string::npos; ++p) ++cells;
    EXPECT_EQ(cells, 4u);  // one element per cell of the 2×2 weights
    // PNG at scale 1 and 2: the second is twice as wide.
    const auto png_size = [](const std::string& b) {
        // The IHDR chunk: width and height, big-endian, at bytes 16 and 20.
        const auto be = [&](size_t at) {
            return (static_cast<unsigned>(static_cast<unsigned char>(b[at])) << 24) |
                   (static_cast<unsigned>(static_cast<unsigned char>(b[at + 1])) << 16) |
                   (static_cast<unsigned>(static_cast<unsigned char>(b[at + 2])) << 8) |
                   static_cast<unsigned>(static_cast<unsigned char>(b[at + 3]));
        };
        return b.size() > 24 && b.compare(1, 3, "PNG") == 0 ? std::make_pair(be(16), be(20)) : std::make_pair(0u, 0u);
    };
    ASSERT_EQ(run({"export", session.string(), "--matrix", "weights:2", "--format", "png", "-o", png.string()}).code,
              0);
    const auto one = png_size(slurp(png));
    ASSERT_GT(one.first, 50u);
    ASSERT_EQ(run({"export", session.string(), "--matrix", "weights:2", "--format", "png", "--scale", "2", "-o",
                   png.string()})
                  .code,
              0);
    const auto two = png_size(slurp(png));
    EXPECT_NEAR(two.first, 2.0 * one.first, 2);
    EXPECT_NEAR(two.second, 2.0 * one.second, 2);
    // Views: the heads fitted into 600×400, the pipeline as SVG with a node per matrix.
    ASSERT_EQ(run({"export", session.string(), "--view", "heads", "--format", "png", "--size", "600x400", "-o",
                   heads.string()})
                  .code,
              0);
    const auto fitted = png_size(slurp(heads));
    EXPECT_TRUE(fitted.first <= 600 && fitted.second <= 400 && fitted.first > 100 && fitted.second > 100)
        << fitted.first << "x" << fitted.second;
    // Twelve heads of 16 tokens do not fit 600×400 at their natural size (about 1465×1207): laid out
    // and shrunk to fit.
    const fs::path big = work / "big.json";
    ASSERT_EQ(run({"example", "random", "-n", "16", "--d-model", "48", "--heads", "12", "-o", big.string()}).code, 0);
    ASSERT_EQ(run({"export", big.string(), "--view", "heads", "--format", "png", "--size", "600x400", "-o",
                   heads.string()})
                  .code,
              0);
    const auto shrunk = png_size(slurp(heads));
    EXPECT_TRUE(shrunk.first <= 600 && shrunk.second <= 400 && (shrunk.first >= 500 || shrunk.second >= 350))
        << shrunk.first << "x" << shrunk.second;
    ASSERT_EQ(run({"export", session.string(), "--view", "pipeline", "--format", "svg", "-o", pipeline.string()}).code,
              0);
    EXPECT_NE(slurp(pipeline).find("scores_raw"), std::string::npos);
}

// The head and model views, as the interactive page or as figures, from a session or a tensor file
// of weights; what does not fit is refused by what is wrong, and nothing is written. (The page itself:
// tests/render/test_attention_page.cpp and tests/page/check_page.py in a browser.)
TEST_F(Cli, ExportHeadAndModelViewsAsPagesAndFigures) {
    const std::string s = worked_file().string();
    const fs::path page = work / "page.html";
    Outcome r = run({"export", s, "--view", "head", "--format", "html", "-o", page.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const std::string html = slurp(page);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("\"view\":\"head\""), std::string::npos);
    EXPECT_NE(html.find("\"heads\":2"), std::string::npos);
    // A stacked .npy of 2 layers × 1 head × 2 × 2 whose rows sum to 1, its tokens beside it.
    const fs::path npy = work / "att.npy", tokens = work / "tokens.json";
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1, 2, 2), }";
    header += std::string(63 - (header.size() + 10) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
                        static_cast<char>(header.size() >> 8) + header;
    for (double v : {0.25, 0.75, 1.0, 0.0, 0.5, 0.5, 0.125, 0.875})
        bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    spit(npy, bytes);
    spit(tokens, R"(["alpha", "beta"])");
    const fs::path model = work / "model.html";
    r = run({"export", "--attentions", npy.string(), "--tokens-file", tokens.string(), "--view", "model", "--format",
             "html", "-o", model.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const std::string model_html = slurp(model);
    EXPECT_NE(model_html.find("\"layers\":2"), std::string::npos);
    EXPECT_NE(model_html.find("[\"alpha\",\"beta\"]"), std::string::npos);

    // The views as figures: a selection's lines and bars (svg), a tensor file's layers (png).
    const fs::path head_svg = work / "head.svg", model_png = work / "model.png";
    r = run({"export", s, "--view", "head", "--format", "svg", "--head-select", "1", "-o", head_svg.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const std::string svg = slurp(head_svg);
    EXPECT_NE(svg.find("Head view, layer 0 (2 heads)"), std::string::npos);
    EXPECT_NE(svg.find("<line"), std::string::npos);
    r = run({"export", "--attentions", npy.string(), "--view", "model", "--format", "png", "--sort-heads", "first",
             "-o", model_png.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_EQ(slurp(model_png).substr(1, 3), "PNG");
    // The head view's options: special tokens hidden (rows renormalised), the mean of the heads.
    const fs::path special = work / "special.json", options_svg = work / "options.svg";
    spit(special, R"(["[CLS]", "beta"])");
    r = run({"export", "--attentions", npy.string(), "--tokens-file", special.string(), "--view", "head", "--format",
             "svg", "--layer", "1", "--hide-special", "--mean-heads", "--head-select", "0", "-o",
             options_svg.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const std::string options = slurp(options_svg);
    EXPECT_NE(options.find("Special tokens hidden"), std::string::npos);
    EXPECT_NE(options.find("mean of the heads shown"), std::string::npos);
    EXPECT_EQ(options.find("[CLS]"), std::string::npos);
    // Layer 1's "beta" row (0.125, 0.875) over "beta" alone: 1 once renormalised, one opaque line.
    const std::size_t line = options.find("<line");
    ASSERT_NE(line, std::string::npos);
    EXPECT_EQ(options.find("<line", line + 1), std::string::npos);
    EXPECT_EQ(options.substr(line, options.find("/>", line) - line).find("opacity"), std::string::npos) << options;

    const fs::path never = work / "never.html";
    struct Case {
        std::vector<std::string> args;
        const char* says;
    };
    const Case cases[] = {
        {{"export", s, "--format", "html"}, "--view head or --view model"},
        {{"export", s, "--view", "heads", "--format", "html"}, "--view head or --view model"},
        {{"export", s, "--attentions", npy.string(), "--view", "head", "--format", "html"}, "either a session"},
        {{"export", "--view", "head", "--format", "html"}, "either a session"},
        {{"export", s, "--matrix", "X", "--view", "head", "--format", "html"}, "--matrix"},
        {{"export", s, "--tokens-file", tokens.string(), "--view", "head", "--format", "html"}, "--tokens-file"},
        {{"export", s, "--attentions", npy.string(), "--view", "heads", "--format", "svg"}, "--view head and"},
        {{"export", "--attentions", npy.string(), "--view", "head", "--format", "csv"}, "html, svg or png"},
        {{"export", s, "--view", "head", "--format", "svg", "--head-select", "0,k9"}, "--head-select: key 9"},
        {{"export", s, "--view", "head", "--format", "html", "--head-select", "0"}, "#select="},
        {{"export", s, "--view", "model", "--format", "svg", "--sort-heads", "size"}, "--sort-heads"},
        {{"export", "--attentions", npy.string(), "--view", "head", "--format", "svg", "--layer", "2"},
         "--layer: layer 2 does not exist"},
        {{"export", s, "--view", "heads", "--format", "svg", "--sort-heads", "entropy"}, "--sort-heads apply"},
        {{"export", s, "--view", "model", "--format", "svg", "--colors", "log"}, "--colors applies to heatmaps"},
        {{"export", "--view", "heads", "--format", "svg"}, "the session file is missing"},
        {{"export", "--attentions", tokens.string(), "--view", "head", "--format", "html"}, "tokens.json"},
        {{"export", s, "--view", "head", "--format", "html", "--hide-special"}, "own buttons"},
        {{"export", s, "--view", "model", "--format", "svg", "--mean-heads"}, "apply to --view head"},
        {{"export", s, "--view", "heads", "--format", "svg", "--hide-special"}, "--hide-special, --mean-heads"},
        {{"export", "--attentions", npy.string(), "--tokens-file", special.string(), "--view", "head", "--format",
          "svg", "--hide-special", "--head-select", "1"},
         "--head-select: query 1 does not exist: there are 1"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"-o", never.string()});
        r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_NE(r.err.find(c.says), std::string::npos) << describe(r);
        EXPECT_FALSE(fs::exists(never)) << c.says;
    }
}

// `attnviz flash`: FlashAttention's tiles on a session's head give its Z (as `compute` writes it),
// step by step in the tiles' order; a bad head or tile size is refused.
TEST_F(Cli, FlashGivesTheHeadsZTileByTile) {
    const fs::path session = work / "s.json";
    ASSERT_EQ(run({"example", "random", "-n", "7", "--heads", "2", "--mask", "causal", "-o", session.string()}).code,
              0);
    const Outcome trace = run({"compute", session.string()});
    ASSERT_EQ(trace.code, 0) << describe(trace);
    const json Z = json::parse(trace.out)["heads"][1]["Z"];
    const fs::path out = work / "flash.json";
    Outcome r =
        run({"flash", session.string(), "--block-rows", "3", "--block-cols", "2", "--head", "2", "-o", out.string()});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json doc = json::parse(slurp(out));
    EXPECT_EQ(doc["format"], "attnviz-flash");
    ASSERT_EQ(doc["steps"].size(), 3u * 4u);  // ⌈7/3⌉ row tiles × ⌈7/2⌉ key tiles
    EXPECT_EQ(doc["steps"][5]["rows"], json::parse("[3, 6]"));
    EXPECT_EQ(doc["steps"][5]["cols"], json::parse("[2, 4]"));
    ASSERT_EQ(doc["O"].size(), Z.size());
    for (std::size_t i = 0; i < Z.size(); ++i)
        for (std::size_t j = 0; j < Z[i].size(); ++j)
            EXPECT_NEAR(doc["O"][i][j].get<double>(), Z[i][j].get<double>(), 1e-12) << i << " " << j;
    EXPECT_LE(doc["max_difference_from_Z"].get<double>(), 1e-12);
    // Causal: every row of the tile [3, 6) sees keys 0 and 1, so its running max is a number.
    EXPECT_TRUE(doc["steps"][4]["m"][0].is_number());
    const fs::path never = work / "never.json";
    for (const auto& [args, says] :
         {std::pair{std::vector<std::string>{"--block-rows", "0", "--block-cols", "2"}, "--block-rows"},
          std::pair{std::vector<std::string>{"--block-rows", "2", "--block-cols", "70000"}, "--block-cols"},
          std::pair{std::vector<std::string>{"--block-rows", "2", "--block-cols", "2", "--head", "3"},
                    "--head: head 3"}}) {
        std::vector<std::string> all{"flash", session.string()};
        all.insert(all.end(), args.begin(), args.end());
        all.insert(all.end(), {"-o", never.string()});
        r = run(all);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_NE(r.err.find(says), std::string::npos) << describe(r);
        EXPECT_FALSE(fs::exists(never));
    }
}

TEST_F(Cli, ExportErrorsExitTwoAndWriteNothing) {
    const fs::path session = worked_file();
    const fs::path out = work / "never.csv";
    struct Case {
        std::vector<std::string> args;
        const char* says;
    };
    const std::string s = session.string();
    const Case cases[] = {
        {{"--matrix", "weight", "--format", "csv"}, "\"weight\" is not a matrix"},
        {{"--matrix", "weights:3", "--format", "csv"}, "head 3 is out of range"},
        {{"--matrix", "weights", "--format", "csv"}, "one matrix per head"},
        {{"--matrix", "X:1", "--format", "csv"}, "without a head"},
        {{"--matrix", "b_Q:1", "--format", "csv"}, "does not exist in this session"},
        {{"--matrix", "X", "--format", "pdf"}, "--format"},
        {{"--view", "heads", "--format", "csv"}, "png or svg"},
        {{"--view", "everything", "--format", "svg"}, "--view"},
        {{"--format", "svg"}, "either --matrix"},
        {{"--matrix", "X", "--format", "csv", "--precision", "40"}, "--precision"},
        {{"--matrix", "X", "--format", "png", "--colors", "rainbow"}, "--colors"},
        {{"--view", "heads", "--format", "png", "--size", "big"}, "--size"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{"export", s};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"-o", out.string()});
        const Outcome r = run(args);
        EXPECT_EQ(r.code, 2) << describe(r);
        EXPECT_NE(r.err.find(c.says), std::string::npos) << describe(r);
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.says;
    }
    // A bad session: exit 2 with its field; a missing one: exit 1.
    json bad = worked_json();
    bad["config"]["n"] = 0;
    spit(work / "bad.json", bad.dump());
    const Outcome r =
        run({"export", (work / "bad.json").string(), "--matrix", "X", "--format", "csv", "-o", out.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("config.n"), std::string::npos) << r.err;
    EXPECT_EQ(
        run({"export", (work / "none.json").string(), "--matrix", "X", "--format", "csv", "-o", out.string()}).code, 1);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, ComputeGradAddsTheGradientKeyedAsTheSession) {
    const fs::path session = work / "rope.json";
    ASSERT_EQ(run({"example", "random", "-n", "4", "--d-model", "8", "--heads", "4", "--kv-heads", "2", "--biases",
                   "--rope", "half", "-o", session.string()})
                  .code,
              0);
    const Outcome r = run({"compute", session.string(), "--grad", "output:3:5"});
    ASSERT_EQ(r.code, 0) << describe(r);
    const json doc = json::parse(r.out);
    const json& g = doc.at("grad");
    EXPECT_EQ(g.at("of"), "output:3:5");
    const json s = json::parse(slurp(session));
    // The same keys and shapes as the session's inputs (K/V only in each group's first head).
    EXPECT_EQ(g.at("X").size(), s.at("X").size());
    EXPECT_EQ(g.at("X")[0].size(), s.at("X")[0].size());
    ASSERT_EQ(g.at("heads").size(), 4u);
    for (size_t h = 0; h < 4; ++h)
        for (const auto& [key, value] : s.at("heads")[h].items()) {
            ASSERT_TRUE(g.at("heads")[h].contains(key)) << h << " " << key;
            EXPECT_EQ(g.at("heads")[h].at(key).size(), value.size()) << key;
        }
    EXPECT_FALSE(g.at("heads")[1].contains("W_K"));  // shared with head 1
    EXPECT_TRUE(g.contains("W_O"));
    EXPECT_TRUE(g.contains("b_O"));
    // ∂output[3][5]/∂b_O is 1 at column 5, 0 elsewhere.
    for (size_t j = 0; j < 8; ++j) EXPECT_EQ(g.at("b_O")[0][j].get<double>(), j == 5 ? 1.0 : 0.0);
    // Bad cells exit 2 and write nothing.
    for (const char* bad : {"output:4:0", "weights:1:0:0", "output"}) {
        const fs::path out = work / "never.json";
        const Outcome e = run({"compute", session.string(), "--grad", bad, "-o", out.string()});
        EXPECT_EQ(e.code, 2) << bad << describe(e);
        EXPECT_EQ(e.err.rfind("error: --grad", 0), 0u) << e.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

namespace {

// The ```json blocks of a Markdown file that are sessions.
std::vector<std::string> session_examples(const fs::path& markdown) {
    const std::string text = slurp(markdown);
    std::vector<std::string> out;
    for (size_t at = 0; (at = text.find("```json\n", at)) != std::string::npos;) {
        const size_t start = at + 8, end = text.find("```", start);
        if (end == std::string::npos) break;
        const std::string block = text.substr(start, end - start);
        if (block.find("\"attnviz-session\"") != std::string::npos) out.push_back(block);
        at = end + 3;
    }
    return out;
}

}  // namespace

TEST_F(Cli, EverySessionExampleOfTheFormatDocumentComputes) {
    const std::vector<std::string> examples = session_examples(fs::path(ATTNVIZ_SOURCE_DIR) / "docs/session-format.md");
    ASSERT_GE(examples.size(), 3u);  // versions 1, 2 and 3
    for (size_t k = 0; k < examples.size(); ++k) {
        const fs::path session = work / ("example-" + std::to_string(k) + ".json");
        spit(session, examples[k]);
        const Outcome r = run({"compute", session.string()});
        ASSERT_EQ(r.code, 0) << "example " << k << "\n" << describe(r);
        const json trace = json::parse(r.out);
        EXPECT_EQ(trace["version"], json::parse(examples[k])["version"]) << "example " << k;
        // The pin's example reads back with its pin.
        if (json::parse(examples[k]).contains("pin")) {
            const attnviz::core::Result<attnviz::core::Session> s = attnviz::core::parse_session(examples[k]);
            ASSERT_TRUE(s) << "example " << k;
            ASSERT_TRUE(s.value->pin);
            EXPECT_EQ(s.value->pin->params.X(0, 0), 1.0);
            EXPECT_EQ(s.value->params.X(0, 0), 2.0);
        }
    }
    // The version 3 example by hand: query 0 (Q = [2, 0]) attends to keys "the" (K = [1, 0]) and
    // "cat" (K = [0, 1]) with scores 2/√2 and 0, the padding key masked: softmax(√2, 0).
    const json trace = json::parse(run({"compute", (work / "example-2.json").string()}).out);
    const double e = std::exp(std::sqrt(2.0));
    const json& w = trace["heads"][0]["weights"];
    ASSERT_EQ(w.size(), 2u);
    ASSERT_EQ(w[0].size(), 3u);
    EXPECT_NEAR(w[0][0].get<double>(), e / (e + 1), 1e-15);
    EXPECT_NEAR(w[0][1].get<double>(), 1 / (e + 1), 1e-15);
    EXPECT_EQ(w[0][2].get<double>(), 0.0);
    EXPECT_TRUE(trace["heads"][0]["scores"][0][2].is_null());  // −∞, masked
}

TEST_F(Cli, RandomCrossAttentionAndCustomMasks) {
    const fs::path session = work / "cross.json";
    const Outcome made = run({"example", "random", "-n", "3", "--n-kv", "5", "--mask", "custom", "--heads", "2",
                              "--d-model", "4", "-o", session.string()});
    ASSERT_EQ(made.code, 0) << describe(made);
    const json doc = json::parse(slurp(session));
    EXPECT_EQ(doc["version"], 3);
    EXPECT_EQ(doc["Y"].size(), 5u);
    EXPECT_EQ(doc["mask"].size(), 3u);
    EXPECT_EQ(doc["kv_tokens"][4], "y5");
    const Outcome traced = run({"compute", session.string(), "--grad", "output:2:1"});
    ASSERT_EQ(traced.code, 0) << describe(traced);
    const json trace = json::parse(traced.out);
    EXPECT_EQ(trace["heads"][1]["K"].size(), 5u);
    EXPECT_EQ(trace["heads"][1]["weights"][2].size(), 5u);
    // The gradient has Y's shape and no mask (it has none).
    EXPECT_EQ(trace["grad"]["Y"].size(), 5u);
    EXPECT_EQ(trace["grad"]["Y"][0].size(), 4u);
    EXPECT_FALSE(trace["grad"].contains("mask"));
    // Where the mask forbids a key, its weight is 0 and its score null.
    for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 5; ++j)
            if (doc["mask"][i][j] == 0) {
                EXPECT_EQ(trace["heads"][0]["weights"][i][j].get<double>(), 0.0);
                EXPECT_TRUE(trace["heads"][0]["scores"][i][j].is_null());
            }
    // A causal mask with more keys than queries is refused, naming the field.
    const Outcome causal =
        run({"example", "random", "-n", "3", "--n-kv", "4", "--mask", "causal", "-o", (work / "bad.json").string()});
    EXPECT_EQ(causal.code, 2) << describe(causal);
    EXPECT_NE(causal.err.find("error: --mask: a causal mask needs as many keys as queries"), std::string::npos)
        << causal.err;
    EXPECT_FALSE(fs::exists(work / "bad.json"));
    EXPECT_EQ(run({"example", "random", "--mask", "banded", "-o", (work / "b.json").string()}).code, 2);
    EXPECT_EQ(run({"example", "random", "--n-kv", "0", "-o", (work / "b.json").string()}).code, 2);
    EXPECT_EQ(run({"example", "worked-example", "--n-kv", "3", "-o", (work / "b.json").string()}).code, 2);
    // A mask row without keys, in a file: exit 2 with the row named.
    json broken = doc;
    broken["mask"][1] = json::array({0, 0, 0, 0, 0});
    spit(work / "broken.json", broken.dump());
    const Outcome refused = run({"compute", (work / "broken.json").string()});
    EXPECT_EQ(refused.code, 2);
    EXPECT_NE(refused.err.find("mask[1]: query 1 may attend to no key"), std::string::npos) << refused.err;
}
