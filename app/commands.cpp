#include "commands.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <new>
#include <numeric>
#include <optional>
#include <sstream>

#include "cli_output.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/attentions.hpp"
#include "core/io/autosave_store.hpp"
#include "core/io/import.hpp"
#include "core/io/session_file.hpp"
#include "core/render/attention_figures.hpp"
#include "core/render/attention_page.hpp"
#include "core/render/export.hpp"
#include "core/render/picture.hpp"
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

namespace {

// --layer all (or a range or list): each layer's session into the folder o.out_path as
// layer-LL.json. Every session is first written beside its final name under a temporary one; only
// when all are written are they renamed into place, so an error leaves no file of any layer (and
// no folder, when this made it).
// Problems of X given with --x (its shape, a value such as 1e300 at X[2][1]) name the file.
core::Problems naming_x_file(core::Problems problems, const ImportCommandOptions& o) {
    if (o.x_path.empty()) return problems;
    for (core::Problem& p : problems)
        if (p.path == "--x")
            p.path = "--x " + o.x_path;
        else if (p.path.rfind("X[", 0) == 0)
            p.path = "--x " + o.x_path + ": " + p.path;
    return problems;
}

// Writes one session per layer into the folder -o names (FOLDER/layer-LL.json), all or none:
// `session_of(l)` gives layer l's session, or nullopt once it has reported why not.
int write_layer_folder(const ImportCommandOptions& o, const std::vector<int>& layers,
                       const std::function<std::optional<core::Session>(int)>& session_of) {
    namespace fs = std::filesystem;
    const fs::path dir = o.out_path;
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
        std::cerr << "error: " << core::printable(o.out_path)
                  << ": not a folder (with several layers, -o names a folder)\n";
        return exit_io;
    }
    const bool made = !fs::exists(dir, ec);
    if (made && !fs::create_directories(dir, ec)) {
        std::cerr << "error: " << core::printable(o.out_path) << ": cannot create the folder: " << ec.message() << "\n";
        return exit_io;
    }
    // Layer numbers padded to the widest (at least two digits), so the files sort in layer order.
    const size_t width = std::max<size_t>(2, std::to_string(layers.back()).size());
    std::vector<std::pair<std::string, std::string>> written;  // (temporary, final)
    const auto undo = [&] {
        for (const auto& [temporary, final_path] : written) fs::remove(temporary, ec);
        if (made) fs::remove(dir, ec);  // only when empty
    };
    for (int l : layers) {
        const std::optional<core::Session> session = session_of(l);
        if (!session) {
            undo();
            return exit_invalid;
        }
        std::string number = std::to_string(l);
        number.insert(0, width - std::min(width, number.size()), '0');
        const std::string final_path = (dir / ("layer-" + number + ".json")).string();
        const std::string temporary = core::temp_path_beside(final_path);
        written.emplace_back(temporary, final_path);
        if (const core::Problems p = core::write_file_atomic(temporary, core::write_session(*session)); !p.empty()) {
            undo();
            report(p, temporary);
            return exit_io;
        }
    }
    for (size_t k = 0; k < written.size(); ++k) {
        fs::rename(written[k].first, written[k].second, ec);
        if (ec) {
            std::cerr << "error: " << core::printable(written[k].second) << ": " << ec.message() << "\n";
            for (size_t rest = k; rest < written.size(); ++rest) fs::remove(written[rest].first, ec);
            return exit_io;
        }
    }
    std::cerr << "note: wrote " << written.size() << (written.size() == 1 ? " session to " : " sessions to ")
              << core::printable(o.out_path) << ": " << fs::path(written.front().second).filename().string()
              << (written.size() > 1 ? " … " + fs::path(written.back().second).filename().string() : "") << "\n";
    return exit_ok;
}

int import_several(const core::TensorFile& file, core::ImportOptions options, const ImportCommandOptions& o) {
    const core::Result<core::LayerListing> listed = core::list_layers(file, options.convention);
    if (!listed) {
        report(listed.problems, o.checkpoint);
        return exit_invalid;
    }
    const core::Result<std::vector<int>> layers = core::select_layers(o.layer, listed.value->layers);
    if (!layers) {
        report(layers.problems, o.checkpoint);
        return exit_invalid;
    }
    if (!options.convention)
        std::cerr << "note: convention: " << core::to_string(listed.value->convention) << " (from the tensor names)\n";
    options.convention = listed.value->convention;
    std::vector<std::string> noted;
    return write_layer_folder(o, *layers.value, [&](int l) -> std::optional<core::Session> {
        core::Result<core::ImportedLayer> layer = core::import_layer_of_several(file, options, l);
        if (!layer) {
            report(naming_x_file(layer.problems, o), o.checkpoint);
            return std::nullopt;
        }
        for (const std::string& text : layer.value->notes)
            if (std::find(noted.begin(), noted.end(), text) == noted.end()) {
                note(text);
                noted.push_back(text);
            }
        return std::move(layer.value->session);
    });
}

