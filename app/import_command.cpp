// attnviz import: a checkpoint's attention layer (or every layer) as sessions.
#include "commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>

#include "cli_output.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/import.hpp"
#include "core/io/session_file.hpp"
#include "forward_command.hpp"

namespace attnviz::app {

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

}  // namespace attnviz::app
