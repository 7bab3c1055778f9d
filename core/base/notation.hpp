// How formulas are written: in Unicode (·, −, √, Σ, ᵀ, superscript heads) when the UI font has
// those glyphs, in plain ASCII otherwise. The choice is made here once; everything that writes a
// formula takes its symbols from symbols(notation).
#pragma once

#include <string>

namespace attnviz::core {

enum class Notation { unicode, ascii };

struct Symbols {
    const char* dot;        // multiplication: "·" or "*"
    const char* minus;      // subtraction in formulas: "−" or "-"
    const char* neg_inf;    // "−∞" or "-inf"
    const char* sqrt;       // "√" or "sqrt"
    const char* sum;        // "Σ" or "sum"
    const char* transpose;  // "ᵀ" or "^T"
    const char* ellipsis;   // "…" or "..."
    const char* divide;     // "÷" or "/"
    const char* arrow;      // "→" or "->"
    const char* about;      // "≈" or "~"
    const char* sqrt_dk;    // "√d_k" or "sqrt(d_k)"
};

const Symbols& symbols(Notation notation);

// A head number as the seeds write it: "⁽¹²⁾" (unicode) or "(12)" (ascii); `head` counts from 1.
std::string head_mark(int head, Notation notation);

}  // namespace attnviz::core