// Whether --layer names one layer by its number ("" too: the default one) rather than several.
bool one_layer(const std::string& spec) {
    return spec.empty() || (spec.size() <= 6 && spec.find_first_not_of("0123456789") == std::string::npos);
}

// `import` of a model folder (config.json and its weights): the blocks' attention sessions of the
// model's forward pass on --text or --token-ids, X each block's true input. What the folder's
// config and weights settle (the convention, the heads, RoPE's base, X, the labels) is refused.
int import_folder(const ImportCommandOptions& o) {
    const auto settled = [](const char* option, const char* by) {
        std::cerr << "error: " << option << ": a model folder's " << by << " gives it; leave it out\n";
        return exit_invalid;
    };
    if (o.convention != "auto") return settled("--convention", "config.json");
    if (o.heads || o.kv_heads || o.rope_base) return settled("--heads, --kv-heads, --rope-base", "config.json");
    if (!o.x_path.empty()) return settled("--x", "forward pass on --text or --token-ids");
    if (!o.tokens.empty() || !o.tokens_file.empty()) return settled("--tokens, --tokens-file", "tokenizer");
    if (!o.text && o.token_ids.empty()) {
        std::cerr << "error: " << core::printable(o.checkpoint)
                  << ": a model folder's layers are imported with their true input: give --text TEXT or "
                     "--token-ids 1,2,3\n";
        return exit_invalid;
    }
    ForwardOptions f;
    f.model = o.checkpoint;
    f.text = o.text;
    f.token_ids = o.token_ids;
    std::vector<int> layers;
    std::vector<core::Session> sessions;
    if (const int code = model_sessions(f, o.layer.empty() ? "0" : o.layer, layers, sessions); code != exit_ok)
        return code;
    if (one_layer(o.layer))
        return write_output(core::write_session(sessions[static_cast<size_t>(layers.front())]), o.out_path);
    return write_layer_folder(o, layers, [&](int l) -> std::optional<core::Session> {
        return std::move(sessions[static_cast<size_t>(l)]);
    });
}

