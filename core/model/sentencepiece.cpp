// SentencePiece models (tokenizer.model of Llama 2 and Mistral) through the SentencePiece library.
#include <sentencepiece_processor.h>

#include "core/model/engines.hpp"

namespace attnviz::model {

namespace {

class SentencePieceEngine final : public Tokenizer::Engine {
public:
    SentencePieceEngine(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp, std::string name, bool add_bos,
                        bool add_eos)
        : sp_(std::move(sp)), name_(std::move(name)), add_bos_(add_bos), add_eos_(add_eos) {}

    core::Result<Encoding> encode(std::string_view text, bool add_special) const override {
        if (const std::size_t bad = invalid_utf8_at(text); bad != text.size())
            return core::Result<Encoding>::fail({{"", "the text is not UTF-8 (byte " + std::to_string(bad) + ")"}});
        std::vector<int> ids;
        const auto status = sp_->Encode(std::string(text), &ids);
        if (!status.ok()) return core::Result<Encoding>::fail({{name_, "SentencePiece: " + status.ToString()}});
        Encoding e;
        if (add_special && add_bos_ && sp_->bos_id() >= 0) e.ids.push_back(sp_->bos_id());
        e.ids.insert(e.ids.end(), ids.begin(), ids.end());
        if (add_special && add_eos_ && sp_->eos_id() >= 0) e.ids.push_back(sp_->eos_id());
        for (const std::int32_t id : e.ids) e.tokens.push_back(token_text(id));
        return core::Result<Encoding>::ok(std::move(e));
    }

    std::string decode(const std::vector<std::int32_t>& ids, bool skip_special) const override {
        std::vector<int> kept;
        for (const std::int32_t id : ids)
            if (id >= 0 && id < sp_->GetPieceSize() && !(skip_special && sp_->IsControl(id))) kept.push_back(id);
        std::string text;
        if (!sp_->Decode(kept, &text).ok()) return "";
        return text;
    }

    std::string token_text(std::int32_t id) const override {
        return id >= 0 && id < sp_->GetPieceSize() ? sp_->IdToPiece(id) : std::string();
    }
    std::size_t vocab_size() const override { return static_cast<std::size_t>(sp_->GetPieceSize()); }

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::string name_;
    bool add_bos_, add_eos_;
};

}  // namespace

core::Result<Tokenizer> read_sentencepiece(std::string_view model, const std::string& name, bool add_bos,
                                           bool add_eos) {
    if (model.size() > max_tokenizer_bytes)
        return core::Result<Tokenizer>::fail(
            {{name, "larger than " + std::to_string(max_tokenizer_bytes >> 20) + " MiB"}});
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = sp->LoadFromSerializedProto(model);
    if (!status.ok()) return core::Result<Tokenizer>::fail({{name, "not a SentencePiece model: " + status.ToString()}});
    if (static_cast<std::size_t>(sp->GetPieceSize()) > max_vocab_entries)
        return core::Result<Tokenizer>::fail({{name, "more than " + std::to_string(max_vocab_entries) + " pieces"}});
    auto engine = std::make_shared<SentencePieceEngine>(std::move(sp), name, add_bos, add_eos);
    return core::Result<Tokenizer>::ok(Tokenizer(std::move(engine), name + " (SentencePiece)"));
}

}  // namespace attnviz::model
