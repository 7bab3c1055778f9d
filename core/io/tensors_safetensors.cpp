// safetensors files: the JSON header read in one pass and the tensors' offsets checked to tile the
// data section (TensorFile::parse_safetensors).
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "core/base/format.hpp"
#include "core/io/json_read.hpp"
#include "core/io/tensors_detail.hpp"

namespace attnviz::core {

using namespace detail;

namespace {

// What a file given as a checkpoint is when it is JSON text instead (an attnviz session or trace,
// a config.json), or "" when it does not start like JSON. Asked only once the file failed as a
// safetensors file: a real header length is never the eight bytes of text a JSON file starts with.
std::string json_instead(const Source& s) {
    const std::optional<std::string> head = read_range(s, 0, std::min<std::uint64_t>(s.size(), 4096));
    if (!head) return "";
    std::size_t k = head->compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a byte order mark
    while (k < head->size() && ((*head)[k] == ' ' || (*head)[k] == '\t' || (*head)[k] == '\r' || (*head)[k] == '\n'))
        ++k;
    if (k == head->size() || ((*head)[k] != '{' && (*head)[k] != '[')) return "";
    const std::string what = head->find("\"attnviz-session\"") != std::string::npos ? "an attnviz session"
                             : head->find("\"attnviz-trace\"") != std::string::npos ? "an attnviz trace"
                                                                                    : "JSON text";
    return "is " + what + ", not a checkpoint (a .safetensors, .npz or .npy file of tensors)" +
           (what == "an attnviz session" ? "; open it as a session: attnviz FILE, or File > Open" : "");
}

// A whole number from 0 to 2^64 − 1 as the next value, exactly (a double would round it above 2^53).
std::optional<std::uint64_t> read_unsigned(JsonReader& in) {
    if (in.peek() != JsonReader::Kind::number) return std::nullopt;
    JsonReader::Number n;
    if (!in.read_number(n) || !n.integer || n.text.empty() || n.text.front() == '-') return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, error] = std::from_chars(n.text.data(), n.text.data() + n.text.size(), v);
    if (error != std::errc() || end != n.text.data() + n.text.size()) return std::nullopt;
    return v;
}

// __metadata__: an object of texts, into `out`. A problem (path and message) when it is not; a
// syntax error leaves `in` failed instead.
std::optional<Problem> read_metadata(JsonReader& in, std::map<std::string, std::string>& out) {
    if (in.peek() != JsonReader::Kind::object) return Problem{"__metadata__", "expected an object of texts"};
    in.begin_object();
    for (std::string key; in.next_key(key);) {
        if (in.peek() != JsonReader::Kind::string) return Problem{"__metadata__." + key, "expected a text"};
        std::string value;
        if (!in.read_string(value)) return std::nullopt;
        out[key] = std::move(value);
    }
    return std::nullopt;
}

// One tensor's entry, {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]} (other keys are
// skipped), into `info` and [begin, end): "" or what is wrong. A syntax error leaves `in` failed.
std::string read_tensor_entry(JsonReader& in, TensorInfo& info, std::uint64_t& begin, std::uint64_t& end) {
    if (in.peek() != JsonReader::Kind::object) return "expected an object with dtype, shape and data_offsets";
    in.begin_object();
    bool dtype = false, shape = false, offsets = false;
    for (std::string key; in.next_key(key);) {
        if (key == "dtype") {
            if (dtype) return "dtype: given twice";
            if (in.peek() != JsonReader::Kind::string || !in.read_string(info.dtype)) return "dtype: not a text";
            dtype = true;
        } else if (key == "shape") {
            if (shape) return "shape: given twice";
            if (in.peek() != JsonReader::Kind::array || !in.begin_array()) return "shape: not an array of sizes";
            while (in.next_element()) {
                if (info.shape.size() == 32) return "shape: more than 32 dimensions";
                const std::optional<std::uint64_t> d = read_unsigned(in);
                if (!d) return "shape: expected whole numbers ≥ 0";
                info.shape.push_back(*d);
            }
            shape = true;
        } else if (key == "data_offsets") {
            if (offsets) return "data_offsets: given twice";
            std::optional<std::uint64_t> ends[2];
            int count = 0;
            if (in.peek() != JsonReader::Kind::array || !in.begin_array()) return "data_offsets: expected [begin, end]";
            while (in.next_element()) {
                if (count == 2) return "data_offsets: expected [begin, end]";
                ends[count++] = read_unsigned(in);
                if (!ends[count - 1]) return "data_offsets: expected [begin, end], whole numbers ≥ 0";
            }
            if (count != 2) return "data_offsets: expected [begin, end]";
            begin = *ends[0];
            end = *ends[1];
            offsets = true;
        } else if (!in.skip_value()) {
            return "";
        }
        if (!in.ok()) return "";
    }
    if (!in.ok()) return "";
    if (!dtype) return "dtype: missing";
    if (!shape) return "shape: missing";
    if (!offsets) return "data_offsets: missing (expected [begin, end])";
    return "";
}

// The tensors' bytes must tile the data section, as the format's reference reader requires: in
// order of their offsets each (empty ones aside, which hold no bytes) begins where the one before
// ends, the first at 0, and the last ends at the end of the file. A gap, an overlap or bytes left
// over mean offsets that do not describe the file (a header length a few bytes off shifts every
// value by that much), so the file is refused naming the tensor where it shows.
Problems check_coverage(const std::vector<TensorInfo>& tensors, const std::string& label, std::uint64_t data_start,
                        std::uint64_t data_len) {
    const auto fail = [&](const std::string& tensor, const std::string& m) {
        return Problems{problem(label, tensor, m)};
    };
    std::vector<const TensorInfo*> order;
    order.reserve(tensors.size());
    for (const TensorInfo& t : tensors)
        if (t.bytes > 0) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TensorInfo* a, const TensorInfo* b) {
        return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
    });
    const auto range = [&](const TensorInfo& t) {
        return "[" + std::to_string(t.offset - data_start) + ", " + std::to_string(t.offset - data_start + t.bytes) +
               "]";
    };
    std::uint64_t covered = 0;  // the bytes of the data section the tensors so far tile
    const TensorInfo* before = nullptr;
    for (const TensorInfo* t : order) {
        const std::uint64_t begin = t->offset - data_start;
        if (begin < covered)
            return fail(t->name, "its data " + range(*t) + " overlaps " + before->name + "'s " + range(*before));
        if (begin > covered)
            return fail(t->name,
                        "its data begins at byte " + std::to_string(begin) + " of the data section, " +
                            (before ? "but " + before->name + "'s ends at byte " + std::to_string(covered) + ": the " +
                                          std::to_string(begin - covered) + " bytes between them"
                                    : "the first tensor's: the " + std::to_string(begin) + " bytes before it") +
                            " belong to no tensor (offsets that do not describe the file)");
        covered = begin + t->bytes;
        before = t;
    }
    if (covered != data_len)
        return fail(before ? before->name : "",
                    std::to_string(data_len - covered) + " bytes of the data section's " + std::to_string(data_len) +
                        " follow " +
                        (before ? "the last tensor, which ends at byte " + std::to_string(covered)
                                : std::string("the header, and no tensor holds any")) +
                        ": they belong to no tensor (a header length that is off, or a truncated header?)");
    return {};
}

}  // namespace