int import_unguarded(const ImportCommandOptions& o) {
    namespace fs = std::filesystem;
    core::ImportOptions options;
    if (o.convention != "auto") {
        options.convention = core::convention_from_name(o.convention);
        if (!options.convention) {
            std::cerr << "error: --convention: expected auto, torch, bert, gpt2 or llama, got \"" << o.convention
                      << "\"\n";
            return exit_invalid;
        }
    }
    std::error_code ec;
    if (fs::is_directory(o.checkpoint, ec)) return import_folder(o);
    if (o.text) {
        std::cerr << "error: --text: a checkpoint file has no tokenizer; --text needs a model folder "
                     "(config.json, its weights and tokenizer)\n";
        return exit_invalid;
    }
    // One layer by its number, or several (all, a range, a list): those are chosen once the file's
    // layers are known.
    if (!o.layer.empty() && one_layer(o.layer)) options.layer = std::stoi(o.layer);
    // X, and the token labels, come from one source each: a second one would be silently ignored.
    if (!o.x_path.empty() && !o.token_ids.empty()) {
        std::cerr << "error: --x and --token-ids cannot be used together: X is either the file's rows or the "
                     "embeddings of the ids\n";
        return exit_invalid;
    }
    if (!o.tokens.empty() && !o.tokens_file.empty()) {
        std::cerr << "error: --tokens and --tokens-file cannot be used together: give the labels one way\n";
        return exit_invalid;
    }
    options.heads = o.heads;
    options.kv_heads = o.kv_heads;
    options.rope_base = o.rope_base;
    if (!fs::is_regular_file(o.checkpoint, ec)) {
        std::cerr << "error: " << core::printable(o.checkpoint)
                  << ": cannot open (no such file, or not a regular file)\n";
        return exit_io;
    }
    const core::Result<core::TensorFile> file = core::TensorFile::open(o.checkpoint);
    if (!file) {
        report(file.problems, o.checkpoint);
        return exit_invalid;
    }
    // A Hugging Face config.json beside the checkpoint gives the head counts and RoPE's base.
    const fs::path config_path = fs::path(o.checkpoint).parent_path() / "config.json";
    if (fs::is_regular_file(config_path, ec))
        if (core::Result<std::string> text = core::read_file(config_path.string()); text) {
            options.config_json = *text.value;
            options.config_label = config_path.string();
        }
    if (!o.x_path.empty()) {
        if (!fs::is_regular_file(o.x_path, ec)) {
            std::cerr << "error: --x " << core::printable(o.x_path)
                      << ": cannot open (no such file, or not a regular file)\n";
            return exit_io;
        }
        const core::Result<core::TensorFile> x = core::TensorFile::open(o.x_path);
        if (!x || x.value->tensors().size() != 1) {
            if (x)
                std::cerr << "error: --x: " << core::printable(o.x_path) << ": expected one tensor, found "
                          << x.value->tensors().size() << "\n";
            report(x.problems, o.x_path);
            return exit_invalid;
        }
        core::Result<core::Tensor> t = x.value->read(x.value->tensors().front().name);
        if (!t) {
            report(t.problems, o.x_path);
            return exit_invalid;
        }
        options.x = std::move(*t.value);
    }
    if (!o.token_ids.empty()) {
        std::stringstream in(o.token_ids);
        std::string part;
        while (std::getline(in, part, ',')) {
            char* end = nullptr;
            const long long id = std::strtoll(part.c_str(), &end, 10);
            if (part.empty() || *end != '\0' || id < 0) {
                std::cerr << "error: --token-ids: \"" << part << "\" is not a token id\n";
                return exit_invalid;
            }
            options.token_ids.push_back(id);
        }
    }
    std::string labels = o.tokens;
    if (!o.tokens_file.empty()) {
        const core::Result<std::string> text = core::read_file(o.tokens_file);
        if (!text) {
            report(text.problems, o.tokens_file);
            return exit_io;
        }
        std::stringstream in(*text.value);
        for (std::string line; std::getline(in, line);) options.tokens.push_back(line);
    } else if (!labels.empty()) {
        std::stringstream in(labels);
        for (std::string word; in >> word;) options.tokens.push_back(word);
    }
    if (!one_layer(o.layer)) return import_several(*file.value, options, o);
    const core::Result<core::ImportedLayer> layer = core::import_layer(*file.value, options);
    if (!layer) {
        report(naming_x_file(layer.problems, o), o.checkpoint);
        return exit_invalid;
    }
    for (const std::string& text : layer.value->notes) note(text);
    return write_output(core::write_session(layer.value->session), o.out_path);
}

}  // namespace

int import_command(const ImportCommandOptions& o) {
    try {
        return import_unguarded(o);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while importing " << core::printable(o.checkpoint) << "\n";
        return exit_io;
    }
}

