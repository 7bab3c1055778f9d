#include "core/io/tensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <type_traits>

#include "core/base/format.hpp"
#include "core/io/json_read.hpp"

namespace attnviz::core {

// ---------------------------------------------------------------------------------------------
// Where the bytes come from

struct TensorFile::Source {
    virtual ~Source() = default;
    virtual std::uint64_t size() const = 0;
    // Exactly n bytes at `offset` into out; false when the range is outside the source or the read fails.
    virtual bool read(std::uint64_t offset, std::uint64_t n, char* out) const = 0;
    // All the bytes when they are held in memory (read there in place), else nullptr.
    virtual const char* data() const { return nullptr; }
    // The same when the bytes are held as storage for values of any type, which may be used in place
    // (keep_in_memory's), else nullptr.
    virtual const unsigned char* storage() const { return nullptr; }
};

namespace {

using Source = TensorFile::Source;

struct MemorySource final : Source {
    std::string bytes;
    std::uint64_t size() const override { return bytes.size(); }
    bool read(std::uint64_t offset, std::uint64_t n, char* out) const override {
        if (offset > bytes.size() || n > bytes.size() - offset) return false;
        std::memcpy(out, bytes.data() + offset, n);
        return true;
    }
    const char* data() const override { return bytes.data(); }
};

// A file read whole into memory, placed so that byte `origin` of it (where its tensors' data
// begins) lies at an address aligned for every dtype: its tensors are used in place where they can
// be (TensorFile::in_place). An array of bytes, which holds the values read into it as objects of
// their own types.
struct HeldSource final : Source {
    static constexpr std::uint64_t alignment = 64;
    struct Free {
        void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{alignment}); }
    };
    std::unique_ptr<unsigned char[], Free> held;
    std::uint64_t bytes = 0, shift = 0;  // the file's byte 0 is held[shift]
    HeldSource(std::uint64_t size, std::uint64_t origin)
        : held(static_cast<unsigned char*>(::operator new[](size + alignment, std::align_val_t{alignment}))),
          bytes(size),
          shift((alignment - origin % alignment) % alignment) {}
    std::uint64_t size() const override { return bytes; }
    bool read(std::uint64_t offset, std::uint64_t n, char* out) const override {
        if (offset > bytes || n > bytes - offset) return false;
        std::memcpy(out, held.get() + shift + offset, n);
        return true;
    }
    const char* data() const override { return reinterpret_cast<const char*>(held.get() + shift); }
    const unsigned char* storage() const override { return held.get() + shift; }
    char* writable() { return reinterpret_cast<char*>(held.get() + shift); }
};

struct FileSource final : Source {
    int fd = -1;
    std::uint64_t bytes = 0;
    ~FileSource() override {
        if (fd >= 0) ::close(fd);
    }
    std::uint64_t size() const override { return bytes; }
    bool read(std::uint64_t offset, std::uint64_t n, char* out) const override {
        if (offset > bytes || n > bytes - offset) return false;
        while (n > 0) {
            const ssize_t got = ::pread(fd, out, std::min<std::uint64_t>(n, 1u << 30), static_cast<off_t>(offset));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;  // an error, or the file shrank
            out += got;
            offset += static_cast<std::uint64_t>(got);
            n -= static_cast<std::uint64_t>(got);
        }
        return true;
    }
};

// A range read into a string (n is checked against the source before anything is allocated).
std::optional<std::string> read_range(const Source& s, std::uint64_t offset, std::uint64_t n) {
    if (offset > s.size() || n > s.size() - offset) return std::nullopt;
    std::string out(n, '\0');
    if (!s.read(offset, n, out.data())) return std::nullopt;
    return out;
}

std::uint64_t le(const char* p, int bytes) {
    std::uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(p[k]);
    return v;
}

// a·b, or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> times(std::uint64_t a, std::uint64_t b) {
    if (b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b) return std::nullopt;
    return a * b;
}

std::optional<std::uint64_t> element_count(const std::vector<std::uint64_t>& shape) {
    std::uint64_t n = 1;
    for (std::uint64_t d : shape) {
        const auto next = times(n, d);
        if (!next) return std::nullopt;
        n = *next;
    }
    return n;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string s = "[";
    for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
    return s + "]";
}

