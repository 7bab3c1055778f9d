// libFuzzer target for model.safetensors.index.json (core/model/weight_files.hpp): an index either
// is refused with problems naming the file, or maps each tensor to a plain file name among its
// shards.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/model/weight_files.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
namespace model = attnviz::model;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const core::Result<model::WeightIndex> index = model::read_weight_index(text, "index.json");
    if (!index) {
        check(!index.problems.empty(), "an index refused without saying why");
        for (const core::Problem& p : index.problems)
            check(p.path.rfind("index.json", 0) == 0 || p.path.empty(), "a refusal that does not name the file");
        return 0;
    }
    const std::vector<std::string>& shards = index.value->shards;
    check(!index.value->weight_map.empty() && !shards.empty(), "an index without tensors accepted");
    check(std::is_sorted(shards.begin(), shards.end()), "shards out of order");
    for (const auto& [tensor, shard] : index.value->weight_map) {
        check(std::binary_search(shards.begin(), shards.end(), shard), "a tensor's shard missing from the shards");
        check(!shard.empty() && shard != "." && shard != ".." && shard.find('/') == std::string::npos &&
                  shard.find('\\') == std::string::npos && shard.find('\0') == std::string::npos,
              "a shard that is not a plain file name");
    }
    return 0;
}
