// Tests of core/io/tensors.hpp: files NumPy and a safetensors writer made (tests/reference/tensors,
// values in expected.json), exact conversions, and every kind of malformed, truncated or lying file.
#include "core/io/tensors.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/file_io.hpp"
#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

using nlohmann::json;
using namespace attnviz::test;

const std::string dir = ATTNVIZ_GOLDEN_DIR "/../reference/tensors/";

json expected() {
    const Result<std::string> text = read_file(dir + "expected.json");
    return text ? json::parse(*text.value) : json::object();
}

std::string bytes_of(const std::string& file) {
    const Result<std::string> text = read_file(dir + file);
    return text ? *text.value : std::string();
}

// Opens a file of the directory and reads one tensor, which must hold exactly `want`.
void expect_values(const std::string& file, const std::string& tensor, const json& want,
                   const std::vector<std::uint64_t>& shape) {
    SCOPED_TRACE(file + " " + tensor);
    const Result<TensorFile> f = TensorFile::open(dir + file);
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<Tensor> t = f.value->read(tensor);
    ASSERT_TRUE(t) << all_text(t.problems);
    EXPECT_EQ(t.value->shape, shape);
    ASSERT_EQ(t.value->values.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
        EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[k]), std::bit_cast<std::uint64_t>(want[k].get<double>()))
            << k << ": " << t.value->values[k] << " vs " << want[k];
}

TEST(TensorFile, NumPyFilesInEveryLayoutAndByteOrder) {
    const json e = expected();
    expect_values("c_f4.npy", "c_f4", e["c_f4.npy"], {3, 4});
    expect_values("fortran_f8.npy", "fortran_f8", e["fortran_f8.npy"], {3, 4});  // column-major on disk
    expect_values("big_f2.npy", "big_f2", e["big_f2.npy"], {3, 4});              // big-endian half
    expect_values("vector_f8.npy", "vector_f8", e["vector_f8.npy"], {5});
    const Result<TensorFile> f = TensorFile::open(dir + "fortran_f8.npy");
    ASSERT_TRUE(f);
    EXPECT_EQ(f.value->format(), "npy");
    EXPECT_TRUE(f.value->tensors()[0].fortran_order);
}

TEST(TensorFile, NpzStoredAndDeflated) {
    const json e = expected();
    expect_values("stored.npz", "W", e["npz:W"], {3, 4});
    expect_values("stored.npz", "b", e["npz:b"], {5});
    expect_values("deflated.npz", "W", e["npz:W32"], {3, 4});
    expect_values("deflated.npz", "b", e["npz:b"], {5});
    const Result<TensorFile> f = TensorFile::open(dir + "deflated.npz");
    ASSERT_TRUE(f);
    EXPECT_EQ(f.value->format(), "npz");
    EXPECT_EQ(f.value->tensors().size(), 2u);
}

TEST(TensorFile, SafetensorsEveryFloatDtypeAndMetadata) {
    const json e = expected();
    for (const char* name : {"w64", "w32", "w16", "wbf16"})
        expect_values("layer.safetensors", name, e[std::string("st:") + name], {3, 4});
    const Result<TensorFile> f = TensorFile::open(dir + "layer.safetensors");
    ASSERT_TRUE(f);
    EXPECT_EQ(f.value->format(), "safetensors");
    EXPECT_EQ(f.value->metadata().at("tokens"), "a b c");
    ASSERT_NE(f.value->find("wbf16"), nullptr);
    EXPECT_EQ(f.value->find("wbf16")->dtype, "BF16");
}