// The bytes of one element of a dtype, or 0 for a dtype this reader does not know at all.
int safetensors_item_size(const std::string& dtype) {
    static const std::pair<const char*, int> sizes[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},    {"BF16", 2},
                                                        {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
                                                        {"U64", 8},  {"U32", 4},     {"U16", 2},    {"U8", 1},
                                                        {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& [name, size] : sizes)
        if (dtype == name) return size;
    return 0;
}

// How one element is stored: its size and byte order, and whether it is a float attnviz reads.
struct Element {
    int size = 0;
    bool big_endian = false;
    bool readable = false;  // F64/F32/F16/BF16 or f8/f4/f2
    bool bfloat = false;
};

Element element_of(const std::string& dtype) {
    Element e;
    if (!dtype.empty() && (dtype[0] == '<' || dtype[0] == '>' || dtype[0] == '|' || dtype[0] == '=')) {
        // NumPy: byte order, kind, size ("<f4").
        // A descr may be as short as "<" or "|": nothing past its end is looked at.
        e.big_endian = dtype[0] == '>';
        const std::string_view kind = std::string_view(dtype).substr(1, 1);
        const std::string_view digits = std::string_view(dtype).substr(std::min<std::size_t>(2, dtype.size()));
        if (!digits.empty() && digits.size() <= 2 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            for (char c : digits) e.size = e.size * 10 + (c - '0');
        if (kind == "U") e.size *= 4;  // a Unicode string of n characters takes 4n bytes
        e.readable = kind == "f" && (e.size == 8 || e.size == 4 || e.size == 2);
        return e;
    }
    e.size = safetensors_item_size(dtype);
    e.readable = dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16";
    e.bfloat = dtype == "BF16";
    return e;
}

double decode(const char* p, const Element& e) {
    std::uint64_t bits = 0;
    for (int k = 0; k < e.size; ++k) {
        const int from = e.big_endian ? k : e.size - 1 - k;
        bits = (bits << 8) | static_cast<unsigned char>(p[from]);
    }
    switch (e.size) {
        case 8: {
            double d;
            std::memcpy(&d, &bits, 8);
            return d;
        }
        case 4: {
            const auto b = static_cast<std::uint32_t>(bits);
            float f;
            std::memcpy(&f, &b, 4);
            return f;
        }
        default:
            return e.bfloat ? bfloat16_to_double(static_cast<std::uint16_t>(bits))
                            : half_to_double(static_cast<std::uint16_t>(bits));
    }
}

// A problem naming the file and the tensor; a tensor's name is the file's text, shown escaped.
Problem problem(const std::string& label, const std::string& tensor, const std::string& message) {
    return {label + (tensor.empty() ? "" : ": " + printable(tensor)), message};
}

// -- .npy

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

// Parses a .npy held in `s` from `base` for `length` bytes into `info` (offset relative to s).
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

constexpr std::uint64_t max_entry_bytes = max_tensor_values * 8 + max_tensor_header_bytes;

// The first n bytes that the raw deflate stream of `compressed` bytes at `offset` inflates to (n is
// at most a .npy header's length), reading the stream in pieces; nullopt with `error` set when the
// stream is corrupt, cannot be read, or ends before n bytes.
std::optional<std::string> inflate_prefix(const Source& s, std::uint64_t offset, std::uint64_t compressed,
                                          std::uint64_t n, std::string& error) {
    std::string out(n, '\0');
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        error = "cannot start inflating";
        return std::nullopt;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(n);
    std::string piece;
    std::uint64_t fed = 0;
    int rc = Z_OK;
    while (z.avail_out > 0 && rc == Z_OK) {
        if (z.avail_in == 0) {
            if (fed == compressed) break;
            const std::uint64_t k = std::min<std::uint64_t>(compressed - fed, 1 << 16);
            std::optional<std::string> got = read_range(s, offset + fed, k);
            if (!got) {
                inflateEnd(&z);
                error = "cannot read its data (truncated?)";
                return std::nullopt;
            }
            piece = std::move(*got);
            fed += k;
            z.next_in = reinterpret_cast<Bytef*>(piece.data());
            z.avail_in = static_cast<uInt>(k);
        }
        rc = inflate(&z, Z_NO_FLUSH);
    }
    const bool complete = z.avail_out == 0;
    inflateEnd(&z);
    if (complete) return out;
    error = rc == Z_OK || rc == Z_STREAM_END ? "its compressed data ends inside its .npy header"
                                             : "its compressed data is corrupt";
    return std::nullopt;
}

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

// ---------------------------------------------------------------------------------------------
// Opening

Result<TensorFile> TensorFile::open(const std::string& path) {
    using R = Result<TensorFile>;
    const auto refused = [&](const struct stat& st) {
        return R::fail({{path, S_ISDIR(st.st_mode) ? "is a directory, not a file" : "is not a regular file"}});
    };
    if (path.empty()) return R::fail({{path, "no file name given"}});
    // As read_file: the type is checked before opening (opening a FIFO would wait for a writer, a
    // device could have effects), then again on the opened file, which is what is read.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return R::fail({{path, std::string("cannot open: ") + std::strerror(errno)}});
    if (!S_ISREG(st.st_mode)) return refused(st);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return R::fail({{path, std::string("cannot open: ") + std::strerror(errno)}});
    auto source = std::make_shared<FileSource>();
    source->fd = fd;
    if (::fstat(fd, &st) != 0) return R::fail({{path, std::string("cannot read: ") + std::strerror(errno)}});
    if (!S_ISREG(st.st_mode)) return refused(st);
    source->bytes = static_cast<std::uint64_t>(st.st_size);
    return parse(std::move(source), path);
}

Result<TensorFile> TensorFile::from_bytes(std::string bytes, const std::string& label) {
    auto source = std::make_shared<MemorySource>();
    source->bytes = std::move(bytes);
    return parse(std::move(source), label);
}

Result<TensorFile> TensorFile::parse(std::shared_ptr<const Source> source, const std::string& label) {
    using R = Result<TensorFile>;
    TensorFile f;
    f.source_ = std::move(source);
    f.label_ = label;
    const Source& s = *f.source_;
    try {
        const auto magic = read_range(s, 0, std::min<std::uint64_t>(s.size(), 8));
        if (!magic) return R::fail({{label, "cannot read"}});
        Problems problems;
        if (magic->compare(0, 6, "\x93NUMPY") == 0) {
            f.format_ = "npy";
            TensorInfo info;
            const size_t slash = label.find_last_of('/');
            std::string name = slash == std::string::npos ? label : label.substr(slash + 1);
            if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
            info.name = name.empty() ? "array" : name;
            problems = parse_npy(s, 0, s.size(), info, label);
            if (problems.empty()) f.tensors_.push_back(std::move(info));
        } else if (magic->compare(0, 2, "PK") == 0) {
            f.format_ = "npz";
            problems = f.parse_npz();
        } else if (s.size() >= 8) {
            f.format_ = "safetensors";
            problems = f.parse_safetensors();
        } else {
            problems.push_back(
                {label, "not a safetensors, .npy or .npz file (only " + std::to_string(s.size()) + " bytes)"});
        }
        if (!problems.empty()) return R::fail(std::move(problems));
    } catch (const std::bad_alloc&) {
        return R::fail({{label, "out of memory while reading the headers"}});
    }
    return R::ok(std::move(f));
}

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

Problems TensorFile::parse_npz() {
    const Source& s = *source_;
    const auto fail = [&](const std::string& tensor, const std::string& m) {
        return Problems{problem(label_, tensor, m)};
    };
    // The end of central directory record: 22 bytes and a comment of up to 65535 at the end.
    const std::uint64_t tail_len = std::min<std::uint64_t>(s.size(), 22 + 65535);
    const auto tail = read_range(s, s.size() - tail_len, tail_len);
    if (!tail || tail_len < 22) return fail("", "not a zip archive (no end of central directory)");
    std::optional<std::uint64_t> eocd;
    for (std::uint64_t k = tail_len - 22 + 1; k-- > 0;)
        if (le(tail->data() + k, 4) == 0x06054b50) {
            eocd = k;
            break;
        }
    if (!eocd) return fail("", "not a zip archive (no end of central directory), or truncated");
    const char* e = tail->data() + *eocd;
    const std::uint64_t count = le(e + 10, 2), cd_size = le(e + 12, 4), cd_offset = le(e + 16, 4);
    const std::uint64_t eocd_pos = s.size() - tail_len + *eocd;
    if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF)
        return fail("", "ZIP64 archives (over 4 GiB or 65535 entries) are not supported");
    if (cd_offset > eocd_pos || cd_size > eocd_pos - cd_offset)
        return fail("", "the central directory lies outside the file (truncated?)");
    const auto cd = read_range(s, cd_offset, cd_size);
    if (!cd) return fail("", "cannot read the central directory");
    std::set<std::string> names;
    std::uint64_t k = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (k + 46 > cd->size() || le(cd->data() + k, 4) != 0x02014b50)
            return fail("", "entry " + std::to_string(i) + " of the central directory is malformed");
        const char* c = cd->data() + k;
        const std::uint64_t flags = le(c + 8, 2), method = le(c + 10, 2), crc = le(c + 16, 4);
        const std::uint64_t csize = le(c + 20, 4), usize = le(c + 24, 4);
        const std::uint64_t name_len = le(c + 28, 2), extra_len = le(c + 30, 2), comment_len = le(c + 32, 2);
        const std::uint64_t local = le(c + 42, 4);
        if (k + 46 + name_len + extra_len + comment_len > cd->size())
            return fail("", "entry " + std::to_string(i) + " of the central directory is truncated");
        std::string name(c + 46, name_len);
        k += 46 + name_len + extra_len + comment_len;
        if (name.empty() || name.back() == '/') continue;  // a directory
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
        if (csize == 0xFFFFFFFF || usize == 0xFFFFFFFF || local == 0xFFFFFFFF)
            return fail(name, "ZIP64 entries are not supported");
        if (flags & 1) return fail(name, "is encrypted");
        if (method != 0 && method != 8)
            return fail(name, "compression method " + std::to_string(method) + " (attnviz reads stored and deflated)");
        if (method == 0 && csize != usize) return fail(name, "a stored entry whose sizes differ");
        if (usize > max_entry_bytes) return fail(name, std::to_string(usize) + " bytes is over the limit for a tensor");
        // Deflate expands at most about 1032 to 1: a larger claim is a lie, refused before allocating it.
        if (method == 8 && usize > csize * 1032 + 1024)
            return fail(name, "claims " + std::to_string(usize) + " bytes from " + std::to_string(csize) +
                                  " compressed, more than deflate can give");
        const auto lh = read_range(s, local, 30);
        if (!lh || le(lh->data(), 4) != 0x04034b50) return fail(name, "its local header is missing or malformed");
        const std::uint64_t data = local + 30 + le(lh->data() + 26, 2) + le(lh->data() + 28, 2);
        if (data > cd_offset || csize > cd_offset - data)
            return fail(name, "its data goes past the central directory (truncated or lying sizes)");
        if (!names.insert(name).second) return fail(name, "appears twice");
        const Entry entry{data, csize, usize, static_cast<std::uint32_t>(crc), method == 8};
        TensorInfo info;
        info.name = name;
        // Only the entry's .npy header is read now; its data, CRC and inflated size are checked by
        // read(), so opening a large archive costs its headers.
        if (!entry.deflated) {
            if (Problems p = parse_npy(s, data, csize, info, label_); !p.empty()) return p;
            info.offset -= data;  // relative to the entry, as for a deflated one
        } else {
            // Inflated as far as the magic, version and header length (12 bytes cover every version),
            // then as far as the header they announce (parse_npy checks its length).
            std::string error;
            std::optional<std::string> head = inflate_prefix(s, data, csize, std::min<std::uint64_t>(usize, 12), error);
            if (head && head->size() == 12) {
                const int len_bytes = (*head)[6] == 1 ? 2 : 4;
                const std::uint64_t header_len = std::min(le(head->data() + 8, len_bytes), max_tensor_header_bytes);
                head = inflate_prefix(s, data, csize, std::min<std::uint64_t>(usize, 8 + len_bytes + header_len),
                                      error);
            }
            if (!head) return fail(name, error);
            MemorySource member;
            member.bytes = std::move(*head);
            if (Problems p = parse_npy(member, 0, usize, info, label_); !p.empty()) return p;
        }
        entries_.push_back(entry);
        info.entry = static_cast<int>(entries_.size() - 1);
        tensors_.push_back(std::move(info));
    }
    if (k != cd->size()) return fail("", "the central directory holds more than its entry count says");
    return {};
}

