#include "tensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace attnviz::core {

// ---------------------------------------------------------------------------------------------
// Where the bytes come from

struct TensorFile::Source {
    virtual ~Source() = default;
    virtual std::uint64_t size() const = 0;
    // Exactly n bytes at `offset` into out; false when the range is outside the source or the read fails.
    virtual bool read(std::uint64_t offset, std::uint64_t n, char* out) const = 0;
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

Problem problem(const std::string& label, const std::string& tensor, const std::string& message) {
    return {label + (tensor.empty() ? "" : ": " + tensor), message};
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
            if (!eat(':')) return fail(error, "expected ':' after '" + key + "'");
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
                return fail(error, "unexpected or repeated key '" + key + "' in the header");
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
    if (e.size == 0) return fail("unknown dtype '" + info.dtype + "'");
    const auto count = element_count(info.shape);
    const auto bytes = count ? times(*count, static_cast<std::uint64_t>(e.size)) : std::nullopt;
    if (!bytes) return fail("the shape " + shape_text(info.shape) + " is too large");
    const std::uint64_t have = length - data_start;
    if (*bytes != have)
        return fail("shape " + shape_text(info.shape) + " of " + info.dtype + " needs " + std::to_string(*bytes) +
                    " bytes of data, the file holds " + std::to_string(have) + (have < *bytes ? " (truncated?)" : ""));
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
    using nlohmann::json;
    const Source& s = *source_;
    const auto fail = [&](const std::string& tensor, const std::string& m) {
        return Problems{problem(label_, tensor, m)};
    };
    const auto len_bytes = read_range(s, 0, 8);
    const std::uint64_t header_len = le(len_bytes->data(), 8);
    if (header_len > s.size() - 8)
        return fail("", "the header says it is " + std::to_string(header_len) + " bytes, more than the file holds (" +
                            std::to_string(s.size()) + " bytes); not a safetensors file, or truncated");
    if (header_len > max_tensor_header_bytes)
        return fail("", "a header of " + std::to_string(header_len) + " bytes is over the limit of " +
                            std::to_string(max_tensor_header_bytes));
    const auto text = read_range(s, 8, header_len);
    if (!text) return fail("", "cannot read the header");
    // A JSON object may repeat a key, and the parser keeps the last value: a tensor named twice
    // (two sets of offsets, one of them silently dropped) is refused instead.
    std::set<std::string> names;
    std::optional<std::string> twice;
    const json::parser_callback_t note_names = [&](int depth, json::parse_event_t event, json& parsed) {
        if (depth == 1 && event == json::parse_event_t::key && parsed.is_string() && !twice &&
            !names.insert(parsed.get<std::string>()).second)
            twice = parsed.get<std::string>();
        return true;
    };
    const json header = json::parse(*text, note_names, false);
    if (header.is_discarded() || !header.is_object()) return fail("", "the header is not a JSON object");
    if (twice) return fail(*twice, "appears twice in the header");
    const std::uint64_t data_start = 8 + header_len, data_len = s.size() - data_start;
    struct Range {
        std::uint64_t begin, end;
        std::string name;
    };
    std::vector<Range> ranges;
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") {
            if (!value.is_object()) return fail("__metadata__", "expected an object of texts");
            for (const auto& [k, v] : value.items()) {
                if (!v.is_string()) return fail("__metadata__." + k, "expected a text");
                metadata_[k] = v.get<std::string>();
            }
            continue;
        }
        if (!value.is_object()) return fail(name, "expected an object with dtype, shape and data_offsets");
        const auto dtype = value.find("dtype");
        const auto shape = value.find("shape");
        const auto offsets = value.find("data_offsets");
        if (dtype == value.end() || !dtype->is_string()) return fail(name, "dtype: missing or not a text");
        if (shape == value.end() || !shape->is_array() || shape->size() > 32)
            return fail(name, "shape: missing or not an array of sizes");
        if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
            !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
            return fail(name, "data_offsets: expected [begin, end]");
        TensorInfo info;
        info.name = name;
        info.dtype = dtype->get<std::string>();
        for (const json& d : *shape) {
            if (!d.is_number_unsigned()) return fail(name, "shape: expected whole numbers ≥ 0");
            info.shape.push_back(d.get<std::uint64_t>());
        }
        const int item = safetensors_item_size(info.dtype);
        if (item == 0) return fail(name, "unknown dtype " + dtype->dump());
        const std::uint64_t begin = (*offsets)[0].get<std::uint64_t>(), end = (*offsets)[1].get<std::uint64_t>();
        if (begin > end || end > data_len)
            return fail(name, "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                  "] go past the end of the file (" + std::to_string(data_len) + " bytes of data)");
        const auto count = element_count(info.shape);
        const auto bytes = count ? times(*count, static_cast<std::uint64_t>(item)) : std::nullopt;
        if (!bytes || *bytes != end - begin)
            return fail(name, "shape " + shape_text(info.shape) + " of " + info.dtype + " needs " +
                                  (bytes ? std::to_string(*bytes) : std::string("too many")) +
                                  " bytes, data_offsets give " + std::to_string(end - begin));
        info.offset = data_start + begin;
        info.bytes = end - begin;
        ranges.push_back({begin, end, name});
        tensors_.push_back(std::move(info));
    }
    // Tensors may not share bytes: in order of their beginnings, each (empty ones aside) must begin
    // at or after the furthest end so far.
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    const Range* furthest = nullptr;
    for (const Range& r : ranges) {
        if (r.begin == r.end) continue;
        if (furthest && r.begin < furthest->end) return fail(r.name, "its data overlaps " + furthest->name + "'s");
        if (!furthest || r.end > furthest->end) furthest = &r;
    }
    return {};
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

