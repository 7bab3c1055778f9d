#include "patch_command.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/model/patching.hpp"

namespace attnviz::app {

namespace {

using Json = nlohmann::ordered_json;

// The corrupted sentence's ids and labels, or the problems.
core::Result<model::Encoding> corrupt_tokens(const PatchOptions& o, const model::Tokenizer* tokenizer) {
    using R = core::Result<model::Encoding>;
    if (o.corrupt) {
        if (!tokenizer) return R::fail({{"--corrupt", "the model has no tokenizer: give --corrupt-token-ids"}});
        core::Result<model::Encoding> e = tokenizer->encode(*o.corrupt);
        if (!e) return R::fail({{"--corrupt", e.problems.front().str()}});
        return e;
    }
    core::Result<std::vector<std::int32_t>> ids = parse_ids(o.corrupt_token_ids);
    if (!ids) return R::fail({{"--corrupt-token-ids", ids.problems.front().str()}});
    model::Encoding e;
    e.ids = std::move(*ids.value);
    for (const std::int32_t id : e.ids) e.tokens.push_back(tokenizer ? tokenizer->token_text(id) : std::string());
    return R::ok(std::move(e));
}

template <class Scalar>
int patch_runs(const PatchOptions& o, const model::ModelFolder& m, const model::RunState<Scalar>& clean,
               const std::function<std::string(std::int32_t)>& token_text, const model::Tokenizer* tokenizer) {
    const GradOptions& g = o.objective;
    const core::Result<model::Objective> objective = objective_of(g.target, g.versus, tokenizer);
    if (!objective) return refuse(objective.problems);
    const core::Result<model::Encoding> tokens = corrupt_tokens(o, tokenizer);
    if (!tokens) return refuse(tokens.problems);
    if (core::Problems p = model::token_problems(m.config(), tokens.value->ids); !p.empty()) return refuse(p);
    const std::int64_t budget = g.run.memory_budget > 0 ? g.run.memory_budget : core::default_memory_budget;
    const core::Result<model::RunState<Scalar>> corrupt = model::run_model<Scalar>(m, tokens.value->ids,
                                                                                   tokens.value->tokens, budget);
    if (!corrupt) return refuse(corrupt.problems);
    const core::Result<model::Patching> p = model::patch(m, clean, *corrupt.value, *objective.value);
    if (!p) return refuse(p.problems);
    const model::Objective& ob = *objective.value;
    Json out;
    out["format"] = "attnviz-patching";
    out["model_type"] = model::to_string(m.config().architecture);
    out["dtype"] = sizeof(Scalar) == 4 ? "float" : "double";
    out["clean_token_ids"] = clean.token_ids;
    out["clean_tokens"] = clean.tokens;
    out["corrupt_token_ids"] = corrupt.value->token_ids;
    out["corrupt_tokens"] = corrupt.value->tokens;
    out["target"] = {{"id", ob.target}, {"token", token_text(ob.target)}};
    out["versus"] = ob.kind == model::Objective::Kind::difference
                        ? Json{{"id", ob.versus}, {"token", token_text(ob.versus)}}
                        : Json(nullptr);
    out["clean_diff"] = p.value->clean_diff;
    out["corrupt_diff"] = p.value->corrupt_diff;
    out["heads"] = matrix_rows(p.value->heads);
    out["residual"] = matrix_rows(p.value->residual);
    out["attention"] = matrix_rows(p.value->attention);
    return write_output(out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n", g.run.out_path);
}

}  // namespace

int patch_command(const PatchOptions& o) {
    const GradOptions& g = o.objective;
    if (!dtype_valid(g.run.dtype)) return exit_invalid;
    if (g.run.text.has_value() == !g.run.token_ids.empty() || o.corrupt.has_value() == !o.corrupt_token_ids.empty()) {
        std::cerr << "error: give the clean sentence as --clean TEXT or --clean-token-ids 1,2,3 and the corrupted one "
                     "as --corrupt TEXT or --corrupt-token-ids 1,2,3\n";
        return exit_invalid;
    }
    const auto use = [&](const model::ModelFolder& m, auto& clean, const std::function<std::string(std::int32_t)>& text,
                         const model::Tokenizer* tokenizer) { return patch_runs(o, m, clean, text, tokenizer); };
    if (g.run.dtype == "float") return with_model_run<float>(g.run, use);
    return with_model_run<double>(g.run, use);
}

}  // namespace attnviz::app
