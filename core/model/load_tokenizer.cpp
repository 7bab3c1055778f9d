#include "core/model/tokenizer.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "core/base/file_io.hpp"
#include "core/io/json_read.hpp"
#include "core/model/engines.hpp"

namespace attnviz::model {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

template <class T>
core::Result<T> refuse(const std::string& path, std::string message) {
    return core::Result<T>::fail({{path, std::move(message)}});
}

class PipelineEngine final : public Tokenizer::Engine {
public:
    explicit PipelineEngine(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}

    core::Result<Encoding> encode(std::string_view text, bool add_special) const override {
        if (const std::size_t bad = invalid_utf8_at(text); bad != text.size())
            return refuse<Encoding>("", "the text is not UTF-8 (byte " + std::to_string(bad) + ")");
        Failure failure;
        std::vector<Token> tokens = pipeline_->encode(text, add_special, failure);
        if (failure.failed()) return refuse<Encoding>("", failure.message);
        Encoding e;
        e.ids.reserve(tokens.size());
        e.tokens.reserve(tokens.size());
        for (Token& t : tokens) {
            e.ids.push_back(t.id);
            e.tokens.push_back(std::move(t.piece));
        }
        return core::Result<Encoding>::ok(std::move(e));
    }
    std::string decode(const std::vector<std::int32_t>& ids, bool skip_special) const override {
        return pipeline_->decode(ids, skip_special);
    }
    std::string token_text(std::int32_t id) const override {
        const std::string* piece = pipeline_->piece(id);
        return piece ? *piece : std::string();
    }
    std::size_t vocab_size() const override {
        std::size_t n = pipeline_->model->vocab().size();
        for (const AddedToken& t : pipeline_->added_tokens)
            if (!pipeline_->model->vocab().piece(t.id)) ++n;
        return n;
    }

private:
    std::shared_ptr<const Pipeline> pipeline_;
};

// The file's bytes; a file that cannot be read sets `unreadable`.
core::Result<std::string> read(const fs::path& file, bool& unreadable) {
    core::Result<std::string> text = core::read_file(file.string(), max_tokenizer_bytes, "a tokenizer file");
    // A file over the limit is refused like a malformed one, not unreadable.
    if (!text && !core::is_over_limit(text.problems)) unreadable = true;
    return text;
}

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

core::Result<Tokenizer> load_bert_vocab(const fs::path& vocab, bool& unreadable) {
    const core::Result<std::string> text = read(vocab, unreadable);
    if (!text) return core::Result<Tokenizer>::fail(text.problems);
    BertVocabOptions options;
    const fs::path config = vocab.parent_path() / "tokenizer_config.json";
    if (is_file(config)) {
        const core::Result<std::string> config_text = read(config, unreadable);
        if (!config_text) return core::Result<Tokenizer>::fail(config_text.problems);
        const core::Result<BertVocabOptions> read = read_bert_config(*config_text.value, config.string());
        if (!read) return core::Result<Tokenizer>::fail(read.problems);
        options = *read.value;
    }
    return read_bert_vocab(*text.value, vocab.string(), options);
}

core::Result<Tokenizer> load_gpt2_vocab(const fs::path& vocab, const fs::path& merges, bool& unreadable) {
    const core::Result<std::string> v = read(vocab, unreadable);
    if (!v) return core::Result<Tokenizer>::fail(v.problems);
    const core::Result<std::string> m = read(merges, unreadable);
    if (!m) return core::Result<Tokenizer>::fail(m.problems);
    return read_gpt2_vocab(*v.value, vocab.string(), *m.value, merges.string());
}

// tokenizer_config.json's add_bos_token and add_eos_token (Llama: true and false).
core::Result<Tokenizer> load_sentencepiece(const fs::path& model, bool& unreadable) {
    bool add_bos = true, add_eos = false;
    const fs::path config = model.parent_path() / "tokenizer_config.json";
    if (is_file(config)) {
        const core::Result<std::string> text = read(config, unreadable);
        if (!text) return core::Result<Tokenizer>::fail(text.problems);
        const core::Result<json> doc = core::read_json(*text.value);
        if (!doc) return refuse<Tokenizer>(config.string(), doc.problems.front().str());
        for (auto [key, flag] : {std::pair{"add_bos_token", &add_bos}, std::pair{"add_eos_token", &add_eos}}) {
            if (!doc.value->is_object() || !doc.value->contains(key)) continue;
            const json& v = (*doc.value)[key];
            if (!v.is_boolean())
                return refuse<Tokenizer>(config.string(), core::path_key("", key) + ": expected true or false");
            *flag = v.get<bool>();
        }
    }
    const core::Result<std::string> bytes = read(model, unreadable);
    if (!bytes) return core::Result<Tokenizer>::fail(bytes.problems);
    return read_sentencepiece(*bytes.value, model.string(), add_bos, add_eos);
}

core::Result<Tokenizer> load_file(const fs::path& file, bool& unreadable) {
    const std::string name = file.filename().string();
    const std::string ext = file.extension().string();
    if (name == "vocab.json" || name == "merges.txt") {
        const fs::path vocab = file.parent_path() / "vocab.json", merges = file.parent_path() / "merges.txt";
        if (!is_file(vocab) || !is_file(merges))
            return refuse<Tokenizer>(file.string(),
                                     "GPT-2's vocabulary needs both vocab.json and merges.txt beside each other");
        return load_gpt2_vocab(vocab, merges, unreadable);
    }
    if (ext == ".json") {
        const core::Result<std::string> text = read(file, unreadable);
        if (!text) return core::Result<Tokenizer>::fail(text.problems);
        // The BOS/EOS rules of the tokenizer_config.json beside it (transformers' class).
        std::optional<SpecialTokenRules> rules;
        if (const fs::path config = file.parent_path() / "tokenizer_config.json";
            name == "tokenizer.json" && is_file(config)) {
            const core::Result<std::string> config_text = read(config, unreadable);
            if (!config_text) return core::Result<Tokenizer>::fail(config_text.problems);
            core::Result<SpecialTokenRules> read = read_special_token_rules(*config_text.value, config.string());
            if (!read) return core::Result<Tokenizer>::fail(read.problems);
            rules = std::move(*read.value);
        }
        return read_tokenizer_json(*text.value, file.string(), rules ? &*rules : nullptr);
    }
    if (ext == ".txt") return load_bert_vocab(file, unreadable);
    if (ext == ".model") return load_sentencepiece(file, unreadable);
    return refuse<Tokenizer>(
        file.string(), "not a tokenizer file (tokenizer.json, vocab.json, merges.txt, vocab.txt or tokenizer.model)");
}

}  // namespace

Tokenizer pipeline_tokenizer(std::shared_ptr<const Pipeline> pipeline, std::string description) {
    return Tokenizer(std::make_shared<PipelineEngine>(std::move(pipeline)), std::move(description));
}

core::Result<Tokenizer> load_tokenizer(const std::string& path, bool* unreadable) {
    bool ignored = false;
    bool& io = unreadable ? *unreadable : ignored;
    io = false;
    std::error_code ec;
    const fs::path p(path);
    if (!fs::exists(p, ec)) {
        io = true;
        return refuse<Tokenizer>(path, "no such file or folder");
    }
    if (!fs::is_directory(p, ec)) return load_file(p, io);
    for (const char* name : {"tokenizer.json", "vocab.json", "vocab.txt", "tokenizer.model"}) {
        if (!is_file(p / name)) continue;
        if (std::string(name) == "vocab.json" && !is_file(p / "merges.txt")) continue;
        return load_file(p / name, io);
    }
    return refuse<Tokenizer>(path,
                             "no tokenizer in the folder (tokenizer.json, vocab.json and merges.txt, vocab.txt "
                             "or tokenizer.model)");
}

}  // namespace attnviz::model
