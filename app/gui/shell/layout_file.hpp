// The window layout file ($XDG_CONFIG_HOME/attnviz/layout.ini) as ImGui is handed it: only the
// sections attnviz writes, each checked and bounded, so a corrupt or hostile file can neither crash
// ImGui's loader (a [Table] of 2147483647 columns), nor make it allocate gigabytes, nor stall the
// start (ImGui looks tables up one by one: 10,000 of them cost seconds). Text only: no ImGui here.
//
// Kept, as ImGui 1.86 and attnviz write them:
//   [Window][TITLE]          Pos=X,Y  Size=W,H  Collapsed=0|1
//   [Table][0xID,COLUMNS]    RefScale=S  Column N [UserID=0xID] [Width=W|Weight=F] [Visible=0|1]
//                            [Order=N] [Sort=N(v|^)]
//   [attnviz][Layout]        left=… (the shares)  tabs=… (the chosen tabs)  theme=…  scale=…  colormap=…
//                            (the look, appearance.hpp: only the names and the sizes it writes)
// Anything else (another type of section, a bad header, a line of another form or out of range,
// more sections than the bounds below) is dropped and counted.
#pragma once

#include <string>
#include <string_view>

namespace attnviz::app {

struct FilteredLayout {
    std::string text;  // what ImGui may load
    int dropped = 0;   // sections and lines left out
};

// Bounds of what the layout keeps (attnviz has about twenty windows and a few tables).
inline constexpr int layout_max_windows = 64;
inline constexpr int layout_max_tables = 64;
inline constexpr int layout_max_columns = 64;  // ImGui 1.86's IMGUI_TABLE_MAX_COLUMNS
inline constexpr size_t layout_max_line = 1024;
inline constexpr size_t layout_max_bytes = size_t{1} << 20;  // a larger file is not read at all

FilteredLayout filter_layout(std::string_view text);

}  // namespace attnviz::app
