// Tests of core/teach/sentence.hpp: the tokens of sentences, the rows their words get, the refusals,
// and that the session they make is valid and computes.
#include "core/teach/sentence.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"

namespace attnviz::core {
namespace {

std::vector<std::string> tokens_of(std::string_view sentence) {
    const Result<std::vector<std::string>> t = sentence_tokens(sentence);
    EXPECT_TRUE(t) << (t.problems.empty() ? "" : t.problems.front().str());
    return t ? *t.value : std::vector<std::string>{};
}

std::string problem_of(std::string_view sentence) {
    const Result<std::vector<std::string>> t = sentence_tokens(sentence);
    EXPECT_FALSE(t) << sentence;
    return t ? "" : t.problems.front().str();
}

using Words = std::vector<std::string>;

TEST(Sentence, WordsAndPunctuationAreTokens) {
    EXPECT_EQ(tokens_of("The cat sat on the mat."), (Words{"The", "cat", "sat", "on", "the", "mat", "."}));
    EXPECT_EQ(tokens_of("  Hi,\tthere!\nDon't stop... "), (Words{"Hi", ",", "there", "!", "Don't", "stop", "..."}));
    EXPECT_EQ(tokens_of("a well-known 3.14, -5 (or 2,5)"),
              (Words{"a", "well-known", "3.14", ",", "-", "5", "(", "or", "2,5", ")"}));
    // Letters of any script; Unicode quotes and CJK punctuation are punctuation.
    EXPECT_EQ(tokens_of("L’homme «naïf» 日本語。"), (Words{"L’homme", "«", "naïf", "»", "日本語", "。"}));
    EXPECT_EQ(tokens_of("'quoted'"), (Words{"'", "quoted", "'"}));  // an apostrophe at a word's edge is not in it
    EXPECT_EQ(tokens_of("x"), (Words{"x"}));
}

TEST(Sentence, RefusalsSayWhy) {
    EXPECT_EQ(problem_of(""), "sentence: the sentence is empty: type a few words");
    EXPECT_EQ(problem_of(" \t\n "), "sentence: the sentence is empty: type a few words");
    EXPECT_EQ(problem_of("caf\xff"), "sentence: not valid UTF-8 (byte 4 of the text)");
    EXPECT_EQ(problem_of("caf\xc3"), "sentence: not valid UTF-8 (byte 4 of the text)");        // cut short
    EXPECT_EQ(problem_of("\xc0\xaf"), "sentence: not valid UTF-8 (byte 1 of the text)");       // overlong '/'
    EXPECT_EQ(problem_of("a\xed\xa0\x80"), "sentence: not valid UTF-8 (byte 3 of the text)");  // a surrogate
    std::string long_one;
    for (int i = 0; i < max_sentence_tokens; ++i) long_one += "w ";
    EXPECT_EQ(tokens_of(long_one).size(), static_cast<size_t>(max_sentence_tokens));
    EXPECT_EQ(problem_of(long_one + "one more"),
              "sentence: the sentence has 130 tokens (words and punctuation); a sentence session takes at most 128");
}

TEST(Sentence, LowerCaseFoldsAsciiAndLatin1Capitals) {
    EXPECT_EQ(lower_case("The ÉCOLE ×"), "the école ×");  // × is not a capital
    EXPECT_EQ(lower_case("ΣΑΣ"), "ΣΑΣ");                  // other scripts as written
    EXPECT_EQ(distinct_words({"The", "cat", "the", "CAT", "."}), (Words{"the", "cat", "."}));
}

// FNV-1a and splitmix64 written again here, from their definitions.
std::uint64_t fnv1a(std::string_view bytes) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ULL;
    return h;
}
double first_value(std::uint64_t seed) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return std::round((2 * (static_cast<double>(z >> 11) / 9007199254740992.0) - 1) * 100) / 100;
}

TEST(Sentence, AWordsEmbeddingIsItsHashsDraws) {
    ASSERT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cULL);  // FNV-1a's published test vector
    EXPECT_EQ(word_embedding("a", 3)(0, 0), first_value(fnv1a("a")));
    EXPECT_EQ(word_embedding("Cat", 5)(0, 0), first_value(fnv1a("cat")));  // lower-cased first
    const Matrix row = word_embedding("attention", 64);
    ASSERT_EQ(row.cols(), 64);
    for (int c = 0; c < 64; ++c) {
        EXPECT_LE(std::abs(row(0, c)), 1.0);
        EXPECT_EQ(row(0, c), std::round(row(0, c) * 100) / 100);  // two decimals
        EXPECT_FALSE(std::signbit(row(0, c)) && row(0, c) == 0);  // no −0
    }
    EXPECT_GT((row.array() > 0).count(), 16);  // spread over [−1, 1], not all of one sign
    EXPECT_GT((row.array() < 0).count(), 16);
    // A longer row begins with the shorter one: d_model grown keeps a word's first values.
    EXPECT_EQ(word_embedding("attention", 8), row.leftCols(8));
}

