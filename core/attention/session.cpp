#include "core/attention/session.hpp"

#include <cstdint>

namespace attnviz::core {

std::vector<std::string> default_tokens(int n) {
    std::vector<std::string> tokens;
    for (int i = 0; i < n; ++i) tokens.push_back("x" + std::to_string(i + 1));
    return tokens;
}

std::vector<std::string> default_kv_tokens(int n_kv) {
    std::vector<std::string> tokens;
    for (int i = 0; i < n_kv; ++i) tokens.push_back("y" + std::to_string(i + 1));
    return tokens;
}

namespace {
// A list of labels of `count` entries: the first ones of `have`, then `memory`'s, then `defaults`.
std::vector<std::string> labels(const std::vector<std::string>& have, const std::vector<std::string>& memory,
                                const std::vector<std::string>& defaults) {
    std::vector<std::string> out(defaults.size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = i < have.size() ? have[i] : i < memory.size() ? memory[i] : defaults[i];
    return out;
}
}  // namespace

std::int64_t session_bytes(const Session& s) {
    const Params& p = s.params;
    std::int64_t numbers = 0;  // every matrix the params hold
    for (MatrixId id : all_matrix_ids)
        for (int h = 0; is_input(id) && h < (is_per_head(id) ? static_cast<int>(p.heads.size()) : 1); ++h)
            numbers += held_input(p, id, h)->size();
    std::int64_t text = 0;
    for (const auto* labels : {&s.tokens, &s.kv_tokens})
        for (const std::string& t : *labels) text += static_cast<std::int64_t>(t.size());
    return numbers * static_cast<std::int64_t>(sizeof(double)) + text + (s.pin ? session_bytes(*s.pin) : 0);
}

Problems validate(const Session& s) {
    Problems out = validate(s.config);
    if (!out.empty()) return out;
    if (static_cast<int>(s.tokens.size()) != s.config.n)
        out.push_back(
            {"tokens", "expected " + std::to_string(s.config.n) + " labels, got " + std::to_string(s.tokens.size())});
    if (s.config.cross() && static_cast<int>(s.kv_tokens.size()) != s.config.n_kv)
        out.push_back({"kv_tokens", "expected " + std::to_string(s.config.n_kv) + " labels (config.n_kv), got " +
                                        std::to_string(s.kv_tokens.size())});
    for (Problem& p : validate(s.config, s.params)) out.push_back(std::move(p));
    if (s.pin) {
        if (s.pin->pin) out.push_back({"pin.pin", "a pinned session cannot hold a pin of its own"});
        for (Problem& p : validate(*s.pin)) out.push_back({"pin." + p.path, std::move(p.message)});
    }
    return out;
}

Session resized(const Session& s, const Config& config) { return resized(s, config, Session{}); }

Session resized(const Session& s, const Config& config, const Session& memory) {
    Session out{config,
                labels(s.tokens, memory.tokens, default_tokens(config.n)),
                resize(s.params, config, memory.params),
                {},
                s.pin};
    if (config.cross()) out.kv_tokens = labels(s.kv_tokens, memory.kv_tokens, default_kv_tokens(config.n_kv));
    return out;
}

Session remembered(const Session& memory, const Session& current) {
    Session out{current.config, current.tokens, remembered(memory.params, current.params), current.kv_tokens,
                current.pin};
    for (size_t i = current.tokens.size(); i < memory.tokens.size(); ++i) out.tokens.push_back(memory.tokens[i]);
    for (size_t i = current.kv_tokens.size(); i < memory.kv_tokens.size(); ++i)
        out.kv_tokens.push_back(memory.kv_tokens[i]);
    return out;
}

}  // namespace attnviz::core
