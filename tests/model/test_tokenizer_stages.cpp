// Each stage of the tokenizer pipeline (core/model/pipeline.hpp) on cases small enough to work out
// by hand: the merge order of BPE, WordPiece's longest match, each normalizer, pre-tokenizer,
// post-processor and decoder, and the added tokens.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model/pipeline.hpp"

namespace {

using namespace attnviz::model;

Vocab vocab_of(const std::vector<std::string>& pieces) {
    Vocab v;
    for (std::size_t k = 0; k < pieces.size(); ++k) v.add(pieces[k], static_cast<std::int32_t>(k));
    return v;
}

std::vector<std::string> pieces_of(const std::vector<Token>& tokens) {
    std::vector<std::string> out;
    for (const Token& t : tokens) out.push_back(t.piece);
    return out;
}

std::vector<std::string> bpe(const std::vector<std::string>& vocab, const std::vector<BpeMerge>& merges,
                             const std::string& word, const BpeOptions& options = {}) {
    std::string error;
    const ModelPtr model = bpe_model(vocab_of(vocab), merges, options, error);
    EXPECT_TRUE(model) << error;
    if (!model) return {};
    std::vector<Token> out;
    Failure failure;
    model->tokenize(word, out, failure);
    EXPECT_FALSE(failure.failed()) << failure.message;
    return pieces_of(out);
}

using Strings = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// Models

TEST(Bpe, MergesTheLowestRankFirst) {
    const Strings vocab{"a", "b", "c", "ab", "bc"};
    // (b, c) before (a, b): "abc" → a + bc, and no merge joins a and bc.
    EXPECT_EQ(bpe(vocab, {{"b", "c"}, {"a", "b"}}, "abc"), (Strings{"a", "bc"}));
    // The other order: ab + c.
    EXPECT_EQ(bpe(vocab, {{"a", "b"}, {"b", "c"}}, "abc"), (Strings{"ab", "c"}));
}

TEST(Bpe, MergesTheResultOfAMergeAgain) {
    const Strings vocab{"a", "b", "c", "bc", "abc"};
    EXPECT_EQ(bpe(vocab, {{"b", "c"}, {"a", "bc"}}, "abc"), (Strings{"abc"}));
    EXPECT_EQ(bpe(vocab, {{"b", "c"}, {"a", "bc"}}, "cabcb"), (Strings{"c", "abc", "b"}));
}

TEST(Bpe, EqualRanksMergeLeftmostFirst) {
    // "aaa" with (a, a): the first two letters merge, the third is left alone.
    EXPECT_EQ(bpe({"a", "aa"}, {{"a", "a"}}, "aaa"), (Strings{"aa", "a"}));
    EXPECT_EQ(bpe({"a", "aa", "aaaa"}, {{"a", "a"}, {"aa", "aa"}}, "aaaaa"), (Strings{"aaaa", "a"}));
}

TEST(Bpe, IgnoreMergesTakesAWordThatIsAToken) {
    const Strings vocab{"a", "b", "c", "abc"};  // no merge reaches abc
    BpeOptions o;
    EXPECT_EQ(bpe(vocab, {}, "abc", o), (Strings{"a", "b", "c"}));
    o.ignore_merges = true;
    EXPECT_EQ(bpe(vocab, {}, "abc", o), (Strings{"abc"}));
}

TEST(Bpe, ByteFallbackSpellsAnUnknownCharacterInBytes) {
    BpeOptions o;
    o.byte_fallback = true;
    // é is C3 A9 in UTF-8.
    EXPECT_EQ(bpe({"a", "<0xC3>", "<0xA9>"}, {}, "a\xC3\xA9", o), (Strings{"a", "<0xC3>", "<0xA9>"}));
}

TEST(Bpe, UnknownCharactersAreTheUnknownTokenFusedOrNot) {
    BpeOptions o;
    o.unk_token = "<unk>";
    EXPECT_EQ(bpe({"<unk>", "a"}, {}, "xya", o), (Strings{"<unk>", "<unk>", "a"}));
    o.fuse_unk = true;
    EXPECT_EQ(bpe({"<unk>", "a"}, {}, "xya", o), (Strings{"<unk>", "a"}));
    // Without an unknown token they are dropped.
    EXPECT_EQ(bpe({"a"}, {}, "xya"), (Strings{"a"}));
}

TEST(Bpe, PrefixAndSuffixMarkThePlaceInTheWord) {
    BpeOptions o;
    o.continuing_subword_prefix = "##";
    // "ab": a and ##b; their merge is a + b without the prefix.
    EXPECT_EQ(bpe({"a", "##b", "ab"}, {{"a", "##b"}}, "ab", o), (Strings{"ab"}));
    EXPECT_EQ(bpe({"a", "##b", "ab"}, {}, "ab", o), (Strings{"a", "##b"}));
    BpeOptions s;
    s.end_of_word_suffix = "</w>";
    EXPECT_EQ(bpe({"a", "b</w>", "ab</w>"}, {{"a", "b</w>"}}, "ab", s), (Strings{"ab</w>"}));
}

TEST(Bpe, RefusesMergesOutsideTheVocabulary) {
    std::string error;
    EXPECT_FALSE(bpe_model(vocab_of({"a", "b"}), {{"a", "b"}}, {}, error));
    EXPECT_NE(error.find("merges[0]: the merged token \"ab\" is not in the vocabulary"), std::string::npos) << error;
    EXPECT_FALSE(bpe_model(vocab_of({"a", "ab"}), {{"a", "x"}}, {}, error));
    EXPECT_NE(error.find("\"x\" is not in the vocabulary"), std::string::npos) << error;
    BpeOptions o;
    o.unk_token = "<unk>";
    EXPECT_FALSE(bpe_model(vocab_of({"a"}), {}, o, error));
    EXPECT_NE(error.find("unk_token"), std::string::npos) << error;
}

Strings wordpiece(const std::string& word, std::size_t max_chars = 100) {
    std::string error;
    const ModelPtr m = wordpiece_model(vocab_of({"[UNK]", "un", "##aff", "##able", "##a", "aff"}), "[UNK]", "##",
                                       max_chars, error);
    std::vector<Token> out;
    Failure failure;
    m->tokenize(word, out, failure);
    return pieces_of(out);
}

TEST(WordPiece, GreedyLongestMatchFromTheStart) {
    EXPECT_EQ(wordpiece("unaffable"), (Strings{"un", "##aff", "##able"}));
    EXPECT_EQ(wordpiece("affa"), (Strings{"aff", "##a"}));
    // A part that no piece covers makes the whole word unknown.
    EXPECT_EQ(wordpiece("unaffablex"), (Strings{"[UNK]"}));
    // So does a word over the length limit (counted in characters).
    EXPECT_EQ(wordpiece("unaffable", 8), (Strings{"[UNK]"}));
    EXPECT_EQ(wordpiece("unaffable", 9), (Strings{"un", "##aff", "##able"}));
}

TEST(WordLevel, TheWordOrUnknown) {
    std::string error;
    const ModelPtr m = wordlevel_model(vocab_of({"<unk>", "cat"}), "<unk>", error);
    std::vector<Token> out;
    Failure failure;
    m->tokenize("cat", out, failure);
    m->tokenize("dog", out, failure);
    EXPECT_EQ(pieces_of(out), (Strings{"cat", "<unk>"}));
}

// ---------------------------------------------------------------------------------------------
// Normalizers

std::string normalized(const NormalizerPtr& n, std::string text) {
    Failure failure;
    n->normalize(text, failure);
    EXPECT_FALSE(failure.failed()) << failure.message;
    return text;
}

TEST(Normalizers, BertCleansSpacesChineseAccentsAndCase) {
    BertNormalizerOptions o;  // lowercase, strip_accents unset: follows lowercase
    const std::string text = "H\xC3\xA9llo\tWORLD\x01\xE4\xB8\xAD\xE6\x96\x87";  // Héllo⇥WORLD␁中文
    EXPECT_EQ(normalized(bert_normalizer(o), std::string(text) + std::string(1, '\0')),
              "hello world \xE4\xB8\xAD  \xE6\x96\x87 ");
    o.lowercase = false;  // and so no accent stripping either
    EXPECT_EQ(normalized(bert_normalizer(o), text), "H\xC3\xA9llo WORLD \xE4\xB8\xAD  \xE6\x96\x87 ");
    o.strip_accents = true;
    EXPECT_EQ(normalized(bert_normalizer(o), "H\xC3\xA9llo"), "Hello");
}

TEST(Normalizers, UnicodeForms) {
    const std::string e_acute = "\xC3\xA9", e_combining = "e\xCC\x81";
    EXPECT_EQ(normalized(unicode_normalizer(NormalForm::nfd), e_acute), e_combining);
    EXPECT_EQ(normalized(unicode_normalizer(NormalForm::nfc), e_combining), e_acute);
    EXPECT_EQ(normalized(unicode_normalizer(NormalForm::nfkc), "\xEF\xAC\x81"), "fi");  // ﬁ ligature
    EXPECT_EQ(normalized(unicode_normalizer(NormalForm::nfkd), "\xE2\x91\xA0"), "1");   // ①
}

TEST(Normalizers, LowercaseStripAccentsStripReplacePrepend) {
    // İ lower-cases to i and a combining dot above (U+0307); Σ to σ.
    EXPECT_EQ(normalized(lowercase_normalizer(),
                         "\xC4\xB0"
                         "A\xCE\xA3"),
              "i\xCC\x87"
              "a\xCF\x83");
    EXPECT_EQ(normalized(strip_accents_normalizer(),
                         "e\xCC\x81"
                         "a"),
              "ea");
    EXPECT_EQ(normalized(strip_normalizer(true, false), "  a b  "), "a b  ");
    std::string error;
    EXPECT_EQ(normalized(replace_normalizer(Regex::compile(" +", error), "_"), "a  b c"), "a_b_c");
    EXPECT_EQ(normalized(replace_normalizer(Regex::literal("a.", error), "X"), "a.ab"), "Xab");
    EXPECT_EQ(normalized(prepend_normalizer("\xE2\x96\x81"), "hi"), "\xE2\x96\x81hi");
    EXPECT_EQ(normalized(prepend_normalizer("\xE2\x96\x81"), ""), "");
    std::vector<NormalizerPtr> both;
    both.push_back(lowercase_normalizer());
    both.push_back(prepend_normalizer("<"));
    EXPECT_EQ(normalized(sequence_normalizer(std::move(both)), "AB"), "<ab");
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

Strings words(const PreTokenizerPtr& p, const std::string& text, bool at_start = true) {
    Pieces pieces{{text, at_start, {}}};
    Failure failure;
    p->pre_tokenize(pieces, failure);
    EXPECT_FALSE(failure.failed()) << failure.message;
    Strings out;
    for (const Piece& piece : pieces) out.push_back(piece.text);
    return out;
}

TEST(PreTokenizers, ByteLevelSplitsAsGpt2AndMapsBytes) {
    // A run of spaces gives all but its last space to a word of its own; ' is a contraction.
    EXPECT_EQ(words(byte_level_pre_tokenizer(false, true), "Hello  world's 42"),
              (Strings{"Hello", "\xC4\xA0", "\xC4\xA0world", "'s",
                       "\xC4\xA0"
                       "42"}));
    EXPECT_EQ(words(byte_level_pre_tokenizer(true, true), "Hi"), (Strings{"\xC4\xA0Hi"}));
    EXPECT_EQ(words(byte_level_pre_tokenizer(false, false), "a b\n"), (Strings{"a\xC4\xA0"
                                                                               "b\xC4\x8A"}));
    // Bytes of a multi-byte character each stand for themselves: é (C3 A9) is Ã©.
    EXPECT_EQ(words(byte_level_pre_tokenizer(false, false), "\xC3\xA9"), (Strings{"\xC3\x83\xC2\xA9"}));
}

TEST(PreTokenizers, SplitBehaviors) {
    std::string error;
    const Regex dash = Regex::literal("-", error);
    EXPECT_EQ(words(split_pre_tokenizer(dash, Behavior::removed, false), "a-b--c"), (Strings{"a", "b", "c"}));
    EXPECT_EQ(words(split_pre_tokenizer(dash, Behavior::isolated, false), "a-b--c"),
              (Strings{"a", "-", "b", "-", "-", "c"}));
    EXPECT_EQ(words(split_pre_tokenizer(dash, Behavior::merged_with_previous, false), "a-b--c"),
              (Strings{"a-", "b-", "-", "c"}));
    EXPECT_EQ(words(split_pre_tokenizer(dash, Behavior::merged_with_next, false), "a-b--c"),
              (Strings{"a", "-b", "-", "-c"}));
    EXPECT_EQ(words(split_pre_tokenizer(dash, Behavior::contiguous, false), "a-b--c"),
              (Strings{"a", "-", "b", "--", "c"}));
    // Inverted: the pattern matches what is kept.
    const Regex letters = Regex::compile("\\p{L}+", error);
    EXPECT_EQ(words(split_pre_tokenizer(letters, Behavior::removed, false), "ab, cd!"), (Strings{", ", "!"}));
    EXPECT_EQ(words(split_pre_tokenizer(letters, Behavior::removed, true), "ab, cd!"), (Strings{"ab", "cd"}));
}

TEST(PreTokenizers, BertWhitespaceAndPunctuation) {
    EXPECT_EQ(words(bert_pre_tokenizer(), "Hello,  world!\xE3\x80\x82"),
              (Strings{"Hello", ",", "world", "!", "\xE3\x80\x82"}));
    EXPECT_EQ(words(whitespace_pre_tokenizer(), "Hey friend!     How are you?!?"),
              (Strings{"Hey", "friend", "!", "How", "are", "you", "?!?"}));
    EXPECT_EQ(words(whitespace_split_pre_tokenizer(),
                    " a\tb\xC2\xA0"
                    "c "),
              (Strings{"a", "b", "c"}));
    EXPECT_EQ(words(punctuation_pre_tokenizer(Behavior::isolated), "a,b"), (Strings{"a", ",", "b"}));
    EXPECT_EQ(words(char_delimiter_pre_tokenizer(U'x'), "axbxxc"), (Strings{"a", "b", "c"}));
}

TEST(PreTokenizers, DigitsAndMetaspace) {
    EXPECT_EQ(words(digits_pre_tokenizer(true), "ab123c"), (Strings{"ab", "1", "2", "3", "c"}));
    EXPECT_EQ(words(digits_pre_tokenizer(false), "ab123c"), (Strings{"ab", "123", "c"}));
    const std::string m = "\xE2\x96\x81";  // ▁
    EXPECT_EQ(words(metaspace_pre_tokenizer(U'\u2581', PrependScheme::always, true), "Hey you"),
              (Strings{m + "Hey", m + "you"}));
    EXPECT_EQ(words(metaspace_pre_tokenizer(U'\u2581', PrependScheme::never, true), "Hey you"),
              (Strings{"Hey", m + "you"}));
    // "first": only where the original text begins.
    EXPECT_EQ(words(metaspace_pre_tokenizer(U'\u2581', PrependScheme::first, false), "Hey you", false),
              (Strings{"Hey" + m + "you"}));
    EXPECT_EQ(words(metaspace_pre_tokenizer(U'\u2581', PrependScheme::first, false), "Hey you", true),
              (Strings{m + "Hey" + m + "you"}));
}

// ---------------------------------------------------------------------------------------------
// Decoders

Strings decoded(const DecoderPtr& d, Strings pieces) {
    d->decode(pieces);
    return pieces;
}

TEST(Decoders, ByteLevelWordPieceMetaspace) {
    EXPECT_EQ(decoded(byte_level_decoder(), {"\xC4\xA0hello",
                                             "\xC4\xA0"
                                             "w\xC3\x83\xC2\xA9"}),
              (Strings{" hello w\xC3\xA9"}));
    // Each piece but the first gets a space unless it continues a word; cleanup takes the space
    // back before punctuation.
    EXPECT_EQ(decoded(wordpiece_decoder("##", true), {"un", "##aff", "##able", ",", "you", "."}),
              (Strings{"un", "aff", "able", ",", " you", "."}));
    EXPECT_EQ(decoded(wordpiece_decoder("##", false), {"a", ","}), (Strings{"a", " ,"}));
    const std::string m = "\xE2\x96\x81";
    EXPECT_EQ(decoded(metaspace_decoder(U'\u2581', PrependScheme::always), {m + "Hey", m + "you"}),
              (Strings{"Hey", " you"}));
}

TEST(Decoders, ByteFallbackFuseStripReplace) {
    // E6 97 A5 is 日; a lone E6 is not UTF-8 and becomes U+FFFD.
    EXPECT_EQ(decoded(byte_fallback_decoder(), {"<0xE6>", "<0x97>", "<0xA5>", "x", "<0xE6>"}),
              (Strings{"\xE6\x97\xA5", "x", "\xEF\xBF\xBD"}));
    EXPECT_EQ(decoded(fuse_decoder(), {"a", "b", "c"}), (Strings{"abc"}));
    EXPECT_EQ(decoded(strip_decoder(U' ', 1, 0), {"  a ", " b"}), (Strings{" a ", "b"}));
    std::string error;
    EXPECT_EQ(decoded(replace_decoder(Regex::literal("\xE2\x96\x81", error), " "), {"\xE2\x96\x81"
                                                                                    "a"}),
              (Strings{" a"}));
    EXPECT_EQ(decoded(bpe_decoder("</w>"), {"hel", "lo</w>", "you</w>"}), (Strings{"hel", "lo ", "you"}));
}

// ---------------------------------------------------------------------------------------------
// Added tokens, post-processors and the whole pipeline

Pipeline char_pipeline(std::vector<AddedToken> added) {
    // A WordLevel over single characters and "<a>", "<a><b>", "cat", after a whitespace split.
    Pipeline p;
    std::string error;
    p.model = wordlevel_model(vocab_of({"<unk>", "a", "b", "c", "x", "<a>", "<a><b>", "cat", " "}), "<unk>", error);
    p.pre_tokenizer = whitespace_split_pre_tokenizer();
    p.added_tokens = std::move(added);
    p.prepare();
    return p;
}

Strings encoded(const Pipeline& p, const std::string& text, bool add_special = true) {
    Failure failure;
    Strings out = pieces_of(p.encode(text, add_special, failure));
    EXPECT_FALSE(failure.failed()) << failure.message;
    return out;
}

TEST(AddedTokens, LongestMatchFirstAndWordBoundaries) {
    const Pipeline p = char_pipeline({{"<a>", 5, true}, {"<a><b>", 6, true}, {"cat", 7, false, true}});
    EXPECT_EQ(encoded(p, "x<a><b>x<a>"), (Strings{"x", "<a><b>", "x", "<a>"}));
    // single_word: "cat" alone is the token; inside "cats" or "xcat" it is not.
    EXPECT_EQ(encoded(p, "cat cats xcat"), (Strings{"cat", "<unk>", "<unk>"}));
}

TEST(AddedTokens, StripTakesTheSpacesBeside) {
    const Pipeline p = char_pipeline({{"<a>", 5, true, false, true, true, false}});
    EXPECT_EQ(encoded(p, "x  <a>  x"), (Strings{"x", "  <a>  ", "x"}));
    const Pipeline q = char_pipeline({{"<a>", 5, true}});
    EXPECT_EQ(encoded(q, "x  <a>  x"), (Strings{"x", "<a>", "x"}));
}

TEST(AddedTokens, NormalizedTokensMatchTheNormalizedText) {
    Pipeline p;
    std::string error;
    p.model = wordlevel_model(vocab_of({"<unk>", "cat"}), "<unk>", error);
    p.normalizer = lowercase_normalizer();
    p.added_tokens = {{"CAT", 1, false, false, false, false, true}, {"DOG", 0, false, false, false, false, false}};
    p.prepare();
    // CAT is matched as "cat" after lower-casing; DOG only as written, before it.
    EXPECT_EQ(encoded(p, "CaT"), (Strings{"cat"}));
    EXPECT_EQ(encoded(p, "DOG"), (Strings{"DOG"}));
    EXPECT_EQ(encoded(p, "dog"), (Strings{"<unk>"}));
}

TEST(PostProcessors, SpecialTokensTruncationAndPadding) {
    Pipeline p = char_pipeline({});
    p.post_processor = surround_processor({{5, "<a>"}}, {{6, "<a><b>"}});
    EXPECT_EQ(encoded(p, "a b"), (Strings{"<a>", "a", "b", "<a><b>"}));
    EXPECT_EQ(encoded(p, "a b", false), (Strings{"a", "b"}));
    // Truncation keeps room for the special tokens.
    p.truncation = Truncation{3, false};
    EXPECT_EQ(encoded(p, "a b c"), (Strings{"<a>", "a", "<a><b>"}));
    p.truncation = Truncation{3, true};
    EXPECT_EQ(encoded(p, "a b c"), (Strings{"<a>", "c", "<a><b>"}));
    p.truncation.reset();
    Padding pad;
    pad.fixed = 5;
    pad.pad = {0, "<unk>"};
    p.padding = pad;
    EXPECT_EQ(encoded(p, "a"), (Strings{"<a>", "a", "<a><b>", "<unk>", "<unk>"}));
    std::vector<PostProcessorPtr> two;
    two.push_back(surround_processor({{1, "a"}}, {}));
    two.push_back(surround_processor({{2, "b"}}, {}));
    EXPECT_EQ(sequence_processor(std::move(two))->added_tokens(), 2u);
}

TEST(Pipeline, DecodeSkipsSpecialTokensWhenAsked) {
    Pipeline p = char_pipeline({{"<a>", 5, true}});
    p.decoder = fuse_decoder();
    EXPECT_EQ(p.decode({1, 5, 2, 99}, false), "a<a>b");  // 99: no such id, skipped
    EXPECT_EQ(p.decode({1, 5, 2}, true), "ab");
    p.decoder.reset();
    EXPECT_EQ(p.decode({1, 2, 3}, false), "a b c");
}

TEST(Unicode, RegexFindsEveryMatchAndStepsOverEmptyOnes) {
    std::string error;
    const Regex re = Regex::compile("x*", error);
    std::vector<Span> m;
    ASSERT_TRUE(re.find_all("axxb", m));
    ASSERT_EQ(m.size(), 4u);  // "" at 0, "xx" at 1, "" at 3, "" at 4
    EXPECT_EQ(m[1].begin, 1u);
    EXPECT_EQ(m[1].end, 3u);
    EXPECT_FALSE(Regex::compile("(", error).valid());
    EXPECT_NE(error.find("offset"), std::string::npos);
    // \s+(?!\S): the look-ahead of GPT-2's pattern, with Unicode spaces.
    ASSERT_TRUE(Regex::compile("\\s+(?!\\S)", error).find_all("a \xE3\x80\x80 b", m));
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].end - m[0].begin, 4u);      // the space and U+3000, not the last space
    EXPECT_FALSE(valid_utf8("\xC0\x80"));      // an overlong NUL
    EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));  // a surrogate
    EXPECT_EQ(invalid_utf8_at("ab\xFF"), 2u);
}

}  // namespace