Session base(int d_model, int heads) {
    return random_session({3, d_model, heads, d_model / heads, d_model / heads, true, Mask::none, {}, false, 0, {}},
                          11);
}

TEST(Sentence, TheSameWordGetsTheSameRowEverywhere) {
    const Session current = base(8, 2);
    const Result<Session> a = sentence_session("The cat sat", current, SentenceRows::embedding);
    const Result<Session> b = sentence_session("a dog saw the old cat", current, SentenceRows::embedding);
    ASSERT_TRUE(a && b);
    const Matrix& xa = a.value->params.X;
    const Matrix& xb = b.value->params.X;
    EXPECT_EQ(xa.row(0), xb.row(3));  // "The" at 0, "the" at 3
    EXPECT_EQ(xa.row(1), xb.row(5));  // "cat"
    EXPECT_EQ(xa.row(0), word_embedding("the", 8));
    // Different words, different rows (8 values of 201 levels each: a clash would be a bug).
    for (int i = 0; i < 6; ++i)
        for (int j = i + 1; j < 6; ++j)
            EXPECT_NE(xb.row(i), xb.row(j)) << b.value->tokens[i] << " " << b.value->tokens[j];
    EXPECT_EQ(a.value->tokens, (Words{"The", "cat", "sat"}));
}

TEST(Sentence, OneHotRowsAreOneColumnPerDistinctWord) {
    const Result<Session> s = sentence_session("the cat saw the dog", base(8, 2), SentenceRows::one_hot);
    ASSERT_TRUE(s);
    const Matrix& x = s.value->params.X;
    ASSERT_EQ(x.rows(), 5);
    const int column[] = {0, 1, 2, 0, 3};  // the, cat, saw, the, dog
    for (int i = 0; i < 5; ++i)
        for (int c = 0; c < 8; ++c) EXPECT_EQ(x(i, c), c == column[i] ? 1.0 : 0.0) << i << " " << c;
    // Too few columns: refused, saying how many it needs.
    const Result<Session> narrow = sentence_session("the cat saw the dog", base(3, 1), SentenceRows::one_hot);
    ASSERT_FALSE(narrow);
    EXPECT_EQ(narrow.problems.front().str(),
              "d_model: one-hot rows need a column per distinct word: d_model ≥ 4, but it is 3. Raise d_model, or "
              "choose embedding rows.");
    EXPECT_TRUE(sentence_session("the cat saw the", base(3, 1), SentenceRows::one_hot));  // 3 distinct words
    // The same answer without building the session.
    EXPECT_EQ(sentence_problems({"the", "cat", "saw", "the", "dog"}, base(3, 1).config, SentenceRows::one_hot),
              narrow.problems);
    EXPECT_TRUE(
        sentence_problems({"the", "cat", "saw", "the", "dog"}, base(3, 1).config, SentenceRows::embedding).empty());
    // A config that is not valid with the sentence's n is refused with its field.
    Config tiny = base(3, 1).config;
    tiny.d_k = 0;
    EXPECT_EQ(sentence_problems({"a"}, tiny, SentenceRows::embedding).front().path, "config.d_k");
}

TEST(Sentence, TheSessionIsValidComputesAndKeepsTheWeights) {
    Session current = base(8, 2);
    current.config.mask = Mask::causal;
    current.config.scale = {Scale::Kind::divisor, 0.5};
    for (const SentenceRows rows : {SentenceRows::embedding, SentenceRows::one_hot}) {
        const Result<Session> s = sentence_session("Attention is all you need.", current, rows);
        ASSERT_TRUE(s);
        EXPECT_TRUE(validate(*s.value).empty());
        Config want = current.config;
        want.n = 6;
        EXPECT_EQ(s.value->config, want);
        EXPECT_EQ(s.value->params.heads, current.params.heads);  // every weight kept
        EXPECT_TRUE(same(s.value->params.W_O, current.params.W_O));
        const Trace t = forward<double>(s.value->config, s.value->params);
        ASSERT_EQ(t.heads.size(), 2u);
        EXPECT_EQ(t.heads[1].weights.rows(), 6);
        for (int i = 0; i < 6; ++i) EXPECT_NEAR(t.heads[1].weights.row(i).sum(), 1, 1e-12);
    }
    // A refused sentence leaves nothing half made.
    EXPECT_FALSE(sentence_session("", current, SentenceRows::embedding));
}

}  // namespace
}  // namespace attnviz::core
