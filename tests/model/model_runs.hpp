// The reference models opened and run, for the tests of the model runtime and what is computed
// from a run (model_tests; the command-line tests run the binary instead).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model/runtime.hpp"
#include "model_test_support.hpp"

namespace attnviz::test {

// A reference model (tests/reference/models/NAME); a failure to open it fails the test.
inline model::ModelFolder open_model(const std::string& name) {
    core::Result<model::ModelFolder> m = model::ModelFolder::open((models_dir / name).string());
    if (!m) ADD_FAILURE() << name << ": " << m.problems.front().str();
    return std::move(*m.value);
}

// Its whole forward pass on its expected.json's token ids.
template <class Scalar>
model::RunState<Scalar> run_expected(const model::ModelFolder& m, const nlohmann::json& expected) {
    core::Result<model::RunState<Scalar>> s =
        model::run_model<Scalar>(m, expected.at("token_ids").get<std::vector<std::int32_t>>(), {});
    if (!s) ADD_FAILURE() << s.problems.front().str();
    return std::move(*s.value);
}

// Block `layer`'s attention as a session (model::layer_session); a failure fails the test.
template <class Scalar>
core::Session session_of(const model::ModelFolder& m, const model::RunState<Scalar>& s, int layer) {
    core::Result<core::Session> session = model::layer_session(m, s, layer);
    if (!session) {
        ADD_FAILURE() << "layer " << layer << ": " << session.problems.front().str();
        return {};
    }
    return std::move(*session.value);
}

}  // namespace attnviz::test
