// Reading JSON without exceptions (internal to core): a malformed document, one that ends too
// early, or a number too large for a double becomes a problem naming where it is.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "problem.hpp"

namespace attnviz::core {

// The document, or one problem: "malformed JSON at line 3, column 7", "the JSON ends too early
// (truncated?) at …", or, with the field's path, "the number 1e999 is too large to represent".
Result<nlohmann::json> read_json(std::string_view text);

// A value as a message shows it: 'the text "a"', "an array", "null", "3.5".
std::string describe_json(const nlohmann::json& value);

}  // namespace attnviz::core
