// More tests of the tensor file readers (core/io/tensors.hpp), with every fixture built here in code: a
// safetensors builder, hand-written .npy headers, and a zip writer (stored and deflated entries, each
// field of which a test can make lie). Exact values bit for bit, and for every refusal the file and
// the tensor named in the message. Files on disk: opened, read on demand, truncated under the reader.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/io/tensors.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using namespace attnviz::test;

// ---------------------------------------------------------------------------------------------
// Builders

std::string le(std::uint64_t v, int bytes) {
    std::string s;
    for (int k = 0; k < bytes; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
    return s;
}
void put_le(std::string& s, std::size_t at, std::uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) s[at + static_cast<std::size_t>(k)] = static_cast<char>((v >> (8 * k)) & 0xff);
}

// Values as stored: little- or big-endian doubles, floats and 16-bit patterns.
std::string f8(const std::vector<double>& v, bool big = false) {
    std::string s;
    for (double d : v) {
        std::string b = le(std::bit_cast<std::uint64_t>(d), 8);
        if (big) b.assign(b.rbegin(), b.rend());
        s += b;
    }
    return s;
}
std::string f4(const std::vector<float>& v) {
    std::string s;
    for (float f : v) s += le(std::bit_cast<std::uint32_t>(f), 4);
    return s;
}
std::string u16(const std::vector<std::uint16_t>& v, bool big = false) {
    std::string s;
    for (std::uint16_t b : v) s += big ? std::string{static_cast<char>(b >> 8), static_cast<char>(b & 0xff)} : le(b, 2);
    return s;
}

std::string safetensors(const std::string& header, const std::string& data) {
    return le(header.size(), 8) + header + data;
}

// A .npy file with this header dictionary (padded as NumPy pads it) and data; version 1 or 2.
std::string npy(const std::string& dict, const std::string& data, int version = 1) {
    const std::size_t len_bytes = version == 1 ? 2 : 4;
    std::string h = dict;
    while ((8 + len_bytes + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
    return out + le(h.size(), static_cast<int>(len_bytes)) + h + data;
}
std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
           ", }";
}

std::string deflate_raw(const std::string& in) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return "";
    std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? out : "";
}

std::uint32_t crc_of(const std::string& s) {
    return static_cast<std::uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

// One member of a zip archive; the optional fields replace what the writer would put in both headers.
struct ZipEntry {
    std::string name;
    std::string content;
    bool deflate = false;
    std::optional<std::uint32_t> crc, compressed, size, local_offset;
    std::optional<std::uint16_t> method;
    std::uint16_t flags = 0;
    bool zip64_local_extra = false;  // as NumPy writes: sizes 0xFFFFFFFF in the local header, real ones in an extra
};
ZipEntry entry(std::string name, std::string content, bool deflate = false) {
    ZipEntry e;
    e.name = std::move(name);
    e.content = std::move(content);
    e.deflate = deflate;
    return e;
}

// A zip archive as numpy.savez writes one: local header and data of each entry, the central
// directory, the end record (no comment, so it is the last 22 bytes).
std::string zip(const std::vector<ZipEntry>& entries) {
    std::string out, central;
    for (const ZipEntry& e : entries) {
        const std::string data = e.deflate ? deflate_raw(e.content) : e.content;
        const std::uint64_t method = e.method.value_or(e.deflate ? 8 : 0);
        const std::uint64_t crc = e.crc.value_or(crc_of(e.content));
        const std::uint64_t csize = e.compressed.value_or(static_cast<std::uint32_t>(data.size()));
        const std::uint64_t usize = e.size.value_or(static_cast<std::uint32_t>(e.content.size()));
        const std::uint64_t offset = e.local_offset.value_or(static_cast<std::uint32_t>(out.size()));
        const std::string extra = e.zip64_local_extra ? le(1, 2) + le(16, 2) + le(usize, 8) + le(csize, 8) : "";
        out += le(0x04034b50, 4) + le(20, 2) + le(e.flags, 2) + le(method, 2) + le(0, 4) + le(crc, 4) +
               le(e.zip64_local_extra ? 0xFFFFFFFF : csize, 4) + le(e.zip64_local_extra ? 0xFFFFFFFF : usize, 4) +
               le(e.name.size(), 2) + le(extra.size(), 2) + e.name + extra + data;
        central += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(e.flags, 2) + le(method, 2) + le(0, 4) + le(crc, 4) +
                   le(csize, 4) + le(usize, 4) + le(e.name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) +
                   le(0, 4) + le(offset, 4) + e.name;
    }
    const std::size_t cd_offset = out.size();
    out += central;
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(entries.size(), 2) + le(entries.size(), 2) +
           le(central.size(), 4) + le(cd_offset, 4) + le(0, 2);
    return out;
}

// ---------------------------------------------------------------------------------------------
// Checks

// Opens `bytes` as `label` and reads `tensor`, which must hold exactly `want` (bit for bit) in `shape`.
void expect_exact(const std::string& bytes, const std::string& label, const std::string& tensor,
                  const std::vector<std::uint64_t>& shape, const std::vector<double>& want) {
    SCOPED_TRACE(label + " " + tensor);
    const Result<TensorFile> f = TensorFile::from_bytes(bytes, label);
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<Tensor> t = f.value->read(tensor);
    ASSERT_TRUE(t) << all_text(t.problems);
    EXPECT_EQ(t.value->name, tensor);
    EXPECT_EQ(t.value->shape, shape);
    ASSERT_EQ(t.value->values.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k)
        EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[k]), std::bit_cast<std::uint64_t>(want[k]))
            << "element " << k << ": " << t.value->values[k] << ", want " << want[k];
}