// Every run of rows of every 2-D tensor (and the one row of a 1-D one) reads as the same rows of
// the whole tensor, bit for bit: safetensors of each dtype, C- and Fortran-order .npy, big-endian
// halves, stored and deflated .npz entries.
TEST(TensorFile, RowsReadAsTheSameRowsOfTheWholeTensor) {
    const std::vector<std::pair<std::string, std::string>> tensors = {
        {"layer.safetensors", "w64"},   {"layer.safetensors", "w32"},   {"layer.safetensors", "w16"},
        {"layer.safetensors", "wbf16"}, {"c_f4.npy", "c_f4"},           {"fortran_f8.npy", "fortran_f8"},
        {"big_f2.npy", "big_f2"},       {"vector_f8.npy", "vector_f8"}, {"stored.npz", "W"},
        {"deflated.npz", "W"},          {"deflated.npz", "b"}};
    for (const auto& [file, name] : tensors) {
        SCOPED_TRACE(file + " " + name);
        const Result<TensorFile> f = TensorFile::open(dir + file);
        ASSERT_TRUE(f) << all_text(f.problems);
        const Result<Tensor> whole = f.value->read(name);
        ASSERT_TRUE(whole) << all_text(whole.problems);
        const std::uint64_t rows = whole.value->rows(), cols = whole.value->cols();
        ASSERT_EQ(whole.value->values.size(), rows * cols);
        for (std::uint64_t first = 0; first < rows; ++first)
            for (std::uint64_t count = 1; first + count <= rows; ++count) {
                const Result<Tensor> part = f.value->read_rows(name, first, count);
                ASSERT_TRUE(part) << all_text(part.problems);
                EXPECT_EQ(part.value->shape, (std::vector<std::uint64_t>{count, cols}));
                ASSERT_EQ(part.value->values.size(), count * cols);
                for (std::uint64_t k = 0; k < count * cols; ++k)
                    EXPECT_EQ(std::bit_cast<std::uint64_t>(part.value->values[k]),
                              std::bit_cast<std::uint64_t>(whole.value->values[first * cols + k]))
                        << "rows " << first << "+" << count << ", value " << k;
            }
        // Outside the tensor, or no rows: refused with the tensor and the rows named.
        for (const auto& [first, count] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {rows, 1}, {0, rows + 1}, {0, 0}, {1, ~std::uint64_t{0}}}) {
            const Result<Tensor> bad = f.value->read_rows(name, first, count);
            ASSERT_FALSE(bad) << first << "+" << count;
            EXPECT_NE(all_text(bad.problems).find(name), std::string::npos);
            EXPECT_NE(all_text(bad.problems).find("outside its " + std::to_string(rows) + " rows"), std::string::npos)
                << all_text(bad.problems);
        }
    }
}

TEST(TensorFile, HalfAndBfloat16ConvertExactly) {
    EXPECT_EQ(half_to_double(0x3C00), 1.0);
    EXPECT_EQ(half_to_double(0xC000), -2.0);
    EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));  // the smallest subnormal
    EXPECT_EQ(half_to_double(0x03FF), 1023 * std::ldexp(1.0, -24));
    EXPECT_EQ(half_to_double(0x7BFF), 65504.0);
    EXPECT_EQ(half_to_double(0x3555), 0.333251953125);
    EXPECT_TRUE(std::isinf(half_to_double(0x7C00)));
    EXPECT_TRUE(std::isnan(half_to_double(0x7E00)));
    EXPECT_EQ(std::signbit(half_to_double(0x8000)), true);
    EXPECT_EQ(bfloat16_to_double(0x3F80), 1.0);
    EXPECT_EQ(bfloat16_to_double(0x4049), 3.140625);
    EXPECT_EQ(bfloat16_to_double(0xC2F7), -123.5);
}

// Every half-precision bit pattern against the format's definition: (−1)^sign · 2^(e−15) · (1 + m/1024)
// for 1 ≤ e ≤ 30, 2^−14 · m/1024 for e = 0, ±∞ and NaN for e = 31.
TEST(TensorFile, EveryHalfBitPatternConvertsAsDefined) {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const int sign = static_cast<int>(bits >> 15), e = static_cast<int>((bits >> 10) & 0x1f),
                  m = static_cast<int>(bits & 0x3ff);
        const double got = half_to_double(static_cast<std::uint16_t>(bits));
        if (e == 31) {
            EXPECT_TRUE(m ? std::isnan(got) : std::isinf(got)) << bits;
            continue;
        }
        const double magnitude = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1 + m / 1024.0, e - 15);
        ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(sign ? -magnitude : magnitude))
            << bits;
    }
}

