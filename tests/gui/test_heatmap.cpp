// The heatmap widget: which cell the pointer is on, plain and transposed.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "headless.hpp"
#include "ui/ui_context.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/wrapped_text.hpp"

using namespace attnviz;

namespace {

class HeatmapHits : public ::testing::Test {
protected:
    // Draws the matrix in a bare window at (0, 0) with the pointer at `mouse`; returns the hit.
    app::HeatmapHit hover(const core::Matrix& m, bool transposed, ImVec2 mouse) {
        app::HeatmapOptions o;
        o.max_cell = 40;
        o.max_size = {400, 400};
        o.transposed = transposed;
        app::HeatmapHit hit;
        for (int frame = 0; frame < 3; ++frame) {  // windows become hoverable after their first frame
            ImGui::GetIO().MousePos = mouse;
            ImGui::NewFrame();
            ImGui::SetNextWindowPos({0, 0});
            ImGui::SetNextWindowSize({500, 500});
            ImGui::Begin("heatmap", nullptr, ImGuiWindowFlags_NoDecoration);
            hit = app::heatmap(imgui_.ui, "m", m, o);
            ImGui::End();
            ImGui::Render();
        }
        return hit;
    }

    test::HeadlessImGui imgui_{{800, 600}, false};
};

const float pad = 8;  // the default window padding: cells start at (8, 8), 40 px each

}  // namespace

TEST_F(HeatmapHits, ThePointerPicksRowAndColumn) {
    const core::Matrix m{{1, 2, 3}, {4, 5, 6}};  // 2×3
    const app::HeatmapHit hit = hover(m, false, {pad + 2 * 40 + 5, pad + 40 + 5});
    ASSERT_TRUE(hit.hovered);
    EXPECT_EQ(hit.row, 1);
    EXPECT_EQ(hit.col, 2);
    EXPECT_FALSE(hover(m, false, {pad + 40 + 5, pad + 2 * 40 + 5}).hovered);  // below the last row
}

TEST_F(HeatmapHits, TransposedSwapsTheAxes) {
    const core::Matrix m{{1, 2, 3}, {4, 5, 6}};  // drawn as 3×2
    const app::HeatmapHit hit = hover(m, true, {pad + 40 + 5, pad + 2 * 40 + 5});
    ASSERT_TRUE(hit.hovered);
    EXPECT_EQ(hit.row, 2);                                              // drawn row 2 = column 2 of m
    EXPECT_EQ(hit.col, 1);                                              // drawn column 1 = row 1 of m
    EXPECT_FALSE(hover(m, true, {pad + 2 * 40 + 5, pad + 5}).hovered);  // only 2 drawn columns
}

namespace {

// A stand-in for the OpenGL texture functions: remembers what was uploaded and freed.
struct FakeTextures {
    static inline int uploads = 0, frees = 0, cols = 0, rows = 0;
    static inline std::vector<std::uint32_t> pixels;
    static ImTextureID upload(ImTextureID previous, int c, int r, const std::uint32_t* rgba) {
        ++uploads;
        cols = c;
        rows = r;
        pixels.assign(rgba, rgba + static_cast<size_t>(c) * r);
        return previous ? previous : reinterpret_cast<ImTextureID>(std::uintptr_t{42});
    }
    static void destroy(ImTextureID) { ++frees; }
};

}  // namespace