Problems TensorFile::parse_safetensors() {
    const Source& s = *source_;
    const auto fail = [&](const std::string& tensor, const std::string& m) {
        return Problems{problem(label_, tensor, m)};
    };
    const auto len_bytes = read_range(s, 0, 8);
    const std::uint64_t header_len = le(len_bytes->data(), 8);
    if (header_len > s.size() - 8) {
        if (const std::string json = json_instead(s); !json.empty()) return fail("", json);
        return fail("", "the header says it is " + std::to_string(header_len) + " bytes, more than the file holds (" +
                            std::to_string(s.size()) + " bytes); not a safetensors file, or truncated");
    }
    if (header_len > max_tensor_header_bytes)
        return fail("", "a header of " + std::to_string(header_len) + " bytes is over the limit of " +
                            std::to_string(max_tensor_header_bytes));
    const auto text = read_range(s, 8, header_len);
    if (!text) return fail("", "cannot read the header");
    // The header is read in one pass with the pull parser, without building a document: its cost
    // is linear in its length, however many tensors it lists.
    JsonReader in(*text);
    const auto not_json = [&] {
        return fail("",
                    "the header is not a JSON object" + (in.ok() ? std::string() : " (" + in.error().message + ")"));
    };
    if (in.peek() != JsonReader::Kind::object || !in.begin_object()) return not_json();
    const std::uint64_t data_start = 8 + header_len, data_len = s.size() - data_start;
    bool metadata_seen = false;
    for (std::string name; in.next_key(name);) {
        if (name == "__metadata__") {
            if (metadata_seen) return fail(name, "appears twice in the header");
            metadata_seen = true;
            const std::optional<Problem> p = read_metadata(in, metadata_);
            if (!in.ok()) return not_json();
            if (p) return fail(p->path, p->message);
            continue;
        }
        TensorInfo info;
        info.name = name;
        std::uint64_t begin = 0, end = 0;
        const std::string p = read_tensor_entry(in, info, begin, end);
        if (!in.ok()) return not_json();
        if (!p.empty()) return fail(name, p);
        const int item = safetensors_item_size(info.dtype);
        if (item == 0) return fail(name, "unknown dtype \"" + printable(info.dtype) + "\"");
        if (begin > end || end > data_len)
            return fail(name, "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                  "] go past the end of the file (" + std::to_string(data_len) + " bytes of data)");
        const auto count = element_count(info.shape);
        const auto bytes = count ? times(*count, static_cast<std::uint64_t>(item)) : std::nullopt;
        if (!bytes || *bytes != end - begin)
            return fail(name, "shape " + shape_text(info.shape) + " of " + printable(info.dtype) + " needs " +
                                  (bytes ? std::to_string(*bytes) : std::string("too many")) +
                                  " bytes, data_offsets give " + std::to_string(end - begin));
        info.offset = data_start + begin;
        info.bytes = end - begin;
        tensors_.push_back(std::move(info));
    }
    if (!in.ok() || !in.finish()) return not_json();
    // In name order (as a JSON object's keys are listed), each name once: a JSON parser would
    // silently keep one of two tensors named alike.
    std::sort(tensors_.begin(), tensors_.end(),
              [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
    const auto twice = std::adjacent_find(tensors_.begin(), tensors_.end(),
                                          [](const TensorInfo& a, const TensorInfo& b) { return a.name == b.name; });
    if (twice != tensors_.end()) return fail(twice->name, "appears twice in the header");
    return check_coverage(tensors_, label_, data_start, data_len);
}

}  // namespace attnviz::core