// A safetensors file of one F32, F16 or BF16 vector (little-endian bytes of `raw`, `size` bytes each).
std::string safetensors_vector(const std::string& dtype, int size, const std::vector<std::uint32_t>& raw) {
    std::string data;
    for (std::uint32_t v : raw)
        for (int k = 0; k < size; ++k) data += static_cast<char>((v >> (8 * k)) & 0xff);
    const std::string header = "{\"v\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + std::to_string(raw.size()) +
                               "],\"data_offsets\":[0," + std::to_string(data.size()) + "]}}";
    std::string out(8, '\0');
    for (int k = 0; k < 8; ++k) out[static_cast<size_t>(k)] = static_cast<char>((header.size() >> (8 * k)) & 0xff);
    return out + header + data;
}

// A tensor larger than one piece of the reader (1 MiB) decodes every element as the element
// conversions do, and a NaN or infinity anywhere in it is named by its index.
TEST(TensorFile, LargeTensorsDecodeEveryElementAndNameTheFirstThatIsNotFinite) {
    constexpr std::uint32_t count = 300007;  // 1.14 MiB of F32, 586 KiB of F16
    for (const auto& [dtype, size] : {std::pair{"F32", 4}, std::pair{"F16", 2}, std::pair{"BF16", 2}}) {
        SCOPED_TRACE(dtype);
        std::vector<std::uint32_t> raw(count);
        for (std::uint32_t i = 0; i < count; ++i)  // finite patterns of every sign and exponent
            raw[i] = size == 4 ? (i * 2654435761u) & 0xbfffffffu : (i * 40503u) & 0xbbffu;
        const Result<TensorFile> f = TensorFile::from_bytes(safetensors_vector(dtype, size, raw), "v.safetensors");
        ASSERT_TRUE(f) << all_text(f.problems);
        const Result<Tensor> t = f.value->read("v");
        ASSERT_TRUE(t) << all_text(t.problems);
        ASSERT_EQ(t.value->values.size(), count);
        for (std::uint32_t i = 0; i < count; ++i) {
            const double want = size == 4                     ? std::bit_cast<float>(raw[i])
                                : std::string(dtype) == "F16" ? half_to_double(static_cast<std::uint16_t>(raw[i]))
                                                              : bfloat16_to_double(static_cast<std::uint16_t>(raw[i]));
            ASSERT_EQ(std::bit_cast<std::uint64_t>(t.value->values[i]), std::bit_cast<std::uint64_t>(want)) << i;
        }
        for (const std::uint32_t bad : {std::uint32_t{5}, count - 1, std::uint32_t{280001}}) {
            std::vector<std::uint32_t> spoiled = raw;
            spoiled[bad] = size == 4 ? 0x7fc00000u : std::string(dtype) == "F16" ? 0x7c00u : 0x7fc0u;
            spoiled[bad + (bad + 1 < count ? 1 : 0)] = spoiled[bad];  // the first of two is named
            const Result<TensorFile> g = TensorFile::from_bytes(safetensors_vector(dtype, size, spoiled),
                                                                "v.safetensors");
            ASSERT_TRUE(g) << all_text(g.problems);
            const Result<Tensor> r = g.value->read("v");
            ASSERT_FALSE(r);
            EXPECT_NE(all_text(r.problems).find("element " + std::to_string(bad) + " is "), std::string::npos)
                << all_text(r.problems);
        }
    }
}