// `bytes`, opened as `label`, is refused on opening or, when it opens, on reading `tensor`; the
// message names the file, the tensor (unless `tensor` is empty) and contains every one of `parts`.
void expect_refused(const std::string& bytes, const std::string& label, const std::string& tensor,
                    const std::vector<std::string>& parts) {
    SCOPED_TRACE(label + " " + tensor);
    const Result<TensorFile> f = TensorFile::from_bytes(bytes, label);
    Problems problems = f.problems;
    if (f) {
        const Result<Tensor> t = f.value->read(tensor);
        ASSERT_FALSE(t) << "read " << tensor << " of a bad file";
        problems = t.problems;
    }
    ASSERT_EQ(problems.size(), 1u) << all_text(problems);
    const std::string text = problems[0].str();
    EXPECT_EQ(text.rfind(label + ": ", 0), 0u) << "does not start with the file: " << text;
    if (!tensor.empty()) {
        EXPECT_TRUE(contains(problems[0].path, label + ": " + tensor)) << text;
    }
    for (const std::string& p : parts) EXPECT_TRUE(contains(text, p)) << "lacks \"" << p << "\": " << text;
}

constexpr double min_subnormal = 4.9406564584124654e-324;

// ---------------------------------------------------------------------------------------------
// safetensors

TEST(TensorFileBuilt, SafetensorsHalfAndBfloat16BitPatternsConvertExactly) {
    const std::string data = u16({0x3C00, 0xC000, 0x0001, 0x7BFF, 0x8000, 0x03FF, 0x3555}) +  // F16, 14 bytes
                             u16({0x3F80, 0x4049, 0x0001, 0xC2F7});                           // BF16, 8 bytes
    const std::string header = R"({"h": {"dtype": "F16", "shape": [7], "data_offsets": [0, 14]},
                                   "b": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [14, 22]}})";
    const std::string file = safetensors(header, data);
    expect_exact(file, "half.safetensors", "h", {7},
                 {1.0, -2.0, std::ldexp(1.0, -24), 65504.0, -0.0, 1023 * std::ldexp(1.0, -24), 0.333251953125});
    expect_exact(file, "half.safetensors", "b", {2, 2}, {1.0, 3.140625, std::ldexp(1.0, -133), -123.5});
}

TEST(TensorFileBuilt, SafetensorsF64AndF32AreExactAndMetadataIsKept) {
    const std::vector<double> d = {-0.0, min_subnormal, 1e308, -1e-300, 0.1, 1.0 / 3.0};
    const std::vector<float> f = {-0.0f, 1e-45f, 3.4e38f, 0.1f};
    const std::string header = R"({"__metadata__": {"format": "pt", "heads": "12"},
                                   "d": {"dtype": "F64", "shape": [3, 2], "data_offsets": [0, 48]},
                                   "f": {"dtype": "F32", "shape": [4], "data_offsets": [48, 64]},
                                   "scalar": {"dtype": "F32", "shape": [], "data_offsets": [64, 68]},
                                   "none": {"dtype": "F32", "shape": [0, 5], "data_offsets": [68, 68]}})";
    const std::string file = safetensors(header, f8(d) + f4(f) + f4({2.5f}));
    expect_exact(file, "m.safetensors", "d", {3, 2}, d);
    expect_exact(file, "m.safetensors", "f", {4}, {-0.0, double(1e-45f), double(3.4e38f), double(0.1f)});
    expect_exact(file, "m.safetensors", "scalar", {}, {2.5});
    expect_exact(file, "m.safetensors", "none", {0, 5}, {});
    const Result<TensorFile> t = TensorFile::from_bytes(file, "m.safetensors");
    ASSERT_TRUE(t);
    EXPECT_EQ(t.value->format(), "safetensors");
    EXPECT_EQ(t.value->metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"heads", "12"}}));
    ASSERT_EQ(t.value->tensors().size(), 4u);
    const TensorInfo* info = t.value->find("d");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->dtype, "F64");
    EXPECT_EQ(info->shape, (std::vector<std::uint64_t>{3, 2}));
    EXPECT_EQ(info->bytes, 48u);
    EXPECT_EQ(t.value->find("absent"), nullptr);
}

TEST(TensorFileBuilt, SafetensorsOtherDtypesAreListedButNotRead) {
    const std::string header = R"({"ids": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]},
                                   "mask": {"dtype": "BOOL", "shape": [4], "data_offsets": [16, 20]},
                                   "q": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [20, 24]},
                                   "u": {"dtype": "U8", "shape": [2, 2], "data_offsets": [24, 28]}})";
    const std::string file = safetensors(header, std::string(28, '\1'));
    const Result<TensorFile> f = TensorFile::from_bytes(file, "ids.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    ASSERT_NE(f.value->find("q"), nullptr);
    EXPECT_EQ(f.value->find("q")->dtype, "F8_E4M3");
    EXPECT_EQ(f.value->find("u")->shape, (std::vector<std::uint64_t>{2, 2}));
    expect_refused(file, "ids.safetensors", "ids", {"unsupported dtype I64 (attnviz reads F64, F32, F16, BF16"});
    expect_refused(file, "ids.safetensors", "mask", {"unsupported dtype BOOL"});
    expect_refused(file, "ids.safetensors", "q", {"unsupported dtype F8_E4M3"});
    expect_refused(file, "ids.safetensors", "u", {"unsupported dtype U8"});
}

