// The head view and the model view as figures: the lines are the view's (their count, ends,
// colours and opacities from the weights), a selection isolates its lines and puts its attention
// in bars with their values, and the model view's thumbnails come in the sort's order with the
// first heads of the model outlined.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/attention/presets.hpp"
#include "core/render/attention_figures.hpp"
#include "core/render/colormaps.hpp"

using namespace attnviz::core;

namespace {

// Two heads over three tokens with weights chosen by hand (rows sum to 1).
Attentions two_heads() {
    Attentions a;
    Matrix h1(3, 3), h2(3, 3);
    h1 << 1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5;
    h2 << 1, 0, 0, 0.9, 0.1, 0, 0.01, 0.01, 0.98;
    a.layers = {{h1, h2}};
    a.query_tokens = a.key_tokens = {"the", "cat", "sat"};
    return a;
}

std::vector<Line> lines_of(const Figure& f) {
    std::vector<Line> out;
    for (const Element& e : f.elements)
        if (const Line* l = std::get_if<Line>(&e)) out.push_back(*l);
    return out;
}

std::vector<std::string> texts_of(const Figure& f) {
    std::vector<std::string> out;
    for (const Element& e : f.elements)
        if (const Label* l = std::get_if<Label>(&e)) out.push_back(l->text);
    return out;
}

bool has_text(const Figure& f, const std::string& text) {
    const std::vector<std::string> t = texts_of(f);
    return std::find(t.begin(), t.end(), text) != t.end();
}

}  // namespace

TEST(HeadViewFigure, DrawsALinePerWeightAboveTheThresholdInItsHeadsColourAndOpacity) {
    const Attentions a = two_heads();
    const Result<Figure> f = head_view_figure(a, {}, FigureStyle{});
    ASSERT_TRUE(f);
    const std::vector<Line> lines = lines_of(*f.value);
    // Weights ≥ 0.02 (3 keys: min(0.02, 1/3)): head 1 has 6 of them, head 2 has 4 (0.01 twice dropped).
    ASSERT_EQ(lines.size(), 10u);
    // Opacity = weight (3 keys: not scaled); each in its head's colour.
    std::map<std::uint8_t, int> alphas;
    for (const Line& l : lines) {
        const bool first = l.color.r == head_rgba(0, 2).r && l.color.g == head_rgba(0, 2).g;
        const bool second = l.color.r == head_rgba(1, 2).r && l.color.g == head_rgba(1, 2).g;
        EXPECT_TRUE(first != second);
        ++alphas[l.color.a];
    }
    EXPECT_EQ(alphas[255], 2);  // the two weights of 1
    EXPECT_EQ(alphas[static_cast<std::uint8_t>(std::lround(0.98 * 255))], 1);
    EXPECT_EQ(alphas[static_cast<std::uint8_t>(std::lround(0.5 * 255))], 3);
    // Every line runs from the queries' column to the keys', rows apart by the tokens' pitch.
    const double x0 = lines.front().x1, x1 = lines.front().x2;
    for (const Line& l : lines) {
        EXPECT_EQ(l.x1, x0);
        EXPECT_EQ(l.x2, x1);
    }
    EXPECT_TRUE(has_text(*f.value, "cat"));
    EXPECT_TRUE(has_text(*f.value, "head 2"));
}

TEST(HeadViewFigure, ASelectionIsolatesItsLinesAndShowsItsAttentionInBars) {
    const Attentions a = two_heads();
    HeadViewChoice choice;
    choice.queries = {2};
    FigureStyle style;
    style.digits = 3;
    Result<Figure> f = head_view_figure(a, choice, style);
    ASSERT_TRUE(f);
    // Query 2's lines only: head 1's three, head 2's one (0.98).
    EXPECT_EQ(lines_of(*f.value).size(), 4u);
    // Bars: the mean of the heads' rows 2: (0.105, 0.155, 0.74).
    EXPECT_TRUE(has_text(*f.value, "0.105"));
    EXPECT_TRUE(has_text(*f.value, "0.155"));
    EXPECT_TRUE(has_text(*f.value, "0.74"));
    // Hiding head 2 leaves head 1's row: (0.2, 0.3, 0.5).
    choice.hidden = {0, 1};
    f = head_view_figure(a, choice, style);
    ASSERT_TRUE(f);
    EXPECT_EQ(lines_of(*f.value).size(), 3u);
    EXPECT_TRUE(has_text(*f.value, "0.3"));
    EXPECT_TRUE(has_text(*f.value, "head 2 (hidden)"));
    // Refused: every head hidden, a layer that is not there.
    choice.hidden = {1, 1};
    EXPECT_FALSE(head_view_figure(a, choice, style));
    choice.hidden.clear();
    choice.layer = 1;
    const Result<Figure> none = head_view_figure(a, choice, style);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.problems.front().path, "layer");
}

