#include "attribute_command.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/model/attribution.hpp"

namespace attnviz::app {

namespace {

using Json = nlohmann::ordered_json;

template <class Scalar>
Json attribution_json(const model::ModelFolder& m, const model::RunState<Scalar>& s, const model::Attribution& a,
                      const std::function<std::string(std::int32_t)>& token_text) {
    Json out;
    out["format"] = "attnviz-attribution";
    out["model_type"] = model::to_string(m.config().architecture);
    out["dtype"] = sizeof(Scalar) == 4 ? "float" : "double";
    out["token_ids"] = s.token_ids;
    out["tokens"] = s.tokens;
    out["target"] = {{"id", a.objective.target}, {"token", token_text(a.objective.target)}};
    out["versus"] = a.objective.kind == model::Objective::Kind::difference
                        ? Json{{"id", a.objective.versus}, {"token", token_text(a.objective.versus)}}
                        : Json(nullptr);
    out["objective"] = a.value;
    out["steps"] = a.steps;
    out["grad_x_input"] = a.grad_x_input;
    out["integrated_gradients"] = a.integrated_gradients;
    out["integrated_gradients_sum"] = a.integrated_sum;
    out["baseline_objective"] = a.baseline_value;
    Json layers = Json::array();
    for (const std::vector<core::Matrix>& heads : a.attention_x_gradient) {
        Json layer = Json::array();
        for (const core::Matrix& h : heads) layer.push_back(matrix_rows(h));
        layers.push_back(std::move(layer));
    }
    out["attention_x_gradient"] = std::move(layers);
    out["dla_heads"] = matrix_rows(a.dla_heads);
    out["dla_mlps"] = a.dla_mlps;
    out["dla_embeddings"] = a.dla_embeddings;
    out["dla_bias"] = a.dla_bias;
    out["dla_objective"] = a.dla_objective;
    out["dla_sum"] = a.dla_sum;
    out["dla_residual"] = a.dla_residual;
    return out;
}

}  // namespace

int attribute_command(const AttributeOptions& o) {
    const GradOptions& g = o.objective;
    if (!dtype_valid(g.run.dtype)) return exit_invalid;
    if (g.target.empty()) {
        std::cerr << "error: --target is required: attribution is of a token's logit at the last position\n";
        return exit_invalid;
    }
    const auto use = [&](const model::ModelFolder& m, auto& state, const std::function<std::string(std::int32_t)>& text,
                         const model::Tokenizer* tokenizer) {
        const core::Result<model::Objective> objective = objective_of(g.target, g.versus, tokenizer);
        if (!objective) return refuse(objective.problems);
        const core::Result<model::Attribution> a = model::attribute(m, state, *objective.value, o.steps);
        if (!a) return refuse(a.problems);
        const std::string text_out =
            attribution_json(m, state, *a.value, text).dump(-1, ' ', false, Json::error_handler_t::replace);
        return write_output(text_out + "\n", g.run.out_path);
    };
    if (g.run.dtype == "float") return with_model_run<float>(g.run, use);
    return with_model_run<double>(g.run, use);
}

}  // namespace attnviz::app
