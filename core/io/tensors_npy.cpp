// .npy files: the header's reader (parse_npy, for a .npy file and for each .npz member) and
// npy_bytes, which writes one.
#include <cstring>
#include <optional>

#include "core/base/format.hpp"
#include "core/io/tensors_detail.hpp"

namespace attnviz::core {

namespace {

struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;
};

// The header dict exactly as NumPy writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class DictParser {
public:
    explicit DictParser(std::string_view t) : t_(t) {}

    std::optional<NpyHeader> parse(std::string& error) {
        NpyHeader h;
        bool seen[3] = {};
        if (!eat('{')) return fail(error, "the header is not a dictionary");
        while (true) {
            skip();
            if (eat('}')) break;
            std::string key;
            if (!string(key)) return fail(error, "expected a quoted key in the header");
            if (!eat(':')) return fail(error, "expected ':' after '" + printable(key) + "'");
            if (key == "descr" && !seen[0]) {
                if (!string(h.descr)) return fail(error, "descr: expected a quoted dtype");
                seen[0] = true;
            } else if (key == "fortran_order" && !seen[1]) {
                skip();
                if (t_.substr(k_, 4) == "True") {
                    h.fortran_order = true;
                    k_ += 4;
                } else if (t_.substr(k_, 5) == "False") {
                    k_ += 5;
                } else {
                    return fail(error, "fortran_order: expected True or False");
                }
                seen[1] = true;
            } else if (key == "shape" && !seen[2]) {
                if (!eat('(')) return fail(error, "shape: expected a tuple");
                while (true) {
                    skip();
                    if (eat(')')) break;
                    std::uint64_t v = 0;
                    if (!number(v)) return fail(error, "shape: expected whole numbers");
                    if (h.shape.size() >= 32) return fail(error, "shape: more than 32 dimensions");
                    h.shape.push_back(v);
                    skip();
                    if (eat(')')) break;
                    if (!eat(',')) return fail(error, "shape: expected ',' or ')'");
                }
                seen[2] = true;
            } else {
                return fail(error, "unexpected or repeated key '" + printable(key) + "' in the header");
            }
            skip();
            if (eat('}')) break;
            if (!eat(',')) return fail(error, "expected ',' or '}' in the header");
        }
        skip();
        if (k_ != t_.size()) return fail(error, "text after the header's dictionary");
        if (!seen[0] || !seen[1] || !seen[2]) return fail(error, "the header lacks descr, fortran_order or shape");
        return h;
    }

private:
    std::optional<NpyHeader> fail(std::string& error, const std::string& message) {
        error = message;
        return std::nullopt;
    }
    void skip() {
        while (k_ < t_.size() && (t_[k_] == ' ' || t_[k_] == '\n' || t_[k_] == '\t' || t_[k_] == '\r')) ++k_;
    }
    bool eat(char c) {
        skip();
        if (k_ < t_.size() && t_[k_] == c) {
            ++k_;
            return true;
        }
        return false;
    }
    bool string(std::string& out) {
        skip();
        if (k_ >= t_.size() || (t_[k_] != '\'' && t_[k_] != '"')) return false;
        const char quote = t_[k_++];
        const size_t end = t_.find(quote, k_);
        if (end == std::string_view::npos || end - k_ > 64) return false;
        out = std::string(t_.substr(k_, end - k_));
        k_ = end + 1;
        return true;
    }
    bool number(std::uint64_t& v) {
        const size_t start = k_;
        v = 0;
        while (k_ < t_.size() && t_[k_] >= '0' && t_[k_] <= '9') {
            if (k_ - start >= 19) return false;  // beyond any real dimension
            v = v * 10 + static_cast<std::uint64_t>(t_[k_++] - '0');
        }
        if (k_ < t_.size() && t_[k_] == 'L') ++k_;  // Python 2's long suffix
        return k_ > start;
    }

    std::string_view t_;
    size_t k_ = 0;
};

}  // namespace

namespace detail {

Problems parse_npy(const Source& s, std::uint64_t base, std::uint64_t length, TensorInfo& info,
                   const std::string& label) {
    const auto fail = [&](const std::string& m) { return Problems{problem(label, info.name, m)}; };
    if (length < 10) return fail("too short for a .npy file (" + std::to_string(length) + " bytes)");
    const auto head = read_range(s, base, 12 > length ? length : 12);
    if (!head || head->compare(0, 6, "\x93NUMPY") != 0) return fail("not a .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>((*head)[6]);
    if (major < 1 || major > 3) return fail("unknown .npy version " + std::to_string(major));
    const int len_bytes = major == 1 ? 2 : 4;
    if (length < static_cast<std::uint64_t>(8 + len_bytes)) return fail("the .npy header is truncated");
    const std::uint64_t header_len = le(head->data() + 8, len_bytes);
    const std::uint64_t data_start = 8 + static_cast<std::uint64_t>(len_bytes) + header_len;
    if (header_len > max_tensor_header_bytes || data_start > length)
        return fail("the header says it is " + std::to_string(header_len) + " bytes, more than the file holds (" +
                    std::to_string(length) + " bytes)");
    const auto text = read_range(s, base + 8 + len_bytes, header_len);
    if (!text) return fail("cannot read the .npy header");
    std::string error;
    const std::optional<NpyHeader> h = DictParser(*text).parse(error);
    if (!h) return fail(error);
    info.dtype = h->descr;
    info.shape = h->shape;
    info.fortran_order = h->fortran_order;
    const Element e = element_of(info.dtype);
    if (e.size == 0) return fail("unknown dtype '" + printable(info.dtype) + "'");
    const auto count = element_count(info.shape);
    const auto bytes = count ? times(*count, static_cast<std::uint64_t>(e.size)) : std::nullopt;
    if (!bytes) return fail("the shape " + shape_text(info.shape) + " is too large");
    const std::uint64_t have = length - data_start;
    if (*bytes != have)
        return fail("shape " + shape_text(info.shape) + " of " + printable(info.dtype) + " needs " +
                    std::to_string(*bytes) + " bytes of data, the file holds " + std::to_string(have) +
                    (have < *bytes ? " (truncated?)" : ""));
    info.offset = base + data_start;
    info.bytes = *bytes;
    return {};
}

}  // namespace detail

std::string npy_bytes(const std::vector<std::uint64_t>& shape, const std::vector<double>& values) {
    std::string dims;
    for (std::uint64_t d : shape) dims += std::to_string(d) + ", ";
    if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(3,)" for one dimension, "(2, 3)" otherwise
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }";
    // Magic, version and length take 10 bytes; the header ends in '\n' and the data starts 64-aligned.
    const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    out += header;
    for (double v : values) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        for (int k = 0; k < 8; ++k) out += static_cast<char>((bits >> (8 * k)) & 0xff);
    }
    return out;
}

}  // namespace attnviz::core
