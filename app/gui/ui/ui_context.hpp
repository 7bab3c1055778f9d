// The UI context: everything the panels and widgets share besides the AppState — the fonts, the
// named colours, the heatmap caches (textures and colour ranges), the queued commands and the
// files dropped on the window — in one object with an ordered lifetime:
//   created after the ImGui context and the GL context (fonts need the first, textures the second),
//   destroyed before both (its heatmap cache frees its textures while GL still exists).
// Nothing in app/ keeps state in file-scope variables; panels receive this object.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/registry.hpp"
#include "core/render/color_scale.hpp"

#include "ui/appearance.hpp"
#include "ui/command.hpp"
#include "ui/fonts.hpp"
#include "ui/heatmap_cache.hpp"
#include "ui/palette.hpp"

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
    struct Item {  // an input field or a button, for tests to find: "X[0][1]", "viewer: go"
        std::string name;
        ImVec2 min, max;
    };
    struct Heatmap {  // where a heatmap's cells were drawn (the view's rectangle when zoomed)
        std::string matrix;
        ImVec2 min, max;
    };
    struct Label {         // a label drawn (a heatmap's row or column label, the status line), as given and as shown
        std::string name;  // e.g. "weights(2): col 2", "status: line"
        std::string text, shown;
        bool cut = false;  // shown is not the whole text (cut with "…", or items left out)
        ImVec2 min, max;
    };
    struct Value {  // a number a panel showed, at full precision (the model panels' ids and probabilities)
        std::string name;
        double value = 0;
    };
    std::vector<Window> windows;
    std::vector<Number> numbers;
    std::vector<Item> items;
    std::vector<Heatmap> heatmaps;
    std::vector<Value> values;
    std::vector<Label> labels;
    std::string workspace;  // the workspace shown ("Layer", "Model", …)
    void clear() {
        workspace.clear();
        values.clear();
        labels.clear();
        windows.clear();
        numbers.clear();
        items.clear();
        heatmaps.clear();
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

    // The colour scaling of a matrix (every head of it, in every view): the user's choice, or the
    // default for a matrix with that many columns.
    core::Scaling scaling(core::MatrixId id, std::int64_t cols) const {
        const std::optional<core::Scaling>& chosen = scalings[static_cast<std::size_t>(id)];
        return chosen ? *chosen : core::default_scaling(core::info(id).colors, cols);
    }
    // Whether a matrix is shown on the automatic range with an outlying top lowered to the 99th
    // percentile (core::auto_outlier_range): weights over core::auto_weights_from_keys keys or more
    // while no scaling is chosen, as exported figures draw them (a causal layer's first query puts
    // weight 1 on itself; on min..max every other weight of a long sequence takes one colour).
    bool clips_outliers(core::MatrixId id, std::int64_t cols) const {
        return core::clips_outliers(core::info(id).colors, scalings[static_cast<std::size_t>(id)].has_value(), cols);
    }
    // The colormap a matrix is drawn with: the chosen sequential map (viridis or cividis) for
    // weights, the diverging one for the rest.
    core::Colormap colormap(core::MatrixId id) const {
        const core::Colormap map = core::colormap_for(core::info(id).colors);
        return map == core::Colormap::sequential ? look.weights : map;
    }
    // Pixels per pixel of the design at 16 px text: the text size times the monitor's content scale
    // (bounded, so a huge content scale cannot ask for an atlas of fonts larger than a texture).
    // Lines and outlines drawn by hand are this thick per pixel.
    float scale() const { return std::clamp(look.scale * content_scale, 0.5f, 4.0f); }
    float px(float pixels) const { return pixels * scale(); }
    // Chooses a scaling for a matrix; nullopt goes back to the default.
    void set_scaling(core::MatrixId id, std::optional<core::Scaling> s) { scalings[static_cast<std::size_t>(id)] = s; }

    // A command for the frame to run (menu items, shortcuts, buttons), with what it is about; run
    // in order, once.
    void request(Command c) { commands.push_back(std::move(c)); }
    // Shows B − A of a matrix in the Compare panel, pinning the session as A when it has no pin.
    void request_compare(core::MatrixRef ref) { request(command::Compare{ref}); }
    // Opens the export dialog on a matrix or a view.
    void request_export(ExportTarget target) { request(command::Export{target}); }

    Fonts fonts;
    Palette palette;
    // The look the fonts, the style, the palette and the colormap were made for (apply_appearance,
    // theme.hpp), and the monitor's content scale (1 but on HiDPI screens), read at start.
    Appearance look;
    float content_scale = 1;
    HeatmapCache heatmaps;
    std::array<std::optional<core::Scaling>, core::matrix_count> scalings{};  // per matrix; unset: default
    std::vector<Command> commands;           // requested in this frame, each with its payload
    std::vector<std::string> dropped_files;  // by the window's drop callback, opened by the frame
    // A dialog is open (set by the frame before anything draws): it has the keyboard, so the
    // shortcuts wait, and a command that would open another dialog is dropped.
    bool dialog_open = false;
    // A desktop file dialog was waited for in this frame (FileChooser::draw): the window looks for
    // its answer a few times a second even while idle.
    bool desktop_dialog = false;
    DrawReport* report = nullptr;  // non-null: record what is drawn (screenshot tests)

    // Records the last item (a field or a button) in the draw report, when one is collected.
    void report_item(const std::string& name) {
        if (report) report->items.push_back({name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
    }
    // Records a label drawn as `shown` for the whole `text`, when a report is collected.
    void report_label(std::string name, const std::string& text, const std::string& shown, ImVec2 min, ImVec2 max,
                      bool cut) {
        if (report) report->labels.push_back({std::move(name), text, shown, cut, min, max});
    }
    // Records a number shown, when a report is collected.
    void report_value(std::string name, double value) {
        if (report) report->values.push_back({std::move(name), value});
    }
};

}  // namespace attnviz::app
