#include "analyze_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/head_analysis.hpp"
#include "core/base/format.hpp"
#include "core/model/analysis.hpp"
#include "core/model/circuits.hpp"
#include "core/model/head_effect.hpp"

namespace attnviz::app {

namespace {

using Json = nlohmann::ordered_json;

Json values(const Eigen::VectorXd& v) { return Json(std::vector<double>(v.data(), v.data() + v.size())); }

// One head's analyses, as analyze_command's comment lists them.
Json head_json(const core::Config& c, const core::Params& p, const core::Trace& t, int head) {
    Json out;
    out["norm_weighted"] = matrix_rows(core::norm_weighted(c, p, t, head));
    const core::Circuits circuits = core::circuits(c, p, head);
    out["qk_singular"] = values(circuits.qk_singular);
    if (c.output_projection) {
        out["ov_singular"] = values(circuits.ov_singular);
        Json eigen = Json::array();
        for (const std::complex<double>& l : circuits.ov_eigenvalues) eigen.push_back({l.real(), l.imag()});
        out["ov_eigenvalues"] = std::move(eigen);
        out["copying"] = circuits.copying;
    }
    out["ablation_zero"] = core::ablation_delta(c, p, t, head, core::Ablation::zero).norm();
    out["ablation_mean"] = core::ablation_delta(c, p, t, head, core::Ablation::mean).norm();
    const core::Sink sink = core::sink(t, head);
    out["sink_key"] = sink.key;
    out["sink_share"] = sink.share;
    if (c.rope.on) {
        const core::RopeSplit split = core::rope_split(c, t, head);
        Json pairs = Json::array();
        for (const core::Matrix& pair : split.pairs) pairs.push_back(matrix_rows(pair));
        out["rope_pairs"] = std::move(pairs);
        out["rope_rest"] = matrix_rows(split.rest);
    }
    return out;
}

Json top_json(const std::vector<model::TopToken>& top, const std::function<std::string(std::int32_t)>& token_text) {
    Json out = Json::array();
    for (const model::TopToken& t : top) out.push_back({{"id", t.id}, {"token", token_text(t.id)}, {"p", t.p}});
    return out;
}

// Head h of layer l zero-ablated (core/model/head_effect.hpp): the next-token distribution's change.
Json ablation_next_token(const model::ModelFolder& m, const model::RunState<double>& state, int layer, int head,
                         const std::function<std::string(std::int32_t)>& token_text) {
    const core::Result<model::HeadEffect> effect = model::head_effect(m, state, layer, head, core::Ablation::zero);
    if (!effect) return {{"problem", effect.problems.front().str()}};
    return {{"kl", effect.value->kl}, {"top", top_json(effect.value->top_after, token_text)}};
}

// How many of each ranking of the token circuits: the best pairs, keys and output tokens.
constexpr int circuit_top = 5;

Json scores_json(const std::vector<model::TokenScore>& scores,
                 const std::function<std::string(std::int32_t)>& token_text) {
    Json out = Json::array();
    for (const model::TokenScore& s : scores)
        out.push_back({{"id", s.id}, {"token", token_text(s.id)}, {"value", s.value}});
    return out;
}

// Head h's token circuits over the text's distinct tokens (core/model/circuits.hpp).
Json token_circuits_json(const model::TokenCircuits& circuits, int head,
                         const std::function<std::string(std::int32_t)>& token_text) {
    const model::HeadTokenCircuits& c = circuits.heads[static_cast<size_t>(head)];
    Json out, tokens = Json::array(), pairs = Json::array(), keys = Json::array(), outputs = Json::array();
    for (const std::int32_t id : circuits.tokens) tokens.push_back({{"id", id}, {"token", token_text(id)}});
    for (const model::TokenPair& p : c.top_pairs)
        pairs.push_back({{"query", p.query},
                         {"query_token", token_text(p.query)},
                         {"key", p.key},
                         {"key_token", token_text(p.key)},
                         {"value", p.value}});
    for (const auto& k : c.top_keys) keys.push_back(scores_json(k, token_text));
    for (const auto& o : c.top_outputs) outputs.push_back(scores_json(o, token_text));
    out["tokens"] = std::move(tokens);
    out["qk"] = matrix_rows(c.qk);
    out["top_pairs"] = std::move(pairs);
    out["top_keys"] = std::move(keys);
    out["top_outputs"] = std::move(outputs);
    return out;
}

Json position_split_json(const model::PositionSplit& s) {
    return {{"content_content", matrix_rows(s.content_content)},
            {"content_position", matrix_rows(s.content_position)},
            {"position_content", matrix_rows(s.position_content)},
            {"position_position", matrix_rows(s.position_position)},
            {"bias", matrix_rows(s.bias)}};
}

}  // namespace

int analyze_model_command(const ForwardOptions& options, const std::string& out_path) {
    return with_model_run<double>(options, [&](const model::ModelFolder& m, model::RunState<double>& state,
                                               const std::function<std::string(std::int32_t)>& token_text,
                                               const model::Tokenizer*) {
        Json out;
        out["format"] = "attnviz-analysis";
        out["model_type"] = model::to_string(m.config().architecture);
        out["tokens"] = state.tokens;
        const bool causal = state.logits_last.size() > 0;
        if (causal) out["top"] = top_json(model::top_tokens(state.logits_last, 5), token_text);
        out["layers"] = Json::array();
        for (size_t l = 0; l < state.layers.size(); ++l) {
            const core::Result<core::Session> session = model::layer_session(m, state, static_cast<int>(l));
            if (!session) {
                report(session.problems, m.folder());
                return exit_invalid;
            }
            const core::Session& s = *session.value;
            const core::Result<model::TokenCircuits> circuits = model::token_circuits(m, static_cast<int>(l),
                                                                                      state.token_ids, circuit_top);
            if (!circuits) {
                report(circuits.problems, m.folder());
                return exit_invalid;
            }
            core::Result<std::vector<model::PositionSplit>> split;
            if (l == 0 && m.config().learned_positions()) {
                split = model::position_split(m, state.token_ids);
                if (!split) {
                    report(split.problems, m.folder());
                    return exit_invalid;
                }
            }
            Json heads = Json::array();
            for (int h = 0; h < s.config.heads; ++h) {
                Json head = head_json(s.config, s.params, state.layers[l].trace, h);
                head["token_circuits"] = token_circuits_json(*circuits.value, h, token_text);
                if (split) head["position_split"] = position_split_json((*split.value)[static_cast<size_t>(h)]);
                if (causal)
                    head["ablation_next_token"] = ablation_next_token(m, state, static_cast<int>(l), h, token_text);
                heads.push_back(std::move(head));
            }
            out["layers"].push_back({{"heads", std::move(heads)}});
        }
        return write_output(out.dump() + "\n", out_path);
    });
}

int analyze_command(const std::string& session_path, const std::string& out_path, std::int64_t memory_budget) {
    try {
        core::Session s;
        if (const int code = read_session(session_path, memory_budget, s); code != exit_ok) return code;
        const core::Trace trace = core::forward<double>(s.config, s.params);
        Json out;
        out["format"] = "attnviz-analysis";
        out["heads"] = Json::array();
        for (int h = 0; h < s.config.heads; ++h) out["heads"].push_back(head_json(s.config, s.params, trace, h));
        return write_output(out.dump() + "\n", out_path);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory while analysing " << core::printable(session_path) << "\n";
        return exit_io;
    }
}

}  // namespace attnviz::app