TEST(TensorFile, NpyWrittenReadsBackBitForBit) {
    const std::vector<double> values = {0.1, -0.0, 1e308, 4.9e-324, -2.5, 1.0 / 3.0};
    for (const std::vector<std::uint64_t>& shape :
         {std::vector<std::uint64_t>{2, 3}, std::vector<std::uint64_t>{6}, std::vector<std::uint64_t>{1, 6}}) {
        const std::string bytes = npy_bytes(shape, values);
        EXPECT_EQ(bytes.size() % 64, 48u);  // the header padded to 64 bytes, then 48 bytes of data
        const Result<TensorFile> f = TensorFile::from_bytes(bytes, "m.npy");
        ASSERT_TRUE(f) << all_text(f.problems);
        EXPECT_EQ(f.value->tensors()[0].name, "m");
        const Result<Tensor> t = f.value->read("m");
        ASSERT_TRUE(t) << all_text(t.problems);
        EXPECT_EQ(t.value->shape, shape);
        for (size_t k = 0; k < values.size(); ++k)
            EXPECT_EQ(std::bit_cast<std::uint64_t>(t.value->values[k]), std::bit_cast<std::uint64_t>(values[k]));
    }
}

// -- refusals: every message names the file, and the tensor when there is one.

// `bytes` refused when opened, or (when it opens) when `tensor` is read, with a message containing
// each of `parts`.
void expect_refused(const std::string& bytes, const std::string& tensor, const std::vector<std::string>& parts) {
    const Result<TensorFile> f = TensorFile::from_bytes(bytes, "bad.file");
    Problems problems = f.problems;
    if (f) {
        const Result<Tensor> t = f.value->read(tensor);
        ASSERT_FALSE(t) << "read " << tensor << " of a bad file";
        problems = t.problems;
    }
    ASSERT_FALSE(problems.empty());
    const std::string text = all_text(problems);
    EXPECT_TRUE(contains(text, "bad.file")) << text;
    for (const std::string& p : parts) EXPECT_TRUE(contains(text, p)) << "lacks \"" << p << "\": " << text;
}

std::string le64(std::uint64_t v) {
    std::string s;
    for (int k = 0; k < 8; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
    return s;
}

std::string safetensors(const std::string& header, const std::string& data) {
    return le64(header.size()) + header + data;
}

// A file read into memory gives its F32 and F64 tensors' values in place, aligned for their type
// whatever the header's length (here 8 + a length of 3 mod 8), as read() gives them: not before it
// is held (nor for bytes handed over as a string), not as another type, not for BF16, and not for a
// tensor with a NaN (read() names it).
TEST(TensorFile, ValuesHeldInMemoryAreUsedInPlace) {
    const std::vector<float> f = {1, -2, 3.5f, 0, 1e-3f, 7};
    const std::vector<double> d = {0.25, -8};
    const std::vector<float> with_nan = {1, NAN};
    std::string data(std::string(reinterpret_cast<const char*>(f.data()), 24) +
                     std::string(reinterpret_cast<const char*>(d.data()), 16) +
                     std::string(reinterpret_cast<const char*>(with_nan.data()), 8) + std::string("\x80\x3f\0\0", 4));
    std::string header = R"({"f": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
                         R"( "d": {"dtype": "F64", "shape": [2], "data_offsets": [24, 40]},)"
                         R"( "nan": {"dtype": "F32", "shape": [2], "data_offsets": [40, 48]},)"
                         R"( "bf": {"dtype": "BF16", "shape": [2], "data_offsets": [48, 52]}})";
    while (header.size() % 8 != 3) header += ' ';
    const std::string bytes = safetensors(header, data);
    TempDir dir("attnviz_in_place");
    ASSERT_TRUE(dir.created());
    const std::string path = (dir.path() / "w.safetensors").string();
    ASSERT_TRUE(attnviz::core::write_file_atomic(path, bytes).empty());

    Result<TensorFile> file = TensorFile::open(path);
    ASSERT_TRUE(file) << file.problems.front().str();
    EXPECT_EQ(file.value->in_place<float>("f"), nullptr);  // read from the disk
    EXPECT_EQ(TensorFile::from_bytes(bytes, "w").value->in_place<float>("f"), nullptr);
    ASSERT_TRUE(file.value->keep_in_memory().empty());
    const float* pf = file.value->in_place<float>("f");
    const double* pd = file.value->in_place<double>("d");
    ASSERT_NE(pf, nullptr);
    ASSERT_NE(pd, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pf) % alignof(float), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pd) % alignof(double), 0u);
    EXPECT_EQ(std::vector<float>(pf, pf + 6), f);
    EXPECT_EQ(std::vector<double>(pd, pd + 2), d);
    EXPECT_EQ(file.value->in_place<double>("f"), nullptr);
    EXPECT_EQ(file.value->in_place<float>("d"), nullptr);
    EXPECT_EQ(file.value->in_place<float>("bf"), nullptr);
    EXPECT_EQ(file.value->in_place<float>("nan"), nullptr);
    EXPECT_EQ(file.value->in_place<float>("missing"), nullptr);
    const Result<attnviz::core::Tensor> read = file.value->read("f");
    ASSERT_TRUE(read);
    EXPECT_EQ(read.value->values, std::vector<double>(f.begin(), f.end()));
    const Result<attnviz::core::Tensor> nan = file.value->read("nan");
    ASSERT_FALSE(nan);
    EXPECT_NE(nan.problems.front().message.find("element 1 is NaN"), std::string::npos) << nan.problems.front().str();
}

