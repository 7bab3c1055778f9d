// The headless commands of the attnviz binary. Each returns the process exit code:
// 0 success, 1 an I/O error, 2 invalid input; messages go to stderr as "error: <path>: <problem>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli_output.hpp"

#include "core/render/figure_style.hpp"

namespace attnviz::app {

// attnviz compute SESSION.json [-o TRACE.json]: the full trace as JSON, to stdout without -o.
// A session whose trace needs more than memory_budget bytes is refused (exit 2) with the figure.
// With grad = "output:ROW:COL", the trace also holds "grad": ∂output[ROW][COL]/∂ every input.
int compute_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget,
                    const std::string& grad = "");

// Why `text` is not a seed (a whole number from 0 to 2^64 − 1), or "" when it is one.
std::string seed_problem(const std::string& text);

struct ExampleOptions {
    std::string name;  // "worked-example", "random" or "sentence"
    std::uint64_t seed = 1;
    std::optional<int> n, d_model, heads, d_k, d_v;
    // What real layers add (random only): biases, K/V groups, RoPE with its base and style.
    bool biases = false;
    std::optional<int> kv_heads;
    std::optional<double> rope_base;
    std::string rope_style;   // "", "half" or "interleaved"; either RoPE option turns RoPE on
    std::optional<int> n_kv;  // cross-attention: keys and values from a random Y of n_kv tokens
    std::string mask;         // "", "none", "causal" or "custom" (a random custom mask)
    std::string softmax;      // "", "standard" or "plus_one"
    // sentence: its text (the tokens; n is their number) and whether X is one-hot per distinct word
    // instead of each word's embedding (core/teach/sentence.hpp); the weights are random's.
    std::string text;
    bool one_hot = false;
    std::string out_path;
};

// attnviz example NAME [...] -o FILE: writes a preset session, or a sentence's (`example sentence
// --text "The cat sat" [--one-hot]`: the tokens and X from the sentence, the weights those of
// `example random` with the same seed and options and n = the number of tokens).
int example_command(const ExampleOptions& options);

struct ImportCommandOptions {
    std::string checkpoint;  // .safetensors, .npz or .npy, or a model folder (config.json and its weights)
    std::string convention = "auto";
    // One layer "5" (default: the file's metadata "layer", else 0), or several: "all", "2-5",
    // "0,2,4"; with several, out_path is a folder that gets one session per layer (layer-00.json …).
    std::string layer;
    std::optional<int> heads, kv_heads;
    std::optional<double> rope_base;
    std::string x_path;               // .npy (or any tensor file with one tensor) of n × d_model
    std::string token_ids;            // "1,2,3"
    std::optional<std::string> text;  // a model folder's input, tokenized by its tokenizer
    std::string tokens;               // "a b c"
    std::string tokens_file;          // one label per line
    std::string out_path;
};

// attnviz import CHECKPOINT [...] -o SESSION.json: one attention layer as a session; with --layer
// all (or a range or list) -o FOLDER: one session per layer, FOLDER/layer-LL.json. A model folder
// (config.json and model.safetensors or shards) with --text or --token-ids gives its blocks'
// sessions from the model's forward pass, X each block's true attention input. Exit 2 with
// "error: FILE: TENSOR: problem" for a bad or incomplete checkpoint or a bad --layer, 1 for I/O;
// nothing is written then (with several layers: no file of any layer).
int import_command(const ImportCommandOptions& options);

struct ExportOptions {
    std::string session;      // the session file, or empty with `attentions`
    std::string attentions;   // --attentions: a tensor file of weights (core/io/attentions.hpp), for html
    std::string tokens_file;  // --tokens-file: its tokens (a JSON list, or {"queries", "keys"})
    std::string matrix;       // NAME[:HEAD], or empty with `view`
    std::string view;         // heads | pipeline (png, svg); head | model (html)
    std::string format;       // csv | tsv | npy | latex | png | svg | json (the whole trace) | html
    std::string out_path;     // required; written atomically
    // --precision (digits), --scale, --no-numbers, --no-labels and --no-legend; --colors and --size
    // are read into it from their text.
    core::FigureStyle style;
    bool scale_given = false;   // --scale was given (it applies to png only)
    std::string colors;         // fixed | auto | percentile | log (default: the app's default for the matrix)
    std::string size;           // --view: WxH the figure is fitted into
    std::string head_select;    // --view head: the selected tokens, "0,2,k5"
    int layer = 0;              // --view head: the layer of --attentions
    std::string sort_heads;     // --view model: none | entropy | distance | first | diagonal
    bool hide_special = false;  // --view head: special tokens left out, rows renormalised over the keys left
    bool mean_heads = false;    // --view head: the lines of the mean of the heads
    std::int64_t memory_budget = 0;
};

// attnviz export SESSION.json (--matrix NAME[:HEAD] | --view heads|pipeline) --format F -o FILE:
// one matrix's numbers or figure, a view's figure, or the whole trace. --view head|model: the head
// or model view of the session's weights, or of a tensor file's (--attentions FILE [--tokens-file
// T.json], no session), as a figure (svg, png: core/render/attention_figures.hpp) or as the
// interactive page (html: core/render/attention_page.hpp). Exit 2 with "error: …" for
// an unknown matrix, a head out of range, a format that does not fit or a bad session; 1 for I/O.
// Nothing is written on an error.
int export_command(const ExportOptions& options);

struct RecoverOptions {
    std::string out_path;  // write the newest (or --id) autosave's session here; empty: list them
    std::string id;
    bool discard = false;  // remove the autosave once written (or, without -o, every one listed)
    std::string dir;       // the state directory; empty: core::default_autosave_dir()
};

// attnviz recover [-o FILE [--id ID]] [--discard]: the unsaved work of instances that ended
// without saving (core/io/autosave_store.hpp), listed or written out. Exit 2 when there is none to write.
int recover_command(const RecoverOptions& options);

}  // namespace attnviz::app
