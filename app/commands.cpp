#include "commands.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>

#include "cli_output.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/autosave_store.hpp"
#include "core/io/session_file.hpp"
#include "core/teach/sentence.hpp"
#include "forward_command.hpp"

namespace attnviz::app {

int compute_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget,
                    const std::string& grad) {
    // Running out of memory (a session near the size limits on a small machine, or under a
    // memory limit) is an error like any other, never an abort.
    const char* stage = "reading ";
    try {
        core::Session s;
        if (const int code = read_session(session_path, memory_budget, s); code != exit_ok) return code;
        stage = "computing the trace of ";
        const core::Trace trace = core::forward<double>(s.config, s.params);
        if (const auto note = core::shape_note(s.config)) std::cerr << "note: " << *note << "\n";
        std::optional<core::Gradients> gradients;
        if (!grad.empty()) {
            const core::Result<core::CellRef> cell = core::parse_cell_ref(grad);
            if (!cell || cell.value->matrix.id != core::MatrixId::output) {
                // The parser's own example names another matrix's cell, which --grad refuses: its
                // detail helps only for an output cell it could not read.
                const bool names_output = grad.substr(0, grad.find(':')) == "output";
                std::cerr << "error: --grad: expected output:ROW:COL, e.g. output:0:1, got \"" << core::printable(grad)
                          << "\"" << (cell || !names_output ? "" : " (" + cell.problems.front().message + ")") << "\n";
                return exit_invalid;
            }
            stage = "computing the gradient of ";
            core::Result<core::Gradients> g = core::output_gradient(s.config, s.params, trace, cell.value->row,
                                                                    cell.value->col);
            if (!g) {
                std::cerr << "error: --grad: " << g.problems.front().message << "\n";
                return exit_invalid;
            }
            gradients = std::move(*g.value);
        }
        stage = "writing the trace of ";
        // Written piece by piece: the JSON of a large trace is several times its size in memory.
        return write_output(
            [&](const core::TextSink& sink) { core::write_trace(trace, sink, gradients ? &*gradients : nullptr); },
            out_path);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while " << stage << core::printable(session_path) << "\n";
        return exit_io;
    }
}

std::string seed_problem(const std::string& text) {
    std::uint64_t seed = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, seed);
    if (error == std::errc() && stop == end) return "";
    // A sign or a number past 2^64 − 1 would otherwise wrap around or saturate into another seed.
    return "expected a whole number from 0 to 18446744073709551615, got \"" + text + "\"";
}