std::string TensorFile::stream_entry(const Entry& e, const PieceSink& take) const {
    const Source& s = *source_;
    constexpr std::uint64_t piece = 1 << 20;
    uLong crc = crc32(0L, Z_NULL, 0);
    std::uint64_t handed = 0;
    const auto hand = [&](const char* p, std::uint64_t n) {
        crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
        handed += n;
        return take(p, n);
    };
    const std::string wrong_size = "inflates to a size other than the " + std::to_string(e.size) +
                                   " bytes the directory says";
    if (!e.deflated) {
        for (std::uint64_t at = 0; at < e.compressed; at += piece) {
            const std::uint64_t n = std::min(piece, e.compressed - at);
            const std::optional<std::string> bytes = read_range(s, e.data_offset + at, n);
            if (!bytes) return "cannot read its data (truncated?)";
            if (!hand(bytes->data(), n)) return "";
        }
    } else {
        z_stream z{};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return "cannot start inflating";
        const std::unique_ptr<z_stream, int (*)(z_stream*)> end_inflate(&z, inflateEnd);
        std::string input, output(piece, '\0');
        std::uint64_t fed = 0;
        for (int rc = Z_OK; rc != Z_STREAM_END;) {
            if (z.avail_in == 0 && fed < e.compressed) {
                const std::uint64_t k = std::min<std::uint64_t>(e.compressed - fed, 1 << 16);
                std::optional<std::string> got = read_range(s, e.data_offset + fed, k);
                if (!got) return "cannot read its data (truncated?)";
                input = std::move(*got);
                fed += k;
                z.next_in = reinterpret_cast<Bytef*>(input.data());
                z.avail_in = static_cast<uInt>(k);
            }
            z.next_out = reinterpret_cast<Bytef*>(output.data());
            z.avail_out = static_cast<uInt>(output.size());
            rc = inflate(&z, Z_NO_FLUSH);
            const std::uint64_t produced = output.size() - z.avail_out;
            if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || (rc == Z_BUF_ERROR && z.avail_in > 0))
                return "its compressed data is corrupt";
            // More than the directory says is refused before it is handed on (or kept).
            if (produced > e.size - handed) return wrong_size;
            if (produced > 0 && !hand(output.data(), produced)) return "";
            if (rc != Z_STREAM_END && produced == 0 && z.avail_in == 0 && fed == e.compressed)
                return handed == e.size ? "its compressed data is corrupt (it does not end)" : wrong_size;
        }
    }
    if (handed != e.size) return wrong_size;
    if (crc != e.crc) return "CRC mismatch: the data is corrupt";
    return "";
}

