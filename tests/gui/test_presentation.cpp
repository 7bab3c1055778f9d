// Presentation: the text size (fonts rasterised at the size, every spacing scaled), each theme's
// contrast (ImGui's colours and the palette's, on the theme's own window), the View menu's
// shortcuts and focus, the look kept with the layout, and the weights' colormap followed by the
// heatmaps' textures and the legends.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "core/attention/presets.hpp"
#include "shell/frame_commands.hpp"
#include "shell/layout_file.hpp"
#include "ui/theme.hpp"
#include "widgets/colormap.hpp"
#include "widgets/matrix_view.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::Appearance;
using app::Color;
using app::Theme;

namespace {

// --- Contrast: a colour as seen on its background (straight alpha over it).

core::Rgba rgba(ImVec4 c) {
    const auto byte = [](float v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
    return {byte(c.x), byte(c.y), byte(c.z), 255};
}

ImVec4 over(ImVec4 top, ImVec4 below) {
    const float a = top.w;
    return {top.x * a + below.x * (1 - a), top.y * a + below.y * (1 - a), top.z * a + below.z * (1 - a), 1};
}

float contrast(ImVec4 a, ImVec4 b) { return core::contrast_ratio(rgba(a), rgba(b)); }

struct ThemeColours {
    ImGuiStyle style;
    app::Palette palette;
    ImVec4 window;  // the window's colour as drawn on the palette's background
    ImVec4 col(ImGuiCol c) const { return over(style.Colors[c], window); }
    ImVec4 pal(Color c) const { return over(ImGui::ColorConvertU32ToFloat4(palette[static_cast<size_t>(c)]), window); }
};

ThemeColours colours_of(Theme theme) {
    ThemeColours t{app::theme_style(theme, 1), app::make_palette(theme), {}};
    const ImVec4 background = ImGui::ColorConvertU32ToFloat4(t.palette[static_cast<size_t>(Color::background)]);
    t.window = over(t.style.Colors[ImGuiCol_WindowBg], background);
    return t;
}

class EachTheme : public ::testing::TestWithParam<Theme> {
protected:
    test::HeadlessImGui imgui_;  // ImGui's style functions need a context
};

}  // namespace

// Text reads (WCAG ≥ 4.5) on the window and on every surface text sits on at rest, ≥ 3 while hovered
// or pressed; the palette's text colours and outlines stand out from the window (≥ 3, large text
// and graphics); the fills under text (pipeline nodes, exercise fields, tokens, the callout) keep
// the text readable (≥ 4.5).
TEST_P(EachTheme, TextOutlinesAndFillsReadOnTheThemesWindow) {
    const ThemeColours t = colours_of(GetParam());
    const ImVec4 text = t.style.Colors[ImGuiCol_Text];
    EXPECT_GE(contrast(text, t.window), 4.5f) << "text on the window";
    EXPECT_GE(contrast(t.col(ImGuiCol_TextDisabled), t.window), 4.5f) << "notes (disabled text) on the window";
    for (ImGuiCol c :
         {ImGuiCol_ChildBg, ImGuiCol_PopupBg, ImGuiCol_MenuBarBg, ImGuiCol_FrameBg, ImGuiCol_Button, ImGuiCol_Header,
          ImGuiCol_TitleBg, ImGuiCol_TitleBgActive, ImGuiCol_Tab, ImGuiCol_TabActive, ImGuiCol_TableHeaderBg})
        EXPECT_GE(contrast(text, t.col(c)), 4.5f) << "text on " << ImGui::GetStyleColorName(c);
    for (ImGuiCol c : {ImGuiCol_FrameBgHovered, ImGuiCol_FrameBgActive, ImGuiCol_ButtonHovered, ImGuiCol_ButtonActive,
                       ImGuiCol_HeaderHovered, ImGuiCol_HeaderActive, ImGuiCol_TabHovered, ImGuiCol_SliderGrab,
                       ImGuiCol_SliderGrabActive})
        EXPECT_GE(contrast(text, t.col(c)), 3.0f) << "text on " << ImGui::GetStyleColorName(c);
    const char* names[] = {"error_text",    "ok_text",        "step_title",   "step_formula",
                           "note",          "solved",         "plot_axis",    "plot_mean",
                           "plot_current",  "plot_reference", "arrow",        "viewed_title",
                           "selected_cell", "operand",        "hovered_cell", "highlighted_head",
                           "callout_border"};
    size_t k = 0;
    for (Color c : {Color::error_text, Color::ok_text, Color::step_title, Color::step_formula, Color::note,
                    Color::solved, Color::plot_axis, Color::plot_mean, Color::plot_current, Color::plot_reference,
                    Color::arrow, Color::viewed_title, Color::selected_cell, Color::operand, Color::hovered_cell,
                    Color::highlighted_head, Color::callout_border, Color::heads_mean})
        EXPECT_GE(contrast(t.pal(c), t.window), 3.0f) << names[k++] << " on the window";
    EXPECT_GE(contrast(t.pal(Color::viewed_title), t.col(ImGuiCol_Header)), 3.0f) << "the viewed title, selected";
    for (Color c : {Color::node, Color::node_hovered, Color::node_viewed})
        EXPECT_GE(contrast(t.pal(Color::node_text), t.pal(c)), 4.5f) << "node text on node " << static_cast<int>(c);
    for (Color c : {Color::exercise_empty, Color::exercise_right, Color::exercise_wrong, Color::exercise_revealed,
                    Color::operand_field, Color::token_selected, Color::token_hovered, Color::callout})
        EXPECT_GE(contrast(text, t.pal(c)), 4.5f) << "text on fill " << static_cast<int>(c);
}

INSTANTIATE_TEST_SUITE_P(Themes, EachTheme, ::testing::ValuesIn(app::all_themes),
                         [](const ::testing::TestParamInfo<Theme>& info) {
                             std::string name = app::theme_name(info.param);
                             name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                             return name;
                         });

// The dark theme is the look attnviz had: ImGui's dark colours, rounded windows, opaque popups.
TEST(Themes, DarkIsImGuisDarkWithOpaquePopups) {
    test::HeadlessImGui imgui;
    ImGuiStyle dark;
    ImGui::StyleColorsDark(&dark);
    const ImGuiStyle s = app::theme_style(Theme::dark, 1);
    for (int c = 0; c < ImGuiCol_COUNT; ++c) {
        if (c == ImGuiCol_PopupBg) continue;
        EXPECT_EQ(rgba(s.Colors[c]), rgba(dark.Colors[c])) << ImGui::GetStyleColorName(c);
        EXPECT_FLOAT_EQ(s.Colors[c].w, dark.Colors[c].w) << ImGui::GetStyleColorName(c);
    }
    EXPECT_FLOAT_EQ(s.Colors[ImGuiCol_PopupBg].w, 1.0f);
    EXPECT_FLOAT_EQ(s.WindowRounding, 3.0f);
    EXPECT_EQ(app::make_palette(Theme::dark)[static_cast<size_t>(Color::background)], IM_COL32(23, 26, 31, 255));
}

// The panels draw no background of their own: the frame is cleared to the colour their background
// has over the palette's, as an 8-bit framebuffer blends it. Dark: WindowBg 0.06 (15 of 255) at
// alpha 0.94 (240) over (23, 26, 31): 15·240/255 = 14.1 → 14, plus 23·15/255 = 1.4 → 1, 26·15/255 =
// 1.5 → 2, 31·15/255 = 1.8 → 2: (15, 16, 16), the ground the dark screenshots check. Light and high
// contrast have opaque windows: their own colour.
TEST(Themes, TheFrameIsClearedToTheColourOfTheWindowsBackground) {
    test::HeadlessImGui imgui;
    const std::pair<Theme, core::Rgba> expected[] = {{Theme::dark, {15, 16, 16, 255}},
                                                     {Theme::light, {240, 240, 240, 255}},
                                                     {Theme::high_contrast, {0, 0, 0, 255}}};
    for (const auto& [theme, colour] : expected) {
        ImGui::GetStyle() = app::theme_style(theme, 1);
        const app::Palette palette = app::make_palette(theme);
        const ImVec4 behind = ImGui::ColorConvertU32ToFloat4(palette[static_cast<size_t>(Color::background)]);
        const ImVec4 cleared = app::window_background_over(behind);
        EXPECT_EQ(rgba(cleared), colour) << app::theme_name(theme);
        EXPECT_FLOAT_EQ(cleared.w, 1.0f);
        // Within a 255th of the exact blend.
        const ImVec4 exact = over(ImGui::GetStyle().Colors[ImGuiCol_WindowBg], behind);
        EXPECT_NEAR(cleared.x, exact.x, 1.0f / 255) << app::theme_name(theme);
        EXPECT_NEAR(cleared.z, exact.z, 1.0f / 255) << app::theme_name(theme);
    }
}

// --- The text size.

// Scale 2: the fonts are rasterised at 32 px (their glyphs twice as tall in the atlas, not one
// 16 px atlas drawn larger), every spacing doubles; back to 1, all as before.
TEST(TextSize, FontsAreRasterisedAtTheSizeAndEverySpacingScales) {
    test::HeadlessImGui imgui;
    app::UiContext& ui = imgui.ui;
    const ImGuiStyle unscaled = app::theme_style(Theme::dark, 1);
    const auto glyph_h = [] {
        const ImFontGlyph* m = ImGui::GetIO().Fonts->Fonts[0]->FindGlyph('M');
        return m->Y1 - m->Y0;
    };
    const auto frame = [] {
        ImGui::NewFrame();
        const float size = ImGui::GetFontSize();
        ImGui::Render();
        return size;
    };
    const float m16 = glyph_h();
    EXPECT_TRUE(app::apply_appearance(ui, {Theme::dark, 2, core::Colormap::sequential}));
    EXPECT_FLOAT_EQ(frame(), 32.0f);
    EXPECT_FLOAT_EQ(ui.fonts.size, 32.0f);
    ASSERT_NE(ui.fonts.numbers, nullptr);
    EXPECT_FLOAT_EQ(ui.fonts.numbers->FontSize, 26.0f);     // 0.8 of the UI font, rounded
    EXPECT_FLOAT_EQ(ImGui::GetIO().FontGlobalScale, 1.0f);  // sharp: drawn at the size it was rasterised at
    EXPECT_NEAR(glyph_h(), 2 * m16, 2.0f);
    const ImGuiStyle& s = ImGui::GetStyle();
    EXPECT_FLOAT_EQ(s.ItemSpacing.x, 2 * unscaled.ItemSpacing.x);
    EXPECT_FLOAT_EQ(s.ItemSpacing.y, 2 * unscaled.ItemSpacing.y);
    EXPECT_FLOAT_EQ(s.FramePadding.y, 2 * unscaled.FramePadding.y);
    EXPECT_FLOAT_EQ(s.WindowPadding.x, 2 * unscaled.WindowPadding.x);
    EXPECT_FLOAT_EQ(s.ScrollbarSize, 2 * unscaled.ScrollbarSize);
    EXPECT_FLOAT_EQ(s.WindowRounding, 6.0f);
    EXPECT_FLOAT_EQ(ui.px(1.5f), 3.0f);  // lines drawn by hand
    // Only the theme changes: the fonts stay.
    EXPECT_FALSE(app::apply_appearance(ui, {Theme::light, 2, core::Colormap::sequential}));
    EXPECT_TRUE(app::apply_appearance(ui, {Theme::light, 1, core::Colormap::sequential}));
    EXPECT_FLOAT_EQ(frame(), 16.0f);
    EXPECT_FLOAT_EQ(ImGui::GetStyle().ItemSpacing.y, unscaled.ItemSpacing.y);
    EXPECT_NEAR(glyph_h(), m16, 0.5f);
}

// A HiDPI monitor's content scale multiplies the chosen size.
TEST(TextSize, TheMonitorsContentScaleMultipliesIn) {
    test::HeadlessImGui imgui;
    imgui.ui.content_scale = 2;
    app::apply_appearance(imgui.ui, {Theme::dark, 1.5f, core::Colormap::sequential});
    EXPECT_FLOAT_EQ(imgui.ui.fonts.size, 48.0f);
    EXPECT_FLOAT_EQ(ImGui::GetStyle().ItemSpacing.x, 8.0f * 3);
}

TEST(TextSize, StepsNamesAndTheLayoutsLines) {
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(1, 1), 1.25f);
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(1, -1), 0.75f);
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(0.75f, -1), 0.75f);  // the smallest
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(3, 1), 3.0f);        // the largest
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(1.6f, 1), 1.75f);    // a size between steps: the next one
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(1.6f, -1), 1.5f);
    EXPECT_FLOAT_EQ(app::stepped_ui_scale(2.5f, 0), 1.0f);
    EXPECT_FALSE(app::valid_ui_scale(0.5f));
    EXPECT_FALSE(app::valid_ui_scale(3.01f));
    EXPECT_FALSE(app::valid_ui_scale(std::nanf("")));
    EXPECT_TRUE(app::valid_ui_scale(0.75f));
    const Appearance chosen{Theme::high_contrast, 1.5f, core::Colormap::cividis};
    EXPECT_EQ(app::appearance_lines(chosen), "theme=high-contrast\nscale=1.5\ncolormap=cividis\n");
    Appearance read;
    for (const char* line : {"theme=high-contrast", "scale=1.5", "colormap=cividis"})
        EXPECT_TRUE(app::read_appearance_line(line, read)) << line;
    EXPECT_EQ(read, chosen);
    for (const char* line : {"theme=pink", "scale=9", "scale=0.1", "scale=nan", "scale=1e0", "scale=", "colormap=jet",
                             "colormap=diverging", "theme", "left=1"})
        EXPECT_FALSE(app::read_appearance_line(line, read)) << line;
    EXPECT_EQ(read, chosen);  // unchanged by what was refused
}

