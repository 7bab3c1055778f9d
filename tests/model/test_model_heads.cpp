// The head detectors (core/model/head_detectors.hpp): every score of every head of the tiny GPT-2
// and Llama against the definitions run by PyTorch on the same probe (tests/reference/models/
// gradients.py's detectors(), which draws the probe with its own splitmix64: the same ids), to
// 1e-9; and each score of a hand-made pattern that is exactly that kind of head.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/io/tensors.hpp"
#include "core/model/head_detectors.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::core::Matrix;
using attnviz::core::TensorFile;
using attnviz::model::PatternScores;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using nlohmann::json;

TEST(HeadDetectors, AgreeWithTheDefinitionsOnTheSameProbe) {
    for (const std::string name : {"gpt2", "llama"}) {
        SCOPED_TRACE(name);
        const auto m = open_model(name);
        const auto f = TensorFile::open((models_dir.parent_path() / "gradients" / (name + ".safetensors")).string());
        ASSERT_TRUE(f);
        const json meta = json::parse(f.value->metadata().at("heads"));
        const auto d = attnviz::model::detect_heads(m, meta.at("seed").get<std::uint64_t>());
        ASSERT_TRUE(d) << d.problems.front().str();
        EXPECT_EQ(d.value->probe, meta.at("probe").get<std::vector<std::int32_t>>());
        const std::vector<std::pair<std::string, const Matrix*>> scores = {{"previous_token", &d.value->previous_token},
                                                                           {"induction", &d.value->induction},
                                                                           {"duplicate_token",
                                                                            &d.value->duplicate_token},
                                                                           {"sink", &d.value->sink},
                                                                           {"diagonal", &d.value->diagonal},
                                                                           {"copying", &d.value->copying}};
        for (const auto& [key, got] : scores) {
            const std::vector<double> want = f.value->read("heads." + key).value->values;
            ASSERT_EQ(static_cast<size_t>(got->size()), want.size()) << key;
            for (Eigen::Index i = 0; i < got->rows(); ++i)
                for (Eigen::Index j = 0; j < got->cols(); ++j)
                    EXPECT_NEAR((*got)(i, j), want[static_cast<size_t>(i * got->cols() + j)], 1e-9) << key;
        }
        ASSERT_EQ(d.value->patterns.size(), static_cast<size_t>(m.config().layers));
        EXPECT_EQ(d.value->patterns[0][0].rows(), static_cast<Eigen::Index>(d.value->probe.size()));
    }
}

// A head that is exactly one kind scores 1 on that kind.
TEST(HeadDetectors, EachScoreOfAHeadThatIsExactlyThatKind) {
    const std::vector<std::int32_t> ids = attnviz::model::induction_probe(1000, 7, 6);  // 12 ids, halves equal
    ASSERT_EQ(ids.size(), 12u);
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(ids[i], ids[i + 6]);
    const Eigen::Index n = 12;
    Matrix previous = Matrix::Zero(n, n), induction = Matrix::Zero(n, n), first = Matrix::Zero(n, n),
           identity = Matrix::Identity(n, n);
    previous(0, 0) = 1;
    for (Eigen::Index i = 1; i < n; ++i) previous(i, i - 1) = 1;
    for (Eigen::Index i = 0; i < n; ++i) {
        first(i, 0) = 1;
        induction(i, i >= 6 ? i - 5 : 0) = 1;  // the token after the first occurrence
    }
    const PatternScores p = attnviz::model::pattern_scores(previous, ids);
    EXPECT_DOUBLE_EQ(p.previous_token, 1.0);
    EXPECT_DOUBLE_EQ(p.diagonal, 1.0 / n);  // row 0's weight on itself
    EXPECT_DOUBLE_EQ(attnviz::model::pattern_scores(induction, ids).induction, 1.0);
    EXPECT_DOUBLE_EQ(attnviz::model::pattern_scores(first, ids).sink, 1.0);
    EXPECT_DOUBLE_EQ(attnviz::model::pattern_scores(identity, ids).diagonal, 1.0);
    Matrix duplicate = Matrix::Identity(n, n);
    for (Eigen::Index i = 6; i < n; ++i) {
        duplicate(i, i) = 0;
        duplicate(i, i - 6) = 1;
    }
    EXPECT_DOUBLE_EQ(attnviz::model::pattern_scores(duplicate, ids).duplicate_token, 1.0);
    EXPECT_DOUBLE_EQ(attnviz::model::pattern_scores(identity, ids).duplicate_token, 0.0);
}

TEST(HeadDetectors, TheProbeFitsThePositionTable) {
    EXPECT_EQ(attnviz::model::probe_half(open_model("gpt2").config()), 16);   // 32 positions
    EXPECT_EQ(attnviz::model::probe_half(open_model("llama").config()), 50);  // RoPE
}

}  // namespace