TEST(TensorFileBuilt, LyingSafetensorsHeadersAreRefusedNamingFileAndTensor) {
    const std::string data = f4({1, 2, 3, 4, 5, 6});
    const auto with = [&](const std::string& tensor_json) {
        return safetensors("{\"h.0.attn.c_attn.weight\": " + tensor_json + "}", data);
    };
    const std::string w = "h.0.attn.c_attn.weight";
    const std::string label = "model.safetensors";
    ASSERT_TRUE(TensorFile::from_bytes(with(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})"), label));
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 999999]})"), label, w,
                   {"data_offsets [0, 999999] go past the end of the file (24 bytes of data)"});
    expect_refused(with(R"({"dtype": "F32", "shape": [1], "data_offsets": [8, 4]})"), label, w,
                   {"data_offsets [8, 4]"});
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]})"), label, w,
                   {"needs 24 bytes", "give 20"});
    expect_refused(with(R"({"dtype": "F32", "shape": [4294967296, 4294967296, 2], "data_offsets": [0, 24]})"), label, w,
                   {"needs too many bytes"});
    expect_refused(with(R"({"dtype": "F32", "shape": [18446744073709551615, 2], "data_offsets": [0, 24]})"), label, w,
                   {"needs too many bytes"});
    expect_refused(with(R"({"dtype": "F31", "shape": [2, 3], "data_offsets": [0, 24]})"), label, w,
                   {"unknown dtype \"F31\""});
    expect_refused(with(R"({"shape": [2, 3], "data_offsets": [0, 24]})"), label, w, {"dtype"});
    expect_refused(with(R"({"dtype": 32, "shape": [2, 3], "data_offsets": [0, 24]})"), label, w, {"dtype"});
    expect_refused(with(R"({"dtype": "F32", "shape": "2x3", "data_offsets": [0, 24]})"), label, w, {"shape"});
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3.5], "data_offsets": [0, 24]})"), label, w, {"shape"});
    expect_refused(with(R"({"dtype": "F32", "shape": [-2, -3], "data_offsets": [0, 24]})"), label, w, {"shape"});
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [0]})"), label, w, {"data_offsets"});
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [-4, 24]})"), label, w, {"data_offsets"});
    expect_refused(with(R"({"dtype": "F32", "shape": [2, 3]})"), label, w, {"data_offsets"});
    expect_refused(with(R"([0, 24])"), label, w, {"expected an object"});
    // Two tensors sharing bytes.
    expect_refused(safetensors(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                   "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                               data),
                   label, "b", {"overlaps a's"});
    // A tensor named twice (a JSON parser would silently keep the last).
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                   "w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                               data),
                   label, "w", {"appears twice in the header"});
    // An overlap is found past an empty tensor lying inside the first one.
    expect_refused(safetensors(R"({"a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]},
                                   "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]},
                                   "c": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                               data),
                   label, "c", {"overlaps a's"});
    ASSERT_TRUE(TensorFile::from_bytes(safetensors(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                                       "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]},
                                                       "c": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                                                   data),
                                       label));
    // Metadata must be an object of texts.
    expect_refused(safetensors(R"({"__metadata__": {"heads": 12}})", data), label, "__metadata__.heads", {"text"});
    expect_refused(safetensors(R"({"__metadata__": ["a"]})", data), label, "__metadata__", {"object"});
}

TEST(TensorFileBuilt, SafetensorsTensorsMustTileTheDataSectionExactly) {
    const std::string label = "m.safetensors";
    const std::string data = f4({1, 2, 3, 4, 5, 6});  // 24 bytes
    const auto two = [&](const std::string& a, const std::string& b, const std::string& bytes) {
        return safetensors("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": " + a +
                               "}, \"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": " + b + "}}",
                           bytes);
    };
    ASSERT_TRUE(TensorFile::from_bytes(two("[0, 8]", "[8, 24]", data), label));
    ASSERT_TRUE(TensorFile::from_bytes(two("[16, 24]", "[0, 16]", data), label));  // any order in the header
    // A gap before the first tensor, a gap between two, bytes after the last.
    expect_refused(two("[4, 12]", "[12, 28]", data + "1234"), label, "a",
                   {"its data begins at byte 4 of the data section, the first tensor's: the 4 bytes before it belong "
                    "to no tensor"});
    expect_refused(two("[0, 8]", "[12, 28]", data + "1234"), label, "b",
                   {"its data begins at byte 12 of the data section, but a's ends at byte 8: the 4 bytes between "
                    "them belong to no tensor"});
    expect_refused(two("[0, 8]", "[8, 24]", data + "1234"), label, "b",
                   {"4 bytes of the data section's 28 follow the last tensor, which ends at byte 24"});
    expect_refused(safetensors(R"({"__metadata__": {"k": "v"}})", "xy"), label, "",
                   {"2 bytes of the data section's 2 follow the header, and no tensor holds any"});
    // An empty tensor holds no bytes: it may lie anywhere in the data section.
    ASSERT_TRUE(TensorFile::from_bytes(safetensors(R"({"e": {"dtype": "F32", "shape": [0], "data_offsets": [24, 24]},
                                                       "a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}})",
                                                   data),
                                       label));
}

TEST(TensorFileBuilt, AShiftedHeaderLengthIsRefusedNotReadOneElementOff) {
    // The header padded with spaces to 8 bytes, as safetensors writes it; its length told 4 short,
    // the padding becomes the data section's first bytes and every offset points 4 bytes early.
    std::string header = R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})";
    header.append((8 - header.size() % 8) % 8 + 8, ' ');
    const std::string good = safetensors(header, f4({1, 2, 3, 4, 5, 6}));
    expect_exact(good, "w.safetensors", "w", {2, 3}, {1, 2, 3, 4, 5, 6});
    std::string shifted = good;
    put_le(shifted, 0, header.size() - 4, 8);
    expect_refused(shifted, "w.safetensors", "w",
                   {"4 bytes of the data section's 28 follow the last tensor, which ends at byte 24"});
}

TEST(TensorFileBuilt, ManyTensorsAndLongArraysParseInOnePass) {
    // 40,000 tensors of one F32 each (parsing them once took time quadratic in their number), and
    // as many empty ones.
    std::string header = "{", data;
    for (int k = 0; k < 40000; ++k) {
        header += (k ? ", \"t" : "\"t") + std::to_string(k) +
                  "\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [" + std::to_string(4 * k) + ", " +
                  std::to_string(4 * k + 4) + "]}, \"e" + std::to_string(k) +
                  "\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [0, 0]}";
        data += f4({static_cast<float>(k)});
    }
    const Result<TensorFile> f = TensorFile::from_bytes(safetensors(header + "}", data), "many.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    EXPECT_EQ(f.value->tensors().size(), 80000u);
    const Result<Tensor> last = f.value->read("t39999");
    ASSERT_TRUE(last) << all_text(last.problems);
    EXPECT_EQ(last.value->values, std::vector<double>{39999});
    // Listed in name order, as before.
    EXPECT_EQ(f.value->tensors().front().name, "e0");
    EXPECT_EQ(f.value->tensors().back().name, "t9999");
    // A shape of a million dimensions is refused at its 33rd, not read whole.
    std::string shape = "[1";
    for (int k = 1; k < 1000000; ++k) shape += ",1";
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": )" + shape + R"(], "data_offsets": [0, 4]}})",
                               f4({1})),
                   "long.safetensors", "w", {"shape: more than 32 dimensions"});
    // A key of a tensor's entry given twice is refused rather than one of them kept.
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "dtype": "F64", "shape": [1], "data_offsets": [0, 4]}})",
                               f4({1})),
                   "twice.safetensors", "w", {"dtype: given twice"});
}