// --- The look in the window: the menu's shortcuts, the layout file, focus, the colormap.

namespace {

class Presentation : public test::WindowTest {
protected:
    // A key pressed for a frame (with Ctrl when `ctrl`), then released; the look then made, as the
    // window makes it between frames.
    void press(app::AppState& state, int key, bool ctrl = false) {
        ImGuiIO& io = ImGui::GetIO();
        io.KeyCtrl = ctrl;
        io.KeysDown[key] = true;
        frames(state);
        io.KeysDown[key] = false;
        io.KeyCtrl = false;
        app::apply_appearance(imgui_.ui, panels.appearance);
        frames(state);
    }
    // Whether any vertex of the last frame has this colour.
    static bool drawn_in(ImU32 colour) {
        const ImDrawData* d = ImGui::GetDrawData();
        for (int l = 0; l < d->CmdListsCount; ++l)
            for (const ImDrawVert& v : d->CmdLists[l]->VtxBuffer)
                if (v.col == colour) return true;
        return false;
    }
};

constexpr int key_equal = 61, key_minus = 45, key_0 = 48, key_f11 = 300;  // GLFW's codes
constexpr int escape_key = 2;                                             // the headless context's KeyMap

// Textures as the heatmap cache uploads them: the last one's texels.
struct Fake {
    static inline std::vector<std::uint32_t> pixels;
    static inline int uploads = 0;
    static ImTextureID upload(ImTextureID previous, int c, int r, const std::uint32_t* rgba) {
        ++uploads;
        pixels.assign(rgba, rgba + static_cast<size_t>(c) * r);
        return previous ? previous : reinterpret_cast<ImTextureID>(std::uintptr_t{7});
    }
    static void destroy(ImTextureID) {}
};

}  // namespace

