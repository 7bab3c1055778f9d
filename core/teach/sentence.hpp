// Sentence sessions: a sentence typed by a learner becomes a session whose tokens are its words and
// whose X holds a row per token that depends on the word only, so a meaningful example takes
// seconds to build.
//
//   tokens: the sentence split at white space, each run of letters and digits a word (an
//           apostrophe or a hyphen between two letters stays inside: "don't", "well-known"; so
//           does a decimal point between digits: "3.14"), each run of one punctuation character a
//           token of its own ("Hi, there!" → Hi , there !; "Wait..." → Wait ...)
//   X:      n×d_model, row i from token i's text, one of
//     embedding: a word's own row, the same in every sentence and at every position: the 64-bit
//                FNV-1a hash of the lower-cased word seeds splitmix64, whose draws give the
//                d_model values, each uniform in [−1, 1] rounded to 2 decimals (as the app's fill
//                rule writes numbers); "The" and "the" share it
//     one-hot:   one column per distinct (lower-cased) word, in order of first appearance: row i is
//                e_k for token i's word k. Repeated words share their row, which shows that
//                attention without positions cannot tell two "the" apart: they ask the same query
//                and offer the same key. Needs d_model ≥ the number of distinct words.
// The other dimensions (d_model, h, d_k, d_v, the switches) and the weights are the current
// session's: only n, the tokens and X change (core::resized keeps every weight).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention/session.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

// Tokens a sentence may have: enough for a paragraph, few enough to read every row.
inline constexpr int max_sentence_tokens = 128;

enum class SentenceRows { embedding, one_hot };

// The tokens of a sentence (UTF-8), or a problem: an empty sentence, invalid UTF-8, more than
// max_sentence_tokens tokens. Letters of any script count as letters: every code point from
// U+0080 on except the punctuation and spaces listed in sentence.cpp.
Result<std::vector<std::string>> sentence_tokens(std::string_view sentence);

// The word as its embedding reads it: ASCII and Latin-1 capitals (A–Z, À–Þ but ×) lower-cased,
// every other character as written.
std::string lower_case(std::string_view word);
// A word's embedding row, 1×d_model (see above).
Matrix word_embedding(std::string_view word, int d_model);
// The distinct lower-cased words of a token list, in order of first appearance.
std::vector<std::string> distinct_words(const std::vector<std::string>& tokens);

// What stops a sentence's tokens from making a session with this config: the config with n =
// the number of tokens invalid, or one-hot rows with fewer columns than distinct words ("d_model").
// Empty when it can be made (a preview asks this without building the session).
Problems sentence_problems(const std::vector<std::string>& tokens, const Config& config, SentenceRows rows);

// The session of a sentence, from the current one's dimensions and weights (see above). Problems
// (with their field: "sentence", "config.…" or "d_model") for a sentence sentence_tokens()
// refuses, or what sentence_problems() finds.
Result<Session> sentence_session(std::string_view sentence, const Session& current, SentenceRows rows);

}  // namespace attnviz::core