TEST(ModelViewFigure, ThumbnailsComeInTheSortsOrderWithTheModelsFirstOutlined) {
    Attentions a = two_heads();
    // A second layer: head 1 all on the diagonal, head 2 even.
    a.layers.push_back({Matrix::Identity(3, 3), Matrix::Constant(3, 3, 1.0 / 3)});
    ModelViewChoice choice;
    choice.sort = HeadKey::diagonal_share;
    choice.outline = 1;
    const Figure f = model_view_figure(a, choice, FigureStyle{});
    std::vector<std::string> groups;
    int outlines = 0;
    for (const Element& e : f.elements) {
        if (const Group* g = std::get_if<Group>(&e)) groups.push_back(g->tooltip);
        if (const Box* b = std::get_if<Box>(&e); b && b->stroke && *b->stroke == outline_color) ++outlines;
    }
    // Layer 0: diagonal shares (1 + 0.5 + 0.5)/3 = 0.667 for head 1, (1 + 0.1 + 0.98)/3 = 0.693 for
    // head 2, so head 2 first; layer 1: head 1 (1) before head 2 (1/3).
    const std::vector<std::string> expected{"layer 0, head 2", "layer 0, head 1", "layer 1, head 1", "layer 1, head 2"};
    EXPECT_EQ(groups, expected);
    EXPECT_EQ(outlines, 1);  // layer 1's head 1, the model's largest diagonal share
    EXPECT_TRUE(has_text(f, "100%"));
    EXPECT_TRUE(has_text(f, "69%"));
}

TEST(HeadViewFigure, TheMeanOfTheHeadsIsOneSetOfLinesOfTheMeanWeights) {
    const Attentions a = two_heads();
    HeadViewChoice choice;
    choice.mean = true;
    Result<Figure> f = head_view_figure(a, choice, FigureStyle{});
    ASSERT_TRUE(f);
    // The mean of the two heads: (1, 0, 0), (0.7, 0.3, 0), (0.105, 0.155, 0.74): 6 weights ≥ 0.02,
    // each line as opaque as its mean weight, all in one colour.
    const std::vector<Line> lines = lines_of(*f.value);
    ASSERT_EQ(lines.size(), 6u);
    std::multiset<int> alphas;
    for (const Line& l : lines) {
        EXPECT_EQ(l.color.r, lines.front().color.r);
        alphas.insert(l.color.a);
    }
    for (double w : {1.0, 0.7, 0.3, 0.105, 0.155, 0.74})
        EXPECT_EQ(alphas.count(static_cast<int>(std::lround(w * 255))), 1u) << w;
    EXPECT_TRUE(has_text(*f.value, "mean of the heads shown"));
    // Head 2 hidden: the mean is head 1 alone.
    choice.hidden = {0, 1};
    f = head_view_figure(a, choice, FigureStyle{});
    ASSERT_TRUE(f);
    EXPECT_EQ(lines_of(*f.value).size(), 6u);  // head 1's six weights ≥ 0.02
}

TEST(HeadViewFigure, HiddenSpecialTokensLeaveWithTheirWeightsAndEachRowIsRenormalised) {
    Attentions a;
    Matrix h(3, 3);
    h << 0.9, 0.1, 0, 0.6, 0.3, 0.1, 0.5, 0.2, 0.3;
    a.layers = {{h}};
    a.query_tokens = a.key_tokens = {"[CLS]", "cat", "sat"};
    HeadViewChoice choice;
    choice.hide_special = true;
    choice.queries = {1};  // of the tokens shown: "sat"
    FigureStyle style;
    style.digits = 3;
    const Result<Figure> f = head_view_figure(a, choice, style);
    ASSERT_TRUE(f);
    // [CLS] leaves: "cat" keeps (0.3, 0.1) → (0.75, 0.25), "sat" keeps (0.2, 0.3) → (0.4, 0.6).
    EXPECT_FALSE(has_text(*f.value, "[CLS]"));
    EXPECT_TRUE(has_text(*f.value, "0.4"));
    EXPECT_TRUE(has_text(*f.value, "0.6"));
    std::multiset<int> alphas;
    for (const Line& l : lines_of(*f.value)) alphas.insert(l.color.a);
    EXPECT_EQ(alphas,
              (std::multiset<int>{static_cast<int>(std::lround(0.4 * 255)), static_cast<int>(std::lround(0.6 * 255))}));
    EXPECT_TRUE(has_text(*f.value, "Special tokens hidden: each row is renormalised over the keys left."));
    // Every key special: nothing left to draw, said.
    a.key_tokens = {"[CLS]", "<s>", "</s>"};
    choice.queries.clear();
    const Result<Figure> none = head_view_figure(a, choice, style);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.problems.front().path, "tokens");
}

TEST(AttentionViewBytes, ThePageOrAFigureInTheFormatAsked) {
    AttentionPage page;
    page.weights = two_heads();
    page.title = "two heads";
    AttentionViewExport request;
    request.format = ExportFormat::html;
    request.view = PageView::model;
    Result<std::string> bytes = attention_view_bytes(page, request);
    ASSERT_TRUE(bytes);
    EXPECT_EQ(bytes.value->rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(bytes.value->find("\"view\":\"model\""), std::string::npos);
    request.format = ExportFormat::svg;
    request.view = PageView::head;
    bytes = attention_view_bytes(page, request);
    ASSERT_TRUE(bytes);
    EXPECT_NE(bytes.value->find("<svg"), std::string::npos);
    EXPECT_NE(bytes.value->find("Head view, layer 0"), std::string::npos);
    request.format = ExportFormat::png;
    bytes = attention_view_bytes(page, request);
    ASSERT_TRUE(bytes);
    EXPECT_EQ(bytes.value->substr(1, 3), "PNG");
    request.format = ExportFormat::csv;
    EXPECT_FALSE(attention_view_bytes(page, request));
    request.format = ExportFormat::svg;
    request.head.layer = 3;
    bytes = attention_view_bytes(page, request);
    ASSERT_FALSE(bytes);
    EXPECT_EQ(bytes.problems.front().path, "layer");
}
