// The named colours of the UI: every colour a panel or widget draws with (besides the colormaps
// and ImGui's own style) has one name here and one value in each theme's table below (the theme's
// ImGui colours are theme.cpp's). Each table is chosen for its theme's window background: text
// colours read on it (WCAG contrast ≥ 3, test_presentation.cpp), fills under text read with the
// theme's text colour.
#pragma once

#include <array>
#include <cstddef>
#include <imgui.h>

#include "core/render/colormaps.hpp"
#include "ui/appearance.hpp"

namespace attnviz::app {

enum class Color {
    error_text,     // messages about something refused
    ok_text,        // messages about something done
    selected_cell,  // the outline of the selected cell
    operand,        // the outline of the cells that produced it
    hovered_cell,   // the outline of the cell under the pointer
    operand_field,  // an editor field that is an operand of the selected cell
    masked_cell,    // −∞ (a masked score)
    hidden_cell,    // a cell not revealed yet (lesson play, exercise)
    node,           // a pipeline node
    node_hovered,
    node_viewed,  // the node whose matrix the viewer shows
    node_border,
    node_text,
    arrow,           // pipeline arrows
    note,            // small notes beside the arrows
    step_title,      // the lesson's step title
    step_formula,    // the lesson's formula line
    exercise_empty,  // exercise fields: not answered, right, wrong, revealed
    exercise_right,
    exercise_wrong,
    exercise_revealed,
    solved,            // "All right!"
    highlighted_head,  // the model view's outline of the first heads of the model in its order
    background,        // behind every window
    token_selected,    // the head view: a selected token's label
    token_hovered,     // the head view: the token under the pointer
    selection_bar,     // the head view: the bars of the selection's attention
    heads_mean,        // the head view: the lines of the mean of the heads (the page's "mean")
    plot_axis,         // a plot's axes, ticks and their numbers
    plot_grid,         // the grid lines inside a plot
    plot_mean,         // a plot's summary line (the mean over the heads)
    plot_current,      // the marker of the value in use (the divisor s)
    plot_reference,    // the marker of a reference value (√d_k) and reference lines
    callout,           // the background of a warning callout
    callout_border,
    viewed_title,  // the title of the matrix the viewer shows, wherever that matrix is drawn
    count
};

// The dark theme's value of every colour (the default), in Color order.
inline constexpr ImU32 dark_palette[] = {
    IM_COL32(255, 110, 100, 255),  // error_text
    IM_COL32(150, 200, 150, 255),  // ok_text
    IM_COL32(255, 255, 255, 255),  // selected_cell
    IM_COL32(255, 140, 0, 255),    // operand
    IM_COL32(255, 255, 255, 255),  // hovered_cell
    IM_COL32(170, 95, 0, 200),     // operand_field
    IM_COL32(110, 110, 110, 255),  // masked_cell
    IM_COL32(55, 60, 70, 255),     // hidden_cell
    IM_COL32(42, 48, 60, 255),     // node
    IM_COL32(60, 70, 90, 255),     // node_hovered
    IM_COL32(66, 110, 170, 255),   // node_viewed
    IM_COL32(120, 140, 170, 255),  // node_border
    IM_COL32(255, 255, 255, 255),  // node_text
    IM_COL32(150, 160, 180, 255),  // arrow
    IM_COL32(170, 180, 195, 255),  // note
    IM_COL32(255, 217, 102, 255),  // step_title
    IM_COL32(153, 217, 255, 255),  // step_formula
    IM_COL32(50, 56, 68, 255),     // exercise_empty
    IM_COL32(40, 120, 60, 255),    // exercise_right
    IM_COL32(150, 45, 45, 255),    // exercise_wrong
    IM_COL32(60, 80, 130, 255),    // exercise_revealed
    IM_COL32(128, 230, 128, 255),  // solved
    IM_COL32(255, 90, 200, 255),   // highlighted_head (a pink no viridis cell has)
    IM_COL32(23, 26, 31, 255),     // background
    IM_COL32(66, 110, 170, 255),   // token_selected
    IM_COL32(70, 78, 95, 255),     // token_hovered
    IM_COL32(90, 130, 190, 150),   // selection_bar
    IM_COL32(245, 245, 245, 255),  // heads_mean
    IM_COL32(150, 160, 180, 255),  // plot_axis
    IM_COL32(48, 54, 66, 255),     // plot_grid
    IM_COL32(245, 245, 245, 255),  // plot_mean
    IM_COL32(255, 140, 0, 255),    // plot_current
    IM_COL32(153, 217, 255, 255),  // plot_reference
    IM_COL32(85, 38, 32, 255),     // callout
    IM_COL32(255, 110, 100, 255),  // callout_border
    IM_COL32(230, 179, 0, 255),    // viewed_title (ImGui's dark histogram colour)
};

// The light theme's: dark text colours, pale fills under the (black) text, dark outlines.
inline constexpr ImU32 light_palette[] = {
    IM_COL32(180, 20, 20, 255),    // error_text
    IM_COL32(20, 110, 40, 255),    // ok_text
    IM_COL32(0, 0, 0, 255),        // selected_cell
    IM_COL32(200, 85, 0, 255),     // operand
    IM_COL32(40, 40, 40, 255),     // hovered_cell
    IM_COL32(255, 205, 140, 255),  // operand_field
    IM_COL32(150, 150, 150, 255),  // masked_cell
    IM_COL32(208, 212, 220, 255),  // hidden_cell
    IM_COL32(226, 231, 240, 255),  // node
    IM_COL32(206, 216, 236, 255),  // node_hovered
    IM_COL32(160, 192, 240, 255),  // node_viewed
    IM_COL32(100, 115, 140, 255),  // node_border
    IM_COL32(0, 0, 0, 255),        // node_text
    IM_COL32(90, 100, 120, 255),   // arrow
    IM_COL32(70, 78, 95, 255),     // note
    IM_COL32(150, 70, 0, 255),     // step_title
    IM_COL32(0, 80, 160, 255),     // step_formula
    IM_COL32(228, 231, 238, 255),  // exercise_empty
    IM_COL32(175, 228, 185, 255),  // exercise_right
    IM_COL32(250, 188, 188, 255),  // exercise_wrong
    IM_COL32(190, 206, 242, 255),  // exercise_revealed
    IM_COL32(20, 120, 20, 255),    // solved
    IM_COL32(200, 0, 140, 255),    // highlighted_head
    IM_COL32(240, 240, 240, 255),  // background
    IM_COL32(160, 192, 240, 255),  // token_selected
    IM_COL32(212, 217, 228, 255),  // token_hovered
    IM_COL32(50, 100, 190, 150),   // selection_bar
    IM_COL32(25, 25, 25, 255),     // heads_mean
    IM_COL32(80, 86, 100, 255),    // plot_axis
    IM_COL32(212, 216, 224, 255),  // plot_grid
    IM_COL32(25, 25, 25, 255),     // plot_mean
    IM_COL32(200, 85, 0, 255),     // plot_current
    IM_COL32(0, 90, 170, 255),     // plot_reference
    IM_COL32(255, 226, 216, 255),  // callout
    IM_COL32(190, 40, 30, 255),    // callout_border
    IM_COL32(120, 70, 0, 255),     // viewed_title
};

// The high-contrast theme's: white, yellow and cyan on black, saturated fills under white text.
inline constexpr ImU32 high_contrast_palette[] = {
    IM_COL32(255, 120, 120, 255),  // error_text
    IM_COL32(110, 255, 110, 255),  // ok_text
    IM_COL32(255, 255, 255, 255),  // selected_cell
    IM_COL32(255, 165, 0, 255),    // operand
    IM_COL32(0, 255, 255, 255),    // hovered_cell
    IM_COL32(150, 80, 0, 255),     // operand_field
    IM_COL32(128, 128, 128, 255),  // masked_cell
    IM_COL32(45, 45, 45, 255),     // hidden_cell
    IM_COL32(15, 15, 15, 255),     // node
    IM_COL32(45, 45, 70, 255),     // node_hovered
    IM_COL32(0, 70, 160, 255),     // node_viewed
    IM_COL32(255, 255, 255, 255),  // node_border
    IM_COL32(255, 255, 255, 255),  // node_text
    IM_COL32(230, 230, 230, 255),  // arrow
    IM_COL32(235, 235, 235, 255),  // note
    IM_COL32(255, 255, 0, 255),    // step_title
    IM_COL32(0, 255, 255, 255),    // step_formula
    IM_COL32(25, 25, 25, 255),     // exercise_empty
    IM_COL32(0, 100, 0, 255),      // exercise_right
    IM_COL32(150, 0, 0, 255),      // exercise_wrong
    IM_COL32(0, 50, 150, 255),     // exercise_revealed
    IM_COL32(0, 255, 0, 255),      // solved
    IM_COL32(255, 0, 255, 255),    // highlighted_head
    IM_COL32(0, 0, 0, 255),        // background
    IM_COL32(0, 70, 160, 255),     // token_selected
    IM_COL32(60, 60, 60, 255),     // token_hovered
    IM_COL32(0, 160, 255, 170),    // selection_bar
    IM_COL32(255, 255, 255, 255),  // heads_mean
    IM_COL32(235, 235, 235, 255),  // plot_axis
    IM_COL32(75, 75, 75, 255),     // plot_grid
    IM_COL32(255, 255, 255, 255),  // plot_mean
    IM_COL32(255, 165, 0, 255),    // plot_current
    IM_COL32(0, 255, 255, 255),    // plot_reference
    IM_COL32(80, 0, 0, 255),       // callout
    IM_COL32(255, 90, 90, 255),    // callout_border
    IM_COL32(255, 255, 0, 255),    // viewed_title
};

static_assert(std::size(dark_palette) == static_cast<std::size_t>(Color::count), "one value per Color");
static_assert(std::size(light_palette) == static_cast<std::size_t>(Color::count), "one value per Color");
static_assert(std::size(high_contrast_palette) == static_cast<std::size_t>(Color::count), "one value per Color");

using Palette = std::array<ImU32, static_cast<std::size_t>(Color::count)>;

// One colour per head (core::head_rgba: the same colours in figures and the interactive page).
inline ImU32 head_color(int head, int heads) {
    const core::Rgba c = core::head_rgba(head, heads);
    return IM_COL32(c.r, c.g, c.b, c.a);
}

// A theme's palette.
inline Palette make_palette(Theme theme = Theme::dark) {
    const ImU32* table = theme == Theme::light           ? light_palette
                         : theme == Theme::high_contrast ? high_contrast_palette
                                                         : dark_palette;
    Palette p{};
    for (std::size_t k = 0; k < p.size(); ++k) p[k] = table[k];
    return p;
}

}  // namespace attnviz::app
