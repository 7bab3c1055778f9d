// Reading JSON without exceptions (internal to core).
//
// JsonReader is a small pull parser over a text held in memory: the caller asks for the next
// value's kind and reads it, so a reader can put numbers straight where they belong (the session
// reader fills its matrices this way) and skip what it does not need without storing it. The
// whole text is parsed by its length: a NUL byte is an error at its position, and anything after
// the document other than whitespace is refused. The grammar is RFC 8259's, as strict as
// nlohmann::json's (no comments, no trailing commas, strings in valid UTF-8), plus an optional
// UTF-8 byte order mark at the start.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/problem.hpp"

namespace attnviz::core {

// "line 3, column 7" of a byte offset (both from 1, columns counted in bytes).
std::string text_position(std::string_view text, std::size_t byte);

// Field paths: "config.n", "heads[1].W_K", "steps[0].title". A key that is not a plain name
// (empty, or with characters other than letters, digits and _) is written quoted: a["x y"].
// Never "a.[0]" or ".title".
std::string path_key(const std::string& parent, std::string_view key);
std::string path_index(const std::string& parent, std::size_t index);

// A string as a message shows it: 'the text "a"'; a long one is cut ('the text "abc…" (5000 bytes)').
std::string describe_text(const std::string& s);

// A value as a message shows it: 'the text "a"', "an array", "null", "3.5".
std::string describe_json(const nlohmann::json& value);

// A scalar read for a message or a small setting: the value, with an array or object standing
// for itself as an empty one (their contents are skipped, not stored).
struct JsonScalar {
    nlohmann::json value;
    std::string overflow;  // the token of a number too large for a double ("1e999"); value is null then
};

// "the number 1e999 is too large to represent (values must be finite)"
std::string overflow_message(std::string_view token);

class JsonReader {
public:
    enum class Kind { object, array, string, number, boolean, null, error };

    struct Number {
        double value = 0;
        std::string_view text;  // the token as written
        bool integer = false;   // no fraction and no exponent
        bool overflow = false;  // too large for a double: value is 0
    };

    // Nesting deeper than this is refused (a session needs 4 levels, a lesson 4).
    static constexpr int max_depth = 512;

    explicit JsonReader(std::string_view text);

    bool ok() const { return error_ == Error::none; }
    // The syntax problem once !ok(): "malformed JSON at line 3, column 7", "the JSON ends too early
    // (truncated?) at line …", "a NUL byte at line 1, column 9", "nested more than 512 levels …".
    Problem error() const;

    // The kind of the next value (whitespace skipped); error, with ok() false, when none starts here.
    Kind peek();

    // Objects: begin_object(), then next_key(key) until it returns false (the closing brace is
    // consumed then, or an error was found); after each key, read or skip exactly one value.
    bool begin_object();
    bool next_key(std::string& key);
    // Arrays: begin_array(), then next_element() until false; after each true, one value.
    bool begin_array();
    bool next_element();

    bool read_string(std::string& out);
    bool read_number(Number& out);
    bool read_bool(bool& out);
    bool read_null();
    // Any value: scalars as they are, arrays and objects skipped and given as empty ones.
    bool read_scalar(JsonScalar& out);
    // Consumes one value of any kind without storing it (iteratively: depth costs no stack).
    bool skip_value();
    // The same, handing out the value's text as written (valid only while the text lives).
    bool skip_value(std::string_view& raw);
    // The next value described for a message ('the text "a"', "an array"); with want false it is
    // only skipped and "" returned, so a problem that is counted but not shown costs nothing.
    std::string describe_next(bool want = true);

    // After the document: only whitespace may follow, up to the end of the text.
    bool finish();

private:
    enum class Error { none, malformed, truncated, too_deep };

    void skip_ws();
    bool fail_at(std::size_t at);  // malformed at `at`, or truncated when at is the end
    bool fail_truncated();
    bool expect_literal(std::string_view word);
    bool string_body(std::string* out);  // after the opening quote
    bool scan_number(Number& out);
    bool enter();
    bool leave(char close);
    bool next_member(std::string* key);  // key null: skipped
    // Past the separator to the next member or element; false at `close` (consumed) or on an error.
    bool next_item(char close);

    std::vector<bool> kinds_;  // the open containers, innermost last: true for an object

    std::string_view text_;
    std::size_t pos_ = 0;
    int depth_ = 0;
    bool first_ = false;  // the container just opened has had no element yet
    Error error_ = Error::none;
    std::size_t error_at_ = 0;
};

// The document as nlohmann::json (for small files such as lessons), or one problem: the syntax
// error, or a number too large for a double at its field path.
Result<nlohmann::json> read_json(std::string_view text);

}  // namespace attnviz::core
