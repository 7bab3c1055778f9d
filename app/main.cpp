// attnviz: the command line. With a command it runs headless; without one it opens the GUI.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <string>

#include "analyze_command.hpp"
#include "attribute_command.hpp"
#include "bench_command.hpp"
#include "commands.hpp"
#include "core/attention/gemm.hpp"
#include "core/model/hub_cache.hpp"
#include "flash_command.hpp"
#include "forward_command.hpp"
#include "grad_command.hpp"
#include "heads_command.hpp"
#include "patch_command.hpp"
#include "shell/gui.hpp"
#include "tokenize_command.hpp"

namespace attnviz::app {
namespace {

// The compute command's arguments.
struct ComputeArgs {
    std::string session, out, grad;
};

// --memory-budget for the explorer, compute, analyze, export, bench and forward: one value, parsed once.
void add_memory_budget(std::string& memory_budget, CLI::App* app) {
    app->add_option("--memory-budget", memory_budget,
                    "Refuse dimensions whose inputs and trace need more memory than this, e.g. 16G "
                    "(default 8G)");
}

// The explorer's options (no command).
void add_gui_options(CLI::App& cli, GuiOptions& gui) {
    cli.add_option("session", gui.session_path, "A session file to open (attnviz-session JSON)");
    cli.add_option("--screenshot", gui.screenshot_path, "Render, write the window as a PNG to this file, exit");
    cli.add_option("--frames", gui.frames, "Render this many frames, then exit (default with --screenshot: 3)")
        ->check(CLI::Range(1, 100000));
    cli.add_option("--size", gui.size, "Window size WxH, e.g. 1280x800");
    cli.add_flag("--column-vectors", gui.column_vectors,
                 "Start with tokens as columns (column vectors): every matrix drawn transposed");
    cli.add_option("--select", gui.select,
                   "Select a cell at start: NAME:HEAD:ROW:COL (head from 1), or NAME:ROW:COL for X, W_O, concat, "
                   "output; e.g. weights:1:0:1");
    cli.add_option("--bench-frames", gui.bench_frames,
                   "Draw N frames, print {median_ms, p95_ms, max_ms, frames} as JSON, exit")
        ->check(CLI::Range(1, 100000));
    cli.add_option("--bench-edits", gui.bench_edits,
                   "Edit X[0][0] once a frame N times, print the frame times and last_edit_to_trace_ms, exit "
                   "(with --model DIR: of the model's block being edited, each edit run through the model)")
        ->check(CLI::Range(1, 100000));
    cli.add_option("--set", gui.edits,
                   "Edit a cell at start as if typed: NAME:HEAD:ROW:COL=VALUE or NAME:ROW:COL=VALUE (repeatable)");
    cli.add_option("--autosave-seconds", gui.autosave_seconds,
                   "Autosave unsaved work this often (default 5, off for --screenshot; 0 turns it off)")
        ->check(CLI::Range(0.0, 86400.0));
    cli.add_option("--dialog", gui.dialog,
                   "Open a dialog at start: open, save, import, beside, import-all, model, attentions, export, "
                   "sentence or palette (Find anything)")
        ->check(CLI::IsMember({"open", "save", "import", "beside", "import-all", "model", "attentions", "export",
                               "sentence", "palette"}));
    cli.add_option("--panel", gui.panels,
                   "Show a panel at start by its title, e.g. \"Head view\" (its tab chosen; repeatable)");
    cli.add_option(
           "--workspace", gui.workspace,
           "The workspace at start: layer, model, lab, teach or attribution (default layer; a model opens in model)")
        ->check(CLI::IsMember({"layer", "model", "lab", "teach", "attribution"}, CLI::ignore_case));
    cli.add_flag("--maximize", gui.maximize,
                 "With --panel: the (last) panel fills the window at start, as a double-click on its title does");
    cli.add_option("--head-select", gui.head_select,
                   "Select tokens in the head view at start: query rows from 0, k and a column for keys, e.g. 0,2,k5");
    cli.add_option("--beside", gui.beside,
                   "Open sessions beside this one in the Model view (repeatable; a checkpoint brings all its layers)")
        ->expected(1, -1);
    cli.add_option("--model", gui.model,
                   "Open every layer of a model in the Model view: a Hugging Face model folder (config.json: its "
                   "forward pass on --text), a folder of sessions (attnviz import --layer all -o DIR) or a "
                   "checkpoint; without SESSION the first layer is the one edited");
    cli.add_option("--model-layer", gui.model_layer,
                   "With --model on a Hugging Face model folder and no SESSION: the block edited at start (default 0)")
        ->check(CLI::Range(0, 100000));
    cli.add_option("--text", gui.model_text,
                   "With --model on a Hugging Face model folder: the sentence it runs on (default: a short one)");
    cli.add_option("--attentions", gui.attentions,
                   "Show any model's attention weights (.safetensors, .npz, .npy: one array per layer or one "
                   "stacked) in the head view and the model view: weights only");
    cli.add_option("--tokens-file", gui.tokens_file,
                   "With --attentions: the tokens, a JSON list or {\"queries\": [...], \"keys\": [...]}");
    cli.add_option("--layer", gui.layer, "The head view's layer at start (with --attentions or a model; from 0)")
        ->check(CLI::Range(0, 100000));
    cli.add_flag("--hide-special", gui.hide_special,
                 "The head view leaves special tokens ([CLS], <s>, ...) out at start, each row renormalised");
    cli.add_flag("--mean-heads", gui.mean_heads, "The head view draws the mean of the heads at start");
    cli.add_flag("--norm-weighted", gui.norm_weighted,
                 "The heads panel, the head view and the model view show the norm-weighted attention at start");
    cli.add_option("--lab-view", gui.lab_view, "The attention lab's view at start (with --panel \"Attention lab\")")
        ->check(CLI::IsMember({"norm-weighted", "circuits", "ablation", "rope", "sinks"}));
    cli.add_option("--sort-heads", gui.sort_heads,
                   "Model view: sort each layer's heads by entropy, distance, first or diagonal (largest first)")
        ->check(CLI::IsMember({"none", "entropy", "distance", "first", "diagonal"}));
    cli.add_option("--report", gui.report_path,
                   "With --screenshot or --frames: write the last frame's windows and printed numbers as JSON");
    cli.add_option("--teach", gui.teach_step, "Open the step-by-step lesson (at STEP, default 1)")
        ->expected(0, 1)
        ->default_str("1")
        ->check(CLI::Range(1, 1000));
    cli.add_option("--lesson", gui.lesson,
                   "Open a lesson of the library in teach mode, with its own session unless a session file is "
                   "given: worked-example, causal-mask, multi-head, scaling, rope, kv-cache, flash-attention, "
                   "cross-attention (or a lesson file's name in the assets' lessons/)");
    cli.add_option("--ui-scale", gui.ui_scale,
                   "Text size and spacing, 0.75 to 3 (default 1, or as last chosen; times the monitor's scale)");
    cli.add_option("--theme", gui.theme, "dark, light or high-contrast (default dark, or as last chosen)")
        ->check(CLI::IsMember({"dark", "light", "high-contrast"}));
    cli.add_option("--colormap", gui.colormap,
                   "The weights' colormap: viridis or cividis (colour-blind safe; default viridis, or as last chosen)")
        ->check(CLI::IsMember({"viridis", "cividis"}));
    cli.add_flag("--focus", gui.focus,
                 "Teach mode showing only the lesson's step text and its matrices, large (with --lesson, --teach)");
}

CLI::App* add_compute(CLI::App& cli, ComputeArgs& compute_args, const CLI::Validator& not_empty,
                      std::string& memory_budget) {
    CLI::App* compute = cli.add_subcommand("compute", "Compute every intermediate of a session, write it as JSON");
    compute->add_option("session", compute_args.session, "The session file")->required();
    compute->add_option("-o,--output", compute_args.out, "Where to write the trace (default: stdout)")
        ->check(not_empty);
    compute
        ->add_option("--grad", compute_args.grad,
                     "Add the gradient of one output cell with respect to every input: output:ROW:COL")
        ->check(not_empty);
    add_memory_budget(memory_budget, compute);
    return compute;
}

struct AnalyzeArgs {
    std::string session, out, token_ids;
    std::optional<std::string> text;
};

CLI::App* add_analyze(CLI::App& cli, AnalyzeArgs& analyze_args, const CLI::Validator& not_empty,
                      std::string& memory_budget) {
    CLI::App* analyze = cli.add_subcommand(
        "analyze",
        "What each head of a session does: norm-weighted attention, QK/OV circuits, ablation, sinks, RoPE "
        "pairs, as JSON");
    analyze
        ->add_option("session", analyze_args.session,
                     "The session file, or a model folder (with --text or --token-ids)")
        ->required();
    analyze->add_option("--text", analyze_args.text, "A model folder's input text (its tokenizer's ids)");
    analyze->add_option("--token-ids", analyze_args.token_ids, "A model folder's input as token ids: 1,2,3")
        ->check(not_empty);
    analyze->add_option("-o,--output", analyze_args.out, "Where to write the analysis (default: stdout)")
        ->check(not_empty);
    add_memory_budget(memory_budget, analyze);
    return analyze;
}

// `analyze` of a session file, or of a model folder on a text or token ids.
int run_analyze(const AnalyzeArgs& a, std::int64_t budget) {
    std::error_code ec;
    if (std::filesystem::is_directory(a.session, ec)) {
        ForwardOptions f;
        f.model = a.session;
        f.text = a.text;
        f.token_ids = a.token_ids;
        f.memory_budget = budget;
        return analyze_model_command(f, a.out);
    }
    if (a.text || !a.token_ids.empty()) {
        std::cerr << "error: --text and --token-ids are a model folder's input; a session has its X\n";
        return exit_invalid;
    }
    return analyze_command(a.session, a.out, budget);
}

CLI::App* add_import(CLI::App& cli, ImportCommandOptions& import_options, const CLI::Validator& not_empty) {
    CLI::App* import = cli.add_subcommand("import", "Attention layers of a checkpoint as sessions");
    import->add_option("checkpoint", import_options.checkpoint, ".safetensors, .npz or .npy, or a model folder")
        ->required();
    import->add_option("--convention", import_options.convention, "auto (default), torch, bert, gpt2 or llama");
    import->add_option("--layer", import_options.layer,
                       "Which layer (default: the file's metadata, else 0), or several: all, 2-5, 0,2,4 "
                       "(-o is then a folder: one session per layer, layer-00.json ...)");
    import->add_option("--heads", import_options.heads, "Heads (default: config.json beside the checkpoint)");
    import->add_option("--kv-heads", import_options.kv_heads, "K/V groups (default: from the key projection)");
    import->add_option("--rope-base", import_options.rope_base, "RoPE base for llama (default: rope_theta or 10000)");
    import->add_option("--x", import_options.x_path, "X: a .npy of n x d_model, the hidden states entering the layer");
    import->add_option("--token-ids", import_options.token_ids, "X from the embedding table: ids, e.g. 1,2,3");
    import->add_option("--text", import_options.text, "A model folder's input text, tokenized by its tokenizer");
    import->add_option("--tokens", import_options.tokens, "Token labels separated by spaces");
    import->add_option("--tokens-file", import_options.tokens_file, "Token labels, one per line");
    import
        ->add_option("-o,--output", import_options.out_path,
                     "Where to write the session (a folder with several layers)")
        ->required()
        ->check(not_empty);
    return import;
}

CLI::App* add_example(CLI::App& cli, ExampleOptions& example, const CLI::Validator& not_empty) {
    CLI::App* ex = cli.add_subcommand("example", "Write a preset session file");
    ex->add_option("name", example.name, "worked-example, random or sentence")->required();
    ex->add_option("--seed", example.seed, "Seed of the random weights (random, sentence; default 1)")
        ->check(CLI::Validator([](std::string& text) { return seed_problem(text); }, "0..2^64-1"));
    ex->add_option("-n", example.n, "Tokens (random; default 6)");
    ex->add_option("--d-model", example.d_model, "Embedding size (random, sentence; default 8)");
    ex->add_option("--heads", example.heads, "Heads (random, sentence; default 2)");
    ex->add_option("--d-k", example.d_k, "Query/key size per head (random, sentence; default d_model/heads)");
    ex->add_option("--d-v", example.d_v, "Value size per head (random, sentence; default d_model/heads)");
    ex->add_flag("--biases", example.biases, "Projection biases, U(-0.1, 0.1) (random)");
    ex->add_option("--kv-heads", example.kv_heads, "K/V groups, grouped-query attention (random; default heads)");
    ex->add_option("--rope", example.rope_style, "Rotary position embeddings: half or interleaved (random)");
    ex->add_option("--rope-base", example.rope_base, "RoPE base theta (random; default 10000; turns RoPE on)");
    ex->add_option("--n-kv", example.n_kv, "Cross-attention: keys and values from a random Y of N_KV tokens (random)");
    ex->add_option("--mask", example.mask, "none, causal or custom (a random custom mask; random)");
    ex->add_option("--softmax", example.softmax,
                   "standard or plus_one (softmax plus one, e^s / (1 + sum e^s); random, sentence)");
    ex->add_option("--text", example.text, "sentence: its words become the tokens, X a row per word");
    ex->add_flag("--one-hot", example.one_hot, "sentence: X one-hot per distinct word (default: word embeddings)");
    ex->add_option("-o,--output", example.out_path, "Where to write the session")->required()->check(not_empty);
    return ex;
}

CLI::App* add_export(CLI::App& cli, ExportOptions& export_options, const CLI::Validator& not_empty,
                     std::string& memory_budget) {
    CLI::App* exp = cli.add_subcommand("export", "A matrix (numbers or heatmap), a view or the trace, as a file");
    exp->add_option("session", export_options.session, "The session file (or --attentions FILE for html)");
    exp->add_option("--attentions", export_options.attentions,
                    "html: attention weights from a tensor file (.npz, .safetensors, .npy) instead of a session")
        ->check(not_empty);
    exp->add_option("--tokens-file", export_options.tokens_file,
                    "With --attentions: the tokens, a JSON list or {\"queries\": [...], \"keys\": [...]}")
        ->check(not_empty);
    exp->add_option("--matrix", export_options.matrix, "NAME[:HEAD], e.g. weights:1, X, output (head from 1)");
    exp->add_option("--view", export_options.view, "heads or pipeline (png, svg); head or model (png, svg, html)");
    exp->add_option("--head-select", export_options.head_select,
                    "--view head (png, svg): selected tokens, query rows from 0, k and a column for keys: 0,2,k5");
    exp->add_option("--layer", export_options.layer, "--view head with --attentions: the layer (from 0)")
        ->check(CLI::NonNegativeNumber);
    exp->add_flag("--hide-special", export_options.hide_special,
                  "--view head (png, svg): leave special tokens ([CLS], <s>, ...) out, each row renormalised");
    exp->add_flag("--mean-heads", export_options.mean_heads,
                  "--view head (png, svg): the lines of the mean of the heads instead of each head's");
    exp->add_option("--sort-heads", export_options.sort_heads,
                    "--view model (png, svg): each layer's heads by entropy, distance, first or diagonal");
    exp->add_option("--format", export_options.format,
                    "csv, tsv, npy, latex, png, svg, json (the whole trace) or html (the interactive page)")
        ->required();
    exp->add_option("-o,--output", export_options.out_path, "Where to write (atomically)")
        ->required()
        ->check(not_empty);
    exp->add_option("--precision", export_options.style.digits,
                    "Significant digits, 1 to 17 (default, or 0: exact for csv/tsv, 4 for latex, 3 in figures)");
    exp->add_option("--scale", export_options.style.scale, "png: pixels per figure unit (default 1; 2 for print)")
        ->each([&export_options](const std::string&) { export_options.scale_given = true; });
    exp->add_option("--colors", export_options.colors, "fixed, auto, percentile or log (default as in the app)");
    exp->add_option("--size", export_options.size, "--view: WxH to fit the figure into (scaled up or down to fill it)");
    exp->add_flag_callback(
        "--no-numbers", [&export_options] { export_options.style.numbers = false; }, "Figures: colours only");
    exp->add_flag_callback(
        "--no-labels", [&export_options] { export_options.style.labels = false; }, "Figures: no token labels");
    exp->add_flag_callback(
        "--no-legend", [&export_options] { export_options.style.legend = false; }, "Figures: no colour legend");
    add_memory_budget(memory_budget, exp);
    return exp;
}

CLI::App* add_flash(CLI::App& cli, FlashOptions& flash, const CLI::Validator& not_empty, std::string& memory_budget) {
    CLI::App* fl = cli.add_subcommand(
        "flash", "FlashAttention's online softmax step by step on a head: tiles, running max and sum, O = Z, as JSON");
    fl->add_option("session", flash.session, "The session file")->required();
    fl->add_option("--block-rows", flash.block_rows, "B_r: query rows a tile")->required();
    fl->add_option("--block-cols", flash.block_cols, "B_c: keys a tile")->required();
    fl->add_option("--head", flash.head, "The head (from 1; default 1)");
    fl->add_option("-o,--output", flash.out_path, "Where to write (default: stdout)")->check(not_empty);
    add_memory_budget(memory_budget, fl);
    return fl;
}

CLI::App* add_recover(CLI::App& cli, RecoverOptions& recover_options, const CLI::Validator& not_empty) {
    CLI::App* recover = cli.add_subcommand("recover", "Unsaved work of an attnviz that ended without saving");
    recover->add_option("-o,--output", recover_options.out_path, "Write the newest autosave's session here")
        ->check(not_empty);
    recover->add_option("--id", recover_options.id, "Which autosave (an id from the list)");
    recover->add_flag("--discard", recover_options.discard,
                      "Remove the autosave after writing it (or every one listed)");
    recover->add_option("--dir", recover_options.dir, "The state directory (default $XDG_STATE_HOME/attnviz)");
    return recover;
}

CLI::App* add_bench(CLI::App& cli, BenchOptions& bench, std::string& memory_budget) {
    CLI::App* be = cli.add_subcommand(
        "bench", "Time the full trace on random weights (and one GEMM beside it), or a model's forward pass");
    be->add_option("--n", bench.n, "Tokens (default 512)");
    be->add_option("--d-model", bench.d_model, "Embedding size (default 768)");
    be->add_option("--heads", bench.heads, "Heads (default 12)");
    be->add_option("--d-k", bench.d_k, "Query/key size per head (default d_model/heads)");
    be->add_option("--d-v", bench.d_v, "Value size per head (default d_model/heads)");
    be->add_option("--dtype", bench.dtype, "float or double (default float)");
    be->add_option("--reps", bench.reps, "Timed runs after one warm-up (default 10)")->check(CLI::Range(1, 100000));
    be->add_option("--threads", bench.threads, "Threads (default: every core)")->check(CLI::Range(1, 1024));
    be->add_flag("--json", bench.json, "Print one JSON object instead of the table");
    be->add_option("--model", bench.model,
                   "A model folder: time its whole forward pass on --n random token ids instead (with the "
                   "last position's logits)");
    be->add_flag("--backward", bench.backward,
                 "With --model: time the whole backward pass too (a logit difference, every weight's gradient)");
    be->add_flag("--gemm", bench.gemm,
                 "Time the matrix products alone at a layer's shapes, float and double, in GFLOP/s, with the "
                 "kernel used");
    add_memory_budget(memory_budget, be);
    return be;
}

CLI::App* add_tokenize(CLI::App& cli, TokenizeOptions& tokenize, const CLI::Validator& not_empty) {
    CLI::App* tok = cli.add_subcommand("tokenize", "A text's token ids and pieces as JSON, from a model's tokenizer");
    tok->add_option("model", tokenize.model,
                    "A model folder or a tokenizer file (tokenizer.json, vocab.json, "
                    "merges.txt, vocab.txt, tokenizer.model)")
        ->required()
        ->check(not_empty);
    tok->add_option("--text", tokenize.text, "The text (UTF-8)")->required();
    tok->add_flag("--no-special", tokenize.no_special, "Leave out the special tokens ([CLS] ... [SEP], <s>)");
    return tok;
}

// A model folder and its tokens: the folder (positional), --text or --token-ids.
void add_model_and_tokens(CLI::App* app, ForwardOptions& run, const CLI::Validator& not_empty) {
    app->add_option("model", run.model, "A model folder (config.json, model.safetensors or shards, a tokenizer)")
        ->required()
        ->check(not_empty);
    CLI::Option* text = app->add_option("--text", run.text, "The text (UTF-8), tokenized by the model's tokenizer");
    app->add_option("--token-ids", run.token_ids, "The token ids instead of a text, e.g. 1,2,3")
        ->check(not_empty)
        ->excludes(text);
}

CLI::App* add_forward(CLI::App& cli, ForwardOptions& forward, const CLI::Validator& not_empty,
                      std::string& memory_budget) {
    CLI::App* fwd = cli.add_subcommand("forward",
                                       "A model folder's whole forward pass on a text: every layer's "
                                       "attention, the hidden state and the next token, as JSON");
    add_model_and_tokens(fwd, forward, not_empty);
    fwd->add_option("--dtype", forward.dtype, "float or double (default float)");
    fwd->add_option("--top", forward.top, "How many of the most likely next tokens (default 10)")
        ->check(CLI::Range(0, 1000000));
    fwd->add_option("-o,--output", forward.out_path, "Where to write the JSON (atomically)")
        ->required()
        ->check(not_empty);
    add_memory_budget(memory_budget, fwd);
    return fwd;
}

CLI::App* add_grad(CLI::App& cli, GradOptions& grad, const CLI::Validator& not_empty, std::string& memory_budget) {
    CLI::App* g = cli.add_subcommand("grad",
                                     "The gradient of a causal model's logit, logit difference or mean next-token "
                                     "loss with respect to every weight, as a safetensors file");
    add_model_and_tokens(g, grad.run, not_empty);
    g->add_option("--target", grad.target,
                  "ID or TOKEN: the objective is its logit at the last position (without: the mean next-token "
                  "loss)")
        ->check(not_empty);
    g->add_option("--versus", grad.versus, "ID or TOKEN: the objective is logit[target] minus its logit")
        ->check(not_empty);
    g->add_option("--dtype", grad.run.dtype, "float or double (default float)");
    g->add_option("-o,--output", grad.run.out_path, "Where to write the gradients (.safetensors, atomically)")
        ->required()
        ->check(not_empty);
    add_memory_budget(memory_budget, g);
    return g;
}

CLI::App* add_attribute(CLI::App& cli, AttributeOptions& attribute, const CLI::Validator& not_empty,
                        std::string& memory_budget) {
    GradOptions& g = attribute.objective;
    CLI::App* a = cli.add_subcommand("attribute",
                                     "Why a causal model predicts a token: grad x input, integrated gradients, "
                                     "attention x gradient and direct logit attribution, as JSON");
    add_model_and_tokens(a, g.run, not_empty);
    a->add_option("--target", g.target, "ID or TOKEN: the objective is its logit at the last position")
        ->required()
        ->check(not_empty);
    a->add_option("--versus", g.versus, "ID or TOKEN: the objective is logit[target] minus its logit")
        ->check(not_empty);
    a->add_option("--steps", attribute.steps, "Integrated gradients' points (default 64)")->check(CLI::Range(1, 4096));
    a->add_option("--dtype", g.run.dtype, "float or double (default float)");
    a->add_option("-o,--output", g.run.out_path, "Where to write the JSON (atomically)")->required()->check(not_empty);
    add_memory_budget(memory_budget, a);
    return a;
}

CLI::App* add_patch(CLI::App& cli, PatchOptions& patch, const CLI::Validator& not_empty, std::string& memory_budget) {
    GradOptions& g = patch.objective;
    CLI::App* p = cli.add_subcommand("patch",
                                     "Activation patching between a clean and a corrupted sentence: which heads, "
                                     "weights and positions restore the clean prediction, as JSON");
    p->add_option("model", g.run.model, "A model folder (config.json, model.safetensors or shards, a tokenizer)")
        ->required()
        ->check(not_empty);
    CLI::Option* clean = p->add_option("--clean", g.run.text, "The clean text (UTF-8)");
    p->add_option("--clean-token-ids", g.run.token_ids, "The clean token ids instead, e.g. 1,2,3")
        ->check(not_empty)
        ->excludes(clean);
    CLI::Option* corrupt = p->add_option("--corrupt", patch.corrupt, "The corrupted text, as many tokens as the clean");
    p->add_option("--corrupt-token-ids", patch.corrupt_token_ids, "The corrupted token ids instead")
        ->check(not_empty)
        ->excludes(corrupt);
    p->add_option("--target", g.target, "ID or TOKEN: diff = logit[target] - logit[versus] at the last position")
        ->required()
        ->check(not_empty);
    p->add_option("--versus", g.versus, "ID or TOKEN (without: diff = logit[target])")->check(not_empty);
    p->add_option("--dtype", g.run.dtype, "float or double (default float)");
    p->add_option("-o,--output", g.run.out_path, "Where to write the JSON (atomically)")->required()->check(not_empty);
    add_memory_budget(memory_budget, p);
    return p;
}

CLI::App* add_heads(CLI::App& cli, HeadsOptions& heads, const CLI::Validator& not_empty, std::string& memory_budget) {
    CLI::App* h = cli.add_subcommand("heads",
                                     "Head detectors over a whole model: previous-token, induction, duplicate-token, "
                                     "sink, diagonal and copying scores of every head, ranked, as JSON");
    h->add_option("model", heads.model, "A model folder (config.json, model.safetensors or shards, a tokenizer)")
        ->required()
        ->check(not_empty);
    h->add_option("--seed", heads.seed, "The probe's seed: 2 x 50 random tokens, repeated (default 1)");
    h->add_option("-o,--output", heads.out_path, "Where to write the JSON (atomically)")->required()->check(not_empty);
    add_memory_budget(memory_budget, h);
    return h;
}

// A model named as on the hub (gpt2, EleutherAI/pythia-160m) that is no path here: its folder in
// the local Hugging Face hub cache. False, the problem written, when it is not there.
bool find_in_hub_cache(std::string* argument) {
    if (!argument || argument->empty()) return true;
    namespace model = attnviz::model;
    const attnviz::core::Result<std::string> found =
        model::resolve_model_argument(*argument, model::HubEnvironment::from_process());
    if (!found) {
        for (const attnviz::core::Problem& p : found.problems) std::cerr << "error: " << p.str() << "\n";
        return false;
    }
    *argument = *found.value;
    return true;
}

}  // namespace
}  // namespace attnviz::app

