// The post-processors of tokenizer.json (see pipeline.hpp).
#include <utility>

#include "core/model/pipeline.hpp"

namespace attnviz::model {

namespace {

class Surround final : public PostProcessor {
public:
    Surround(std::vector<Token> before, std::vector<Token> after)
        : before_(std::move(before)), after_(std::move(after)) {}
    void process(std::vector<Token>& tokens) const override {
        tokens.insert(tokens.begin(), before_.begin(), before_.end());
        tokens.insert(tokens.end(), after_.begin(), after_.end());
    }
    std::size_t added_tokens() const override { return before_.size() + after_.size(); }

private:
    std::vector<Token> before_, after_;
};

class SequenceProcessor final : public PostProcessor {
public:
    explicit SequenceProcessor(std::vector<PostProcessorPtr> processors) : processors_(std::move(processors)) {}
    void process(std::vector<Token>& tokens) const override {
        for (const PostProcessorPtr& p : processors_) p->process(tokens);
    }
    std::size_t added_tokens() const override {
        std::size_t n = 0;
        for (const PostProcessorPtr& p : processors_) n += p->added_tokens();
        return n;
    }

private:
    std::vector<PostProcessorPtr> processors_;
};

}  // namespace

PostProcessorPtr surround_processor(std::vector<Token> before, std::vector<Token> after) {
    return std::make_unique<Surround>(std::move(before), std::move(after));
}

PostProcessorPtr sequence_processor(std::vector<PostProcessorPtr> processors) {
    return std::make_unique<SequenceProcessor>(std::move(processors));
}

}  // namespace attnviz::model
