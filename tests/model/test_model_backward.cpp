// The whole model's backward pass (core/model/backward.hpp) against PyTorch's autograd in float64
// through the forward of each architecture's definition (tests/reference/gradients, written by
// tests/reference/models/gradients.py): for the logit difference, the logit and the mean loss, the
// objective's value, the gradients of the embeddings, of every block's attention weights and
// output, and of every weight of the folder under its name. Double agrees to 1e-9 relative to the
// largest entry of each matrix (measured: 3.5e-11, Gemma 2's soft-capped logit, where autograd's
// 1 − tanh² loses digits to cancellation); float to 1e-3 of it (measured: 2.5e-6).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/io/tensors.hpp"
#include "core/model/backward.hpp"
#include "model_runs.hpp"

namespace {

using attnviz::core::TensorFile;
using attnviz::model::ModelFolder;
using attnviz::model::ModelGradients;
using attnviz::model::Objective;
using attnviz::model::RunState;
using attnviz::test::expected_of;
using attnviz::test::models_dir;
using attnviz::test::open_model;
using attnviz::test::run_expected;
using Matrix = Eigen::MatrixXd;

const std::vector<std::string> models = {"gpt2",  "llama",  "qwen2", "llama3", "mistral",        "pythia",
                                         "gemma", "gemma2", "phi3",  "olmo2",  "neox-sequential"};

// A tensor of the reference file as a matrix (a 1-D tensor as one row; 3-D as its first index's
// matrices one under the other).
Matrix matrix_of(const TensorFile& f, const std::string& name) {
    const auto t = f.read(name);
    if (!t) {
        ADD_FAILURE() << name << ": " << t.problems.front().str();
        return {};
    }
    const auto cols = static_cast<Eigen::Index>(t.value->cols());
    const auto rows = static_cast<Eigen::Index>(t.value->values.size()) / std::max<Eigen::Index>(cols, 1);
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = t.value->values[static_cast<size_t>(i * cols + j)];
    return m;
}

// max |a − b| / max(max |b|, 1e-300): how far a is from b, relative to b's largest entry.
template <class Derived>
double relative_error(const Eigen::MatrixBase<Derived>& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    const double scale = std::max(b.cwiseAbs().maxCoeff(), 1e-300);
    return (a.template cast<double>() - b).cwiseAbs().maxCoeff() / scale;
}

Objective objective_of(const nlohmann::json& o) {
    Objective objective;
    const std::string kind = o.at("kind");
    objective.kind = kind == "difference" ? Objective::Kind::difference
                     : kind == "logit"    ? Objective::Kind::logit
                                          : Objective::Kind::mean_loss;
    objective.target = o.at("target");
    objective.versus = o.at("versus");
    return objective;
}

// One objective of one model: every gradient the reference holds, within `tolerance`.
template <class Scalar>
void compare_objective(const ModelFolder& m, const RunState<Scalar>& s, const TensorFile& f, const nlohmann::json& o,
                       double tolerance) {
    const std::string key = o.at("name");
    SCOPED_TRACE(key);
    const bool weights = o.at("weights");
    const auto g = attnviz::model::model_gradients<Scalar>(m, s, objective_of(o), weights);
    ASSERT_TRUE(g) << g.problems.front().str();
    const ModelGradients<Scalar>& got = *g.value;
    const double value = matrix_of(f, key + ".value")(0, 0);
    EXPECT_NEAR(got.value, value, tolerance * std::max(1.0, std::abs(value)));
    EXPECT_LE(relative_error(got.d_embeddings, matrix_of(f, key + ".d_embeddings")), tolerance);
    for (size_t L = 0; L < got.blocks.size(); ++L) {
        SCOPED_TRACE("block " + std::to_string(L));
        EXPECT_LE(relative_error(got.blocks[L].d_output, matrix_of(f, key + ".d_output." + std::to_string(L))),
                  tolerance);
        const Matrix d_weights = matrix_of(f, key + ".d_weights." + std::to_string(L));  // (h·n) × n
        const Eigen::Index n = d_weights.cols();
        ASSERT_EQ(static_cast<Eigen::Index>(got.blocks[L].d_weights.size()) * n, d_weights.rows());
        for (size_t h = 0; h < got.blocks[L].d_weights.size(); ++h)
            EXPECT_LE(relative_error(got.blocks[L].d_weights[h],
                                     Matrix(d_weights.middleRows(static_cast<Eigen::Index>(h) * n, n))),
                      tolerance)
                << "head " << h;
    }
    if (!weights) {
        EXPECT_TRUE(got.weights.values().empty());
        return;
    }
    // Every tensor of the folder has its gradient, of its stored shape.
    const std::string prefix = key + ".weight.";
    size_t compared = 0;
    for (const std::string& name : m.weights().names()) {
        SCOPED_TRACE(name);
        const auto at = got.weights.values().find(name);
        ASSERT_NE(at, got.weights.values().end());
        Matrix want = matrix_of(f, prefix + name);
        if (f.find(key + ".rows." + name)) {  // only the rows that are not zero
            const Matrix rows = matrix_of(f, key + ".rows." + name);
            Matrix whole = Matrix::Zero(at->second.rows(), want.cols());
            for (Eigen::Index r = 0; r < rows.cols(); ++r)
                whole.row(static_cast<Eigen::Index>(rows(0, r))) = want.row(r);
            want = whole;
        }
        EXPECT_LE(relative_error(at->second, want), tolerance);
        ++compared;
    }
    EXPECT_EQ(compared, got.weights.values().size());
}

template <class Scalar>
void compare(const std::string& name, double tolerance) {
    SCOPED_TRACE(name);
    const ModelFolder m = open_model(name);
    const RunState<Scalar> s = run_expected<Scalar>(m, expected_of(name));
    const auto f = TensorFile::open((models_dir.parent_path() / "gradients" / (name + ".safetensors")).string());
    ASSERT_TRUE(f) << f.problems.front().str();
    const nlohmann::json objectives = nlohmann::json::parse(f.value->metadata().at("objectives"));
    ASSERT_EQ(objectives.size(), 3u);
    for (const nlohmann::json& o : objectives) compare_objective<Scalar>(m, s, *f.value, o, tolerance);
}

TEST(ModelBackward, DoubleAgreesWithAutogradTo1e9) {
    for (const std::string& name : models) compare<double>(name, 1e-9);
}

TEST(ModelBackward, FloatAgreesWithAutogradTo1e3) {
    for (const std::string& name : models) compare<float>(name, 1e-3);
}

TEST(ModelBackward, RefusesWhatHasNoGradient) {
    const ModelFolder bert = open_model("bert");
    const RunState<double> b = run_expected<double>(bert, expected_of("bert"));
    const auto encoder = attnviz::model::model_gradients<double>(bert, b, Objective{});
    ASSERT_FALSE(encoder);
    EXPECT_NE(encoder.problems.front().message.find("encoder"), std::string::npos) << encoder.problems.front().str();

    const ModelFolder gpt2 = open_model("gpt2");
    RunState<double> s = run_expected<double>(gpt2, expected_of("gpt2"));
    Objective outside{Objective::Kind::difference, 3, gpt2.config().vocab_size};
    const auto refused = attnviz::model::model_gradients<double>(gpt2, s, outside);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.problems.front().message.find("versus token id " + std::to_string(gpt2.config().vocab_size)),
              std::string::npos)
        << refused.problems.front().str();