TEST(TensorFileBuilt, JsonGivenAsACheckpointIsNamedAsSuch) {
    expect_refused("{\n \"format\": \"attnviz-session\",\n \"version\": 1\n}\n", "s.json", "",
                   {"is an attnviz session, not a checkpoint (a .safetensors, .npz or .npy file of tensors); open it "
                    "as a session: attnviz FILE, or File > Open"});
    expect_refused("\xEF\xBB\xBF [{\"a\": 1}, 2, 3]", "list.json", "", {"is JSON text, not a checkpoint"});
    expect_refused("{\"format\": \"attnviz-trace\", \"version\": 3}", "t.json", "", {"is an attnviz trace"});
}

TEST(TensorFileBuilt, SafetensorsThatAreNotSafetensorsAreRefused) {
    const std::string data = f4({1, 2});
    expect_refused(le(1000, 8) + "{}", "a.safetensors", "", {"1000 bytes, more than the file holds (10 bytes)"});
    expect_refused(le(~std::uint64_t{0}, 8) + "{}", "a.safetensors", "", {"more than the file holds"});
    expect_refused(safetensors(R"({"w": {"dtype": "F32", )", data), "a.safetensors", "", {"not a JSON object"});
    expect_refused(safetensors(R"([1, 2])", data), "a.safetensors", "", {"not a JSON object"});
    expect_refused(safetensors("\xff\xfe{}", data), "a.safetensors", "", {"not a JSON object"});
    expect_refused("1234567", "tiny.bin", "", {"not a safetensors, .npy or .npz file (only 7 bytes)"});
    expect_refused("", "empty.bin", "", {"only 0 bytes"});
}

TEST(TensorFileBuilt, NaNAndInfinityAreRefusedAtReadWithTheirIndex) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const std::string header = R"({"x": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]},
                                   "y": {"dtype": "BF16", "shape": [3], "data_offsets": [6, 12]},
                                   "z": {"dtype": "F64", "shape": [2], "data_offsets": [12, 28]}})";
    const std::string file = safetensors(header, u16({0, 0x3C00, 0x7E00}) + u16({0xFF80, 0, 0}) + f8({1.0, -inf}));
    const Result<TensorFile> f = TensorFile::from_bytes(file, "nan.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);  // the values are checked when read, not when opened
    expect_refused(file, "nan.safetensors", "x", {"element 2 is NaN"});
    expect_refused(file, "nan.safetensors", "y", {"element 0 is infinite"});
    expect_refused(file, "nan.safetensors", "z", {"element 1 is infinite"});

    std::vector<double> v(20, 0.5);
    v[17] = nan;
    expect_refused(npy_bytes({20}, v), "X.npy", "X", {"element 17 is NaN"});
    EXPECT_EQ(all_text(TensorFile::from_bytes(npy_bytes({20}, v), "X.npy").value->read("X").problems),
              "X.npy: X: element 17 is NaN (values must be finite)\n");
    // Fortran order: the index is the C-order one. (1, 0) of a 2×3 array is stored second.
    expect_refused(npy(dict("<f8", true, "(2, 3)"), f8({0, nan, 0, 0, 0, 0})), "F.npy", "F", {"element 3 is NaN"});
}

// ---------------------------------------------------------------------------------------------
// .npy

TEST(TensorFileBuilt, NpyEveryDtypeByteOrderAndLayout) {
    // C order, little-endian f4.
    expect_exact(npy(dict("<f4", false, "(2, 2)"), f4({1.5f, -0.0f, 1e-45f, 0.1f})), "a.npy", "a", {2, 2},
                 {1.5, -0.0, double(1e-45f), double(0.1f)});
    // Big-endian f8, '=' (native, little here) f8, little- and big-endian f2.
    const std::vector<double> d = {min_subnormal, -1e308, 2.0 / 3.0};
    expect_exact(npy(dict(">f8", false, "(3,)"), f8(d, true)), "b.npy", "b", {3}, d);
    expect_exact(npy(dict("=f8", false, "(3,)"), f8(d)), "n.npy", "n", {3}, d);
    expect_exact(npy(dict("<f2", false, "(3,)"), u16({0x3C00, 0x0001, 0xFBFF})), "h.npy", "h", {3},
                 {1.0, std::ldexp(1.0, -24), -65504.0});
    expect_exact(npy(dict(">f2", false, "(3,)"), u16({0x3C00, 0x0001, 0xFBFF}, true)), "h.npy", "h", {3},
                 {1.0, std::ldexp(1.0, -24), -65504.0});
    // Fortran order, 2-D and 3-D, returned in C order: element (i, j, k) of 2×3×2 is stored at i + 2j + 6k.
    expect_exact(npy(dict("<f8", true, "(2, 3)"), f8({0, 10, 1, 11, 2, 12})), "f.npy", "f", {2, 3},
                 {0, 1, 2, 10, 11, 12});
    std::vector<double> stored(12), c_order(12);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 2; ++k) {
                const double v = 100 * i + 10 * j + k;
                stored[static_cast<std::size_t>(i + 2 * j + 6 * k)] = v;
                c_order[static_cast<std::size_t>(i * 6 + j * 2 + k)] = v;
            }
    expect_exact(npy(dict("<f8", true, "(2, 3, 2)"), f8(stored)), "g.npy", "g", {2, 3, 2}, c_order);
    // 0-d and empty arrays; the version 2.0 header (a 4-byte length).
    expect_exact(npy(dict("<f8", false, "()"), f8({-7.25})), "s.npy", "s", {}, {-7.25});
    expect_exact(npy(dict("<f8", false, "(0, 3)"), ""), "e.npy", "e", {0, 3}, {});
    expect_exact(npy(dict("<f4", false, "(2,)"), f4({1, 2}), 2), "v2.npy", "v2", {2}, {1, 2});
    expect_exact(npy(dict("<f4", false, "(2,)"), f4({1, 2}), 3), "v3.npy", "v3", {2}, {1, 2});
    // The tensor is named after the file, or "array" when the label has no name.
    const Result<TensorFile> f = TensorFile::from_bytes(npy_bytes({1}, {1}), "dir.d/sub/x.y.npy");
    ASSERT_TRUE(f);
    EXPECT_EQ(f.value->format(), "npy");
    ASSERT_EQ(f.value->tensors().size(), 1u);
    EXPECT_EQ(f.value->tensors()[0].name, "x.y");
    EXPECT_TRUE(f.value->metadata().empty());
    const Result<TensorFile> unnamed = TensorFile::from_bytes(npy_bytes({1}, {1}), "");
    ASSERT_TRUE(unnamed);
    EXPECT_EQ(unnamed.value->tensors()[0].name, "array");
}

