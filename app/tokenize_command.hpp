// attnviz tokenize: a text's token ids and pieces as a model's tokenizer gives them.
#pragma once

#include <string>

namespace attnviz::app {

struct TokenizeOptions {
    std::string model;  // a model folder or a tokenizer file (core/model/tokenizer.hpp)
    std::string text;
    bool no_special = false;  // leave out the special tokens the tokenizer adds by default
};

// Prints one JSON object on stdout: {"ids": [...], "tokens": [...]}. Exit 2 with "error: …" for a
// tokenizer that is refused or text it cannot take, 1 for a file that cannot be read.
int tokenize_command(const TokenizeOptions& options);

}  // namespace attnviz::app
