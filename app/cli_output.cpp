#include "cli_output.hpp"

#include <iostream>

#include "core/base/format.hpp"
#include "core/io/session_file.hpp"

namespace attnviz::app {

// Prints each problem as "error: <path>: <message>" (a problem about the whole document is given
// the file's path), the first max_reported_problems of them and then how many more there are, with
// the files' names and text escaped (core::printable).
void report(const core::Problems& problems, const std::string& file) {
    size_t shown = 0;
    for (const core::Problem& p : problems) {
        if (shown == core::max_reported_problems || core::more_problems_count(p)) break;
        std::cerr << "error: " << core::printable(p.path.empty() ? file + ": " + p.message : p.str()) << "\n";
        ++shown;
    }
    if (const size_t total = core::problem_count(problems); total > shown)
        std::cerr << "error: " << core::printable(file) << ": " << core::more_problems_message(total - shown) << "\n";
}

nlohmann::ordered_json matrix_rows(const core::Matrix& m) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
        out.push_back(std::move(row));
    }
    return out;
}

// A note on stderr, escaped as report() escapes.
void note(const std::string& text) { std::cerr << "note: " << core::printable(text) << "\n"; }

// Writes produced text to out_path (atomically), or to stdout for "" and "-".
int write_output(const core::TextProducer& produce, const std::string& out_path) {
    if (out_path.empty() || out_path == "-") {
        produce([](std::string_view piece) { return static_cast<bool>(std::cout.write(piece.data(), piece.size())); });
        std::cout.flush();
        if (std::cout) return exit_ok;
        std::cerr << "error: cannot write to standard output\n";
        return exit_io;
    }
    const core::Problems problems = core::write_file_atomic(out_path, produce);
    report(problems, out_path);
    return problems.empty() ? exit_ok : exit_io;
}

int write_output(const std::string& text, const std::string& out_path) {
    return write_output([&text](const core::TextSink& sink) { sink(text); }, out_path);
}

bool dtype_valid(const std::string& dtype) {
    if (dtype == "float" || dtype == "double") return true;
    std::cerr << "error: --dtype: expected float or double, got \"" << dtype << "\"\n";
    return false;
}

int read_session(const std::string& path, std::int64_t memory_budget, core::Session& session) {
    if (path.empty()) {
        std::cerr << "error: no session file given (the path is empty)\n";
        return exit_invalid;
    }
    core::Result<std::string> text = core::read_file(path);
    if (!text) {
        report(text.problems, path);
        return exit_io;
    }
    core::Result<core::Session> parsed = core::parse_session(*text.value);
    text = {};  // the file's text is not needed past here
    if (!parsed) {
        report(parsed.problems, path);
        return exit_invalid;
    }
    if (const auto problem = core::memory_problem(parsed.value->config, memory_budget)) {
        report({*problem}, path);
        return exit_invalid;
    }
    session = std::move(*parsed.value);
    return exit_ok;
}

}  // namespace attnviz::app