TEST_F(HeatmapHits, LargeMatricesBecomeOnePooledTextureThatIsFreedWhenUnused) {
    FakeTextures::uploads = FakeTextures::frees = 0;
    imgui_.ui.heatmaps.set_texture_functions(FakeTextures::upload, FakeTextures::destroy);
    core::Matrix m = core::Matrix::Zero(2048, 2048);
    m(1001, 3) = 5.0;  // one strong value, which sampling every other cell could miss
    app::HeatmapOptions o;
    o.max_size = {300, 300};
    o.range = {-5, 5, false};
    auto draw = [&](bool with_matrix) {
        ImGui::NewFrame();
        ImGui::Begin("heatmap", nullptr, ImGuiWindowFlags_NoDecoration);
        if (with_matrix) app::heatmap(imgui_.ui, "big", m, o);
        ImGui::End();
        imgui_.ui.heatmaps.end_frame();
        ImGui::Render();
    };
    draw(true);
    draw(true);
    EXPECT_EQ(FakeTextures::uploads, 1);  // the same content is not uploaded again
    // One texel per pixel the 2048² matrix is drawn on (300 px): pooled, not 2048² texels.
    EXPECT_EQ(FakeTextures::cols, 300);
    EXPECT_EQ(FakeTextures::rows, 300);
    // The texel holding cell (1001, 3) shows the 5, the top of the colormap; an empty one shows 0.
    const int texel_row = 1001 * 300 / 2048, texel_col = 3 * 300 / 2048;
    EXPECT_EQ(FakeTextures::pixels[texel_row * 300 + texel_col], app::colormap_color(app::Colormap::diverging, 1.0f));
    EXPECT_EQ(FakeTextures::pixels[0], app::colormap_color(app::Colormap::diverging, 0.5f));
    o.range.hi = 10;  // a new colour range is a new texture
    draw(true);
    EXPECT_EQ(FakeTextures::uploads, 2);
    for (int k = 0; k < 130; ++k) draw(false);  // no longer drawn: freed
    EXPECT_EQ(FakeTextures::frees, 1);
    imgui_.ui.heatmaps.set_texture_functions(nullptr, nullptr);
}

TEST_F(HeatmapHits, EachTexelShowsTheStrongestCellItCoversTransposedOrNot) {
    FakeTextures::uploads = 0;
    imgui_.ui.heatmaps.set_texture_functions(FakeTextures::upload, FakeTextures::destroy);
    core::Matrix m = core::Matrix::Random(301, 263);
    m(17, 40) = -std::numeric_limits<double>::infinity();  // masked
    app::HeatmapOptions o;
    o.range = {-1, 1, false};
    const ImU32 masked = 0xFF00FF00;
    // A block of the matrix as drawn (rows 10…249, columns 5…184), on 37×23 texels.
    const app::CellBlock block{10, 5, 240, 180};
    for (bool transposed : {false, true}) {
        const core::Matrix drawn = transposed ? core::Matrix(m.transpose()) : m;
        ImGui::NewFrame();
        imgui_.ui.heatmaps.texture(ImGui::GetID(transposed ? "t" : "n"), m, transposed, block, o, masked, {23, 37});
        ASSERT_EQ(FakeTextures::cols, 23);
        ASSERT_EQ(FakeTextures::rows, 37);
        for (int r = 0; r < 37; ++r)
            for (int c = 0; c < 23; ++c) {
                // The texel's cells as drawn, and the one of largest magnitude among them.
                const int r0 = block.row0 + r * block.rows / 37, r1 = block.row0 + (r + 1) * block.rows / 37;
                const int c0 = block.col0 + c * block.cols / 23, c1 = block.col0 + (c + 1) * block.cols / 23;
                double strongest = drawn(r0, c0);
                for (int rr = r0; rr < r1; ++rr)
                    for (int cc = c0; cc < c1; ++cc)
                        if (std::abs(drawn(rr, cc)) > std::abs(strongest) || !std::isfinite(strongest))
                            strongest = drawn(rr, cc);
                const ImU32 expected = std::isfinite(strongest)
                                           ? app::colormap_color(app::Colormap::diverging, o.range.position(strongest))
                                           : masked;
                ASSERT_EQ(FakeTextures::pixels[static_cast<size_t>(r) * 23 + c], expected)
                    << "texel " << r << ", " << c << (transposed ? " (transposed)" : "");
            }
        ImGui::Render();
    }
    EXPECT_EQ(FakeTextures::uploads, 2);
    imgui_.ui.heatmaps.set_texture_functions(nullptr, nullptr);
}

