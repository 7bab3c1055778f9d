// Activation patching (core/model/patching.hpp) against PyTorch runs of the definitions patched the
// same way (tests/reference/models/gradients.py's patching(), GPT-2 and Llama: a clean sentence and
// the same with its second token changed): every head's z, every head's weights and the stream
// entering every block at every position, to 1e-9 in double. The stream entering block 0 is the
// embeddings: patching the changed token restores the clean run (1), any other does nothing (0).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/io/tensors.hpp"
#include "core/model/patching.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::core::TensorFile;
using attnviz::model::ModelFolder;
using attnviz::model::Objective;
using attnviz::model::Patching;
using attnviz::model::RunState;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using nlohmann::json;

template <class Scalar>
RunState<Scalar> run_ids(const ModelFolder& m, const std::vector<std::int32_t>& ids) {
    auto s = attnviz::model::run_model<Scalar>(m, ids, {});
    if (!s) ADD_FAILURE() << s.problems.front().str();
    return std::move(*s.value);
}

TEST(ModelPatching, AgreesWithPatchedRunsOfTheDefinitions) {
    for (const std::string name : {"gpt2", "llama"}) {
        SCOPED_TRACE(name);
        const ModelFolder m = open_model(name);
        const auto f = TensorFile::open((models_dir.parent_path() / "gradients" / (name + ".safetensors")).string());
        ASSERT_TRUE(f);
        const json meta = json::parse(f.value->metadata().at("patching"));
        const RunState<double> clean = run_ids<double>(m, meta.at("clean_ids"));
        const RunState<double> corrupt = run_ids<double>(m, meta.at("corrupt_ids"));
        const Objective o{Objective::Kind::difference, meta.at("target"), meta.at("versus")};
        const auto p = attnviz::model::patch<double>(m, clean, corrupt, o);
        ASSERT_TRUE(p) << p.problems.front().str();
        EXPECT_NEAR(p.value->clean_diff, f.value->read("patching.clean_diff").value->values[0], 1e-12);
        EXPECT_NEAR(p.value->corrupt_diff, f.value->read("patching.corrupt_diff").value->values[0], 1e-12);
        for (const auto& [field, got] :
             {std::pair{"heads", &p.value->heads}, std::pair{"attention", &p.value->attention},
              std::pair{"residual", &p.value->residual}}) {
            const auto want = f.value->read(std::string("patching.") + field);
            ASSERT_TRUE(want);
            ASSERT_EQ(static_cast<size_t>(got->size()), want.value->values.size()) << field;
            for (Eigen::Index i = 0; i < got->rows(); ++i)
                for (Eigen::Index j = 0; j < got->cols(); ++j)
                    EXPECT_NEAR((*got)(i, j), want.value->values[static_cast<size_t>(i * got->cols() + j)], 1e-9)
                        << field << " [" << i << "][" << j << "]";
        }
        for (Eigen::Index i = 0; i < p.value->residual.cols(); ++i)
            EXPECT_NEAR(p.value->residual(0, i), i == 1 ? 1.0 : 0.0, 1e-12) << i;
    }
}

TEST(ModelPatching, RefusesUnequalCountsTheLossAndNothingToRestore) {
    const ModelFolder m = open_model("gpt2");
    const RunState<double> a = run_ids<double>(m, {72, 101, 344}), b = run_ids<double>(m, {72, 101});
    const Objective o{Objective::Kind::difference, 3, 4};
    const auto counts = attnviz::model::patch<double>(m, a, b, o);
    ASSERT_FALSE(counts);
    EXPECT_NE(counts.problems.front().message.find("clean sentence is 3 tokens and the corrupted one 2"),
              std::string::npos)
        << counts.problems.front().str();
    EXPECT_FALSE(attnviz::model::patch<double>(m, a, a, Objective{Objective::Kind::mean_loss, 0, 0}));
    const auto same = attnviz::model::patch<double>(m, a, a, o);
    ASSERT_FALSE(same);
    EXPECT_NE(same.problems.front().message.find("nothing to restore"), std::string::npos);
}

}  // namespace