TEST(TensorFileBuilt, NpyWriterRoundTripsBitForBit) {
    const std::vector<double> v = {-0.0, min_subnormal, 1e308, -1e308, 2.2250738585072014e-308, 0.1, -1.0 / 3.0, 42};
    const std::string bytes = npy_bytes({2, 4}, v);
    EXPECT_EQ(bytes.compare(0, 10, std::string("\x93NUMPY\x01\x00\x76\x00", 10)), 0);
    EXPECT_EQ(bytes.size(), 128u + 64u);  // the header padded to 128 bytes, then 8 doubles
    const std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 4), }";
    EXPECT_EQ(bytes.substr(10, header.size()), header);
    EXPECT_EQ(bytes.substr(10 + header.size(), 128 - 11 - header.size()), std::string(128 - 11 - header.size(), ' '));
    EXPECT_EQ(bytes[127], '\n');
    expect_exact(bytes, "r.npy", "r", {2, 4}, v);
    expect_exact(npy_bytes({8}, v), "r.npy", "r", {8}, v);
    expect_exact(npy_bytes({}, {0.25}), "r.npy", "r", {}, {0.25});
}

TEST(TensorFileBuilt, LyingNpyAreRefusedNamingFileAndTensor) {
    const std::string good = npy(dict("<f8", false, "(2, 3)"), f8({1, 2, 3, 4, 5, 6}));
    ASSERT_TRUE(TensorFile::from_bytes(good, "w.npy"));
    expect_refused(good.substr(0, good.size() - 1), "w.npy", "w", {"needs 48 bytes of data, the file holds 47"});
    expect_refused(good.substr(0, good.size() - 48), "w.npy", "w", {"the file holds 0 (truncated?)"});
    expect_refused(good.substr(0, 9), "w.npy", "w", {"too short"});
    expect_refused(npy(dict("<f8", false, "(4294967296, 4294967296, 2)"), ""), "w.npy", "w", {"too large"});
    expect_refused(npy(dict("<f8", false, "(99999999999999999999,)"), ""), "w.npy", "w", {"whole numbers"});
    expect_refused(npy(dict("<f8", false, "(2, -3)"), ""), "w.npy", "w", {"shape"});
    expect_refused(npy(dict("<f", false, "(2,)"), f8({1, 2})), "w.npy", "w", {"unknown dtype '<f'"});
    expect_refused(npy(dict("float", false, "(2,)"), f8({1, 2})), "w.npy", "w", {"unknown dtype 'float'"});
    expect_refused(npy(dict("<i4", false, "(2,)"), f8({1})), "w.npy", "w", {"unsupported dtype <i4"});
    expect_refused(npy(dict("<U2", false, "(2,)"), std::string(16, 'a')), "w.npy", "w", {"unsupported dtype <U2"});
    for (const char* descr : {"|", "<", ">", "=", "", "<f", "|f99999"})  // "|" once crashed the reader
        expect_refused(npy(dict(descr, false, "(2,)"), f8({1, 2})), "w.npy", "w", {"dtype '" + std::string(descr)});
    expect_refused(npy(dict("<f8", false, "(2,)") + "{", f8({1, 2})), "w.npy", "w", {"after the header"});
    expect_refused(npy("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f8({1, 2})),
                   "w.npy", "w", {"repeated key 'descr'"});
    expect_refused(npy("{'descr': '<f8', 'shape': (2,), }", f8({1, 2})), "w.npy", "w", {"lacks"});
    expect_refused(npy("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", f8({1, 2})), "w.npy", "w",
                   {"fortran_order"});
    expect_refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': [2], }", f8({1, 2})), "w.npy", "w",
                   {"tuple"});
    expect_refused(npy("__import__('os')", f8({1, 2})), "w.npy", "w", {"not a dictionary"});
    // A header length past the end of the file; an unknown version.
    std::string lying = good;
    put_le(lying, 8, 0xFFFF, 2);
    expect_refused(lying, "w.npy", "w", {"65535 bytes, more than the file holds"});
    std::string v2 = npy(dict("<f8", false, "(1,)"), f8({1}), 2);
    put_le(v2, 8, 0xFFFFFFFF, 4);
    expect_refused(v2, "w.npy", "w", {"4294967295 bytes"});
    std::string v4 = good;
    v4[6] = 4;
    expect_refused(v4, "w.npy", "w", {"unknown .npy version 4"});
}

// ---------------------------------------------------------------------------------------------
// .npz

const std::vector<double> W = {0.5, -0.0, min_subnormal, 1e308, -2, 3};
const std::vector<double> B = {1.0 / 3.0, -7};

std::string w_npy() { return npy_bytes({2, 3}, W); }
std::string b_npy() { return npy(dict("<f4", false, "(2,)"), f4({1.0f / 3.0f, -7})); }

