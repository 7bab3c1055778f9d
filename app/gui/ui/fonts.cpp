#include "ui/fonts.hpp"

#include <cmath>
#include <filesystem>
#include <imgui.h>

namespace attnviz::app {

Fonts load_fonts(float size_pixels, const char* path) {
    ImGuiIO& io = ImGui::GetIO();
    static const ImWchar ranges[] = {
        0x0020, 0x00FF,  // Basic Latin, Latin-1 (·, ×, ÷, ¹ ² ³)
        0x0100, 0x024F,  // Latin extended-A and -B: GPT-2's pieces spell bytes with them (Ġ a space, Ċ a newline)
        0x02B0, 0x02FF,  // spacing modifier letters: ʰ ˣ
        0x0370, 0x03FF,  // Greek
        0x1D00, 0x1DBF,  // phonetic extensions: ᵀ and other modifier letters
        0x2010, 0x205E,  // dashes, quotes, bullets, …
        0x2070, 0x209F,  // superscripts and subscripts: ⁽ ⁾ ⁴ … ₀ ₁
        0x2100, 0x214F,  // letterlike symbols: ℝ
        0x2190, 0x21FF,  // arrows
        0x2200, 0x22FF,  // mathematical operators: √ Σ − ∞ ≈ ≠
        0x2580, 0x259F,  // block elements: ▁, SentencePiece's space in Llama's and Mistral's pieces
        0x25A0, 0x25FF,  // geometric shapes: ▶ ■
        0x2713, 0x2717,  // check marks: ✓ ✗ (the exercise's right and wrong)
        0x2C60, 0x2C7F,  // Latin extended-C: ⱼ
        0xFFFD, 0xFFFD,  // the replacement character: a token that holds part of a character (a byte)
        0,
    };
    const float numbers_size = std::round(size_pixels * 0.8f);
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && io.Fonts->AddFontFromFileTTF(path, size_pixels, nullptr, ranges)) {
        ImFont* numbers = io.Fonts->AddFontFromFileTTF(path, numbers_size, nullptr, ranges);
        ImFont* title = io.Fonts->AddFontFromFileTTF(path, std::round(size_pixels * 1.4f), nullptr, ranges);
        return {core::Notation::unicode, numbers, title, size_pixels};
    }
    ImFontConfig config;  // ImGui's own 13 px font, in proportion to the size asked for
    config.SizePixels = std::round(13.0f * size_pixels / 16.0f);
    io.Fonts->AddFontDefault(&config);
    return {core::Notation::ascii, nullptr, nullptr, size_pixels};
}

}  // namespace attnviz::app
