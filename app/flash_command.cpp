#include "flash_command.hpp"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/attention/online_softmax.hpp"
#include "core/base/format.hpp"

namespace attnviz::app {

namespace {

nlohmann::json values(const std::vector<double>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (double x : v) out.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
    return out;
}

}  // namespace

int flash_command(const FlashOptions& o) {
    core::Session session;
    if (const int code = read_session(o.session, o.memory_budget, session); code != exit_ok) return code;
    const core::Trace trace = core::forward<double>(session.config, session.params);
    const core::Result<core::OnlineSoftmaxRun> run = core::online_softmax(trace, o.head - 1, o.block_rows,
                                                                          o.block_cols);
    if (!run) {
        const core::Problem& p = run.problems.front();
        const std::string option = p.path == "head"         ? "--head"
                                   : p.path == "block_rows" ? "--block-rows"
                                                            : "--block-cols";
        std::cerr << "error: " << option << ": " << core::printable(p.message) << "\n";
        return exit_invalid;
    }
    nlohmann::ordered_json out;
    out["format"] = "attnviz-flash";
    out["head"] = o.head;
    out["block_rows"] = o.block_rows;
    out["block_cols"] = o.block_cols;
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const core::OnlineSoftmaxStep& s : run.value->steps) {
        nlohmann::ordered_json step;
        step["rows"] = {s.row_begin, s.row_end};
        step["cols"] = {s.col_begin, s.col_end};
        step["m"] = values(s.m);
        step["l"] = values(s.l);
        steps.push_back(std::move(step));
    }
    out["steps"] = std::move(steps);
    out["O"] = matrix_rows(run.value->O);
    out["max_difference_from_Z"] = run.value->max_difference;
    out["accesses"]["standard_nn"] = run.value->standard_nn_accesses;
    out["accesses"]["standard_kv"] = run.value->standard_kv_reads;
    out["accesses"]["tiled_kv"] = run.value->tiled_kv_reads;
    return write_output(out.dump(1) + "\n", o.out_path);
}

}  // namespace attnviz::app