// BF16 and F16 tensors held in memory are used in place as their 16-bit patterns (the products widen
// them), each only as its own type, and not when one value is infinite or NaN (exponent all ones).
TEST(TensorFile, HalvesHeldInMemoryAreUsedInPlaceAsTheirBits) {
    const std::vector<std::uint16_t> bf = {0x3f80, 0xc000, 0x0001, 0x7f7f};  // 1, -2, a subnormal, the largest
    const std::vector<std::uint16_t> h = {0x3c00, 0x8001, 0x7bff};           // 1, -2^-24, 65504
    const std::vector<std::uint16_t> bf_inf = {0x3f80, 0x7f80}, h_nan = {0x7e00};
    std::string data;
    for (const auto* v : {&bf, &h, &bf_inf, &h_nan})
        data += std::string(reinterpret_cast<const char*>(v->data()), v->size() * 2);
    std::string header = R"({"bf": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]},)"
                         R"( "h": {"dtype": "F16", "shape": [3], "data_offsets": [8, 14]},)"
                         R"( "bf_inf": {"dtype": "BF16", "shape": [2], "data_offsets": [14, 18]},)"
                         R"( "h_nan": {"dtype": "F16", "shape": [1], "data_offsets": [18, 20]}})";
    while (header.size() % 8 != 5) header += ' ';
    TempDir dir("attnviz_in_place_halves");
    ASSERT_TRUE(dir.created());
    const std::string path = (dir.path() / "w.safetensors").string();
    ASSERT_TRUE(attnviz::core::write_file_atomic(path, safetensors(header, data)).empty());
    Result<TensorFile> file = TensorFile::open(path);
    ASSERT_TRUE(file) << file.problems.front().str();
    EXPECT_EQ(file.value->in_place<attnviz::core::bfloat16>("bf"), nullptr);  // read from the disk
    ASSERT_TRUE(file.value->keep_in_memory().empty());
    const attnviz::core::bfloat16* b = file.value->in_place<attnviz::core::bfloat16>("bf");
    const attnviz::core::float16* f = file.value->in_place<attnviz::core::float16>("h");
    ASSERT_NE(b, nullptr);
    ASSERT_NE(f, nullptr);
    for (size_t k = 0; k < bf.size(); ++k) EXPECT_EQ(b[k].bits, bf[k]) << k;
    for (size_t k = 0; k < h.size(); ++k) EXPECT_EQ(f[k].bits, h[k]) << k;
    EXPECT_EQ(attnviz::core::to_float(b[1]), -2.0f);
    EXPECT_EQ(attnviz::core::to_float(f[2]), 65504.0f);
    EXPECT_EQ(file.value->in_place<attnviz::core::float16>("bf"), nullptr);  // each only as its own type
    EXPECT_EQ(file.value->in_place<attnviz::core::bfloat16>("h"), nullptr);
    EXPECT_EQ(file.value->in_place<float>("bf"), nullptr);
    EXPECT_EQ(file.value->in_place<attnviz::core::bfloat16>("bf_inf"), nullptr);
    EXPECT_EQ(file.value->in_place<attnviz::core::float16>("h_nan"), nullptr);
}

