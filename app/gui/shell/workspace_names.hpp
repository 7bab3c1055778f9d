// The workspaces' names: the bar's labels, --workspace's names (any case) and the layout file's.
// Text only, no ImGui (the layout file's filter reads them): the rest is workspaces.hpp's.
#pragma once

#include <cctype>
#include <optional>
#include <string_view>

#include "ui/command.hpp"

namespace attnviz::app {

inline constexpr std::size_t workspace_count = static_cast<std::size_t>(Workspace::count);

// In Workspace order: "Layer", "Model", "Lab", "Teach", "Attribution".
inline constexpr const char* workspace_names[workspace_count] = {"Layer", "Model", "Lab", "Teach", "Attribution"};

inline const char* workspace_name(Workspace w) {
    const auto k = static_cast<std::size_t>(w);
    return k < workspace_count ? workspace_names[k] : workspace_names[0];
}

// The workspace with this name, any case ("lab", "LAB", "Lab").
inline std::optional<Workspace> workspace_named(std::string_view name) {
    for (std::size_t k = 0; k < workspace_count; ++k) {
        const std::string_view candidate = workspace_names[k];
        if (candidate.size() != name.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < name.size(); ++i)
            same = same && std::tolower(static_cast<unsigned char>(name[i])) ==
                               std::tolower(static_cast<unsigned char>(candidate[i]));
        if (same) return static_cast<Workspace>(k);
    }
    return std::nullopt;
}

}  // namespace attnviz::app