    s.layers[1].edited = std::make_shared<attnviz::core::Session>(attnviz::test::session_of(gpt2, s, 1));
    const auto edited = attnviz::model::model_gradients<double>(gpt2, s, Objective{});
    ASSERT_FALSE(edited);
    EXPECT_NE(edited.problems.front().message.find("block 1 was edited"), std::string::npos);
}

// A block whose session was edited goes back through its session's weights: unchanged, the same
// gradients as the folder's; with its W_O doubled, ∂L/∂x₀ along a direction is the objective's
// central difference there (the run rerun from the embeddings moved by ±ε).
TEST(ModelBackward, AnEditedBlockGoesBackThroughItsSessionsWeights) {
    const ModelFolder m = open_model("gpt2");
    RunState<double> s = run_expected<double>(m, expected_of("gpt2"));
    const Objective o{Objective::Kind::difference, 5, 9};
    const auto plain = attnviz::model::model_gradients<double>(m, s, o, false);
    ASSERT_TRUE(plain);
    auto session = std::make_shared<attnviz::core::Session>(attnviz::test::session_of(m, s, 1));
    s.layers[1].edited = session;
    ASSERT_TRUE(attnviz::model::rerun_from(m, s, 1).empty());
    const auto same = attnviz::model::model_gradients<double>(m, s, o, false);
    ASSERT_TRUE(same) << same.problems.front().str();
    EXPECT_LE(relative_error(same.value->d_embeddings, plain.value->d_embeddings), 1e-12);

    session->params.W_O *= 2;
    ASSERT_TRUE(attnviz::model::rerun_from(m, s, 1).empty());
    const auto g = attnviz::model::model_gradients<double>(m, s, o, false);
    ASSERT_TRUE(g);
    EXPECT_GT(relative_error(g.value->d_embeddings, plain.value->d_embeddings), 1e-3);  // the edit tells
    const Matrix direction = Matrix::Random(s.embeddings.rows(), s.embeddings.cols());
    const double eps = 1e-5;
    RunState<double> moved = s;
    const auto objective_at = [&](double t) {
        moved.embeddings = s.embeddings + t * direction;
        EXPECT_TRUE(attnviz::model::run_blocks_from(m, moved, 0).empty());
        return attnviz::model::objective_value(moved, o);
    };
    const double difference = (objective_at(eps) - objective_at(-eps)) / (2 * eps);
    const double along = (g.value->d_embeddings.array() * direction.array()).sum();
    EXPECT_NEAR(along, difference, 1e-6 * std::max(1.0, std::abs(along)));
}

}  // namespace
