// The UI context: everything the panels and widgets share besides the AppState — the fonts, the
// named colours, the heatmap caches (textures and colour ranges), the queued commands and the
// files dropped on the window — in one object with an ordered lifetime:
//   created after the ImGui context and the GL context (fonts need the first, textures the second),
//   destroyed before both (its heatmap cache frees its textures while GL still exists).
// Nothing in app/ keeps state in file-scope variables; panels receive this object.
#pragma once

#include <string>
#include <vector>

#include "command.hpp"
#include "fonts.hpp"
#include "palette.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

// What the screenshot tests read back (--report): where each window was and which numbers the
// heatmaps printed where. Collected only when a report is asked for.
struct DrawReport {
    struct Window {
        std::string title;
        ImVec2 pos, size;
    };
    struct Number {
        std::string matrix;  // label in ASCII, e.g. "weights(1)"
        int row = 0, col = 0;
        std::string text;  // as printed
        ImVec2 min, max;   // the cell on screen
    };
    struct Field {         // an editor's input field
        std::string cell;  // e.g. "X[0][1]"
        ImVec2 min, max;
    };
    std::vector<Window> windows;
    std::vector<Number> numbers;
    std::vector<Field> fields;
    void clear() {
        windows.clear();
        numbers.clear();
        fields.clear();
    }
};

class UiContext {
public:
    explicit UiContext(Fonts fonts = {}) : fonts(fonts), palette(make_palette()) {}
    UiContext(const UiContext&) = delete;
    UiContext& operator=(const UiContext&) = delete;

    ImU32 color(Color c) const { return palette[static_cast<std::size_t>(c)]; }
    ImVec4 color_vec(Color c) const { return ImGui::ColorConvertU32ToFloat4(color(c)); }
    core::Notation notation() const { return fonts.notation; }
    const core::Symbols& symbols() const { return core::symbols(fonts.notation); }

    // A command for the frame to run (menu items, shortcuts, buttons); run in order, once.
    void request(Command c) { commands.push_back(c); }

    Fonts fonts;
    Palette palette;
    HeatmapCache heatmaps;
    std::vector<Command> commands;
    std::vector<std::string> dropped_files;  // by the window's drop callback, opened by the frame
    DrawReport* report = nullptr;            // non-null: record what is drawn (screenshot tests)
};

}  // namespace attnviz::app