// Weights (core::pooling_for: the mean) pool each texel's cells into their mean: a nearly uniform
// head stays one colour where the strongest of each block would be far above the rest, and one
// strong weight still lifts its texel.
TEST_F(HeatmapHits, EachTexelOfWeightsShowsTheMeanOfTheCellsItCovers) {
    FakeTextures::uploads = 0;
    imgui_.ui.heatmaps.set_texture_functions(FakeTextures::upload, FakeTextures::destroy);
    const int n = 512;
    core::Matrix w = core::Matrix::Constant(n, n, 1.0 / n);
    for (int i = 0; i < n; ++i) w(i, (7 * i) % n) *= 4;  // one weight a row four times the rest
    w.row(200).setZero();
    w(200, 300) = 1;  // query 200 attends to key 300 only
    app::HeatmapOptions o;
    o.colormap = app::Colormap::sequential;
    o.pooling = core::Pooling::mean;
    o.range = {0, 0.1, false};
    ImGui::NewFrame();
    imgui_.ui.heatmaps.texture(ImGui::GetID("w"), w, false, {0, 0, n, n}, o, 0, {128, 128});  // 4×4 cells a texel
    ASSERT_EQ(FakeTextures::cols, 128);
    for (int r = 0; r < 128; ++r)
        for (int c = 0; c < 128; ++c) {
            const double mean = w.block(4 * r, 4 * c, 4, 4).mean();
            ASSERT_EQ(FakeTextures::pixels[static_cast<size_t>(r) * 128 + c],
                      app::colormap_color(app::Colormap::sequential, o.range.position(mean)))
                << r << ", " << c;
        }
    // Texels without query 200: between 1/512 and 1.75/512 (a block holds at most one strong weight
    // a row), all low on the range; the texel of (200, 300) above them all.
    const float strong = o.range.position(w.block(200, 300, 4, 4).mean());
    EXPECT_GT(strong, o.range.position(1.75 / n));
    ImGui::Render();
    imgui_.ui.heatmaps.set_texture_functions(nullptr, nullptr);
}

TEST_F(HeatmapHits, RebuildsPastTheFrameBudgetWaitForALaterFrame) {
    FakeTextures::uploads = FakeTextures::frees = 0;
    imgui_.ui.heatmaps.set_texture_functions(FakeTextures::upload, FakeTextures::destroy);
    // No budget at all: one rebuild per frame.
    imgui_.ui.heatmaps.set_rebuild_budget_ms(0);
    std::vector<core::Matrix> ms(3, core::Matrix::Random(64, 64));
    app::HeatmapOptions o;
    o.max_size = {20, 20};
    auto draw = [&](std::uint64_t generation) {
        o.generation = generation;
        ImGui::NewFrame();
        ImGui::SetNextWindowPos({0, 0});
        ImGui::SetNextWindowSize({400, 400});
        ImGui::Begin("heatmaps", nullptr, ImGuiWindowFlags_NoDecoration);
        for (size_t k = 0; k < ms.size(); ++k) app::heatmap(imgui_.ui, std::to_string(k).c_str(), ms[k], o);
        ImGui::End();
        imgui_.ui.heatmaps.end_frame();
        ImGui::Render();
    };
    draw(1);
    EXPECT_EQ(FakeTextures::uploads, 3);  // a heatmap without any texture always gets one
    draw(2);                              // new content everywhere: one rebuild fits this frame
    EXPECT_EQ(FakeTextures::uploads, 4);
    draw(2);  // the others follow in the next frames
    draw(2);
    EXPECT_EQ(FakeTextures::uploads, 6);
    draw(2);  // and then nothing more is done
    EXPECT_EQ(FakeTextures::uploads, 6);
    imgui_.ui.heatmaps.set_texture_functions(nullptr, nullptr);
}

TEST_F(HeatmapHits, PastTheBudgetANewMatrixGetsAnEstimatedRangeThenTheExactOne) {
    imgui_.ui.heatmaps.set_rebuild_budget_ms(0);  // one full pass per frame, from the next frame on
    imgui_.ui.heatmaps.end_frame();
    // Two new 100×100 matrices; the largest value of the second is not among the sampled cells.
    core::Matrix a = core::Matrix::Constant(100, 100, 0.5), b = core::Matrix::Constant(100, 100, 0.25);
    b(0, 1) = 0.9;
    ImGui::NewFrame();
    EXPECT_EQ(imgui_.ui.heatmaps.stats(a, 1, false).max, 0.5);  // the first of the frame: exact
    const core::ValueStats first = imgui_.ui.heatmaps.stats(b, 1, false);
    EXPECT_EQ(first.max, 0.25);  // estimated from 4096 of the 10000 cells, (0, 1) not among them
    EXPECT_EQ(first.finite, 4096);
    imgui_.ui.heatmaps.end_frame();
    ImGui::Render();
    ImGui::NewFrame();
    EXPECT_EQ(imgui_.ui.heatmaps.stats(b, 1, false).max, 0.9);  // a later frame: exact
    EXPECT_EQ(imgui_.ui.heatmaps.stats(b, 1, false).finite, 10000);
    imgui_.ui.heatmaps.end_frame();
    ImGui::Render();
}