TEST_F(Presentation, CtrlPlusMinusAndZeroChangeTheTextSizeF11FullScreen) {
    app::AppState state(core::worked_example());
    frames(state, 2);
    press(state, key_equal, true);
    EXPECT_FLOAT_EQ(panels.appearance.scale, 1.25f);
    EXPECT_FLOAT_EQ(ImGui::GetFontSize(), 20.0f);
    press(state, key_minus, true);
    press(state, key_minus, true);
    EXPECT_FLOAT_EQ(panels.appearance.scale, 0.75f);
    EXPECT_FLOAT_EQ(imgui_.ui.fonts.size, 12.0f);
    press(state, key_minus, true);  // the smallest already
    EXPECT_FLOAT_EQ(panels.appearance.scale, 0.75f);
    press(state, key_0, true);
    EXPECT_FLOAT_EQ(panels.appearance.scale, 1.0f);
    press(state, key_equal);  // without Ctrl: nothing
    EXPECT_FLOAT_EQ(panels.appearance.scale, 1.0f);
    EXPECT_FALSE(panels.full_screen);
    press(state, key_f11);
    EXPECT_TRUE(panels.full_screen);
    press(state, key_f11);
    EXPECT_FALSE(panels.full_screen);
}

// The look is saved in the layout file's own section and read back from it; a value attnviz does
// not write is left out (and counted), the rest of the look kept.
TEST_F(Presentation, TheLookIsKeptWithTheLayout) {
    app::install_layout_settings(panels);
    panels.appearance = {Theme::light, 1.5f, core::Colormap::cividis};
    size_t size = 0;
    const std::string saved = ImGui::SaveIniSettingsToMemory(&size);
    EXPECT_NE(saved.find("[attnviz][Layout]\n"), std::string::npos);
    EXPECT_NE(saved.find("\ntheme=light\nscale=1.5\ncolormap=cividis\n"), std::string::npos) << saved;
    const app::FilteredLayout kept = app::filter_layout(saved);
    EXPECT_EQ(kept.dropped, 0);
    panels.appearance = {};
    ImGui::LoadIniSettingsFromMemory(kept.text.data(), kept.text.size());
    EXPECT_EQ(panels.appearance, (Appearance{Theme::light, 1.5f, core::Colormap::cividis}));
    const app::FilteredLayout odd = app::filter_layout("[attnviz][Layout]\ntheme=pink\nscale=1.25\nscale=40\n");
    EXPECT_EQ(odd.dropped, 2);
    EXPECT_EQ(odd.text, "[attnviz][Layout]\nscale=1.25\n");
}

