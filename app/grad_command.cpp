#include "grad_command.hpp"

#include <charconv>
#include <iostream>
#include <map>
#include <vector>

#include "cli_output.hpp"
#include "core/base/format.hpp"
#include "core/io/tensors_write.hpp"
#include "core/model/backward.hpp"

namespace attnviz::app {

namespace {

// A token given as its id or its text: digits are an id; else a piece of the vocabulary as it is
// ("Ġworld"), else a text the tokenizer makes one token of (" world"). The problem says which.
core::Result<std::int32_t> token_of(const std::string& given, const char* option, const model::Tokenizer* tokenizer,
                                    int vocab_size) {
    using R = core::Result<std::int32_t>;
    std::int32_t id = 0;
    const auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), id);
    if (!given.empty() && ec == std::errc{} && end == given.data() + given.size()) return R::ok(id);
    const std::string where = std::string(option) + " \"" + core::printable(given) + "\"";
    if (!tokenizer) return R::fail({{"", where + ": without a tokenizer a token is given by its id"}});
    for (std::int32_t v = 0; v < vocab_size; ++v)
        if (tokenizer->token_text(v) == given) return R::ok(v);
    const core::Result<model::Encoding> e = tokenizer->encode(given, false);
    if (e && e.value->ids.size() == 1) return R::ok(e.value->ids[0]);
    const std::size_t count = e ? e.value->ids.size() : 0;
    return R::fail({{"", where + " is " + std::to_string(count) +
                             " tokens, not one: give a single token (its vocabulary piece or its id)"}});
}

// Each problem as "error: problem"; exit_invalid.
int refuse(const core::Problems& problems) {
    for (const core::Problem& p : problems) std::cerr << "error: " << core::printable(p.str()) << "\n";
    return exit_invalid;
}

// A number in its shortest exact form.
std::string shortest(double value) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return std::string(text, end);
}

template <class Scalar>
int write_gradients(const GradOptions& o, const model::ModelFolder& m, const model::RunState<Scalar>& state,
                    const model::Tokenizer* tokenizer) {
    model::Objective objective;
    objective.kind = model::Objective::Kind::mean_loss;
    if (!o.target.empty()) {
        const core::Result<std::int32_t> target = token_of(o.target, "--target", tokenizer, m.config().vocab_size);
        if (!target) return refuse(target.problems);
        objective.kind = model::Objective::Kind::logit;
        objective.target = *target.value;
        if (!o.versus.empty()) {
            const core::Result<std::int32_t> versus = token_of(o.versus, "--versus", tokenizer, m.config().vocab_size);
            if (!versus) return refuse(versus.problems);
            objective.kind = model::Objective::Kind::difference;
            objective.versus = *versus.value;
        }
    }
    const core::Result<model::ModelGradients<Scalar>> g = model::model_gradients<Scalar>(m, state, objective);
    if (!g) return refuse(g.problems);
    std::vector<core::TensorToWrite> tensors;
    for (const auto& [name, d] : g.value->weights) {
        core::TensorToWrite t{name, m.weights().find(name)->shape};
        if constexpr (sizeof(Scalar) == 4) t.floats = d.data(); else t.doubles = d.data();
        tensors.push_back(std::move(t));
    }
    std::string ids;
    for (const std::int32_t id : state.token_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    const char* kinds[] = {"logit", "difference", "mean_loss"};
    const std::map<std::string, std::string> metadata = {
        {"format", "attnviz-gradients"},
        {"objective", shortest(g.value->value)},
        {"objective_kind", kinds[static_cast<int>(objective.kind)]},
        {"description", model::describe(objective)},
        {"target", objective.kind == model::Objective::Kind::mean_loss ? "" : std::to_string(objective.target)},
        {"versus", objective.kind == model::Objective::Kind::difference ? std::to_string(objective.versus) : ""},
        {"token_ids", ids},
        {"dtype", sizeof(Scalar) == 4 ? "float" : "double"}};
    const core::Problems written = core::write_safetensors(o.run.out_path, tensors, metadata);
    if (!written.empty()) return refuse(written), exit_io;
    return exit_ok;
}

}  // namespace

int grad_command(const GradOptions& o) {
    if (o.run.dtype != "float" && o.run.dtype != "double") {
        std::cerr << "error: --dtype: expected float or double, got \"" << o.run.dtype << "\"\n";
        return exit_invalid;
    }
    if (!o.versus.empty() && o.target.empty()) {
        std::cerr << "error: --versus needs --target (the objective is logit[target] − logit[versus])\n";
        return exit_invalid;
    }
    const auto use = [&o](const auto& m, auto& state, const auto&, const model::Tokenizer* tokenizer) {
        return write_gradients(o, m, state, tokenizer);
    };
    if (o.run.dtype == "float") return with_model_run<float>(o.run, use);
    return with_model_run<double>(o.run, use);
}

}  // namespace attnviz::app
