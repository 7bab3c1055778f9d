// A lesson: the steps of the worked example as data (assets/lessons/*.json), so a teacher can
// edit or translate them without touching code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention/config.hpp"
#include "core/attention/explain.hpp"
#include "core/attention/session.hpp"
#include "core/base/problem.hpp"

namespace attnviz::core {

inline constexpr const char* lesson_format = "attnviz-lesson";
inline constexpr int lesson_version = 1;

struct LessonStep {
    std::string title;
    std::string formula;  // Unicode math, e.g. "Q⁽¹⁾ = X·W_Q⁽¹⁾"
    std::string text;     // for the learner: a template (see fill_template)
    std::vector<MatrixRef>
        show;  // heads 0-based here, 1-based in the file  // the operands (and any context) drawn left to right
    bool has_result = false;
    MatrixRef result;        // the matrix whose cells are explained, played and exercised
    bool expansion = false;  // also show each result cell as the seed writes it: (1+1)
    bool exercise = false;   // the learner may type the result
};

struct Lesson {
    std::string title;
    std::string summary;             // one line for the lesson picker
    int order = 1000;                // place in the picker (the course's order), then by name
    std::string session;             // the session it starts from: a session file, relative to the lesson's
                                     // folder ("../examples/causal-mask.json"); empty: the session on screen
    std::vector<std::string> needs;  // "requires": conditions its session meets ("causal", "!cross"; see fill_template)
    std::vector<LessonStep> steps;
};

// Lessons larger than this are refused before parsing (the shipped one is under 8 KiB).
inline constexpr std::size_t max_lesson_bytes = std::size_t{4} << 20;  // 4 MiB

// Parses a lesson file; every problem with its field path ("steps[3].show[1].matrix: ..."), the
// first max_reported_problems of them, then "and N more problems".
Result<Lesson> parse_lesson(std::string_view text);

// What a lesson's text speaks about: the session on screen and its trace.
struct LessonContext {
    const Session* session = nullptr;
    const Trace* trace = nullptr;
    bool worked_example = false;      // the session is seed 001's worked example, value for value
    std::optional<MatrixRef> hidden;  // an exercise hides this matrix: its cells read "?"
    bool column_vectors = false;      // the app shows the column-vector view (seed 004)
};

// The lessons' template language, so every number in a step comes from the session on screen
// (and a teacher can still edit and translate the text):
//   {n} {d_model} {h} {d_k} {d_v} {s}      the session's sizes and the scores' divisor
//   {n_kv} {kv_heads} {group}              keys (n, or Y's rows), K/V heads, heads per K/V group
//   {rope_base} {rope_dims}                RoPE's θ and rotated columns (0 without RoPE)
//   {window} {softcap}                     the sliding window (keys) and the scores' soft-cap c (0: none)
//   {qk_norm_eps}                          the q/k norms' eps (0 without them)
//   {kv_bytes} {kv_bytes_ungrouped}        the KV cache's bytes per token of this layer in double,
//                                          with the K/V groups and with one K and V per head
//   {weights:1:0:1}                        a cell: NAME:HEAD:ROW:COL (head from 1, rows and columns
//   {output:0:2}                           from 0, as --select), NAME:ROW:COL for X, concat, output…
//   {weights:1:0:1|pct}                    as a percentage with one decimal: "94.4%"
//   {Q:1:0:0|5}                            with 5 significant digits (3 by default)
//   {token:0}                              a token's label (its first max_label_characters
//                                          characters and "…" when it is longer)
//   {stiefel:W_Q:1}                        ‖WᵀW − I‖ of a head's W_Q, W_K or W_V (seed 004's
//                                          constraint: 0 when its columns are orthonormal)
//   {if worked}…{else}…{end}               text for the worked example only, or for other sessions;
//                                          conditions: worked, heads>1, projection, causal,
//                                          masked (a custom mask), cross, rope, grouped,
//                                          window (a sliding window), softcap (soft-capped scores),
//                                          qk_norm (q/k norms over all heads),
//                                          exercise (one is on), columns (the column-vector
//                                          view), each negated by "!"; blocks nest
// A cell the session lacks (a second head when h = 1, a row past n) reads "–"; a cell of the
// hidden matrix reads "?", so an exercise is never given away. Unknown {words} stay as written.
std::string fill_template(const std::string& text, const LessonContext& context);

// The template's problems (an unknown matrix, a head counted from 0, an {if} without {end}, an
// unknown condition), each naming the field path given.
Problems template_problems(const std::string& text, const std::string& path);

// What the session lacks of the lesson's "requires", as a learner reads it: "with a causal mask",
// "without cross-attention (K and V from Y)"; empty when it meets them all.
std::vector<std::string> unmet_requirements(const Lesson& lesson, const LessonContext& context);

// A lesson file of a folder, as the lesson picker lists it.
struct LessonEntry {
    std::string name;  // the file's name without ".json": what --lesson takes
    std::string path;
    std::string title, summary;
    int order = 1000;
    int steps = 0;
    std::string problem;  // why it cannot be opened (the first problem); empty when it can
};

// The *.json lessons of the folders, in their order, then by name; a file that does not parse is
// listed with its problem; a folder that cannot be read adds none. A lesson of a later folder
// replaces one of the same name in an earlier one (a teacher's own copy of a shipped lesson).
std::vector<LessonEntry> list_lessons(const std::vector<std::string>& folders);

// A cell written the way seed 001 (docs/math.md#seed-001) writes it: the terms whose second factor (the weight) is not
// zero, summed in parentheses — "(1+1)", "(0+0)"; "(0)" when every weight is zero. For cells
// that are not sums of products, the value.
std::string cell_expansion(const Explanation& e);

}  // namespace attnviz::core