TEST(TensorFileBuilt, NpzStoredAndDeflatedEntries) {
    const std::vector<double> b32 = {double(1.0f / 3.0f), -7};
    for (const bool deflate : {false, true}) {
        SCOPED_TRACE(deflate ? "deflated" : "stored");
        const std::string file = zip({entry("W.npy", w_npy(), deflate), entry("sub/", ""),  // a directory: skipped
                                      entry("layer.0/b.npy", b_npy(), !deflate)});
        expect_exact(file, "m.npz", "W", {2, 3}, W);
        expect_exact(file, "m.npz", "layer.0/b", {2}, b32);
        const Result<TensorFile> f = TensorFile::from_bytes(file, "m.npz");
        ASSERT_TRUE(f);
        EXPECT_EQ(f.value->format(), "npz");
        ASSERT_EQ(f.value->tensors().size(), 2u);
        EXPECT_EQ(f.value->tensors()[0].name, "W");
        EXPECT_EQ(f.value->tensors()[0].dtype, "<f8");
        EXPECT_EQ(f.value->tensors()[1].name, "layer.0/b");
        EXPECT_EQ(f.value->tensors()[1].dtype, "<f4");
        // NumPy's ZIP64 extra field in the local header (sizes 0xFFFFFFFF there) is not misread.
        ZipEntry with_extra = entry("W.npy", w_npy(), deflate);
        with_extra.zip64_local_extra = true;
        expect_exact(zip({with_extra}), "z.npz", "W", {2, 3}, W);
    }
    // An empty archive opens with no tensors.
    const Result<TensorFile> empty = TensorFile::from_bytes(zip({}), "empty.npz");
    ASSERT_TRUE(empty) << all_text(empty.problems);
    EXPECT_TRUE(empty.value->tensors().empty());
}

TEST(TensorFileBuilt, NpzEntriesLargerThanAPieceReadExactlyInEveryLayout) {
    // Entries of megabytes are read (or inflated) and converted a piece at a time: inflate hands
    // out pieces of any length, so elements straddle two of them; Fortran order runs across pieces;
    // the CRC covers all of it.
    const std::size_t rows = 700, cols = 513;  // 359,100 values: 2.9 MB as f8, 0.7 MB as f2
    std::vector<double> c_order(rows * cols);
    for (std::size_t k = 0; k < c_order.size(); ++k) c_order[k] = static_cast<double>(k % 2048) - 1000.5;
    std::string f8_c, f8_fortran, f2_c;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) f8_c += f8({c_order[r * cols + c]});
    for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = 0; r < rows; ++r) f8_fortran += f8({c_order[r * cols + c]});
    std::vector<std::uint16_t> halves;
    std::vector<double> half_values;
    for (std::size_t k = 0; k < rows * cols; ++k) {
        halves.push_back(static_cast<std::uint16_t>(0x3C00 + (k % 977)));  // 1 + (k % 977)/1024
        half_values.push_back(1 + static_cast<double>(k % 977) / 1024);
    }
    f2_c = u16(halves);
    const std::string shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
    for (const bool deflate : {false, true}) {
        SCOPED_TRACE(deflate ? "deflated" : "stored");
        const std::string file = zip({entry("c.npy", npy(dict("<f8", false, shape), f8_c, 2), deflate),
                                      entry("f.npy", npy(dict("<f8", true, shape), f8_fortran), deflate),
                                      entry("h.npy", npy(dict("<f2", false, shape), f2_c), deflate)});
        expect_exact(file, "big.npz", "c", {rows, cols}, c_order);
        expect_exact(file, "big.npz", "f", {rows, cols}, c_order);
        expect_exact(file, "big.npz", "h", {rows, cols}, half_values);
        // A flipped byte near the end, past the first pieces, is caught by the CRC.
        ZipEntry lying = entry("c.npy", npy(dict("<f8", false, shape), f8_c, 2), deflate);
        lying.crc = crc_of(lying.content) ^ 1;
        expect_refused(zip({lying}), "big.npz", "c", {"CRC mismatch"});
    }
}

TEST(TensorFileBuilt, LyingNpzEntriesAreRefusedNamingFileAndTensor) {
    const std::string label = "weights.npz";
    const std::uint32_t crc = crc_of(w_npy());
    const std::uint32_t size = static_cast<std::uint32_t>(w_npy().size());
    for (const bool deflate : {false, true}) {
        SCOPED_TRACE(deflate ? "deflated" : "stored");
        const ZipEntry w = entry("W.npy", w_npy(), deflate);
        const auto lie = [&](auto change) {
            ZipEntry e = w;
            change(e);
            return zip({entry("b.npy", b_npy()), e});
        };
        expect_refused(lie([&](ZipEntry& e) { e.crc = crc ^ 1; }), label, "W", {"CRC mismatch"});
        expect_refused(lie([&](ZipEntry& e) { e.compressed = e.size = 1u << 20; }), label, "W", {"goes past"});
        expect_refused(lie([&](ZipEntry& e) { e.local_offset = 1u << 20; }), label, "W", {"local header"});
        expect_refused(lie([&](ZipEntry& e) { e.local_offset = 0; }), label, "W", {});  // b's header, not W's
        expect_refused(lie([&](ZipEntry& e) { e.flags = 1; }), label, "W", {"encrypted"});
        expect_refused(lie([&](ZipEntry& e) { e.method = 12; }), label, "W", {"compression method 12"});
        expect_refused(lie([&](ZipEntry& e) { e.compressed = 0xFFFFFFFF; }), label, "W", {"ZIP64"});
        expect_refused(lie([&](ZipEntry& e) { e.size = 0xFFFFFFFF; }), label, "W", {"ZIP64"});
        expect_refused(lie([&](ZipEntry& e) { e.name = "b.npy"; }), label, "b", {"appears twice"});
        // The .npy inside is checked like a file of its own, named by its entry.
        expect_refused(lie([&](ZipEntry& e) { e.content = w_npy().substr(0, w_npy().size() - 8); }), label, "W",
                       {"needs 48 bytes of data, the file holds 40"});
        expect_refused(lie([&](ZipEntry& e) { e.content = "not a numpy file"; }), label, "W", {"\\x93NUMPY"});
    }
    const ZipEntry stored = entry("W.npy", w_npy());
    const ZipEntry deflated = entry("W.npy", w_npy(), true);
    // Stored: both sizes must agree. Deflated: the data must inflate to exactly the declared size.
    ZipEntry e = stored;
    e.size = size - 8;
    expect_refused(zip({e}), label, "W", {"sizes differ"});
    // A declared size that disagrees with the .npy header is refused as the header's shape needing
    // other than what the entry holds; one that agrees with the header but not with the data is
    // refused when the entry is inflated.
    for (const std::uint32_t claimed : {size - 8, size + 8}) {
        e = deflated;
        e.size = claimed;
        expect_refused(zip({e}), label, "W", {"needs 48 bytes of data, the file holds"});
    }
    for (const std::string& content : {w_npy().substr(0, size - 8), w_npy() + "12345678"}) {
        e = deflated;
        e.content = content;
        e.size = size;
        e.crc = crc;
        expect_refused(zip({e}), label, "W", {"inflates to a size other than the " + std::to_string(size) + " bytes"});
    }
    // A size deflate cannot reach from the compressed bytes is refused before it is allocated.
    e = deflated;
    e.size = 1000000000;
    expect_refused(zip({e}), label, "W", {"claims 1000000000 bytes", "more than deflate can give"});
    e.size = 2000000000;
    expect_refused(zip({e}), label, "W", {"2000000000 bytes is over the limit"});
    // Corrupt deflate data: not a valid stream.
    std::string bad = zip({deflated});
    bad[30 + 5] = '\xff';  // the first bytes of W's data: an invalid block type
    bad[30 + 6] = '\xff';
    bad[30 + 7] = '\xff';
    expect_refused(bad, label, "W", {"corrupt"});
}

