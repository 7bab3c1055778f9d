#include "heads_command.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/model/head_detectors.hpp"
#include "core/model/tokenizer.hpp"
#include "grad_command.hpp"

namespace attnviz::app {

namespace {

using Json = nlohmann::ordered_json;

// Every head by its score, highest first (equal scores: the earlier layer, then head).
Json ranked(const core::Matrix& m) {
    std::vector<std::pair<Eigen::Index, Eigen::Index>> heads;
    for (Eigen::Index l = 0; l < m.rows(); ++l)
        for (Eigen::Index h = 0; h < m.cols(); ++h) heads.emplace_back(l, h);
    std::stable_sort(heads.begin(), heads.end(),
                     [&](const auto& a, const auto& b) { return m(a.first, a.second) > m(b.first, b.second); });
    Json out = Json::array();
    for (const auto& [l, h] : heads) out.push_back({{"layer", l}, {"head", h}, {"score", m(l, h)}});
    return out;
}

}  // namespace

int heads_command(const HeadsOptions& o) {
    bool unreadable = false;
    const std::int64_t budget = o.memory_budget > 0 ? o.memory_budget : core::default_memory_budget;
    core::Result<model::ModelFolder> m = model::ModelFolder::open(o.model, &unreadable, budget);
    if (!m) return refuse(m.problems), unreadable ? exit_io : exit_invalid;
    const core::Result<model::HeadDetection> d = model::detect_heads(*m.value, o.seed);
    if (!d) return refuse(d.problems);
    const core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(o.model);
    Json out;
    out["format"] = "attnviz-heads";
    out["model_type"] = model::to_string(m.value->config().architecture);
    out["seed"] = o.seed;
    out["probe_token_ids"] = d.value->probe;
    Json tokens = Json::array();
    for (const std::int32_t id : d.value->probe)
        tokens.push_back(tokenizer ? tokenizer.value->token_text(id) : "#" + std::to_string(id));
    out["probe_tokens"] = std::move(tokens);
    const std::vector<std::pair<const char*, const core::Matrix*>> scores = {
        {"previous_token", &d.value->previous_token},
        {"induction", &d.value->induction},
        {"duplicate_token", &d.value->duplicate_token},
        {"sink", &d.value->sink},
        {"diagonal", &d.value->diagonal},
        {"copying", &d.value->copying}};
    for (const auto& [key, m_] : scores) {
        out["scores"][key] = matrix_rows(*m_);
        out["ranked"][key] = ranked(*m_);
    }
    return write_output(out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n", o.out_path);
}

}  // namespace attnviz::app
