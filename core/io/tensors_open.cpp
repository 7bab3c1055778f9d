// Opening a tensor file (TensorFile::open, from_bytes): a file read with pread, or bytes in memory,
// told apart by its first bytes and handed to its reader (tensors_npy.cpp, tensors_npz.cpp,
// tensors_safetensors.cpp); and the helpers the readers share (tensors_detail.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>

#include "core/base/format.hpp"
#include "core/io/tensors_detail.hpp"

namespace attnviz::core {

using namespace detail;

// ---------------------------------------------------------------------------------------------
// Where the bytes come from

namespace {

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

}  // namespace

namespace detail {

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

int safetensors_item_size(const std::string& dtype) {
    static const std::pair<const char*, int> sizes[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},    {"BF16", 2},
                                                        {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
                                                        {"U64", 8},  {"U32", 4},     {"U16", 2},    {"U8", 1},
                                                        {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& [name, size] : sizes)
        if (dtype == name) return size;
    return 0;
}

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

Problem problem(const std::string& label, const std::string& tensor, const std::string& message) {
    return {label + (tensor.empty() ? "" : ": " + printable(tensor)), message};
}

}  // namespace detail

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

}  // namespace attnviz::core
