// The command palette (Ctrl+K, or the bar's "Find anything"): one field that finds any panel,
// workspace, lesson, export and action by name, fuzzy-matched as typed, and runs the one chosen
// (Enter or a click; the arrows move the choice, Esc closes). Each entry is a command (command.hpp),
// run with the frame's other commands.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/teach/lesson.hpp"
#include "ui/appearance.hpp"
#include "ui/command.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct PaletteEntry {
    std::string kind;  // "Panel", "Workspace", "Lesson", "Export", "Action"
    std::string name;  // what is matched and shown after the kind: "Gradients", "Undo"
    Command command;
};

struct CommandPalette {
    bool open_requested = false;  // opens in the next frame (the palette is a popup of its own)
    std::string query;
    int chosen = 0;                     // in the matches, top first
    std::vector<PaletteEntry> entries;  // made when it opens (the lessons read then)
    std::vector<int> matches;           // indices into entries, best first
};

// How well `query` matches `text`, fuzzily: every character of the query (case ignored, spaces
// skipped) found in order in the text. -1: no match. Higher is better: characters in a row, at the
// start of a word and at the start of the text count more, a longer text a little less.
int fuzzy_score(std::string_view query, std::string_view text);

// A panel as the palette lists it: its id and its title (the window's).
struct PalettePanel {
    PanelId id;
    const char* title;
};
// The entries: the workspaces, these panels, these lessons, the exports and the actions (the
// themes and text sizes among them, made from the look now).
std::vector<PaletteEntry> palette_entries(std::span<const PalettePanel> panels,
                                          std::span<const core::LessonEntry> lessons, const Appearance& look);
// The entries matching the query (kind and name), best first; all of them, in order, for "".
std::vector<int> palette_matches(const std::vector<PaletteEntry>& entries, std::string_view query);

// Opens the palette in the next frame with these entries, the query empty.
void open_command_palette(CommandPalette& palette, std::vector<PaletteEntry> entries);
// Draws it when open and requests the chosen entry's command.
void draw_command_palette(CommandPalette& palette, UiContext& ui);

}  // namespace attnviz::app
