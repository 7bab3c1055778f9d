#include "json_read.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attnviz::core {

using nlohmann::json;

namespace {

// "line 3, column 7" of a byte offset.
std::string where(std::string_view text, size_t byte) {
    byte = std::min(byte, text.size());
    size_t line = 1, column = 1;
    for (size_t k = 0; k < byte; ++k) {
        if (text[k] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Builds the document like nlohmann's own DOM parser while keeping the path of the value being
// read, so a number too large for a double ("1e999", which JSON allows) is reported at its field.
class PathTrackingSax {
public:
    explicit PathTrackingSax(json& root) : dom_(root, false) {}

    std::string error_path;   // where parsing stopped
    std::string error_token;  // the offending token
    bool overflow = false;    // a number too large for a double
    size_t error_byte = 0;

    bool null() { return value(dom_.null()); }
    bool boolean(bool v) { return value(dom_.boolean(v)); }
    bool number_integer(json::number_integer_t v) { return value(dom_.number_integer(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return value(dom_.number_unsigned(v)); }
    bool number_float(json::number_float_t v, const std::string& s) { return value(dom_.number_float(v, s)); }
    bool string(json::string_t& v) { return value(dom_.string(v)); }
    bool binary(json::binary_t& v) { return value(dom_.binary(v)); }
    bool start_object(std::size_t n) {
        frames_.push_back({false, 0, ""});
        return dom_.start_object(n);
    }
    bool key(json::string_t& k) {
        frames_.back().key = k;
        return dom_.key(k);
    }
    bool end_object() {
        frames_.pop_back();
        return value(dom_.end_object());
    }
    bool start_array(std::size_t n) {
        frames_.push_back({true, 0, ""});
        return dom_.start_array(n);
    }
    bool end_array() {
        frames_.pop_back();
        return value(dom_.end_array());
    }
    bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
        overflow = e.id == 406;  // out_of_range: number overflow
        error_byte = byte;
        error_token = token;
        error_path = path();
        return false;
    }

private:
    struct Frame {
        bool array;
        size_t index;
        std::string key;
    };

    bool value(bool ok) {  // a value ended: the enclosing array moves to its next index
        if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
        return ok;
    }
    std::string path() const {
        std::string out;
        for (const Frame& f : frames_) {
            if (f.array)
                out += "[" + std::to_string(f.index) + "]";
            else
                out += (out.empty() ? "" : ".") + f.key;
        }
        return out;
    }

    nlohmann::detail::json_sax_dom_parser<json> dom_;
    std::vector<Frame> frames_;
};

}  // namespace

std::string describe_json(const json& v) {
    if (v.is_string()) return "the text " + v.dump();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_null()) return "null";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    if (v.is_number()) return v.dump();
    return "something else";
}

Result<json> read_json(std::string_view text) {
    json root;
    PathTrackingSax sax(root);
    if (json::sax_parse(text.begin(), text.end(), &sax)) return Result<json>::ok(std::move(root));
    if (sax.overflow)
        return Result<json>::fail(
            {{sax.error_path, "the number " + sax.error_token + " is too large to represent (values must be finite)"}});
    const bool truncated = sax.error_byte >= text.size();
    return Result<json>::fail({{"", std::string(truncated ? "the JSON ends too early (truncated?)" : "malformed JSON") +
                                        " at " + where(text, sax.error_byte > 0 ? sax.error_byte - 1 : 0)}});
}

}  // namespace attnviz::core
