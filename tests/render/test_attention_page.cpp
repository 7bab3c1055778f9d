// The interactive page's HTML: the weights it carries decode to the session's within the 16-bit
// fraction's step, nothing in it asks for another file, text cannot end its script, its size
// grows linearly with the weights, and what cannot be drawn is refused. (The page drawn in a
// browser: tests/page/check_page.py.)
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/attention/presets.hpp"
#include "core/render/attention_page.hpp"
#include "core/render/colormaps.hpp"

using namespace attnviz::core;

namespace {

// The JSON the page's script reads.
nlohmann::json page_data(const std::string& html) {
    const std::string open = "<script id=\"attention-data\" type=\"application/json\">";
    const std::size_t begin = html.find(open);
    EXPECT_NE(begin, std::string::npos);
    const std::size_t end = html.find("</script>", begin);
    return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

std::vector<std::uint8_t> from_base64(const std::string& text) {
    std::vector<std::uint8_t> out;
    std::uint32_t bits = 0;
    int count = 0;
    for (char ch : text) {
        const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char* at = std::strchr(digits, ch);
        if (ch == '=' || !at) continue;
        bits = (bits << 6) | static_cast<std::uint32_t>(at - digits);
        if ((count += 6) >= 8) {
            count -= 8;
            out.push_back(static_cast<std::uint8_t>((bits >> count) & 0xff));
        }
    }
    return out;
}

Session session_of(int n, int heads) {
    Config c = worked_example().config;
    c.n = n;
    c.heads = heads;
    c.d_model = 8;
    c.d_k = c.d_v = 4;
    c.mask = Mask::causal;
    return random_session(c, 5);
}

std::string html_of(const Session& s) {
    const Result<std::string> html = attention_page_html(session_page(s, forward<double>(s.config, s.params)));
    EXPECT_TRUE(html) << (html ? "" : html.problems.front().str());
    return html ? *html.value : "";
}

}  // namespace

TEST(AttentionPage, CarriesEveryHeadsWeightsWithinTheStepOfItsFraction) {
    const Session s = session_of(5, 3);
    const Trace trace = forward<double>(s.config, s.params);
    const nlohmann::json data = page_data(html_of(s));
    EXPECT_EQ(data["layers"], 1);
    EXPECT_EQ(data["heads"], 3);
    EXPECT_EQ(data["queries"], s.tokens);
    EXPECT_EQ(data["keys"], s.tokens);
    const std::vector<std::uint8_t> bytes = from_base64(data["weights"].get<std::string>());
    ASSERT_EQ(bytes.size(), 3u * 5 * 5 * 2);
    std::size_t k = 0;
    for (int h = 0; h < 3; ++h) {
        const Matrix& w = *find_computed(trace, {MatrixId::weights, h});
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 5; ++j, k += 2) {
                const double decoded = (bytes[k] | (bytes[k + 1] << 8)) / 65535.0;
                EXPECT_NEAR(decoded, w(i, j), 0.5 / 65535 + 1e-12) << h << " " << i << " " << j;
            }
    }
    // The heads' colours are the app's; the colormap is the weights' (viridis).
    EXPECT_EQ(data["head_colors"][1], hex(head_rgba(1, 3)));
    EXPECT_EQ(data["colormap"][255], hex(colormap_rgba(Colormap::sequential, 1.0f)));
}

TEST(AttentionPage, AsksForNothingOutsideItselfAndTokensCannotEndItsScript) {
    Session s = session_of(4, 2);
    s.tokens[1] = "</script><script src=\"https://example.com/x.js\"></script>";
    s.tokens[2] = "<!-- & \"quoted\"";
    const std::string html = html_of(s);
    // Two scripts (the data and the code), each ended once.
    std::size_t ends = 0;
    for (std::size_t at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++ends;
    EXPECT_EQ(ends, 2u);
    EXPECT_EQ(html.find("<!--"), std::string::npos);
    const std::regex url(R"((src|href)\s*=\s*["']?\s*(https?:|//))", std::regex::icase);
    EXPECT_FALSE(std::regex_search(html, url));
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    // The token comes back whole.
    EXPECT_EQ(page_data(html)["queries"][1], s.tokens[1]);
}

TEST(AttentionPage, GrowsLinearlyWithTheWeights) {
    const std::size_t small = html_of(session_of(16, 2)).size();
    const std::size_t large = html_of(session_of(32, 4)).size();  // 8× the weights
    const std::size_t fixed = html_of(session_of(1, 1)).size();
    const double per_weight_small = static_cast<double>(small - fixed) / (16 * 16 * 2);
    const double per_weight_large = static_cast<double>(large - fixed) / (32 * 32 * 4);
    EXPECT_NEAR(per_weight_small, 8.0 / 3, 0.4);  // two bytes in base64
    EXPECT_NEAR(per_weight_large, 8.0 / 3, 0.2);
}

TEST(AttentionPage, RefusesWhatCannotBeDrawn) {
    AttentionPage page;
    EXPECT_FALSE(attention_page_html(page));
    page.weights.layers = {{Matrix::Constant(2, 2, 0.5)}, {Matrix::Constant(2, 3, 1.0 / 3)}};
    page.weights.query_tokens = {"a", "b"};
    page.weights.key_tokens = {"a", "b"};
    Result<std::string> r = attention_page_html(page);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.problems.front().path, "layer 1, head 1");
    page.weights.layers.pop_back();
    page.weights.key_tokens.push_back("c");
    r = attention_page_html(page);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.problems.front().path, "tokens");
    page.weights.key_tokens.pop_back();
    EXPECT_TRUE(attention_page_html(page));
}

TEST(AttentionPage, NamesTheSpecialTokensAsCoreListsThem) {
    // The page's "hide special tokens" takes the indices core gives (is_special_token), each side
    // its own: here queries 0 and 3, and key 2 of a rectangular layer.
    AttentionPage page;
    page.weights.layers = {{Matrix::Constant(4, 3, 1.0 / 3)}};
    page.weights.query_tokens = {"[CLS]", "the", "cat", " [SEP]"};
    page.weights.key_tokens = {"a", "b", "<|endoftext|>"};
    const Result<std::string> html = attention_page_html(page);
    ASSERT_TRUE(html);
    const nlohmann::json data = page_data(*html.value);
    EXPECT_EQ(data["special"]["queries"], (std::vector<int>{0, 3}));
    EXPECT_EQ(data["special"]["keys"], (std::vector<int>{2}));
    // The script takes them from the data, not from a list of its own.
    EXPECT_NE(std::string(attention_page_script).find("data.special.queries"), std::string::npos);
    EXPECT_EQ(std::string(attention_page_script).find("\"[CLS]\""), std::string::npos);
}
