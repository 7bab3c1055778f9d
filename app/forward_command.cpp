#include "forward_command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <variant>

#include "cli_output.hpp"
#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "core/io/import.hpp"
#include "core/model/analysis.hpp"
#include "core/model/runtime.hpp"
#include "core/model/tokenizer.hpp"

namespace attnviz::app {

namespace {

// Each problem as "error: WHAT: problem" ("error: problem" for WHAT ""), escaped as report() escapes
// (a problem may quote the text or a token).
void report_under(const core::Problems& problems, const std::string& what) {
    for (const core::Problem& p : problems)
        std::cerr << "error: " << core::printable((what.empty() ? "" : what + ": ") + p.str()) << "\n";
}

}  // namespace

core::Result<std::vector<std::int32_t>> parse_ids(const std::string& text) {
    using R = core::Result<std::vector<std::int32_t>>;
    std::vector<std::int32_t> ids;
    size_t from = 0;
    while (true) {
        const size_t comma = text.find(',', from);
        std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        std::int32_t id = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (item.empty() || ec != std::errc{} || end != item.data() + item.size())
            return R::fail({{"", "\"" + item + "\" is not a token id (expected ids separated by commas, e.g. 1,2,3)"}});
        ids.push_back(id);
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return R::ok(std::move(ids));
}

namespace {

// The tokens to run: ids and their labels, and the tokenizer when there is one.
struct Input {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
    std::optional<model::Tokenizer> tokenizer;
    std::string source;  // "--text" or "--token-ids", which messages about the tokens name
};

// The input of the options, or the exit code of a failure (reported).
std::variant<Input, int> read_input(const ForwardOptions& o) {
    Input in;
    bool unreadable = false;
    core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(o.model, &unreadable);
    if (tokenizer) in.tokenizer = std::move(*tokenizer.value);
    if (o.text) {
        in.source = "--text";
        if (!tokenizer) {
            report_under(tokenizer.problems, "");
            return unreadable ? exit_io : exit_invalid;
        }
        core::Result<model::Encoding> e = in.tokenizer->encode(*o.text);
        if (!e) {
            report_under(e.problems, in.source);
            return exit_invalid;
        }
        in.ids = std::move(e.value->ids);
        in.tokens = std::move(e.value->tokens);
        return in;
    }
    in.source = "--token-ids";
    core::Result<std::vector<std::int32_t>> ids = parse_ids(o.token_ids);
    if (!ids) {
        report_under(ids.problems, in.source);
        return exit_invalid;
    }
    in.ids = std::move(*ids.value);
    if (!tokenizer)
        std::cerr << "note: no tokenizer (" << tokenizer.problems.front().str()
                  << "): the tokens are labelled by their ids\n";
    for (const std::int32_t id : in.ids)
        in.tokens.push_back(in.tokenizer ? in.tokenizer->token_text(id) : std::string());
    return in;
}

// The JSON text, handed to a sink about a megabyte at a time.
class JsonOut {
public:
    explicit JsonOut(const core::TextSink& sink) : sink_(sink) {}
    ~JsonOut() { flush(); }
    JsonOut& operator<<(std::string_view text) {
        buffer_ += text;
        if (buffer_.size() > (1u << 20)) flush();
        return *this;
    }
    // Numbers in their shortest exact form in the compute type (a float as a float).
    template <class Scalar>
    JsonOut& number(Scalar v) {
        char text[32];
        const auto end = std::to_chars(text, text + sizeof text, v).ptr;
        return *this << std::string_view(text, static_cast<size_t>(end - text));
    }
    JsonOut& string(const std::string& s) {
        // A piece that is not UTF-8 (a byte of a split character) is written with U+FFFD in its place.
        return *this << nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    template <class Row>
    JsonOut& row(const Row& r) {
        *this << "[";
        for (Eigen::Index j = 0; j < r.size(); ++j) (j ? *this << ", " : *this).number(r(j));
        return *this << "]";
    }
    template <class Matrix>
    JsonOut& matrix(const Matrix& m, const char* indent) {
        *this << "[";
        for (Eigen::Index i = 0; i < m.rows(); ++i) (i ? *this << ",\n" << indent : *this).row(m.row(i));
        return *this << "]";
    }
    void flush() {
        if (!buffer_.empty() && ok_) ok_ = sink_(buffer_);
        buffer_.clear();
    }

private:
    const core::TextSink& sink_;
    std::string buffer_;
    bool ok_ = true;
};

template <class Scalar>
void write_json(const core::TextSink& sink, const model::RunState<Scalar>& s, const model::ModelConfig& c,
                const Input& in, int k) {
    JsonOut out(sink);
    out << "{\"format\": \"attnviz-forward\", \"model_type\": \"" << model::to_string(c.architecture)
        << "\", \"dtype\": \"" << (sizeof(Scalar) == 4 ? "float" : "double") << "\",\n\"token_ids\": [";
    for (size_t i = 0; i < s.token_ids.size(); ++i) (i ? out << ", " : out).number(s.token_ids[i]);
    out << "],\n\"tokens\": [";
    for (size_t i = 0; i < s.tokens.size(); ++i) (i ? out << ", " : out).string(s.tokens[i]);
    out << "],\n\"layers\": [";
    for (size_t L = 0; L < s.layers.size(); ++L) {
        out << (L ? ",\n" : "\n") << "{\"weights\": [";
        const auto& heads = s.layers[L].trace.heads;
        for (size_t h = 0; h < heads.size(); ++h) (h ? out << ",\n  " : out << "\n  ").matrix(heads[h].weights, "   ");
        out << "]}";
    }
    out << "],\n\"hidden\": ";
    out.matrix(s.hidden, " ");
    if (c.causal()) {
        out << ",\n\"logits_last\": ";
        out.row(s.logits_last);
        out << ",\n\"top\": [";
        const std::vector<model::TopToken> top = model::top_tokens(s.logits_last.template cast<double>(), k);
        for (size_t i = 0; i < top.size(); ++i) {
            const std::string token = in.tokenizer ? in.tokenizer->token_text(top[i].id)
                                                   : "#" + std::to_string(top[i].id);
            (i ? out << ",\n  " : out << "\n  ") << "{\"id\": ";
            out.number(top[i].id) << ", \"token\": ";
            out.string(token) << ", \"p\": ";
            out.number(top[i].p) << "}";
        }
        out << "]";
    }
    out << "}\n";
}

std::int64_t budget_of(const ForwardOptions& o) {
    return o.memory_budget > 0 ? o.memory_budget : core::default_memory_budget;
}

// The forward pass of the input's tokens (the first `blocks` blocks, -1: all), or nullopt after
// reporting why not.
template <class Scalar>
std::optional<model::RunState<Scalar>> run_or_report(const ForwardOptions& o, const model::ModelFolder& m,
                                                     const Input& in, int blocks = -1) {
    core::Result<model::RunState<Scalar>> state = model::run_model<Scalar>(m, in.ids, in.tokens, budget_of(o), blocks);
    if (!state) {
        report_under(state.problems, "");
        return std::nullopt;
    }
    return std::move(*state.value);
}

template <class Scalar>
int run(const ForwardOptions& o, const model::ModelFolder& m, Input in) {
    const std::optional<model::RunState<Scalar>> state = run_or_report<Scalar>(o, m, in);
    if (!state) return exit_invalid;
    const core::Problems written = core::write_file_atomic(o.out_path, [&](const core::TextSink& sink) {
        write_json(sink, *state, m.config(), in, o.top);
    });
    report_under(written, "");
    return written.empty() ? exit_ok : exit_io;
}

// The folder and the tokens to run, or the exit code of a failure (reported).
std::variant<std::pair<model::ModelFolder, Input>, int> open_and_read(const ForwardOptions& o) {
    if (o.text.has_value() == !o.token_ids.empty()) {
        std::cerr << "error: give the tokens as --text TEXT or as --token-ids 1,2,3 (one of the two)\n";
        return exit_invalid;
    }
    bool unreadable = false;
    core::Result<model::ModelFolder> m = model::ModelFolder::open(o.model, &unreadable, budget_of(o));
    if (!m) {
        report_under(m.problems, "");
        return unreadable ? exit_io : exit_invalid;
    }
    std::variant<Input, int> in = read_input(o);
    if (const int* code = std::get_if<int>(&in)) return *code;
    Input& input = std::get<Input>(in);
    if (const core::Problems p = model::token_problems(m.value->config(), input.ids); !p.empty()) {
        report_under(p, input.source);
        return exit_invalid;
    }
    return std::pair{std::move(*m.value), std::move(input)};
}

}  // namespace

int forward_command(const ForwardOptions& o) {
    if (!dtype_valid(o.dtype)) return exit_invalid;
    auto opened = open_and_read(o);
    if (const int* code = std::get_if<int>(&opened)) return *code;
    auto& [m, input] = std::get<0>(opened);
    return o.dtype == "float" ? run<float>(o, m, std::move(input)) : run<double>(o, m, std::move(input));
}

template <class Scalar>
int with_model_run(const ForwardOptions& o, const ModelRunUse<Scalar>& use) {
    auto opened = open_and_read(o);
    if (const int* code = std::get_if<int>(&opened)) return *code;
    auto& [m, input] = std::get<0>(opened);
    std::optional<model::RunState<Scalar>> state = run_or_report<Scalar>(o, m, input);
    if (!state) return exit_invalid;
    const auto token_text = [&input](std::int32_t id) {
        return input.tokenizer ? input.tokenizer->token_text(id) : "#" + std::to_string(id);
    };
    return use(m, *state, token_text, input.tokenizer ? &*input.tokenizer : nullptr);
}
template int with_model_run<float>(const ForwardOptions&, const ModelRunUse<float>&);
template int with_model_run<double>(const ForwardOptions&, const ModelRunUse<double>&);

int model_sessions(const ForwardOptions& o, const std::string& layer_spec, std::vector<int>& layers,
                   std::vector<core::Session>& sessions) {
    auto opened = open_and_read(o);
    if (const int* code = std::get_if<int>(&opened)) return *code;
    auto& [m, input] = std::get<0>(opened);
    std::vector<int> available(static_cast<size_t>(m.config().layers));
    std::iota(available.begin(), available.end(), 0);
    core::Result<std::vector<int>> chosen = core::select_layers(layer_spec, available);
    if (!chosen) {
        report_under(chosen.problems, o.model);
        return exit_invalid;
    }
    const int blocks = *std::max_element(chosen.value->begin(), chosen.value->end()) + 1;
    std::optional<model::RunState<double>> state = run_or_report<double>(o, m, input, blocks);
    if (!state) return exit_invalid;
    layers = std::move(*chosen.value);
    sessions.assign(state->layers.size(), {});
    for (const int l : layers) {
        core::Result<core::Session> session = model::layer_session(m, *state, l);
        if (!session) {
            report_under(session.problems, o.model);
            return exit_invalid;
        }
        sessions[static_cast<size_t>(l)] = std::move(*session.value);
    }
    return exit_ok;
}

}  // namespace attnviz::app