Result<std::string> TensorFile::entry_bytes(const Entry& e, const std::string& name) const {
    using R = Result<std::string>;
    const auto raw = read_range(*source_, e.data_offset, e.compressed);
    if (!raw) return R::fail({problem(label_, name, "cannot read its data (truncated?)")});
    std::string out;
    if (!e.deflated) {
        out = std::move(*raw);
    } else {
        out.assign(e.size, '\0');
        z_stream z{};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return R::fail({problem(label_, name, "cannot start inflating")});
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw->data()));
        z.avail_in = static_cast<uInt>(raw->size());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        const int rc = inflate(&z, Z_FINISH);
        const std::uint64_t produced = z.total_out;
        inflateEnd(&z);
        if (rc != Z_STREAM_END || produced != e.size)
            return R::fail({problem(label_, name,
                                    rc == Z_STREAM_END || rc == Z_BUF_ERROR
                                        ? "inflates to a size other than the " + std::to_string(e.size) +
                                              " bytes the directory says"
                                        : "its compressed data is corrupt")});
    }
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(out.data()),
                            static_cast<uInt>(out.size()));
    if (crc != e.crc) return R::fail({problem(label_, name, "CRC mismatch: the data is corrupt")});
    return R::ok(std::move(out));
}

const TensorInfo* TensorFile::find(std::string_view name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Reading a tensor

Result<Tensor> TensorFile::read(std::string_view wanted) const {
    using R = Result<Tensor>;
    const TensorInfo* info = find(wanted);
    if (!info) return R::fail({problem(label_, std::string(wanted), "no such tensor in the file")});
    const std::string& name = info->name;
    const Element e = element_of(info->dtype);
    if (!e.readable)
        return R::fail({problem(
            label_, name, "unsupported dtype " + info->dtype + " (attnviz reads F64, F32, F16, BF16 and f8, f4, f2)")});
    const std::uint64_t count = info->bytes / static_cast<std::uint64_t>(e.size);
    if (count > max_tensor_values)
        return R::fail(
            {problem(label_, name,
                     std::to_string(count) + " values is over the limit of " + std::to_string(max_tensor_values))});
    try {
        // The tensor's bytes start at `at` in `data`: the whole entry of an .npz (its CRC is of all of
        // it), just the tensor's bytes otherwise.
        std::string data;
        std::uint64_t at = 0;
        if (info->entry >= 0) {
            Result<std::string> member = entry_bytes(entries_[static_cast<size_t>(info->entry)], name);
            if (!member) return R::fail(std::move(member.problems));
            data = std::move(*member.value);
            if (info->offset > data.size() || info->bytes > data.size() - info->offset)
                return R::fail({problem(label_, name, "its data lies outside its entry")});
            at = info->offset;
        } else {
            auto bytes = read_range(*source_, info->offset, info->bytes);
            if (!bytes)
                return R::fail(
                    {problem(label_, name, "cannot read its data (the file is shorter than its header says)")});
            data = std::move(*bytes);
        }
        Tensor t;
        t.name = name;
        t.shape = info->shape;
        t.values.resize(count);
        // C order from C or Fortran order: the Fortran index of a C index, with the strides reversed.
        const size_t dims = t.shape.size();
        std::vector<std::uint64_t> index(dims, 0), f_stride(dims, 1);
        for (size_t d = 1; d < dims; ++d) f_stride[d] = f_stride[d - 1] * t.shape[d - 1];
        for (std::uint64_t c = 0; c < count; ++c) {
            std::uint64_t from = c;
            if (info->fortran_order && dims > 1) {
                from = 0;
                for (size_t d = 0; d < dims; ++d) from += index[d] * f_stride[d];
                for (size_t d = dims; d-- > 0;) {  // the next C index: the last dimension fastest
                    if (++index[d] < t.shape[d]) break;
                    index[d] = 0;
                }
            }
            const double v = decode(data.data() + at + from * static_cast<std::uint64_t>(e.size), e);
            if (!std::isfinite(v))
                return R::fail({problem(label_, name,
                                        "element " + std::to_string(c) + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                                            " (values must be finite)")});
            t.values[c] = v;
        }
        return R::ok(std::move(t));
    } catch (const std::bad_alloc&) {
        return R::fail({problem(label_, name, "out of memory")});
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions and writing

double half_to_double(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    double v;
    if (exponent == 0)
        v = std::ldexp(mantissa, -24);  // subnormal: mantissa · 2^−24
    else if (exponent == 31)
        v = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else
        v = std::ldexp(1024 + mantissa, exponent - 25);
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
