// attnviz export: a matrix, a view as a figure, the trace, or the interactive page.
#include "commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>

#include "cli_output.hpp"
#include "core/attention/forward.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/attentions.hpp"
#include "core/io/session_file.hpp"
#include "core/render/attention_figures.hpp"
#include "core/render/attention_page.hpp"
#include "core/render/export.hpp"
#include "core/render/picture.hpp"

namespace attnviz::app {

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

}  // namespace attnviz::app
