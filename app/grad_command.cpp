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

// A number in its shortest exact form.
std::string shortest(double value) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return std::string(text, end);
}

template <class Scalar>
int write_gradients(const GradOptions& o, const model::ModelFolder& m, const model::RunState<Scalar>& state,
                    const model::Tokenizer* tokenizer) {
    const core::Result<model::Objective> chosen = objective_of(o.target, o.versus, tokenizer);
    if (!chosen) return refuse(chosen.problems);
    const model::Objective& objective = *chosen.value;
    const core::Result<model::ModelGradients<Scalar>> g = model::model_gradients<Scalar>(m, state, objective);
    if (!g) return refuse(g.problems);
    std::vector<core::TensorToWrite> tensors;
    for (const auto& [name, d] : g.value->weights.values()) {
        core::TensorToWrite t{name, m.weights().find(name)->shape};
        if constexpr (sizeof(Scalar) == 4)
            t.floats = d.data();
        else
            t.doubles = d.data();
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

core::Result<model::Objective> objective_of(const std::string& target, const std::string& versus,
                                            const model::Tokenizer* tokenizer) {
    using R = core::Result<model::Objective>;
    model::Objective objective;
    objective.kind = model::Objective::Kind::mean_loss;
    if (target.empty()) return R::ok(objective);
    const core::Result<std::int32_t> t = model::find_token(tokenizer, target, "--target");
    if (!t) return R::fail(t.problems);
    objective.kind = model::Objective::Kind::logit;
    objective.target = *t.value;
    if (versus.empty()) return R::ok(objective);
    const core::Result<std::int32_t> v = model::find_token(tokenizer, versus, "--versus");
    if (!v) return R::fail(v.problems);
    objective.kind = model::Objective::Kind::difference;
    objective.versus = *v.value;
    return R::ok(objective);
}

int refuse(const core::Problems& problems) {
    for (const core::Problem& p : problems) std::cerr << "error: " << core::printable(p.str()) << "\n";
    return exit_invalid;
}

int grad_command(const GradOptions& o) {
    if (!dtype_valid(o.run.dtype)) return exit_invalid;
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
