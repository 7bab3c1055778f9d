// Text of any length from files (token labels, a lesson's texts, layer names), bounded for display.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz::core {

// The most characters of a token label written inside a sentence ("token “the” starts with …").
inline constexpr std::size_t max_label_characters = 48;

// The end (a byte offset) of the first `max` characters of UTF-8 `text`: whole sequences, a stray
// continuation byte counting as one character; text.size() when it has no more.
std::size_t characters_end(std::string_view text, std::size_t max);

// `text` cut after `max` characters, ending in "…" when cut; the text itself when it has no more.
std::string bounded_text(std::string_view text, std::size_t max);

}  // namespace attnviz::core