TEST_F(HeatmapHits, EachMatrixIsColouredByItsScaling) {
    using core::MatrixId;
    ImGui::NewFrame();
    // Two keys: weights on the fixed 0..1 scale.
    const core::Matrix few{{0.25, 0.75}, {0.5, 0.5}};
    EXPECT_EQ(app::heatmap_range(imgui_.ui, few, MatrixId::weights, 1), (core::ColorRange{0, 1, false}));
    // 16 queries × 32 keys of uniform attention (1/32 each) and one row a little sharper: its own min..max.
    core::Matrix many = core::Matrix::Constant(16, 32, 1.0 / 32);
    many.row(3).setConstant(0.5 / 31);
    many(3, 7) = 0.5;
    // By default the one 0.5 is an outlier (the 99th percentile, 1/32, is under half of it): the
    // range's top is lowered to that percentile, so the other weights are told apart.
    EXPECT_EQ(app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1), (core::ColorRange{0.5 / 31, 1.0 / 32, false}));
    // The user's choice applies to that matrix (every head of it) until reset.
    imgui_.ui.set_scaling(MatrixId::weights, core::Scaling::fixed);
    EXPECT_EQ(app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1), (core::ColorRange{0, 1, false}));
    imgui_.ui.set_scaling(MatrixId::weights, core::Scaling::log);
    EXPECT_EQ(app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1), (core::ColorRange{0.5 / 31, 0.5, true}));
    imgui_.ui.set_scaling(MatrixId::weights, core::Scaling::percentile);
    const core::ColorRange p = app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1);
    EXPECT_EQ(p.lo, 0.5 / 31);
    EXPECT_EQ(p.hi, 1.0 / 32);  // the one 0.5 is above the 99th percentile of 512 weights
    imgui_.ui.set_scaling(MatrixId::weights, core::Scaling::automatic);  // chosen: min..max
    EXPECT_EQ(app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1), (core::ColorRange{0.5 / 31, 0.5, false}));
    imgui_.ui.set_scaling(MatrixId::weights, std::nullopt);
    EXPECT_EQ(app::heatmap_range(imgui_.ui, many, MatrixId::weights, 1).hi, 1.0 / 32);
    // A causal layer: query i attends evenly to keys 0..i, so the first puts weight 1 on itself. Its
    // default range stops at the 99th percentile, far below that 1.
    core::Matrix causal = core::Matrix::Zero(200, 200);
    for (int i = 0; i < 200; ++i) causal.row(i).head(i + 1).setConstant(1.0 / (i + 1));
    const core::ColorRange c = app::heatmap_range(imgui_.ui, causal, MatrixId::weights, 3);
    EXPECT_EQ(c.lo, 0);
    EXPECT_LT(c.hi, 0.2);
    EXPECT_GT(c.hi, 1.0 / 200);
    // However large, automatic (without an outlier, its min..max) until the user picks another.
    core::Matrix more = core::Matrix::Constant(64, 64, 1.0 / 64);
    more(3, 7) = 0.5;
    EXPECT_EQ(app::heatmap_range(imgui_.ui, more, MatrixId::weights, 2).hi, 0.5);
    // Diverging maps stay symmetric around 0; other matrices keep their own scaling.
    EXPECT_EQ(app::heatmap_range(imgui_.ui, core::Matrix{{-3, 1}, {2, 0}}, MatrixId::Q, 1),
              (core::ColorRange{-3, 3, false}));
    ImGui::Render();
}

namespace {

// Draws `m` with these options in a window of its own, in two frames (the first measures), and
// returns the last frame's report; `hit` gets the cells' rectangle.
app::DrawReport draw_heatmap_frames(test::HeadlessImGui& imgui, const core::Matrix& m, const app::HeatmapOptions& o,
                                    app::HeatmapHit& hit) {
    app::DrawReport report;
    imgui.ui.report = &report;
    for (int frame = 0; frame < 2; ++frame) {
        report.clear();
        ImGui::NewFrame();
        ImGui::SetNextWindowPos({0, 0});
        ImGui::SetNextWindowSize({700, 500});
        ImGui::Begin("heatmap", nullptr, ImGuiWindowFlags_NoDecoration);
        hit = app::heatmap(imgui.ui, "m", m, o, "m");
        ImGui::End();
        ImGui::Render();
    }
    imgui.ui.report = nullptr;
    return report;
}

}  // namespace

