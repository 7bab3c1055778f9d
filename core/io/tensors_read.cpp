// Reading a tensor's values (TensorFile::read, read_rows, read_rows_into, in_place): its bytes
// decoded in pieces into C order, from the file, from memory or from an .npz member; and the whole
// file kept in memory (keep_in_memory).
#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>

#include "core/base/format.hpp"
#include "core/io/tensors_detail.hpp"

namespace attnviz::core {

using namespace detail;

// ---------------------------------------------------------------------------------------------
// Reading a tensor

namespace {

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

}  // namespace attnviz::core
