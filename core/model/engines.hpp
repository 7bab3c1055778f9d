// The engines behind a Tokenizer (internal to core/model): the Hugging Face pipeline and
// SentencePiece.
#pragma once

#include <memory>
#include <string>

#include "core/model/pipeline.hpp"
#include "core/model/tokenizer.hpp"

namespace attnviz::model {

// A tokenizer running the pipeline (tokenizer.json, vocab.json + merges.txt, vocab.txt).
Tokenizer pipeline_tokenizer(std::shared_ptr<const Pipeline> pipeline, std::string description);

// A SentencePiece model (the bytes of a .model file); `add_bos` and `add_eos` are the special
// tokens encode adds by default (Llama: <s> only).
core::Result<Tokenizer> read_sentencepiece(std::string_view model, const std::string& name, bool add_bos, bool add_eos);

}  // namespace attnviz::model
