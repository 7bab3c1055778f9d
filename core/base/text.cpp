#include "core/base/text.hpp"

namespace attnviz::core {

std::size_t characters_end(std::string_view text, std::size_t max) {
    const auto continuation = [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; };
    std::size_t end = 0;
    for (std::size_t count = 0; end < text.size() && count < max; ++count) {
        ++end;
        while (end < text.size() && continuation(text[end])) ++end;
    }
    return end;
}

std::string bounded_text(std::string_view text, std::size_t max) {
    const std::size_t end = characters_end(text, max);
    if (end == text.size()) return std::string(text);
    return std::string(text.substr(0, end)) + "…";
}

}  // namespace attnviz::core