TEST(TensorFile, LyingSafetensorsAreRefused) {
    const std::string data(24, '\0');  // 6 F32 values of 0
    const std::string good = R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})";
    ASSERT_TRUE(TensorFile::from_bytes(safetensors(good, data), "ok"));
    expect_refused(le64(1000) + "{}", "", {"1000 bytes", "more than the file holds"});
    expect_refused(safetensors("{\"w\": ", data), "", {"not a JSON object"});
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 240]}})", data), "w",
                   {"w", "past the end"});
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [8, 4]}})", data), "w",
                   {"w", "data_offsets"});
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 24]}})", data), "w",
                   {"w", "needs 32 bytes", "give 24"});
    expect_refused(safetensors(R"({"w": {"dtype": "F33", "shape": [2, 3], "data_offsets": [0, 24]}})", data), "w",
                   {"w", "unknown dtype"});
    expect_refused(
        safetensors(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4], "data_offsets": [0, 24]}})", data),
        "w", {"w", "too many"});
    expect_refused(safetensors(R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 24]}})", data), "w",
                   {"w", "shape"});
    expect_refused(safetensors(R"({"__metadata__": {"a": 1}})", data), "", {"__metadata__.a", "text"});
    expect_refused(safetensors(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                   "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                               data),
                   "a", {"overlaps"});
    // Known but not a float: listed, refused when read.
    expect_refused(safetensors(R"({"ids": {"dtype": "I64", "shape": [3], "data_offsets": [0, 24]}})", data), "ids",
                   {"ids", "unsupported dtype I64"});
    // NaN and infinity are refused with their index.
    std::string nan_data = data;
    const float nan = std::nanf(""), inf = INFINITY;
    std::memcpy(nan_data.data() + 12, &nan, 4);
    expect_refused(safetensors(good, nan_data), "w", {"w", "element 3 is NaN"});
    std::memcpy(nan_data.data() + 12, &inf, 4);
    expect_refused(safetensors(good, nan_data), "w", {"element 3 is infinite"});
    // Every truncation of a valid file is refused or reads correctly, never out of bounds.
    const std::string full = bytes_of("layer.safetensors");
    ASSERT_FALSE(full.empty());
    for (size_t cut = 0; cut < full.size(); ++cut) {
        const Result<TensorFile> f = TensorFile::from_bytes(full.substr(0, cut), "cut");
        if (f)
            for (const TensorInfo& t : f.value->tensors()) (void)f.value->read(t.name);
    }
    EXPECT_FALSE(TensorFile::from_bytes(full.substr(0, full.size() - 1), "cut"));
}

TEST(TensorFile, RowsOfATensorOfThreeDimensionsOrOfNoTensorAreRefused) {
    const std::string three_d = safetensors(R"({"t":{"dtype":"F32","shape":[2,1,1],"data_offsets":[0,8]}})",
                                            std::string(8, '\0'));
    const Result<TensorFile> f = TensorFile::from_bytes(three_d, "t.safetensors");
    ASSERT_TRUE(f) << all_text(f.problems);
    const Result<Tensor> bad = f.value->read_rows("t", 0, 1);
    ASSERT_FALSE(bad);
    EXPECT_NE(all_text(bad.problems).find("not one of 3 dimensions"), std::string::npos) << all_text(bad.problems);
    const Result<Tensor> none = f.value->read_rows("u", 0, 1);
    ASSERT_FALSE(none);
    EXPECT_NE(all_text(none.problems).find("no such tensor"), std::string::npos);
}