const TensorInfo* TensorFile::find(std::string_view name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Reading a tensor

namespace {

// The position in C order of each element as stored, in storage order: itself for C order; for
// Fortran order (the first index varies fastest) the place it takes in C order.
class COrderIndex {
public:
    COrderIndex(const std::vector<std::uint64_t>& shape, bool fortran)
        : shape_(shape), fortran_(fortran && shape.size() > 1), index_(shape.size(), 0), stride_(shape.size(), 1) {
        for (size_t d = shape.size(); d-- > 1;) stride_[d - 1] = stride_[d] * shape[d];
    }
    // Whether the positions run in C order (next() counts up by one).
    bool sequential() const { return !fortran_; }
    // The first of k positions in C order (sequential() only).
    std::uint64_t next_run(std::uint64_t k) {
        const std::uint64_t at = at_;
        at_ += k;
        return at;
    }
    std::uint64_t next() {
        if (!fortran_) return at_++;
        const std::uint64_t at = at_;
        for (size_t d = 0; d < shape_.size(); ++d) {  // the next Fortran index: the first dimension fastest
            if (++index_[d] < shape_[d]) {
                at_ += stride_[d];
                break;
            }
            at_ -= (shape_[d] - 1) * stride_[d];
            index_[d] = 0;
        }
        return at;
    }

private:
    const std::vector<std::uint64_t>& shape_;
    bool fortran_;
    std::vector<std::uint64_t> index_, stride_;  // the Fortran index; C order's strides
    std::uint64_t at_ = 0;                       // the C position of that index
};

// The place of the first value of p[0 … k) that is not finite, or k: one vectorised pass (a NaN
// makes the max NaN, and NaN ≤ max is false), the place looked for only when there is one.
template <class T>
std::uint64_t first_not_finite(const T* p, std::uint64_t k) {
    using Values = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
    if (k == 0 || Values(p, static_cast<Eigen::Index>(k)).abs().template maxCoeff<Eigen::PropagateNaN>() <=
                      std::numeric_limits<T>::max())
        return k;
    std::uint64_t i = 0;
    while (std::isfinite(p[i])) ++i;
    return i;
}

// Converts a tensor's bytes, handed over in order in pieces of any length, into its values in C
// order as T (double, or float for a model computed in float: F32 and F16/BF16 exactly, F64
// rounded), stopping at the first value that is not finite.
template <class T>
class Decoder {
public:
    Decoder(const Element& e, const TensorInfo& info, T* values, std::uint64_t count)
        : e_(e), order_(info.shape, info.fortran_order), values_(values), count_(count) {}

    // False once a value was not finite (problem() says which).
    bool take(const char* p, std::uint64_t n) {
        const auto size = static_cast<std::uint64_t>(e_.size);
        while (n > 0 && problem_.empty()) {
            if (partial_ == 0 && n >= size && order_.sequential()) {  // whole elements, in order
                const std::uint64_t k = n / size;
                put_run(p, k);
                p += k * size, n -= k * size;
                continue;
            }
            if (partial_ > 0 || n < size) {  // an element split between two pieces
                const std::uint64_t k = std::min(size - partial_, n);
                std::memcpy(element_ + partial_, p, k);
                partial_ += k, p += k, n -= k;
                if (partial_ == size) {
                    put(element_);
                    partial_ = 0;
                }
                continue;
            }
            put(p);
            p += size, n -= size;
        }
        return problem_.empty();
    }
    const std::string& problem() const { return problem_; }

private:
    void put(const char* p) {
        const std::uint64_t at = order_.next();
        if (at >= count_) return;  // not reached: the caller hands over exactly the tensor's bytes
        values_[at] = static_cast<T>(decode(p, e_));
        if (!std::isfinite(values_[at])) refuse(at);
    }

    // k whole elements at p, to k consecutive positions: the common case (C order, little-endian)
    // decoded in a loop the compiler can vectorise (a copy where the dtype is T) and checked for
    // values that are not finite, a piece of 64 K values at a time while it is in the cache; the
    // pieces of a large run (a tensor held in memory) in parallel (OpenMP).
    void put_run(const char* p, std::uint64_t k) {
        const std::uint64_t at = order_.next_run(k);
        if (at > count_ || k > count_ - at) return;  // not reached, as in put()
        constexpr std::uint64_t piece = 1 << 16;
        const auto pieces = static_cast<std::int64_t>((k + piece - 1) / piece);
        const auto size = static_cast<std::uint64_t>(e_.size);
        std::uint64_t bad = k;  // the first value that is not finite
#pragma omp parallel for reduction(min : bad) if (pieces >= 8)
        for (std::int64_t i = 0; i < pieces; ++i) {
            const std::uint64_t from = static_cast<std::uint64_t>(i) * piece, m = std::min(piece, k - from);
            T* out = values_ + at + from;
            convert(p + from * size, m, out);
            if (const std::uint64_t f = first_not_finite(out, m); f < m) bad = std::min(bad, from + f);
        }
        if (bad < k) refuse(at + bad);
    }

    // k elements at p into out as T.
    void convert(const char* p, std::uint64_t k, T* out) const {
        if (e_.big_endian || std::endian::native != std::endian::little) {
            for (std::uint64_t i = 0; i < k; ++i)
                out[i] = static_cast<T>(decode(p + i * static_cast<std::uint64_t>(e_.size), e_));
        } else if (e_.size == sizeof(T)) {
            std::memcpy(out, p, k * sizeof(T));
        } else if (e_.size == 8) {
            convert_run<double>(p, k, out);
        } else if (e_.size == 4) {
            convert_run<float>(p, k, out);
        } else {
            for (std::uint64_t i = 0; i < k; ++i) {
                std::uint16_t bits;
                std::memcpy(&bits, p + 2 * i, 2);
                out[i] = static_cast<T>(e_.bfloat ? bfloat16_to_double(bits) : half_to_double(bits));
            }
        }
    }

    // k stored values of type Stored into out as T.
    template <class Stored>
    static void convert_run(const char* p, std::uint64_t k, T* out) {
        for (std::uint64_t i = 0; i < k; ++i) {
            Stored v;
            std::memcpy(&v, p + sizeof(Stored) * i, sizeof(Stored));
            out[i] = static_cast<T>(v);
        }
    }

    void refuse(std::uint64_t at) {
        problem_ = "element " + std::to_string(at) + " is " + (std::isnan(values_[at]) ? "NaN" : "infinite") +
                   " (values must be finite)";
    }

    const Element e_;
    COrderIndex order_;
    T* values_;
    std::uint64_t count_;
    char element_[8] = {};
    std::uint64_t partial_ = 0;  // bytes of element_ filled
    std::string problem_;
};

}  // namespace

Result<Tensor> TensorFile::read(std::string_view wanted) const {
    const TensorInfo* info = find(wanted);
    if (!info) return Result<Tensor>::fail({problem(label_, std::string(wanted), "no such tensor in the file")});
    return read_info(*info);
}

Result<TensorInfo> TensorFile::rows_info(const TensorInfo& info, std::uint64_t first_row, std::uint64_t count,
                                         bool& strided) const {
    using R = Result<TensorInfo>;
    strided = false;
    const auto fail = [&](const std::string& message) { return R::fail({problem(label_, info.name, message)}); };
    if (info.shape.empty() || info.shape.size() > 2)
        return fail("rows are read from a 1-D or 2-D tensor, not one of " + std::to_string(info.shape.size()) +
                    " dimensions");
    const std::uint64_t rows = info.shape.size() == 2 ? info.shape[0] : 1, cols = info.shape.back();
    if (count == 0 || first_row >= rows || count > rows - first_row)
        return fail("rows " + std::to_string(first_row) + " to " + std::to_string(first_row + count) +
                    " (exclusive) are outside its " + std::to_string(rows) + " rows");
    const Element e = element_of(info.dtype);
    if (!e.readable) return R::ok(info);  // refused when read, with the dtypes it reads
    if (info.fortran_order && rows > 1) {
        strided = true;
        return R::ok(info);
    }
    const auto size = static_cast<std::uint64_t>(e.size);
    if (info.bytes / size != rows * cols) return fail("its byte count does not match its shape");
    TensorInfo part = info;
    part.shape = {count, cols};
    part.offset += first_row * cols * size;
    part.bytes = count * cols * size;
    return R::ok(std::move(part));
}

Result<Tensor> TensorFile::read_rows(std::string_view wanted, std::uint64_t first_row, std::uint64_t count) const {
    using R = Result<Tensor>;
    const TensorInfo* info = find(wanted);
    if (!info) return R::fail({problem(label_, std::string(wanted), "no such tensor in the file")});
    bool strided = false;
    const Result<TensorInfo> part = rows_info(*info, first_row, count, strided);
    if (!part) return R::fail(part.problems);
    if (!strided) return read_info(*part.value);
    R whole = read_info(*info);  // the rows are strided: the whole tensor, then the rows
    if (!whole) return whole;
    Tensor& t = *whole.value;
    const std::uint64_t cols = info->shape.back();
    t.values.erase(t.values.begin(), t.values.begin() + static_cast<std::ptrdiff_t>(first_row * cols));
    t.values.resize(count * cols);
    t.shape = {count, cols};
    return whole;
}

template <class T>
Problems TensorFile::read_rows_into(std::string_view wanted, std::uint64_t first_row, std::uint64_t count,
                                    T* out) const {
    const TensorInfo* info = find(wanted);
    if (!info) return {problem(label_, std::string(wanted), "no such tensor in the file")};
    bool strided = false;
    const Result<TensorInfo> part = rows_info(*info, first_row, count, strided);
    if (!part) return part.problems;
    if (strided) {  // read as doubles (read_rows), then converted
        const Result<Tensor> rows = read_rows(wanted, first_row, count);
        if (!rows) return rows.problems;
        std::transform(rows.value->values.begin(), rows.value->values.end(), out,
                       [](double v) { return static_cast<T>(v); });
        return {};
    }
    std::uint64_t values = 0;
    if (Problems p = readable(*part.value, values); !p.empty()) return p;
    return decode(*part.value, values, out);
}

template Problems TensorFile::read_rows_into<float>(std::string_view, std::uint64_t, std::uint64_t, float*) const;
template Problems TensorFile::read_rows_into<double>(std::string_view, std::uint64_t, std::uint64_t, double*) const;

Problems TensorFile::readable(const TensorInfo& info, std::uint64_t& count) const {
    const Element e = element_of(info.dtype);
    if (!e.readable)
        return {problem(label_, info.name,
                        "unsupported dtype " + printable(info.dtype) +
                            " (attnviz reads F64, F32, F16, BF16 and f8, f4, f2)")};
    count = info.bytes / static_cast<std::uint64_t>(e.size);
    // Checked before anything is read, inflated or allocated.
    if (count > max_tensor_values)
        return {problem(label_, info.name,
                        std::to_string(count) + " values is over the limit of " + std::to_string(max_tensor_values))};
    return {};
}

Result<Tensor> TensorFile::read_info(const TensorInfo& info) const {
    using R = Result<Tensor>;
    std::uint64_t count = 0;
    if (Problems p = readable(info, count); !p.empty()) return R::fail(std::move(p));
    try {
        Tensor t;
        t.name = info.name;
        t.shape = info.shape;
        t.values.resize(count);
        if (Problems p = decode(info, count, t.values.data()); !p.empty()) return R::fail(std::move(p));
        return R::ok(std::move(t));
    } catch (const std::bad_alloc&) {
        return R::fail({problem(label_, info.name, "out of memory")});
    }
}

template <class T>
Problems TensorFile::decode(const TensorInfo& info, std::uint64_t count, T* out) const {
    const auto fail = [&](const std::string& message) { return Problems{problem(label_, info.name, message)}; };
    try {
        // The bytes go straight into the values, a piece at a time (an .npz entry inflated as it
        // is read, its CRC over all of it), so a tensor costs its values and a piece, not twice its
        // size; bytes held in memory are converted where they are.
        Decoder<T> decoder(element_of(info.dtype), info, out, count);
        const bool inside = info.offset <= source_->size() && info.bytes <= source_->size() - info.offset;
        std::string trouble;
        if (info.entry >= 0) {
            const Entry& entry = entries_[static_cast<size_t>(info.entry)];
            if (info.offset > entry.size || info.bytes > entry.size - info.offset)
                return fail("its data lies outside its entry");
            std::uint64_t at = 0;  // the entry's bytes handed over so far
            trouble = stream_entry(entry, [&](const char* p, std::uint64_t n) {
                const std::uint64_t from = std::max(at, info.offset), to = std::min(at + n, info.offset + info.bytes);
                const bool go_on = from >= to || decoder.take(p + (from - at), to - from);
                at += n;
                return go_on;
            });
        } else if (source_->data() && inside) {
            decoder.take(source_->data() + info.offset, info.bytes);
        } else {
            constexpr std::uint64_t piece = 1 << 20;
            std::string bytes(std::min(piece, info.bytes), '\0');  // one piece, reused
            for (std::uint64_t done = 0; done < info.bytes && decoder.problem().empty(); done += piece) {
                const std::uint64_t n = std::min(piece, info.bytes - done);
                if (info.offset + done > source_->size() || n > source_->size() - (info.offset + done) ||
                    !source_->read(info.offset + done, n, bytes.data())) {
                    trouble = "cannot read its data (the file is shorter than its header says)";
                    break;
                }
                decoder.take(bytes.data(), n);
            }
        }
        if (!decoder.problem().empty()) return fail(decoder.problem());
        if (!trouble.empty()) return fail(trouble);
        return {};
    } catch (const std::bad_alloc&) {
        return fail("out of memory");
    }
}

Problems TensorFile::keep_in_memory() {
    if (source_->data()) return {};
    try {
        std::uint64_t origin = source_->size();  // where the first tensor's data begins
        for (const TensorInfo& t : tensors_)
            if (t.entry < 0) origin = std::min(origin, t.offset);
        auto memory = std::make_shared<HeldSource>(source_->size(), origin);
        if (!source_->read(0, memory->size(), memory->writable()))
            return {{label_, "cannot read it whole (the file is shorter than when it was opened)"}};
        source_ = std::move(memory);
        return {};
    } catch (const std::bad_alloc&) {
        return {{label_, "out of memory while reading it whole"}};
    }
}

// Whether every one of k 16-bit values is finite (its exponent bits not all ones: 0x7c00 for
// float16, 0x7f80 for bfloat16).
template <class Half>
bool all_finite(const Half* p, std::uint64_t k) {
    const std::uint16_t exponent = std::is_same_v<Half, bfloat16> ? 0x7f80 : 0x7c00;
    std::uint16_t any = 0;  // nonzero once some value has all exponent bits set
    for (std::uint64_t i = 0; i < k; ++i) any |= static_cast<std::uint16_t>((p[i].bits & exponent) == exponent);
    return any == 0;
}

template <class T>
const T* TensorFile::in_place(std::string_view wanted) const {
    const TensorInfo* info = find(wanted);
    const unsigned char* bytes = source_->storage();
    if (!info || !bytes || info->entry >= 0 || (info->fortran_order && info->shape.size() > 1)) return nullptr;
    const Element e = element_of(info->dtype);
    if (!e.readable || e.bfloat != std::is_same_v<T, bfloat16> || e.size != static_cast<int>(sizeof(T)) ||
        e.big_endian || std::endian::native != std::endian::little)
        return nullptr;
    const std::optional<std::uint64_t> count = element_count(info->shape);
    if (!count || info->offset > source_->size() || info->bytes > source_->size() - info->offset ||
        info->bytes / sizeof(T) != *count || info->bytes % sizeof(T) != 0)
        return nullptr;
    const unsigned char* at = bytes + info->offset;
    if (reinterpret_cast<std::uintptr_t>(at) % alignof(T) != 0) return nullptr;
    const T* values = reinterpret_cast<const T*>(at);
    if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>)
        return all_finite(values, *count) ? values : nullptr;
    else
        return first_not_finite(values, *count) == *count ? values : nullptr;
}

template const float* TensorFile::in_place<float>(std::string_view) const;
template const double* TensorFile::in_place<double>(std::string_view) const;
template const bfloat16* TensorFile::in_place<bfloat16>(std::string_view) const;
template const float16* TensorFile::in_place<float16>(std::string_view) const;

std::uint64_t TensorFile::byte_size() const { return source_->size(); }

bool TensorFile::in_memory() const { return source_->data() != nullptr; }

// ---------------------------------------------------------------------------------------------
// Conversions and writing

double half_to_double(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    double v;
    if (exponent == 0)
        v = std::ldexp(mantissa, -24);  // subnormal: mantissa · 2^−24
    else if (exponent == 31)
        v = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else {  // normal: (1 + mantissa/1024) · 2^(exponent − 15), built as a double's bits
        const std::uint64_t b = std::uint64_t(exponent - 15 + 1023) << 52 | std::uint64_t(mantissa) << 42;
        std::memcpy(&v, &b, 8);
    }
    return sign ? -v : v;
}

double bfloat16_to_double(std::uint16_t bits) {
    const std::uint32_t f32 = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    return f;
}

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