// View > Focus: teach mode without the step list, play or the arithmetic, cells larger than in
// teach mode; ← → still move between steps, Esc (or the button) leaves focus.
TEST_F(Presentation, FocusShowsTheStepAloneLargeAndEscLeavesIt) {
    app::AppState state(core::worked_example());
    app::enter_teach_mode(state, panels, 4);  // the softmax: X, scores and weights
    frames(state, 3);
    const auto cell_of = [this](const std::string& matrix) {
        for (const auto& n : report.numbers)
            if (n.matrix == matrix) return n.max.x - n.min.x;
        return 0.0f;
    };
    ASSERT_NE(item("teach: progress"), nullptr);  // the step list
    const float teach_cell = cell_of("weights(1)");
    ASSERT_GT(teach_cell, 0);
    imgui_.ui.request(app::command::ToggleFocus{});
    frames(state, 3);
    EXPECT_TRUE(panels.teach_mode);
    EXPECT_TRUE(panels.teach.focus);
    EXPECT_EQ(item("teach: progress"), nullptr);
    EXPECT_NE(item("teach: text"), nullptr);
    EXPECT_NE(item("teach: leave focus"), nullptr);
    EXPECT_GT(cell_of("weights(1)"), teach_cell * 1.2f);
    ImGui::GetIO().KeyMap[ImGuiKey_RightArrow] = 5;
    ImGui::GetIO().KeysDown[5] = true;
    frames(state);
    ImGui::GetIO().KeysDown[5] = false;
    frames(state);
    EXPECT_EQ(panels.teach.step, 5);
    ImGui::GetIO().KeyMap[ImGuiKey_Escape] = escape_key;
    ImGui::GetIO().KeysDown[escape_key] = true;
    frames(state);
    ImGui::GetIO().KeysDown[escape_key] = false;
    frames(state, 2);
    EXPECT_FALSE(panels.teach.focus);
    EXPECT_TRUE(panels.teach_mode);
    EXPECT_NE(item("teach: progress"), nullptr);
    // The button is the other way out; the View menu's item the way in from the explorer too.
    panels.teach_mode = false;
    imgui_.ui.request(app::command::ToggleFocus{});
    frames(state, 2);
    EXPECT_TRUE(panels.teach_mode && panels.teach.focus);
    click(state, "teach: leave focus", 2);
    EXPECT_FALSE(panels.teach.focus);
}