TEST(TensorFileBuilt, NpzDataIsCheckedWhenReadNotWhenOpened) {
    // Opening reads each entry's .npy header only: an entry whose data is corrupt is listed, the
    // others read, and reading it is refused.
    for (const bool deflate : {false, true}) {
        SCOPED_TRACE(deflate ? "deflated" : "stored");
        ZipEntry w = entry("W.npy", w_npy(), deflate);
        w.crc = crc_of(w_npy()) ^ 0x10;
        std::string file = zip({entry("b.npy", b_npy()), w});
        const Result<TensorFile> f = TensorFile::from_bytes(file, "lazy.npz");
        ASSERT_TRUE(f) << all_text(f.problems);
        ASSERT_EQ(f.value->tensors().size(), 2u);
        EXPECT_EQ(f.value->tensors()[1].shape, (std::vector<std::uint64_t>{2, 3}));
        EXPECT_TRUE(f.value->read("b"));
        expect_refused(file, "lazy.npz", "W", {"CRC mismatch"});
    }
    // Deflate data that is corrupt after the header: opens, refused when read.
    std::string big = npy_bytes({64}, std::vector<double>(64, 0.5));
    for (std::size_t k = 128; k < big.size(); ++k) big[k] = static_cast<char>(k * 7919 % 251);
    std::string file = zip({entry("W.npy", big, true)});
    const std::size_t data_end = file.find(std::string("PK\x01\x02", 4));
    ASSERT_NE(data_end, std::string::npos);
    for (std::size_t k = data_end - 40; k < data_end; ++k) file[k] = '\xff';
    ASSERT_TRUE(TensorFile::from_bytes(file, "lazy.npz"));
    expect_refused(file, "lazy.npz", "W", {});
}

TEST(TensorFileBuilt, BrokenZipStructuresAreRefusedNamingTheFile) {
    const std::string good = zip({entry("W.npy", w_npy())});
    ASSERT_TRUE(TensorFile::from_bytes(good, "a.npz"));
    const std::size_t eocd = good.size() - 22;
    expect_refused(good.substr(0, eocd), "a.npz", "", {"not a zip archive"});
    std::string z = good;
    put_le(z, eocd + 10, 0xFFFF, 2);
    expect_refused(z, "a.npz", "", {"ZIP64 archives"});
    z = good;
    put_le(z, eocd + 16, 0xFFFFFFFF, 4);
    expect_refused(z, "a.npz", "", {"ZIP64"});
    z = good;
    put_le(z, eocd + 16, 0x10000, 4);
    expect_refused(z, "a.npz", "", {"central directory lies outside the file"});
    z = good;
    put_le(z, eocd + 12, 0x10000, 4);
    expect_refused(z, "a.npz", "", {"central directory lies outside the file"});
    z = good;
    put_le(z, eocd + 10, 2, 2);  // two entries claimed, one there
    expect_refused(z, "a.npz", "", {"entry 1 of the central directory"});
    z = good;
    put_le(z, eocd + 10, 0, 2);  // none claimed, one there
    expect_refused(z, "a.npz", "", {"more than its entry count"});
    z = good;
    z[eocd - 46 - 5] = 'X';  // the central directory's signature
    expect_refused(z, "a.npz", "", {"entry 0 of the central directory is malformed"});
    z = good;
    put_le(z, eocd - 5 - 46 + 28, 0x7FFF, 2);  // an entry's name running past the directory
    expect_refused(z, "a.npz", "", {"truncated"});
    expect_refused(std::string("PK\x03\x04", 4) + std::string(40, '\0'), "a.npz", "", {"not a zip archive"});
}

// ---------------------------------------------------------------------------------------------
// Files on disk

class TensorFileOnDisk : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(dir.created()); }
    std::string write(const std::string& name, const std::string& bytes) {
        const std::string path = (dir.path() / name).string();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    TempDir dir{"attnviz_tensor_file"};
};

TEST_F(TensorFileOnDisk, EachFormatReadsFromDisk) {
    const std::string st = write("m.safetensors", safetensors(R"({"w": {"dtype": "F64", "shape": [2, 3],
                                                                       "data_offsets": [0, 48]}})",
                                                              f8(W)));
    const std::string np = write("x.npy", w_npy());
    const std::string nz = write("m.npz", zip({entry("W.npy", w_npy(), true)}));
    for (const auto& [path, name] : {std::pair{st, "w"}, std::pair{np, "x"}, std::pair{nz, "W"}}) {
        SCOPED_TRACE(path);
        const Result<TensorFile> f = TensorFile::open(path);
        ASSERT_TRUE(f) << all_text(f.problems);
        const Result<Tensor> t = f.value->read(name);
        ASSERT_TRUE(t) << all_text(t.problems);
        ASSERT_EQ(t.value->values.size(), W.size());
        for (std::size_t k = 0; k < W.size(); ++k)
            EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[k]), std::bit_cast<std::uint64_t>(W[k]));
        // A truncated copy is refused, with its path.
        const std::string bytes = slurp(path);
        const std::string cut = write("cut-" + std::filesystem::path(path).filename().string(),
                                      bytes.substr(0, bytes.size() - 3));
        const Result<TensorFile> c = TensorFile::open(cut);
        ASSERT_FALSE(c);
        EXPECT_EQ(c.problems[0].path.rfind(cut, 0), 0u) << all_text(c.problems);
    }
}