int main(int argc, char** argv) {
    using namespace attnviz::app;
    // A model's run frees and allocates its layers' matrices (tens of MB each) again on every
    // recompute: freed memory is kept for the next one, up to glibc's largest mmap threshold (32 MB
    // a block) and 1 GiB free at the heap's top, instead of going back to the system and being
    // page-faulted in (and zeroed) again.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    CLI::App cli{
        "attnviz: explore multi-head scaled dot-product attention by editing it.\n"
        "Without a command, opens the explorer on SESSION (or the worked example)."};
    cli.require_subcommand(0, 1);
    // Usage errors read as every other error of attnviz: "error: <problem>" (exit 2, below).
    cli.failure_message(
        [](const CLI::App* app, const CLI::Error& e) { return "error: " + CLI::FailureMessage::simple(app, e); });
    // A path or value given as "" is refused, never taken as "not given" (stdout, no gradient).
    const CLI::Validator not_empty([](std::string& text) { return text.empty() ? "the value is empty" : ""; }, "");

    GuiOptions gui;
    add_gui_options(cli, gui);
    bool version = false;
    cli.add_flag("--version", version, "Print attnviz's version and the kernel its matrix products run on, exit");
    std::string memory_budget;
    add_memory_budget(memory_budget, &cli);
    ComputeArgs compute_args;
    CLI::App* compute = add_compute(cli, compute_args, not_empty, memory_budget);
    AnalyzeArgs analyze_args;
    CLI::App* analyze = add_analyze(cli, analyze_args, not_empty, memory_budget);
    ImportCommandOptions import_options;
    CLI::App* import = add_import(cli, import_options, not_empty);
    ExampleOptions example;
    CLI::App* ex = add_example(cli, example, not_empty);
    ExportOptions export_options;
    CLI::App* exp = add_export(cli, export_options, not_empty, memory_budget);
    RecoverOptions recover_options;
    CLI::App* recover = add_recover(cli, recover_options, not_empty);
    BenchOptions bench;
    CLI::App* be = add_bench(cli, bench, memory_budget);
    TokenizeOptions tokenize;
    CLI::App* tok = add_tokenize(cli, tokenize, not_empty);
    ForwardOptions forward;
    CLI::App* fwd = add_forward(cli, forward, not_empty, memory_budget);
    FlashOptions flash;
    CLI::App* fl = add_flash(cli, flash, not_empty, memory_budget);
    GradOptions grad;
    CLI::App* gr = add_grad(cli, grad, not_empty, memory_budget);
    AttributeOptions attribute;
    CLI::App* at = add_attribute(cli, attribute, not_empty, memory_budget);
    PatchOptions patch;
    CLI::App* pa = add_patch(cli, patch, not_empty, memory_budget);
    HeadsOptions heads;
    CLI::App* hd = add_heads(cli, heads, not_empty, memory_budget);

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help is a "parse error" with exit code 0; every real usage error exits with 2.
        return cli.exit(e) == 0 ? exit_ok : exit_invalid;
    }
    // ATTNVIZ_KERNEL=generic|avx2|avx512 forces the products' kernel; one this CPU lacks is refused.
    if (const std::string why = attnviz::core::gemm::choose(std::getenv("ATTNVIZ_KERNEL")); !why.empty()) {
        std::cerr << "error: " << why << "\n";
        return exit_invalid;
    }
    if (version) {
        const attnviz::core::gemm::Kernel kernel = attnviz::core::gemm::kernel();
        std::cout << "attnviz " << ATTNVIZ_VERSION << "\nkernel: " << attnviz::core::gemm::name(kernel) << " ("
                  << attnviz::core::gemm::description(kernel) << ")\n";
        return exit_ok;
    }
    std::int64_t budget = attnviz::core::default_memory_budget;
    if (!memory_budget.empty()) {
        const attnviz::core::Result<std::int64_t> parsed = attnviz::core::parse_byte_size(memory_budget);
        if (!parsed) {
            std::cerr << "error: --memory-budget: " << parsed.problems.front().message << "\n";
            return exit_invalid;
        }
        budget = *parsed.value;
    }
    gui.memory_budget = bench.memory_budget = export_options.memory_budget = forward.memory_budget =
        flash.memory_budget = grad.run.memory_budget = attribute.objective.run.memory_budget =
            patch.objective.run.memory_budget = heads.memory_budget = budget;
    std::string* const model_argument = fwd->parsed()                   ? &forward.model
                                        : gr->parsed()                  ? &grad.run.model
                                        : at->parsed()                  ? &attribute.objective.run.model
                                        : pa->parsed()                  ? &patch.objective.run.model
                                        : hd->parsed()                  ? &heads.model
                                        : tok->parsed()                 ? &tokenize.model
                                        : analyze->parsed()             ? &analyze_args.session
                                        : be->parsed()                  ? &bench.model
                                        : import->parsed()              ? &import_options.checkpoint
                                        : cli.get_subcommands().empty() ? &gui.model
                                                                        : nullptr;
    if (!find_in_hub_cache(model_argument)) return exit_io;
    // The commands report their own failures; this is the last line of defence, so that running
    // out of memory anywhere is an error message and exit code 1, never an abort.
    try {
        if (compute->parsed())
            return compute_command(compute_args.session, compute_args.out, budget, compute_args.grad);
        if (analyze->parsed()) return run_analyze(analyze_args, budget);
        if (ex->parsed()) return example_command(example);
        if (import->parsed()) return import_command(import_options);
        if (be->parsed()) return bench_command(bench);
        if (tok->parsed()) return tokenize_command(tokenize);
        if (fwd->parsed()) return forward_command(forward);
        if (gr->parsed()) return grad_command(grad);
        if (at->parsed()) return attribute_command(attribute);
        if (pa->parsed()) return patch_command(patch);
        if (hd->parsed()) return heads_command(heads);
        if (fl->parsed()) return flash_command(flash);
        if (recover->parsed()) return recover_command(recover_options);
        if (exp->parsed()) return export_command(export_options);
        return run_gui(gui);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
    }
    return exit_io;
}