// Cividis chosen: a large weights matrix's texture is made anew in cividis's colours (the cache
// follows the choice), and the viewer's legend is drawn in them.
TEST_F(Presentation, TheWeightsColormapReachesTexturesAndLegends) {
    imgui_.ui.heatmaps.set_texture_functions(Fake::upload, Fake::destroy);
    core::Config c = core::worked_example().config;
    c.n = 300;
    c.d_model = 4;
    app::AppState state(core::random_session(c, 5));
    state.wait_for_trace();
    const auto draw = [&] {
        ImGui::NewFrame();
        ImGui::SetNextWindowSize({400, 400});
        ImGui::Begin("weights");
        app::MatrixViewOptions o;
        o.max_size = {150, 150};  // 300 rows on 150 px: the texture path
        app::matrix_view(state, imgui_.ui, {core::MatrixId::weights, 0}, o);
        ImGui::End();
        imgui_.ui.heatmaps.end_frame();
        ImGui::Render();
    };
    const auto all_in = [](core::Colormap map) {
        std::set<std::uint32_t> table;
        for (int k = 0; k < 256; ++k) table.insert(app::colormap_color(map, k / 255.0f));
        for (std::uint32_t p : Fake::pixels)
            if (!table.count(p)) return false;
        return !Fake::pixels.empty();
    };
    draw();
    EXPECT_EQ(Fake::uploads, 1);
    EXPECT_TRUE(all_in(core::Colormap::sequential));
    app::apply_appearance(imgui_.ui, {Theme::dark, 1, core::Colormap::cividis});
    EXPECT_EQ(imgui_.ui.colormap(core::MatrixId::weights), core::Colormap::cividis);
    EXPECT_EQ(imgui_.ui.colormap(core::MatrixId::scores), core::Colormap::diverging);  // the diverging map stays
    draw();
    EXPECT_EQ(Fake::uploads, 2);
    EXPECT_TRUE(all_in(core::Colormap::cividis));
    imgui_.ui.heatmaps.set_texture_functions(nullptr, nullptr);

    // The viewer's legend: its first band is the map's colour at 1/128.
    app::show_panel(panels, "Matrix viewer");
    app::AppState small(core::worked_example());
    small.view({core::MatrixId::weights, 0});
    frames(small, 2);
    EXPECT_TRUE(drawn_in(app::colormap_color(core::Colormap::cividis, 0.5f / 64)));
    app::apply_appearance(imgui_.ui, {Theme::dark, 1, core::Colormap::sequential});
    frames(small, 2);
    EXPECT_FALSE(drawn_in(app::colormap_color(core::Colormap::cividis, 0.5f / 64)));
    EXPECT_TRUE(drawn_in(app::colormap_color(core::Colormap::sequential, 0.5f / 64)));
}

