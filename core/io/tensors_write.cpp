#include "core/io/tensors_write.hpp"

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/base/file_io.hpp"

namespace attnviz::core {

static_assert(std::endian::native == std::endian::little, "safetensors values are little-endian, as they lie here");

namespace {

std::uint64_t count_of(const std::vector<std::uint64_t>& shape) {
    std::uint64_t count = 1;
    for (const std::uint64_t d : shape) count *= d;
    return count;
}

}  // namespace

Problems write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                           const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json header;
    header["__metadata__"] = metadata;
    std::set<std::string> names;
    std::uint64_t offset = 0;
    for (const TensorToWrite& t : tensors) {
        if (t.name == "__metadata__" || !names.insert(t.name).second)
            return {{path, "the tensor name \"" + t.name + "\" is reserved or given twice"}};
        if (!t.floats && !t.doubles) return {{path, "the tensor \"" + t.name + "\" has no values"}};
        const std::uint64_t bytes = count_of(t.shape) * (t.floats ? 4 : 8);
        header[t.name] = {{"dtype", t.floats ? "F32" : "F64"},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text.append((8 - text.size() % 8) % 8, ' ');
    return write_file_atomic(path, [&](const TextSink& sink) {
        char length[8];
        std::uint64_t size = text.size();
        for (int i = 0; i < 8; ++i, size >>= 8) length[i] = static_cast<char>(size & 0xff);  // little-endian
        if (!sink(std::string_view(length, 8)) || !sink(text)) return;
        for (const TensorToWrite& t : tensors) {
            const std::uint64_t bytes = count_of(t.shape) * (t.floats ? 4 : 8);
            const char* data = t.floats ? reinterpret_cast<const char*>(t.floats)
                                        : reinterpret_cast<const char*>(t.doubles);
            if (!sink(std::string_view(data, bytes))) return;
        }
    });
}

}  // namespace attnviz::core