TEST(TensorFile, LyingNpyAreRefused) {
    const std::string good = npy_bytes({2, 3}, {1, 2, 3, 4, 5, 6});
    auto with_header = [&](const std::string& dict) {
        std::string h = dict + "\n";
        std::string out("\x93NUMPY\x01\x00", 8);
        out += static_cast<char>(h.size() & 0xff);
        out += static_cast<char>(h.size() >> 8);
        return out + h + good.substr(good.size() - 48);
    };
    ASSERT_TRUE(
        TensorFile::from_bytes(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"), "x"));
    expect_refused(good.substr(0, good.size() - 8), "bad", {"bad", "needs 48 bytes", "holds 40", "truncated"});
    expect_refused(good + "extra", "bad", {"needs 48 bytes", "holds 53"});
    expect_refused(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 4), }"), "bad", {"needs 64"});
    expect_refused(with_header("{'descr': '<f8', 'shape': (2, 3), }"), "bad", {"lacks"});
    expect_refused(with_header("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }"), "bad",
                   {"fortran_order"});
    expect_refused(with_header("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }"), "bad", {"needs 96"});
    expect_refused(with_header("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"), "bad.file",
                   {"unsupported dtype <i8"});
    expect_refused(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), } junk"), "bad",
                   {"after the header"});
    expect_refused(with_header("[1, 2]"), "bad", {"not a dictionary"});
    std::string huge = good;
    huge[8] = '\xff';
    huge[9] = '\xff';
    expect_refused(huge, "bad", {"more than the file holds"});
    std::string version = good;
    version[6] = 9;
    expect_refused(version, "bad", {"version 9"});
    for (size_t cut = 0; cut < good.size(); ++cut) EXPECT_FALSE(TensorFile::from_bytes(good.substr(0, cut), "cut"));
}

TEST(TensorFile, LyingNpzAreRefused) {
    const std::string stored = bytes_of("stored.npz"), deflated = bytes_of("deflated.npz");
    ASSERT_FALSE(stored.empty());
    ASSERT_FALSE(deflated.empty());
    // Every truncation and every single flipped byte: refused or read correctly, never out of bounds.
    for (const std::string* file : {&stored, &deflated}) {
        for (size_t cut = 0; cut < file->size(); ++cut)
            EXPECT_FALSE(TensorFile::from_bytes(file->substr(0, cut), "cut"));
        for (size_t k = 0; k < file->size(); ++k) {
            std::string bad = *file;
            bad[k] = static_cast<char>(bad[k] ^ 0x5a);
            const Result<TensorFile> f = TensorFile::from_bytes(bad, "flip");
            if (f)
                for (const TensorInfo& t : f.value->tensors()) (void)f.value->read(t.name);
        }
    }
    // A flipped data byte of a stored entry is caught by its CRC.
    std::string bad = stored;
    const size_t at = stored.find("\x93NUMPY") + 128 + 5;  // inside W's data
    bad[at] = static_cast<char>(bad[at] ^ 1);
    expect_refused(bad, "W", {"W", "CRC"});
    // Corrupt deflate data.
    bad = deflated;
    bad[60] = static_cast<char>(bad[60] ^ 0xff);
    bad[61] = static_cast<char>(bad[61] ^ 0xff);
    expect_refused(bad, "W", {"bad.file"});
    expect_refused(std::string("PK\x05\x06", 4) + std::string(10, '\0'), "", {"zip"});
}

TEST(TensorFile, FilesThatAreNotTensorsAreRefusedWithTheirPath) {
    const Result<TensorFile> missing = TensorFile::open(dir + "no-such-file.npy");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(contains(all_text(missing.problems), "no-such-file.npy"));
    const Result<TensorFile> folder = TensorFile::open(dir);
    ASSERT_FALSE(folder);
    EXPECT_TRUE(contains(all_text(folder.problems), "directory"));
    EXPECT_FALSE(TensorFile::from_bytes("abc", "tiny"));
    const Result<TensorFile> f = TensorFile::open(dir + "layer.safetensors");
    ASSERT_TRUE(f);
    const Result<Tensor> none = f.value->read("absent");
    ASSERT_FALSE(none);
    EXPECT_TRUE(contains(all_text(none.problems), "absent"));
}

}  // namespace
}  // namespace attnviz::core