TEST(HeatmapNumbers, EachCellPrintsWhatFitsSoOneWideValueBlanksNothingElse) {
    test::HeadlessImGui imgui({800, 600});  // the app's fonts
    // 40 px cells: 0.944 fits whole, 0.0558 without its leading zero, -123456.789 only abbreviated, 2.5e-17
    // as "≈0"; before, none of them printed because the wide one did not fit.
    const core::Matrix m{{0.944, -123456.789, 2.5e-17}, {-1.25, 0.0558, 0.0069}};
    app::HeatmapOptions o;
    o.max_cell = 40;
    o.max_size = {120, 80};
    o.range = {-1, 1, false};
    app::HeatmapHit hit;
    const app::DrawReport report = draw_heatmap_frames(imgui, m, o, hit);
    std::map<std::pair<int, int>, std::string> printed;
    for (const auto& n : report.numbers) printed[{n.row, n.col}] = n.text;
    ASSERT_EQ(printed.size(), 6u) << "every cell prints something";
    EXPECT_EQ(printed[std::make_pair(0, 0)], "0.944");
    EXPECT_EQ(printed[std::make_pair(1, 1)], ".0558");  // three digits without the zero before two with it
    EXPECT_EQ(printed[std::make_pair(1, 0)], "-1.25");
    EXPECT_EQ(printed[std::make_pair(1, 2)], ".0069");  // two digits without the zero rather than "7e-3"
    EXPECT_EQ(printed[std::make_pair(0, 2)], std::string(core::symbols(imgui.fonts.notation).about) + "0");
    EXPECT_EQ(printed[std::make_pair(0, 1)], "-1.2e5");
}

TEST(HeatmapLabels, ColumnLabelsTooWideForTheirColumnsAreTurnedWholeNotCut) {
    test::HeadlessImGui imgui({800, 600});  // the app's fonts: 16 px, numbers 13 px
    const std::vector<std::string> tokens{"I", "like", "green", "tea", "with", "milk"};
    const core::Matrix m = core::Matrix::Constant(6, 6, 0.5);
    app::HeatmapOptions o;
    o.row_labels = o.col_labels = &tokens;
    o.range = {0, 1, false};
    o.max_size = {600, 400};
    // 30 px columns: "green" is wider than 27 px in either font (it was drawn "gr…"), a line of text fits.
    o.max_cell = 30;
    ImGui::NewFrame();  // measures in the current font
    const app::ColLabelRoom room = app::col_label_room(imgui.ui, o);
    ImGui::Render();
    EXPECT_TRUE(room.turned(30));
    EXPECT_FALSE(room.turned(80));  // every label fits upright
    EXPECT_FALSE(room.turned(8));   // narrower than a line: upright, one every few columns
    EXPECT_GT(room.turned_h, room.upright_h);
    app::HeatmapHit hit;
    const app::DrawReport report = draw_heatmap_frames(imgui, m, o, hit);
    int cols = 0;
    for (const app::DrawReport::Label& l : report.labels) {
        EXPECT_FALSE(l.cut) << l.name << ": \"" << l.text << "\" shown as \"" << l.shown << "\"";
        EXPECT_EQ(l.shown, l.text) << l.name;
        if (l.name.rfind("m: col ", 0) != 0) continue;
        ++cols;
        const int c = std::stoi(l.name.substr(7));
        // Turned: above the cells, within its column, taller than wide for the longer labels.
        EXPECT_LE(l.max.y, hit.cells_min.y) << l.name;
        EXPECT_GE(l.min.x, hit.cells_min.x + 30.0f * static_cast<float>(c) - 0.5f) << l.name;
        EXPECT_LE(l.max.x, hit.cells_min.x + 30.0f * static_cast<float>(c + 1) + 0.5f) << l.name;
        if (l.text.size() > 3) {
            EXPECT_GT(l.max.y - l.min.y, l.max.x - l.min.x) << l.name;
        }
    }
    EXPECT_EQ(cols, 6);
    EXPECT_NEAR(hit.cells_max.x - hit.cells_min.x, 6 * 30.0f, 0.01f);  // the cells keep their size
}

