#include "tokenize_command.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "core/model/tokenizer.hpp"

namespace attnviz::app {

int tokenize_command(const TokenizeOptions& options) {
    bool unreadable = false;
    const core::Result<model::Tokenizer> tokenizer = model::load_tokenizer(options.model, &unreadable);
    if (!tokenizer) {
        for (const core::Problem& p : tokenizer.problems) std::cerr << "error: " << p.str() << "\n";
        return unreadable ? exit_io : exit_invalid;
    }
    const core::Result<model::Encoding> encoding = tokenizer.value->encode(options.text, !options.no_special);
    if (!encoding) {
        std::cerr << "error: --text: " << encoding.problems.front().str() << "\n";
        return exit_invalid;
    }
    const nlohmann::json out = {{"ids", encoding.value->ids}, {"tokens", encoding.value->tokens}};
    // A piece that is not UTF-8 (a byte of a split character) is written with U+FFFD in its place.
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return std::cout.flush() ? exit_ok : exit_io;
}

}  // namespace attnviz::app
