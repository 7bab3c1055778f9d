#include "analyze_command.hpp"

#include <iostream>
#include <new>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "commands.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/head_analysis.hpp"
#include "core/base/format.hpp"

namespace attnviz::app {

namespace {

using Json = nlohmann::ordered_json;

Json rows(const core::Matrix& m) {
    Json out = Json::array();
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        Json row = Json::array();
        for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
        out.push_back(std::move(row));
    }
    return out;
}

Json values(const Eigen::VectorXd& v) { return Json(std::vector<double>(v.data(), v.data() + v.size())); }

// One head's analyses, as analyze_command's comment lists them.
Json head_json(const core::Config& c, const core::Params& p, const core::Trace& t, int head) {
    Json out;
    out["norm_weighted"] = rows(core::norm_weighted(c, p, t, head));
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
        for (const core::Matrix& pair : split.pairs) pairs.push_back(rows(pair));
        out["rope_pairs"] = std::move(pairs);
        out["rope_rest"] = rows(split.rest);
    }
    return out;
}

}  // namespace

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