TEST(HeatmapLabels, LabelsThatFitStayUprightAndALabelPastTenEmsIsReportedCut) {
    test::HeadlessImGui imgui({800, 600});
    const std::vector<std::string> tokens{"a", "b", std::string(200, 'w')};
    const core::Matrix m = core::Matrix::Constant(3, 3, 0.5);
    app::HeatmapOptions o;
    o.col_labels = &tokens;
    o.range = {0, 1, false};
    o.max_size = {600, 400};
    o.max_cell = 40;
    app::HeatmapHit hit;
    const app::DrawReport report = draw_heatmap_frames(imgui, m, o, hit);
    ASSERT_EQ(report.labels.size(), 3u);
    EXPECT_FALSE(report.labels[0].cut);
    EXPECT_FALSE(report.labels[1].cut);
    EXPECT_TRUE(report.labels[2].cut);  // turned, up to max_row_label ems, and said so
    EXPECT_NE(report.labels[2].shown.find("…"), std::string::npos);
    EXPECT_LE(report.labels[2].max.y - report.labels[2].min.y, 16 * app::max_row_label + 0.5f);
    // Without a long label the columns' labels fit upright: one line tall.
    const std::vector<std::string> short_tokens{"a", "b", "c"};
    o.col_labels = &short_tokens;
    const app::DrawReport upright = draw_heatmap_frames(imgui, m, o, hit);
    ASSERT_EQ(upright.labels.size(), 3u);
    for (const app::DrawReport::Label& l : upright.labels) {
        EXPECT_FALSE(l.cut);
        EXPECT_LT(l.max.y - l.min.y, 20.0f) << l.name;
        EXPECT_GT(l.max.x - l.min.x, 0.0f) << l.name;
    }
}

// A cell's arithmetic wraps at spaces only: ImGui's own wrapping breaks after a '.', splitting a
// number ("0.\n0460817", as the cross-attention lesson's step 5 showed at twice the text size).
TEST(WrappedText, FormulasBreakAtSpacesNeverInsideANumber) {
    test::HeadlessImGui imgui({800, 600});
    ImGui::NewFrame();
    const std::string text =
        "= 0.189428·(-0.792717) + 0.268982·(-1.41129) + 0.200403·(-0.136115) + "
        "0.151186·0.0460817 + 0.190001·(-0.0693714)";
    // A width at which ImGui breaks the line inside a number (right after a '.').
    ImFont* font = ImGui::GetFont();
    float splitting = 0;
    for (float w = 60; w < 700 && splitting == 0; w += 1) {
        const char* at = font->CalcWordWrapPositionA(1.0f, text.data(), text.data() + text.size(), w);
        if (at > text.data() && at < text.data() + text.size() && at[-1] == '.') splitting = w;
    }
    ASSERT_GT(splitting, 0) << "ImGui's wrapping splits no number here: the test shows nothing";
    for (const float width : {splitting, 150.0f, 320.0f, 10000.0f}) {
        const std::vector<std::string_view> lines = app::lines_at_spaces(text, width);
        std::string joined;
        for (const std::string_view line : lines) {
            ASSERT_FALSE(line.empty());
            EXPECT_NE(line.front(), ' ');
            EXPECT_NE(line.back(), ' ');
            if (line.find(' ') != std::string_view::npos) {  // more than one word: it fits
                EXPECT_LE(ImGui::CalcTextSize(line.data(), line.data() + line.size()).x, width) << line;
            }
            joined += (joined.empty() ? "" : " ") + std::string(line);
        }
        EXPECT_EQ(joined, text) << "at " << width << " px every break is a space, so no number is split";
        if (width == 10000.0f) {
            EXPECT_EQ(lines.size(), 1u);
        }
    }
    ImGui::Render();
}

// A line break in a lesson's text ends its line wherever it falls; an empty line stays.
TEST(WrappedText, ALineBreakEndsItsLine) {
    test::HeadlessImGui imgui({800, 600});
    ImGui::NewFrame();
    const std::vector<std::string_view> lines = app::lines_at_spaces("one two\n\nthree four five", 10000.0f);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "one two");
    EXPECT_EQ(lines[1], "");
    EXPECT_EQ(lines[2], "three four five");
    const float two_words = ImGui::CalcTextSize("three four").x;
    const std::vector<std::string_view> narrow = app::lines_at_spaces("one\nthree four five", two_words);
    ASSERT_EQ(narrow.size(), 3u);
    EXPECT_EQ(narrow[1], "three four");
    EXPECT_EQ(narrow[2], "five");
    ImGui::EndFrame();
}