// On the projector (1920×1080 at twice the text size), the KV cache lesson's decoding step: the
// token labels above the weights' columns are written whole ("green" was "g…"), the matrices
// still within the step's height.
TEST_F(Presentation, LessonColumnLabelsAreWholeAtTwiceTheTextSize) {
    ImGui::GetIO().DisplaySize = {1920, 1080};
    app::apply_appearance(imgui_.ui, {Theme::light, 2, core::Colormap::sequential});
    app::AppState state(core::worked_example());
    std::string problem;
    const std::optional<core::LessonEntry> lesson = app::find_lesson("kv-cache", problem);
    ASSERT_TRUE(lesson) << problem;
    ASSERT_TRUE(app::open_lesson(state, panels.teach, lesson->path));
    state.wait_for_trace();
    app::enter_teach_mode(state, panels, 2);  // "A decoding step is one row": Q, K and the weights
    frames(state, 3);
    // Each column label of the weights whole: upright where its column holds it, else turned.
    bool green = false;
    for (const app::DrawReport::Label& l : report.labels) {
        if (l.name.rfind("weights(1): col", 0) != 0) continue;
        EXPECT_FALSE(l.cut) << l.name << " \"" << l.text << "\" shown as \"" << l.shown << "\"";
        EXPECT_EQ(l.shown, l.text) << l.name;
        green = green || l.text == "green";
    }
    EXPECT_TRUE(green) << "the weights' column labels are not reported";
    const app::DrawReport::Window* teach = nullptr;
    for (const auto& w : report.windows)
        if (w.title == "Teach: attention step by step") teach = &w;
    ASSERT_NE(teach, nullptr);
    for (const auto& h : report.heatmaps) EXPECT_LE(h.max.y, teach->pos.y + teach->size.y) << h.matrix;
}

// The View menu's items ask for what their shortcuts do.
TEST_F(Presentation, TheViewMenuAsksForTheLook) {
    app::AppState state(core::worked_example());
    frames(state, 2);
    click(state, "menu: View");
    ASSERT_NE(item("view: larger text"), nullptr);
    EXPECT_NE(item("view: focus"), nullptr);
    EXPECT_NE(item("view: theme"), nullptr);
    click(state, "view: larger text");
    EXPECT_FLOAT_EQ(panels.appearance.scale, 1.25f);
    click(state, "menu: View");
    click(state, "view: full screen");
    EXPECT_TRUE(panels.full_screen);
    click(state, "menu: View");
    ASSERT_NE(item("view: full screen (checked)"), nullptr);
    click(state, "view: focus");
    EXPECT_TRUE(panels.teach_mode && panels.teach.focus);
}