TEST_F(TensorFileOnDisk, TensorDataIsReadOnlyWhenAsked) {
    // Opening reads the header; the data is read by read(). Cut b's data away after opening: the
    // open file still lists b, a still reads, and reading b says the file is shorter than its header.
    const std::string header = R"({"a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
                                   "b": {"dtype": "F64", "shape": [4], "data_offsets": [16, 48]}})";
    const std::string path = write("lazy.safetensors", safetensors(header, f8({1, 2, 3, 4, 5, 6})));
    const Result<TensorFile> f = TensorFile::open(path);
    ASSERT_TRUE(f) << all_text(f.problems);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(8 + header.size() + 16 + 8)), 0);
    const Result<Tensor> a = f.value->read("a");
    ASSERT_TRUE(a) << all_text(a.problems);
    EXPECT_EQ(a.value->values, (std::vector<double>{1, 2}));
    const Result<Tensor> b = f.value->read("b");
    ASSERT_FALSE(b);
    EXPECT_EQ(all_text(b.problems), path + ": b: cannot read its data (the file is shorter than its header says)\n");
    // Opened again, the cut file is refused.
    const Result<TensorFile> again = TensorFile::open(path);
    ASSERT_FALSE(again);
    EXPECT_TRUE(contains(all_text(again.problems),
                         path + ": b: data_offsets [16, 48] go past the end of the file (24 bytes of data)"))
        << all_text(again.problems);
}

TEST_F(TensorFileOnDisk, AHugeSparseCheckpointOpensWithoutReadingItsData) {
    // 3 GB of tensor data that is never read (a sparse file), and a small tensor after it.
    const std::uint64_t big = std::uint64_t{3} << 30;
    const std::string header = "{\"big\": {\"dtype\": \"F32\", \"shape\": [" + std::to_string(big / 4) +
                               "], \"data_offsets\": [0, " + std::to_string(big) + "]}, " +
                               "\"small\": {\"dtype\": \"F64\", \"shape\": [2], \"data_offsets\": [" +
                               std::to_string(big) + ", " + std::to_string(big + 16) + "]}}";
    const std::string path = write("sparse.safetensors", le(header.size(), 8) + header);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const std::string small = f8({-1.5, 1e-300});
    const auto at = static_cast<off_t>(8 + header.size() + big);
    const bool written = ::pwrite(fd, small.data(), small.size(), at) == static_cast<ssize_t>(small.size());
    ::close(fd);
    ASSERT_TRUE(written);
    const Result<TensorFile> f = TensorFile::open(path);
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<Tensor> t = f.value->read("small");
    ASSERT_TRUE(t) << all_text(t.problems);
    EXPECT_EQ(t.value->values, (std::vector<double>{-1.5, 1e-300}));
    // The big one is over the limit of values read() converts, and says so rather than allocating.
    const Result<Tensor> b = f.value->read("big");
    ASSERT_FALSE(b);
    EXPECT_TRUE(contains(all_text(b.problems), path + ": big: 805306368 values is over the limit"))
        << all_text(b.problems);
}

TEST_F(TensorFileOnDisk, AnAbsurdHeaderLengthIsRefusedBeforeItIsRead) {
    // A 200 MB (sparse) file whose header claims 150 MB: within the file, over the limit.
    const std::string path = write("absurd.safetensors", le(150u << 20, 8) + "{");
    ASSERT_EQ(::truncate(path.c_str(), 200 << 20), 0);
    const Result<TensorFile> f = TensorFile::open(path);
    ASSERT_FALSE(f);
    EXPECT_EQ(all_text(f.problems), path + ": a header of 157286400 bytes is over the limit of 104857600\n");
}

TEST_F(TensorFileOnDisk, WhatCannotBeOpenedSaysWhy) {
    const std::string missing = (dir.path() / "missing.npy").string();
    const Result<TensorFile> m = TensorFile::open(missing);
    ASSERT_FALSE(m);
    EXPECT_EQ(all_text(m.problems), missing + ": cannot open: No such file or directory\n");
    const Result<TensorFile> d = TensorFile::open(dir.path().string());
    ASSERT_FALSE(d);
    EXPECT_EQ(all_text(d.problems), dir.path().string() + ": is a directory, not a file\n");
    const Result<TensorFile> n = TensorFile::open("/dev/null");
    ASSERT_FALSE(n);
    EXPECT_EQ(all_text(n.problems), "/dev/null: is not a regular file\n");
    const Result<TensorFile> e = TensorFile::open("");
    ASSERT_FALSE(e);
    EXPECT_EQ(all_text(e.problems), "no file name given\n");
}

TEST_F(TensorFileOnDisk, AFifoIsRefusedWithoutWaitingForAWriter) {
    const std::string fifo = (dir.path() / "pipe.npy").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::promise<Result<TensorFile>> opened;
    std::future<Result<TensorFile>> result = opened.get_future();
    std::thread opener([&] { opened.set_value(TensorFile::open(fifo)); });
    const bool in_time = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    if (!in_time) {  // open() is waiting for a writer: give it one, so the thread ends
        const int w = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        if (w >= 0) ::close(w);
    }
    opener.join();
    EXPECT_TRUE(in_time) << "opening a FIFO waited for a writer";
    const Result<TensorFile> f = result.get();
    ASSERT_FALSE(f);
    EXPECT_EQ(all_text(f.problems), fifo + ": is not a regular file\n");
}

}  // namespace
}  // namespace attnviz::core