namespace {

int export_failure(const std::string& message) {
    std::cerr << "error: " << core::printable(message) << "\n";
    return exit_invalid;
}

// --format html: the interactive page of a session's weights or of a tensor file's.
// The figure options every format cannot take, said rather than ignored; then --size read into
// `style`. exit_ok, or exit_invalid with the message written.
int check_figure_options(const ExportOptions& o, const std::string& format, bool figure, core::FigureStyle& style) {
    if (o.style.digits < 0 || o.style.digits > core::max_digits)
        return export_failure("--precision: expected 1 to " + std::to_string(core::max_digits) +
                              " significant digits, or 0 for the format's default (exact for csv and tsv, 4 for "
                              "latex, 3 in figures), got " +
                              std::to_string(o.style.digits));
    if (o.scale_given && format != "png")
        return export_failure("--scale applies to png only (pixels per figure unit), not " + format);
    if (!(o.style.scale > 0 && o.style.scale <= 16)) {
        std::ostringstream got;
        got << o.style.scale;
        return export_failure("--scale: expected a number greater than 0 and at most 16, got " + got.str());
    }
    if (!o.size.empty() && o.view.empty())
        return export_failure("--size applies to --view (the view is fitted into WxH); a matrix's png takes --scale");
    if (!o.size.empty() && !figure) return export_failure("--size applies to figures (png, svg), not " + format);
    if (!o.colors.empty() && !figure) return export_failure("--colors applies to figures (png, svg), not " + format);
    for (const auto& [set, flag] :
         {std::pair{!o.style.numbers, "--no-numbers"}, std::pair{!o.style.labels, "--no-labels"},
          std::pair{!o.style.legend, "--no-legend"}})
        if (set && !figure) return export_failure(std::string(flag) + " applies to figures (png, svg), not " + format);
    if (!o.size.empty()) {
        char x = 0, rest = 0;
        int w = 0, h = 0;
        if (std::sscanf(o.size.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || (x != 'x' && x != 'X') || w < 16 ||
            h < 16 || w > 16384 || h > 16384)
            return export_failure("--size: expected WxH between 16x16 and 16384x16384, got \"" + o.size + "\"");
        style.fit_width = w;
        style.fit_height = h;
    }
    return exit_ok;
}

// The weights of --view head|model: a session's layer or a tensor file's layers, with a title and
// where they come from.
int read_attention_source(const ExportOptions& o, core::AttentionPage& page) {
    if (!o.attentions.empty()) {
        core::Result<core::Attentions> read = core::open_attentions(o.attentions, o.tokens_file);
        if (!read) return export_failure(read.problems.front().str());
        page.title = "attention weights, " + std::to_string(read.value->layers.size()) + " layers × " +
                     std::to_string(read.value->heads()) + " heads";
        page.notes.push_back("From " + std::filesystem::path(o.attentions).filename().string() + ".");
        page.weights = std::move(*read.value);
        return exit_ok;
    }
    core::Session session;
    if (const int code = read_session(o.session, o.memory_budget, session); code != exit_ok) return code;
    page = core::session_page(session, core::forward<double>(session.config, session.params));
    page.notes.push_back("From " + std::filesystem::path(o.session).filename().string() + ".");
    return exit_ok;
}

// --view head|model: the interactive page (html), or the view as a figure (svg, png).
int export_attention_view(const ExportOptions& o) {
    const bool html = o.format == "html";
    if (!html && o.format != "svg" && o.format != "png")
        return export_failure("--view " + o.view + ": expected --format html, svg or png, got \"" + o.format + "\"");
    if (o.session.empty() == o.attentions.empty())
        return export_failure("--view " + o.view + ": give either a session file or --attentions FILE");
    if (!o.matrix.empty()) return export_failure("--matrix: the view shows the weights of every head; leave it out");
    if (!o.tokens_file.empty() && o.attentions.empty())
        return export_failure("--tokens-file applies to --attentions (a session has its tokens)");
    if (html && (!o.head_select.empty() || !o.sort_heads.empty() || o.hide_special || o.mean_heads))
        return export_failure(
            "--head-select, --sort-heads, --hide-special and --mean-heads apply to svg and png (the page takes "
            "#select= in its address and has its own buttons)");
    if (o.view == "model" && (o.hide_special || o.mean_heads))
        return export_failure("--hide-special and --mean-heads apply to --view head");
    core::FigureStyle style = o.style;
    if (const int code = check_figure_options(o, o.format, !html, style); code != exit_ok) return code;
    if (!o.colors.empty()) return export_failure("--colors applies to heatmaps, not the " + o.view + " view");
    core::AttentionPage page;
    if (const int code = read_attention_source(o, page); code != exit_ok) return code;
    core::AttentionViewExport request;
    request.view = o.view == "head" ? core::PageView::head : core::PageView::model;
    request.format = *core::export_format_from_name(o.format);
    request.style = style;
    request.head.layer = o.layer;
    request.head.hide_special = o.hide_special;
    request.head.mean = o.mean_heads;
    if (!o.head_select.empty()) {
        // Tokens count among those shown: without the special ones when they are hidden.
        const core::KeptTokens kept = core::kept_tokens(page.weights.query_tokens, page.weights.key_tokens,
                                                        o.hide_special);
        const core::TokenChoice chosen = core::parse_token_choice(o.head_select, static_cast<int>(kept.queries.size()),
                                                                  static_cast<int>(kept.keys.size()));
        if (!chosen.problem.empty()) return export_failure("--head-select: " + chosen.problem);
        request.head.queries = chosen.queries;
        request.head.keys = chosen.keys;
    }
    if (!o.sort_heads.empty()) {
        const std::optional<core::HeadKey> key = core::head_key_from_name(o.sort_heads);
        if (!key)
            return export_failure("--sort-heads: expected none, entropy, distance, first or diagonal, got \"" +
                                  o.sort_heads + "\"");
        request.model.sort = *key;
    }
    const core::Result<std::string> bytes = core::attention_view_bytes(page, request);
    if (!bytes) {
        const core::Problem& p = bytes.problems.front();
        if (p.path == core::default_font_path || p.path == core::bold_font_path(core::default_font_path)) {
            std::cerr << "error: " << core::printable(p.str()) << "\n";
            return exit_io;  // the font could not be read
        }
        return export_failure((p.path == "layer"    ? "--layer: "
                               : p.path == "tokens" ? "--hide-special: "
                                                    : "") +
                              p.message);
    }
    return write_output(*bytes.value, o.out_path);
}

// A matrix, the heads or the pipeline, or the trace, of a session.
int export_unguarded(const ExportOptions& o) {
    const auto fail = export_failure;
    if (o.view == "head" || o.view == "model") return export_attention_view(o);
    if (o.format == "html") return fail("--format html: expected --view head or --view model");
    if (!o.attentions.empty() || !o.tokens_file.empty())
        return fail("--attentions and --tokens-file are read for --view head and --view model only");
    if (!o.head_select.empty() || !o.sort_heads.empty() || o.hide_special || o.mean_heads)
        return fail(
            "--head-select, --hide-special, --mean-heads and --sort-heads apply to --view head and --view model");
    if (o.session.empty()) return fail("the session file is missing (attnviz export SESSION.json …)");
    const std::optional<core::ExportFormat> format = core::export_format_from_name(o.format);
    if (!format)
        return fail("--format: expected csv, tsv, npy, latex, png, svg, json or html, got \"" + o.format + "\"");
    if (o.matrix.empty() == o.view.empty() && *format != core::ExportFormat::json)
        return fail("give either --matrix NAME[:HEAD] or --view heads|pipeline|head|model");
    if (!o.view.empty() && o.view != "heads" && o.view != "pipeline")
        return fail("--view: expected heads, pipeline, head or model, got \"" + o.view + "\"");
    if (!o.view.empty() && !core::is_figure(*format)) return fail("--view: a view is exported as png or svg");
    core::ExportRequest request;
    request.style = o.style;
    if (const int code = check_figure_options(o, o.format, core::is_figure(*format), request.style); code != exit_ok)
        return code;
    std::optional<core::MatrixRef> ref;
    if (!o.matrix.empty()) {
        const core::Result<core::MatrixRef> parsed = core::parse_matrix_ref(o.matrix);
        if (!parsed) return fail("--matrix: " + parsed.problems.front().message);
        ref = *parsed.value;
    }
    core::Session session;
    if (const int code = read_session(o.session, o.memory_budget, session); code != exit_ok) return code;
    const core::Config& c = session.config;
    if (ref) {
        if (ref->head < 0) {
            if (c.heads > 1)
                return fail("--matrix: " + std::string(core::name(ref->id)) + " is one matrix per head; name one, " +
                            core::name(ref->id) + ":1 to " + core::name(ref->id) + ":" + std::to_string(c.heads));
            ref->head = 0;
        }
        if (core::is_per_head(ref->id) && ref->head >= c.heads)
            return fail("--matrix: head " + std::to_string(ref->head + 1) + " is out of range: the session has " +
                        std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads"));
        if (!core::exists(*ref, c))
            return fail("--matrix: " + core::label(*ref, core::Notation::ascii) + " does not exist in this session (" +
                        core::operation_text(ref->id, c, core::Notation::ascii, false) + ")");
    }
    request.matrix = ref;
    request.view = o.view == "heads"      ? core::ExportRequest::View::heads
                   : o.view == "pipeline" ? core::ExportRequest::View::pipeline
                                          : core::ExportRequest::View::none;
    request.format = *format;
    if (!o.colors.empty()) {
        const std::optional<core::Scaling> scaling = core::scaling_from_name(o.colors);
        if (!scaling) return fail("--colors: expected fixed, auto, percentile or log, got \"" + o.colors + "\"");
        // fixed 0..1 and log are scalings of the weights only (docs/guide/window.md, "Colour scales"); another matrix
        // would silently be drawn auto.
        if (ref && !core::offers(core::info(ref->id).colors, *scaling))
            return fail("--colors " + o.colors + ": fixed and log are for weights only; " + core::name(ref->id) +
                        " takes auto or percentile");
        request.style.scaling = *scaling;
    }
    const core::Trace trace = core::forward<double>(c, session.params);
    const core::Result<std::string> bytes = core::export_bytes(session, trace, request);
    if (!bytes) {
        const core::Problem& p = bytes.problems.front();
        // A font that cannot be read is the machine's problem (I/O), everything else the request's.
        const bool font = p.path == core::default_font_path || p.path == core::bold_font_path(core::default_font_path);
        std::cerr << "error: " << core::printable(p.str()) << "\n";
        return font ? exit_io : exit_invalid;
    }
    return write_output(*bytes.value, o.out_path);
}

}  // namespace

int export_command(const ExportOptions& o) {
    try {
        return export_unguarded(o);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while exporting from "
                  << core::printable(o.session.empty() ? o.attentions : o.session) << "\n";
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
