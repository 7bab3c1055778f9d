// libFuzzer target for config.json (core/model/model_config.hpp): a config either is refused with
// problems naming the file, or has sizes within their limits that fit together, with which the
// token checks and the memory estimate of a run stay defined.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/attention/config.hpp"
#include "core/model/runtime.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
namespace model = attnviz::model;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const core::Result<model::ModelConfig> read = model::read_model_config(text, "config.json");
    if (!read) {
        check(!read.problems.empty(), "a config refused without saying why");
        for (const core::Problem& p : read.problems)
            check(p.path.rfind("config.json", 0) == 0 || p.path.empty(), "a refusal that does not name the file");
        return 0;
    }
    const model::ModelConfig& c = *read.value;
    check(c.d_model >= 1 && c.d_model <= core::Limits::max_d_model, "d_model outside its limits");
    check(c.layers >= 1 && c.layers <= model::ModelLimits::max_layers, "layers outside their limits");
    check(c.heads >= 1 && c.kv_heads >= 1 && c.heads % c.kv_heads == 0, "K/V groups that do not divide the heads");
    check(c.d_k >= 1, "a head without columns");
    check(!c.rope() ||
              (c.rope_dims > 0 ? c.rope_dims >= 2 && c.rope_dims % 2 == 0 && c.rope_dims < c.d_k : c.d_k % 2 == 0),
          "a head size RoPE cannot rotate");
    check(c.vocab_size >= 1 && c.d_ff >= 1 && c.norm_eps > 0, "a size or epsilon of zero");
    check(!c.learned_positions() || c.max_positions >= 1, "a learned position table without rows");
    check(!c.encoder() || c.type_vocab_size >= 1, "BERT without a token type");
    for (const int n : {1, 7, core::Limits::max_n})
        check(model::run_bytes(c, n, 8) > 0, "the memory estimate of a run overflows");
    (void)model::token_problems(c, {0, 1, c.vocab_size - 1, c.vocab_size, -1});
    return 0;
}