namespace {

// The option a problem of the example's config comes from ("config.d_model" → "--d-model"): a
// message names what was typed. d_k and d_v not given are d_model / heads.
std::string option_of(const std::string& path, const ExampleOptions& o) {
    static const std::pair<const char*, const char*> options[] = {
        {"config.n", "-n"},        {"config.d_model", "--d-model"},      {"config.heads", "--heads"},
        {"config.n_kv", "--n-kv"}, {"config.kv_heads", "--kv-heads"},    {"config.rope.base", "--rope-base"},
        {"config.mask", "--mask"}, {"config.rope.dims", "--d-k (RoPE)"}, {"config", "the dimensions"}};
    if (path == "config.d_k") return o.d_k ? "--d-k" : "d_k (d_model / heads; or give --d-k)";
    if (path == "config.d_v") return o.d_v ? "--d-v" : "d_v (d_model / heads; or give --d-v)";
    if (path == "config.n" && o.name == "sentence") return "--text (its tokens)";
    for (const auto& [field, option] : options)
        if (path == field) return option;
    return path;
}

int example_unguarded(const ExampleOptions& o) {
    core::Session session;
    if (o.name != "sentence" && (!o.text.empty() || o.one_hot)) {
        std::cerr << "error: --text and --one-hot apply to sentence only\n";
        return exit_invalid;
    }
    if (o.name == "worked-example") {
        if (o.n || o.d_model || o.heads || o.d_k || o.d_v || o.biases || o.kv_heads || o.rope_base ||
            !o.rope_style.empty() || o.n_kv || !o.mask.empty() || !o.softmax.empty()) {
            std::cerr << "error: the worked example is fixed; -n, --d-model, --heads, --d-k, --d-v, --biases, "
                         "--kv-heads, --n-kv, --mask, --softmax and the RoPE options apply to random and sentence "
                         "only\n";
            return exit_invalid;
        }
        session = core::worked_example();
    } else if (o.name == "random" || o.name == "sentence") {
        core::Config c;
        c.n = o.n.value_or(6);
        std::optional<core::Result<std::vector<std::string>>> tokens;
        if (o.name == "sentence") {
            if (o.n) {
                std::cerr << "error: -n does not apply to sentence: n is the number of its tokens\n";
                return exit_invalid;
            }
            if (o.text.empty()) {
                std::cerr << "error: example sentence needs --text \"a sentence\"\n";
                return exit_invalid;
            }
            tokens = core::sentence_tokens(o.text);
            if (!*tokens) {
                report(tokens->problems, "--text");
                return exit_invalid;
            }
            c.n = static_cast<int>(tokens->value->size());
        }
        // Every dimension given is a count: at least 1, said of the option before anything is
        // derived from it (d_k = d_model / heads would otherwise take the blame for --d-model 0).
        for (const auto& [option, value] :
             {std::pair{"-n", o.n}, std::pair{"--d-model", o.d_model}, std::pair{"--heads", o.heads},
              std::pair{"--d-k", o.d_k}, std::pair{"--d-v", o.d_v}, std::pair{"--kv-heads", o.kv_heads},
              std::pair{"--n-kv", o.n_kv}})
            if (value && *value < 1) {
                std::cerr << "error: " << option << " must be at least 1, got " << *value << "\n";
                return exit_invalid;
            }
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
        c.rope.on = o.rope_base || !o.rope_style.empty();
        c.rope.base = o.rope_base.value_or(c.rope.base);
        if (o.rope_style == "interleaved")
            c.rope.style = core::Rope::Style::interleaved;
        else if (!o.rope_style.empty() && o.rope_style != "half") {
            std::cerr << "error: --rope: expected half or interleaved, got \"" << o.rope_style << "\"\n";
            return exit_invalid;
        }
        c.n_kv = o.n_kv.value_or(0);
        if (o.mask == "causal")
            c.mask = core::Mask::causal;
        else if (o.mask == "custom")
            c.mask = core::Mask::custom;
        else if (!o.mask.empty() && o.mask != "none") {
            std::cerr << "error: --mask: expected none, causal or custom, got \"" << o.mask << "\"\n";
            return exit_invalid;
        }
        if (!o.softmax.empty()) {
            const std::optional<core::Softmax> softmax = core::parse_softmax(o.softmax);
            if (!softmax) {
                std::cerr << "error: --softmax: expected standard or plus_one, got \"" << o.softmax << "\"\n";
                return exit_invalid;
            }
            c.softmax = *softmax;
        }
        core::Problems problems = core::validate(c);
        if (!problems.empty()) {
            // d_k and d_v derived from a d_model or a head count that is refused say nothing more.
            const bool derived_fault = std::any_of(problems.begin(), problems.end(), [](const core::Problem& p) {
                return p.path == "config.d_model" || p.path == "config.heads";
            });
            core::Problems named;
            for (const core::Problem& p : problems)
                if (!(derived_fault && ((p.path == "config.d_k" && !o.d_k) || (p.path == "config.d_v" && !o.d_v))))
                    named.push_back({option_of(p.path, o), p.message});
            report(named, "");
            return exit_invalid;
        }
        session = core::random_session(c, o.seed);
        if (tokens) {
            core::Result<core::Session> made = core::sentence_session(o.text, session,
                                                                      o.one_hot ? core::SentenceRows::one_hot
                                                                                : core::SentenceRows::embedding);
            if (!made) {
                report(made.problems, "--text");
                return exit_invalid;
            }
            session = std::move(*made.value);
        }
    } else {
        std::cerr << "error: unknown example \"" << o.name << "\"; expected worked-example, random or sentence\n";
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

int recover_command(const RecoverOptions& o) {
    const core::AutosaveStore store(o.dir.empty() ? core::default_autosave_dir() : o.dir);
    if (!store.enabled()) {
        std::cerr << "error: " << core::printable(store.problem()) << "\n";
        return exit_io;
    }
    const std::vector<core::AutosaveInfo> found = store.orphans();
    if (o.out_path.empty()) {
        if (found.empty()) std::cerr << "No unsaved work to recover in " << core::printable(store.dir()) << "\n";
        // Tab-separated for scripts: the file and the description come from the autosave's record,
        // escaped so that neither can break the line or reach the terminal as a control sequence.
        for (const core::AutosaveInfo& info : found) {
            std::cout << core::printable(info.id) << "\t" << core::local_time_text(info.saved_at) << "\t"
                      << (info.file.empty() ? "(new session)" : core::printable(info.file)) << "\t"
                      << core::printable(info.what) << "\n";
            if (o.discard) core::AutosaveStore::discard(info);
        }
        if (o.discard) store.remove_stale_locks();
        // The listing keeps its format for scripts; what --discard did is said beside it.
        if (o.discard && !found.empty())
            std::cerr << "Discarded "
                      << (found.size() == 1 ? "the autosave" : std::to_string(found.size()) + " autosaves")
                      << " listed above: " << (found.size() == 1 ? "it" : "they") << " can no longer be recovered\n";
        return exit_ok;
    }
    // The newest autosave (or the one --id names); without --id, a newest one that cannot be read
    // gives way to the newest one that can, and the command says so.
    const core::AutosaveInfo* chosen = nullptr;
    std::optional<core::Session> session;
    for (const core::AutosaveInfo& info : found) {
        if (!o.id.empty() && info.id != o.id) continue;
        core::Result<core::Session> loaded = core::AutosaveStore::load(info);
        if (loaded) {
            chosen = &info;
            session = std::move(*loaded.value);
            break;
        }
        report(loaded.problems, info.session_path);
        if (!o.id.empty()) return exit_invalid;
        std::cerr << "note: the autosave " << core::printable(info.id) << " of " << core::local_time_text(info.saved_at)
                  << " cannot be read (above); trying the next newest\n";
    }
    if (!chosen) {
        const std::string why = !o.id.empty()   ? "no autosave " + o.id + " in " + store.dir()
                                : found.empty() ? "no unsaved work to recover in " + store.dir()
                                                : "none of the autosaves in " + store.dir() + " can be read";
        std::cerr << "error: " << core::printable(why) << "\n";
        return exit_invalid;
    }
    if (chosen != &found.front() && o.id.empty())
        std::cerr << "note: writing the newest autosave that can be read: " << core::printable(chosen->id) << " of "
                  << core::local_time_text(chosen->saved_at) << "\n";
    const int code = write_output(core::write_session(*session), o.out_path);
    if (code == exit_ok && o.discard) {
        core::AutosaveStore::discard(*chosen);
        std::cerr << "Wrote " << core::printable(o.out_path) << " and discarded the autosave "
                  << core::printable(chosen->id) << "\n";
    }
    return code;
}

}  // namespace attnviz::app
