#include <charconv>

#include "core/base/format.hpp"
#include "core/model/tokenizer.hpp"

namespace attnviz::model {

core::Result<std::int32_t> find_token(const Tokenizer* tokenizer, const std::string& given, const std::string& what) {
    using R = core::Result<std::int32_t>;
    std::int32_t id = 0;
    const auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), id);
    if (!given.empty() && ec == std::errc{} && end == given.data() + given.size()) return R::ok(id);
    const std::string named = what + " \"" + core::printable(given) + "\"";
    if (!tokenizer) return R::fail({{"", named + ": without a tokenizer a token is given by its id"}});
    const auto vocab = static_cast<std::int32_t>(tokenizer->vocab_size());
    for (std::int32_t v = 0; v < vocab; ++v)
        if (tokenizer->token_text(v) == given) return R::ok(v);
    const core::Result<Encoding> e = tokenizer->encode(given, false);
    if (e && e.value->ids.size() == 1) return R::ok(e.value->ids[0]);
    if (!e) return R::fail({{"", named + ": " + e.problems.front().str()}});
    return R::fail({{"", named + " is " + std::to_string(e.value->ids.size()) +
                             " tokens, not one: give a single token (its vocabulary piece or its id)"}});
}

}  // namespace attnviz::model
