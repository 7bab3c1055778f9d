// libFuzzer target for the attentions reader (core/io/attentions.hpp): the input is a tensor file,
// optionally followed by "\n--tokens--\n" and a tokens file's text. Reading either fails with
// printable problems, or gives layers whose heads all have the tokens' shape and whose rows are
// distributions.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/format.hpp"
#include "core/io/attentions.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size), tokens, label;
    const std::string separator = "\n--tokens--\n";
    if (const std::size_t at = bytes.find(separator); at != std::string::npos) {
        tokens = bytes.substr(at + separator.size());
        bytes.resize(at);
        label = "tokens.json";
    }
    const core::Result<core::TensorFile> file = core::TensorFile::from_bytes(bytes, "fuzz");
    if (!file) return 0;
    const core::Result<core::Attentions> a = core::read_attentions(*file.value, tokens, label);
    if (!a) {
        check(!a.problems.empty(), "read_attentions failed without saying why");
        for (const core::Problem& p : a.problems)
            check(core::printable(p.str()) == p.str(), "a message holds control characters or invalid UTF-8", p.str());
        return 0;
    }
    const core::Attentions& at = *a.value;
    check(!at.layers.empty() && at.heads() > 0, "attentions without a layer or a head were accepted");
    for (const auto& layer : at.layers) {
        check(static_cast<int>(layer.size()) == at.heads(), "layers with different numbers of heads");
        for (const core::Matrix& w : layer) {
            check(w.rows() == static_cast<Eigen::Index>(at.query_tokens.size()) &&
                      w.cols() == static_cast<Eigen::Index>(at.key_tokens.size()),
                  "a head's shape differs from its tokens'");
            for (Eigen::Index i = 0; i < w.rows(); ++i)
                check(w.row(i).minCoeff() >= 0 && std::abs(w.row(i).sum() - 1) <= core::attention_row_tolerance,
                      "an accepted row is not a distribution");
        }
    }
    return 0;
}
