#include "commands.hpp"

#include <iostream>
#include <new>

#include "core/file_io.hpp"
#include "core/forward.hpp"
#include "core/presets.hpp"
#include "core/session.hpp"

namespace attnviz::app {

namespace {

// Prints each problem as "error: <path>: <message>"; a problem about the whole document is
// given the file's path.
void report(const core::Problems& problems, const std::string& file) {
    for (const core::Problem& p : problems)
        std::cerr << "error: " << (p.path.empty() ? file + ": " + p.message : p.str()) << "\n";
}

// Writes produced text to out_path (atomically), or to stdout for "" and "-".
int write_output(const core::TextProducer& produce, const std::string& out_path) {
    if (out_path.empty() || out_path == "-") {
        produce([](std::string_view piece) { return static_cast<bool>(std::cout.write(piece.data(), piece.size())); });
        std::cout.flush();
        if (std::cout) return exit_ok;
        std::cerr << "error: cannot write to standard output\n";
        return exit_io;
    }
    const core::Problems problems = core::write_file_atomic(out_path, produce);
    report(problems, out_path);
    return problems.empty() ? exit_ok : exit_io;
}

int write_output(const std::string& text, const std::string& out_path) {
    return write_output([&text](const core::TextSink& sink) { sink(text); }, out_path);
}

}  // namespace

int compute_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget) {
    if (session_path.empty()) {
        std::cerr << "error: no session file given (the path is empty)\n";
        return exit_invalid;
    }
    // Running out of memory (a session near the size limits on a small machine, or under a
    // memory limit) is an error like any other, never an abort.
    const char* stage = "reading ";
    try {
        core::Result<std::string> text = core::read_file(session_path);
        if (!text) {
            report(text.problems, session_path);
            return exit_io;
        }
        const core::Result<core::Session> session = core::parse_session(*text.value);
        text = {};  // the file's text is not needed past here
        if (!session) {
            report(session.problems, session_path);
            return exit_invalid;
        }
        const core::Session& s = *session.value;
        if (const auto problem = core::memory_problem(s.config, memory_budget)) {
            report({*problem}, session_path);
            return exit_invalid;
        }
        stage = "computing the trace of ";
        const core::Trace trace = core::forward<double>(s.config, s.params);
        if (const auto note = core::shape_note(s.config)) std::cerr << "note: " << *note << "\n";
        stage = "writing the trace of ";
        // Written piece by piece: the JSON of a large trace is several times its size in memory.
        return write_output([&trace](const core::TextSink& sink) { core::write_trace(trace, sink); }, out_path);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while " << stage << session_path << "\n";
        return exit_io;
    }
}

namespace {

int example_unguarded(const ExampleOptions& o) {
    core::Session session;
    if (o.name == "worked-example") {
        if (o.n || o.d_model || o.heads || o.d_k || o.d_v || o.biases || o.kv_heads || o.rope_base ||
            !o.rope_style.empty()) {
            std::cerr << "error: the worked example is fixed; -n, --d-model, --heads, --d-k, --d-v, --biases, "
                         "--kv-heads and the RoPE options apply to random only\n";
            return exit_invalid;
        }
        session = core::worked_example();
    } else if (o.name == "random") {
        core::Config c;
        c.n = o.n.value_or(6);
        c.d_model = o.d_model.value_or(8);
        c.heads = o.heads.value_or(2);
        if ((!o.d_k || !o.d_v) && c.heads > 0 && c.d_model % c.heads != 0) {
            std::cerr << "error: --d-model " << c.d_model << " is not divisible by --heads " << c.heads
                      << "; give --d-k and --d-v\n";
            return exit_invalid;
        }
        const int per_head = c.heads > 0 ? c.d_model / c.heads : 1;
        c.d_k = o.d_k.value_or(per_head);
        c.d_v = o.d_v.value_or(per_head);
        c.biases = o.biases;
        c.kv_heads = o.kv_heads.value_or(0) == c.heads ? 0 : o.kv_heads.value_or(0);
        if (o.kv_heads && *o.kv_heads < 1) {
            std::cerr << "error: --kv-heads must be at least 1, got " << *o.kv_heads << "\n";
            return exit_invalid;
        }
        c.rope.on = o.rope_base || !o.rope_style.empty();
        c.rope.base = o.rope_base.value_or(c.rope.base);
        if (o.rope_style == "interleaved")
            c.rope.style = core::Rope::Style::interleaved;
        else if (!o.rope_style.empty() && o.rope_style != "half") {
            std::cerr << "error: --rope: expected half or interleaved, got \"" << o.rope_style << "\"\n";
            return exit_invalid;
        }
        const core::Problems problems = core::validate(c);
        if (!problems.empty()) {
            report(problems, "");
            return exit_invalid;
        }
        session = core::random_session(c, o.seed);
    } else {
        std::cerr << "error: unknown example \"" << o.name << "\"; expected worked-example or random\n";
        return exit_invalid;
    }
    return write_output(core::write_session(session), o.out_path);
}

}  // namespace

int example_command(const ExampleOptions& o) {
    try {
        return example_unguarded(o);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while writing the example \"" << o.name << "\"\n";
        return exit_io;
    }
}

}  // namespace attnviz::app
