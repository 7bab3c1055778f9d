// .npz files (zip archives of .npy members, stored or deflated): the central directory read when
// the file is opened (TensorFile::parse_npz), and a member's bytes streamed and checked when a
// tensor is read (TensorFile::stream_entry).
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "core/io/tensors_detail.hpp"

namespace attnviz::core {

using namespace detail;

namespace {

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

}  // namespace attnviz::core
