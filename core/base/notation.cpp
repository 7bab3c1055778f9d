#include "core/base/notation.hpp"

namespace attnviz::core {

const Symbols& symbols(Notation n) {
    static const Symbols unicode{"·", "−", "−∞", "√", "Σ", "ᵀ", "…", "÷", "→", "≈", "√d_k"};
    static const Symbols ascii{"*", "-", "-inf", "sqrt", "sum", "^T", "...", "/", "->", "~", "sqrt(d_k)"};
    return n == Notation::unicode ? unicode : ascii;
}

std::string head_mark(int head, Notation notation) {
    if (notation == Notation::ascii) return "(" + std::to_string(head) + ")";
    static const char* digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    std::string s = "⁽";
    for (char c : std::to_string(head)) s += c == '-' ? "⁻" : digits[c - '0'];
    return s + "⁾";
}

}  // namespace attnviz::core
