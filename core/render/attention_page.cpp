#include "core/render/attention_page.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/attention/head_view.hpp"
#include "core/attention/registry.hpp"
#include "core/render/colormaps.hpp"

namespace attnviz::core {

namespace {

// Standard base64 of bytes.
std::string base64(const std::vector<std::uint8_t>& bytes) {
    static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t b0 = bytes[i];
        const std::uint32_t b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0;
        const std::uint32_t b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
        const std::uint32_t triple = (b0 << 16) | (b1 << 8) | b2;
        out += digits[(triple >> 18) & 63];
        out += digits[(triple >> 12) & 63];
        out += i + 1 < bytes.size() ? digits[(triple >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? digits[triple & 63] : '=';
    }
    return out;
}

// Every weight in layer, head, query, key order as round(65535·w), little-endian: the page
// divides by 65535 again (within 7.7e-6 of the weight).
std::string packed_weights(const Attentions& a) {
    std::vector<std::uint8_t> bytes;
    for (const std::vector<Matrix>& layer : a.layers)
        for (const Matrix& w : layer)
            for (Eigen::Index i = 0; i < w.rows(); ++i)
                for (Eigen::Index j = 0; j < w.cols(); ++j) {
                    const double v = std::isfinite(w(i, j)) ? std::clamp(w(i, j), 0.0, 1.0) : 0.0;
                    const auto q = static_cast<std::uint16_t>(std::lround(v * 65535.0));
                    bytes.push_back(static_cast<std::uint8_t>(q & 0xff));
                    bytes.push_back(static_cast<std::uint8_t>(q >> 8));
                }
    return base64(bytes);
}

// JSON that cannot end the <script> element it sits in: every '<' (only ever inside a string) as \u003c.
std::string script_safe(const std::string& json_text) {
    std::string out;
    out.reserve(json_text.size());
    for (char ch : json_text) {
        if (ch == '<')
            out += "\\u003c";
        else
            out += ch;
    }
    return out;
}

std::string html_escaped(const std::string& text) {
    std::string out;
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

Problems shape_problems(const Attentions& a) {
    if (a.layers.empty()) return {{"", "no layer of weights to show"}};
    if (a.layers.front().empty()) return {{"", "no head in layer 0"}};
    const Matrix& first = a.layers.front().front();
    const std::string shape = std::to_string(first.rows()) + "×" + std::to_string(first.cols());
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        if (a.layers[l].size() != a.layers.front().size())
            return {{"layer " + std::to_string(l), "has " + std::to_string(a.layers[l].size()) + " heads, layer 0 " +
                                                       std::to_string(a.layers.front().size())}};
        for (std::size_t h = 0; h < a.layers[l].size(); ++h)
            if (a.layers[l][h].rows() != first.rows() || a.layers[l][h].cols() != first.cols())
                return {{"layer " + std::to_string(l) + ", head " + std::to_string(h + 1),
                         "is " + std::to_string(a.layers[l][h].rows()) + "×" + std::to_string(a.layers[l][h].cols()) +
                             ", the first head " + shape}};
    }
    if (a.query_tokens.size() != static_cast<std::size_t>(first.rows()) ||
        a.key_tokens.size() != static_cast<std::size_t>(first.cols()))
        return {{"tokens", std::to_string(a.query_tokens.size()) + " query and " + std::to_string(a.key_tokens.size()) +
                               " key tokens for weights of " + shape}};
    return {};
}

// What the script reads: the sizes, tokens, colours and the packed weights.
nlohmann::json page_data(const AttentionPage& page) {
    const Attentions& a = page.weights;
    const int heads = a.heads();
    nlohmann::json head_colors = nlohmann::json::array();
    for (int h = 0; h < heads; ++h) head_colors.push_back(hex(head_rgba(h, heads)));
    nlohmann::json colormap = nlohmann::json::array();
    for (int k = 0; k < 256; ++k) colormap.push_back(hex(colormap_rgba(Colormap::sequential, k / 255.0f)));
    // The special tokens ("hide special tokens"): core's list (is_special_token), as indices.
    const KeptTokens ordinary = kept_tokens(a.query_tokens, a.key_tokens, true);
    const auto special = [](const std::vector<int>& kept, std::size_t count) {
        std::vector<int> out;
        for (std::size_t t = 0, k = 0; t < count; ++t)
            if (k < kept.size() && kept[k] == static_cast<int>(t))
                ++k;
            else
                out.push_back(static_cast<int>(t));
        return out;
    };
    return {{"title", page.title},
            {"notes", page.notes},
            {"view", page.view == PageView::head ? "head" : "model"},
            {"layers", a.layers.size()},
            {"heads", heads},
            {"queries", a.query_tokens},
            {"keys", a.key_tokens},
            {"special",
             {{"queries", special(ordinary.queries, a.query_tokens.size())},
              {"keys", special(ordinary.keys, a.key_tokens.size())}}},
            {"head_colors", head_colors},
            {"colormap", colormap},
            {"weights", packed_weights(a)}};
}

}  // namespace

AttentionPage session_page(const Session& session, const Trace& trace) {
    AttentionPage page;
    const Config& c = session.config;
    page.title = "attention weights, " + std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads");
    page.notes.push_back("One layer: " + std::to_string(c.n) + " queries × " + std::to_string(c.kv_len()) +
                         " keys, d_model " + std::to_string(c.d_model) + ", d_k " + std::to_string(c.d_k) + ".");
    page.weights = attentions_of(session, trace);
    return page;
}

Result<std::string> attention_page_html(const AttentionPage& page) {
    if (Problems problems = shape_problems(page.weights); !problems.empty())
        return Result<std::string>::fail(std::move(problems));
    std::string html;
    html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    html += "<title>" + html_escaped(page.title) + "</title>\n<style>\n";
    html += attention_page_style;
    html += "</style>\n</head>\n<body>\n";
    html += "<script id=\"attention-data\" type=\"application/json\">";
    html += script_safe(page_data(page).dump());
    html += "</script>\n<script>\n";
    html += attention_page_script;
    html += "</script>\n</body>\n</html>\n";
    return Result<std::string>::ok(std::move(html));
}

}  // namespace attnviz::core
